package plan

import (
	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
)

// ofCurrent is what f reads of the node's current definition of the unit (nothing for a unit the
// payload adds, a masked one, or one whose current file the judge cannot read).
func ofCurrent[T any](old *types.Unit, f func(allowlist.UnitProps) []T) []T {
	if old == nil || isTrue(old.Mask) {
		return nil
	}
	cur, err := unitFileProps(old.Name, old.Contents, old.Dropins)
	if err != nil {
		return nil
	}
	return f(cur)
}

// unitArgs are the paths the node's current definition of the unit gives its programs the exec
// judge does not model: a changed line may give the same program only these, by the same option,
// or read-only OS content (allowlist execgiven.go, adversary r14 b/01-06). The node policy's
// unitPrograms grants a program, never a path.
func unitArgs(old *types.Unit) []allowlist.OwnArg { return ofCurrent(old, allowlist.OwnArgs) }
