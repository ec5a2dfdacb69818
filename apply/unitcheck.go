package apply

import (
	"context"
	"errors"
	"strings"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// checkUnits judges every unit the plan acts on from what the node's manager says it is (aliases,
// dependencies, the actions on its jobs' end), as the executor does right before each job: a unit
// the executor would refuse is a refusal (returned), before anything is written, and the dry run
// shows it. A manager that cannot be asked is no refusal (a real run's executor checks again and
// fails, rolling back), but the dry run warns (warning).
func (h Host) checkUnits(ctx context.Context, p *plan.Plan, dryRun bool) (refusal *plan.Refusal, warning string) {
	if h.Units == nil {
		return nil, ""
	}
	var units []string
	for _, a := range p.Actions {
		if a.Unit != "" {
			units = append(units, a.Unit)
		}
	}
	if len(units) == 0 {
		return nil, ""
	}
	err := actions.CheckUnits(ctx, h.Units, units, p.PlannedUnit)
	switch {
	case err == nil:
		return nil, ""
	case errors.Is(err, actions.ErrUnitRefused), errors.Is(err, actions.ErrUnitNotFound):
		unit := ""
		for _, u := range units {
			if strings.HasPrefix(err.Error(), u+":") {
				unit = u
			}
		}
		return &plan.Refusal{Kind: diff.KindUnit, Unit: unit, Reason: err.Error()}, ""
	case dryRun:
		return nil, "units not checked against the node's manager: " + err.Error()
	}
	return nil, ""
}
