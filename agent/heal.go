package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// EventDriftHealed is the Event of a heal.
const EventDriftHealed = "RefreshDriftHealed"

// driftFound counts and announces files newly found changed on the node.
func (a *Agent) driftFound(paths []string) {
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.drift.Add(float64(len(paths)))
	}
	what := "report only"
	if a.cfg.Drift == DriftHeal {
		what = "writing the recorded content back"
	}
	a.event(corev1.EventTypeWarning, EventDrift, fmt.Sprintf("%d recorded files changed on the node (%s): %s",
		len(paths), what, strings.Join(paths, ", ")))
}

// heal writes the record's content back over the drifted files, through the same transaction as a
// refresh, and runs their paths' actions. The plan starts from the record without those files, so
// exactly they are written.
func (a *Agent) heal(ctx context.Context, snap Snapshot, d Decision) {
	paths := a.drift.paths()
	a.lastHeal = strings.Join(paths, ",")
	if len(paths) == 0 {
		return
	}
	started := time.Now()
	a.busySince.Store(started.UnixNano())
	defer a.busySince.Store(0)
	a.drift.setBusy(true)
	defer a.drift.setBusy(false)
	rctx, cancel := graceContext(ctx, a.cfg.ShutdownGrace)
	defer cancel()
	res, err := apply.Run(rctx, a.cfg.Host, apply.Request{Desired: snap.Config, Hash: snap.Hash, NoRebootPaths: d.Rules,
		Delegated: delegated(a.nodes.get()), Heal: paths}) // the record is read under the node lock
	switch {
	case err != nil:
		a.event(corev1.EventTypeWarning, EventFailed, "drift heal failed: "+err.Error())
	case res.Outcome == api.OutcomeApplied:
		a.event(corev1.EventTypeNormal, EventDriftHealed, fmt.Sprintf("wrote %d recorded files back (%s), %d unit actions",
			len(paths), strings.Join(paths, ", "), len(res.Actions)))
	default:
		a.event(corev1.EventTypeWarning, EventFailed, fmt.Sprintf("drift heal %s: %s", res.Outcome, res.Reason))
	}
	a.log.Info("drift heal concluded", "paths", paths, "err", err, "duration", time.Since(started).Round(time.Millisecond))
}
