package plan

import (
	"fmt"
	"strconv"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
)

// checkCeiling refuses a file whose mode or owner the node policy's rule (or the ceiling entry) does
// not allow: a permission bit outside the mode ceiling (the pull secret made 0666), or an owner other
// than root or the rule's owner. An owner given by name where the ceiling gives an id (or the
// reverse) is resolved on the node (apply checks it against the node's /etc/passwd); here only what
// the payload states can be compared. reason is "" when within.
func checkCeiling(path string, d allowlist.Decision, mode int, u types.NodeUser, g types.NodeGroup) string {
	if mode&^int(d.ModeCeiling) != 0 {
		return fmt.Sprintf("file %s: mode %04o is wider than the node policy's mode ceiling %s for it", path, mode, d.ModeCeiling)
	}
	wantUser, wantGroup := allowlist.SplitOwner(d.Owner)
	if !ownerWithin(u.ID, u.Name, wantUser) || !ownerWithin(g.ID, g.Name, wantGroup) {
		return fmt.Sprintf("file %s: owner %s is not the node policy's owner %s for it (root, or the rule's owner)", path, ownerString(u, g), d.Owner)
	}
	return ""
}

// ownerWithin reports whether a payload's user (or group), by id or name, may be the ceiling's want:
// root always (unset is root), else the same id or name; a name against an id cannot be told apart
// without the node and passes here (apply resolves both).
func ownerWithin(id *int, name *string, want string) bool {
	switch {
	case id != nil:
		if *id == 0 {
			return true
		}
		n, err := strconv.Atoi(want)
		return err != nil && want != "root" || err == nil && n == *id
	case name != nil && *name != "":
		if *name == "root" || *name == want {
			return true
		}
		_, err := strconv.Atoi(want)
		return err == nil && want != "0"
	}
	return true
}

func ownerString(u types.NodeUser, g types.NodeGroup) string {
	one := func(id *int, name *string) string {
		switch {
		case id != nil:
			return strconv.Itoa(*id)
		case name != nil && *name != "":
			return *name
		}
		return "root"
	}
	return one(u.ID, u.Name) + ":" + one(g.ID, g.Name)
}
