package apply

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// ErrOwnerCeiling marks a file whose owner, resolved on the node, is neither root nor the node
// policy's owner for it: a refusal, shown by the dry run as by a real run.
var ErrOwnerCeiling = errors.New("owner outside the node policy's ceiling")

// checkOwnerCeiling compares the resolved owner of a planned file with its rule's owner, resolved
// through the same /etc/passwd and /etc/group (the plan compared what the payload states; a name on
// one side and an id on the other is only decided here).
func (h Host) checkOwnerCeiling(f plan.FileOp, uid, gid int) error {
	if f.Owner == "" || f.Unit != "" {
		return nil
	}
	user, group := allowlist.SplitOwner(f.Owner)
	// Root is always within: the policy's owner is resolved only for what is not root, so a policy
	// owner this node lacks refuses no root-owned file (and every file it would own).
	wantUID, wantGID := 0, 0
	var err error
	if uid != 0 {
		if wantUID, err = h.resolveID(user, true); err != nil {
			return fmt.Errorf("%s: %w: the node policy's owner %s: %v", f.Path, ErrOwnerCeiling, f.Owner, err)
		}
	}
	if gid != 0 {
		if wantGID, err = h.resolveID(group, false); err != nil {
			return fmt.Errorf("%s: %w: the node policy's owner %s: %v", f.Path, ErrOwnerCeiling, f.Owner, err)
		}
	}
	if uid != 0 && uid != wantUID || gid != 0 && gid != wantGID {
		return fmt.Errorf("file %s: %w: owner %d:%d on the node is not root nor the node policy's owner %s (%d:%d)",
			f.Path, ErrOwnerCeiling, uid, gid, f.Owner, wantUID, wantGID)
	}
	return nil
}

func (h Host) resolveID(name string, user bool) (int, error) {
	if name != "" && strings.Trim(name, "+-0123456789") == "" {
		return actions.ParseID(name) // numeric: within what the kernel stores, or an error
	}
	if name == "root" {
		return 0, nil
	}
	if user {
		u, err := h.Root.LookupUser(name)
		if err != nil {
			return 0, err
		}
		return u.UID, nil
	}
	return h.Root.LookupGroup(name)
}
