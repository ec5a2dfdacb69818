package apply

import (
	"path"
	"strings"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/plan"
)

// trust is what recovery may act on in a journal: the paths and unit actions a refresh could have
// planned on this node under its policy (the same path rules and denied prefixes, unit files only for
// the policy's unit rules, core's keys file under a home directory, the daemon's record). The journal
// lives in the state dir, which only root can write; a journal naming anything else was not
// written by the agent, and recovery refuses it whole rather than delete or overwrite what it names.
func (h Host) trust() actions.Trust {
	pol, perr := h.NodePolicy()
	return actions.Trust{
		Path: func(p string) error {
			if perr != nil {
				return perr
			}
			switch {
			case p == MCDCurrentConfig, sshKeysPath(p):
				return nil
			}
			if u := unitOfFile(p); u != "" {
				if _, ok := pol.UnitRule(u); ok {
					return nil
				}
			}
			return pol.MayWrite(p)
		},
		Actions: func(list []plan.UnitAction) error {
			if perr != nil {
				return perr
			}
			return plan.Journaled(pol, list)
		},
	}
}

// sshKeysPath reports whether p is core's keys file as sshKeysOp writes it: under a home directory.
func sshKeysPath(p string) bool {
	home, ok := strings.CutSuffix(p, "/"+SSHKeysFile)
	return ok && path.Clean(home) == home && (strings.HasPrefix(home, "/var/home/") || strings.HasPrefix(home, "/home/"))
}

// unitOfFile returns the unit whose file or dropin p is under plan.UnitDir, or "".
func unitOfFile(p string) string {
	dir := path.Dir(p)
	if dir == plan.UnitDir {
		return path.Base(p)
	}
	if path.Dir(dir) == plan.UnitDir && strings.HasSuffix(dir, ".d") {
		return strings.TrimSuffix(path.Base(dir), ".d")
	}
	return ""
}
