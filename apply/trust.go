package apply

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// trust is what recovery may act on in a journal: the paths and unit actions a refresh could have
// planned on this node under its policy (the same path rules and denied prefixes, unit files only for
// the policy's unit rules, core's keys file at the home the node's /etc/passwd gives it, the daemon's record). The journal
// lives in the state dir, which only root can write; a journal naming anything else was not
// written by the agent, and recovery refuses it whole rather than delete or overwrite what it names.
// Each unit it acts on is also judged as the executor judges it right before a job (CheckUnit: what
// the manager says the unit is), before recovery touches anything: a unit the executor would refuse
// midway (a file restored, the job refused: an incomplete rollback) refuses the journal up front.
func (h Host) trust(ctx context.Context) actions.Trust {
	pol, perr := h.NodePolicy()
	_, keys, kerr := h.sshKeysTarget(diff.CoreUser)
	return actions.Trust{
		Path: func(p string) error {
			if perr != nil {
				return perr
			}
			if p == MCDCurrentConfig || kerr == nil && p == keys {
				return nil
			}
			if isSSHKeysFile(p) {
				// Another user's keys, a home that is not core's: no refresh writes them (and the
				// deny rows need not list every home for recovery to leave them alone).
				why := "core's is " + keys
				if kerr != nil {
					why = kerr.Error()
				}
				return fmt.Errorf("%s: a keys file no refresh of this node writes (%s)", p, why)
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
			if err := plan.Journaled(pol, list); err != nil {
				return err
			}
			return h.unitsActOn(ctx, list)
		},
	}
}

// unitsActOn says which unit of list the node's manager reports as one the executor refuses
// (actions.ErrUnitRefused), or nil. A manager that cannot be asked, or has no file of a unit (one
// the refresh wrote and no daemon-reload loaded yet), is no refusal here: the executor asks again
// before each job.
func (h Host) unitsActOn(ctx context.Context, list []plan.UnitAction) error {
	c, ok := h.Units.(actions.UnitChecker)
	if !ok || actions.Skips(h.Units) {
		return nil
	}
	seen := map[string]bool{}
	for i, a := range list {
		if a.Unit == "" || seen[a.Unit] {
			continue
		}
		seen[a.Unit] = true
		if err := c.CheckUnit(ctx, a.Unit); errors.Is(err, actions.ErrUnitRefused) {
			return fmt.Errorf("unit action %d: the executor would refuse it: %w", i, err)
		}
	}
	return nil
}

// isSSHKeysFile reports whether p is named as a keys file of some home.
func isSSHKeysFile(p string) bool { return strings.HasSuffix(p, "/"+SSHKeysFile) }

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
