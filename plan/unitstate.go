package plan

import (
	"slices"
	"strings"

	"github.com/openshift/refresh-agent/allowlist"
)

// stateRank orders the state actions: a unit is stopped while its definition is still loaded, its
// mask removed before links are made, disabled before another is enabled, masked last.
var stateRank = map[allowlist.Action]int{allowlist.ActionStop: 0, allowlist.ActionUnmask: 1, allowlist.ActionDisable: 2,
	allowlist.ActionEnable: 3, allowlist.ActionMask: 4}

// orderStates deduplicates the state actions and orders them by kind, then by unit.
func orderStates(list []UnitAction) []UnitAction {
	var out []UnitAction
	for _, a := range list {
		if !slices.ContainsFunc(out, func(b UnitAction) bool { return b.Unit == a.Unit && b.Action == a.Action }) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b UnitAction) int {
		if ra, rb := stateRank[a.Action], stateRank[b.Action]; ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Unit, b.Unit)
	})
	if out == nil {
		out = []UnitAction{}
	}
	return out
}

// Rollback is what a rollback runs, in order, once the files are back: each state action's undo
// (the last one first), the daemon-reload, the units a refresh stopped started again, then the
// reloads, restarts and pod restarts again on the old files (a unit's only if the manager still has
// it: a unit the refresh added is gone again). For a plan without state actions it is the plan's own
// order.
func Rollback(forward []UnitAction) []UnitAction {
	var undos, starts, rest []UnitAction
	reload := false
	for _, a := range forward {
		switch {
		case a.Action == allowlist.ActionDaemonReload:
			reload = true
		case allowlist.StateAction(a.Action):
			if a.Undo == "" {
				continue
			}
			u := UnitAction{Unit: a.Unit, Action: a.Undo}
			if a.Undo == allowlist.ActionStart {
				starts = append(starts, u)
			} else {
				undos = append([]UnitAction{u}, undos...)
			}
		case a.Unit != "":
			a.IfLoaded = true
			rest = append(rest, a)
		default:
			rest = append(rest, a)
		}
	}
	out := undos
	if reload {
		out = append(out, UnitAction{Action: allowlist.ActionDaemonReload})
	}
	return append(append(out, starts...), rest...)
}

// ChangesUnits reports whether the plan enables, disables, masks, unmasks or stops a unit: work on
// the node even when no file changes.
func (p *Plan) ChangesUnits() bool {
	return slices.ContainsFunc(p.Actions, func(a UnitAction) bool { return allowlist.StateAction(a.Action) })
}
