package apply

import (
	"context"
	"errors"
	"strings"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// checkUnits judges every unit the plan acts on from what the node's manager says it is (aliases,
// dependencies, the actions on its jobs' end), as the executor does right before each job: a unit
// the executor would refuse is a refusal in the plan, before anything is written, and the dry run
// shows it. refused is set when a unit is refused; a manager that cannot be asked is no refusal
// (a real run's executor checks again and fails, rolling back), but the dry run warns.
func (n Node) checkUnits(ctx context.Context, res *Result, dryRun bool) (refused bool) {
	if n.Units == nil {
		return false
	}
	var units []string
	for _, a := range res.Actions {
		if a.Unit != "" {
			units = append(units, a.Unit)
		}
	}
	if len(units) == 0 {
		return false
	}
	err := actions.CheckUnits(ctx, n.Units, units)
	switch {
	case err == nil:
		return false
	case errors.Is(err, actions.ErrUnitRefused):
		unit := ""
		for _, u := range units {
			if strings.HasPrefix(err.Error(), u+":") {
				unit = u
			}
		}
		res.Eligible, res.Files, res.SSHKeys, res.Actions, res.Writes = false, nil, nil, []plan.UnitAction{}, nil
		res.Drain, res.DrainReasons = false, nil
		res.Refused = append(res.Refused, plan.Refusal{Kind: diff.KindUnit, Unit: unit, Reason: err.Error()})
		res.Outcome, res.Reason, res.ActionsSkipped = api.OutcomeRefused, err.Error(), false
		return true
	case dryRun:
		res.Warnings = append(res.Warnings, "units not checked against the node's manager: "+err.Error())
	}
	return false
}
