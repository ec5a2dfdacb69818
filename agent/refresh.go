package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// refreshStep is how far a refresh went.
type refreshStep int

const (
	concludedStep  refreshStep = iota // it ran; a.last says how it ended
	waitingForSlot                    // not started: no pacing slot yet (the pacer wakes the loop)
	slotLost                          // stopped before its transaction: the slot was lost
)

// refresh applies one snapshot and records the outcome in a.last (and its metrics for publish).
func (a *Agent) refresh(ctx context.Context, snap Snapshot, d Decision) refreshStep {
	started := time.Now()
	a.busySince.Store(started.UnixNano())
	defer a.busySince.Store(0)
	node := a.nodes.get()
	if a.drift != nil {
		a.drift.setBusy(true)
		defer a.drift.setBusy(false)
	}
	a.busy(len(snap.Config))
	defer a.releaseSoon() // idle again after this, whatever the outcome (a wait for a slot included)
	// A refresh in progress finishes even when the agent is told to stop, within ShutdownGrace.
	rctx, cancel := graceContext(ctx, a.cfg.ShutdownGrace)
	defer cancel()
	// The whole refresh is worked out first; only one that writes needs a pacing slot, taken between
	// the plan and its execution.
	var res *apply.Result
	req := apply.Request{Desired: snap.Config, Hash: snap.Hash, NoRebootPaths: d.Rules, Delegated: delegated(node)}
	prep, err := apply.Prepare(rctx, a.cfg.Host, req)
	var gate apply.Gate
	if err == nil && a.cfg.Pacer != nil && prep.Writes() && rctx.Err() == nil {
		// The node lock is not held while the slot is asked for (API calls, or a wait): a hand-run
		// recover or apply goes ahead meanwhile. With the slot, the refresh is prepared again under
		// the lock, against the node as it is now.
		prep.Close()
		if !a.takeSlot(rctx, snap, d) {
			return waitingForSlot // nothing written
		}
		gate = slotGate{pacer: a.cfg.Pacer, pool: a.pool, hash: snap.Hash}
		prep, err = apply.Prepare(rctx, a.cfg.Host, req)
	}
	if err == nil {
		if a.cfg.Pacer == nil && prep.Writes() {
			a.report(*d.Report) // Working, only now that the plan writes
		}
		res, err = prep.Execute(rctx, gate)
	}
	if errors.Is(err, errLostSlot) {
		a.log.Warn("refresh stopped before its transaction", "hash", snap.Hash, "reason", err.Error())
		return slotLost
	}
	var inv *apply.InvalidError
	var result api.Outcome
	var reason string
	switch {
	case errors.As(err, &inv):
		result, reason = api.OutcomeInvalid, err.Error()
	case err != nil:
		result, reason = api.OutcomeFailed, err.Error()
	default:
		switch res.Outcome {
		case api.OutcomeApplied, api.OutcomeNoop:
			result = res.Outcome
		case api.OutcomeRefused:
			result, reason = api.OutcomeRefused, res.Reason
		default:
			result, reason = api.OutcomeFailed, res.Reason
		}
	}
	if (result == api.OutcomeApplied || result == api.OutcomeNoop) && a.drift != nil && res.Desired != nil {
		// The files just recorded, from the payload already decoded: no second decode of it.
		a.drift.loadPayload(a.cfg.Host, snap.Hash, res.Desired, delegated(node))
	}
	out := concluded(a.last, snap.digest(), snap.Hash, result, reason, node)
	attempt := 0 // the failure's attempt, for the log
	if result == api.OutcomeFailed {
		attempt = 1
		if continues(a.last, out) {
			attempt = a.retries.NumRequeues(workKey) + 1
		}
	}
	a.retries.conclude(a.last, out) // a success, new content or an operator's retry starts the backoff over
	if result == api.OutcomeApplied || (result == api.OutcomeNoop && len(delegatedChanges(res)) > 0) {
		out.Message = appliedMessage(res)
	}
	a.last = out
	a.counted = metricsOf(result, res, started)
	a.log.Info("refresh concluded", "hash", snap.Hash, "result", result, "reason", reason, "attempt", attempt,
		"duration", time.Since(started).Round(time.Millisecond))
	return concludedStep
}

// refreshMetrics are what one concluded refresh adds to the metrics; publish counts them.
type refreshMetrics struct {
	result       api.Outcome
	duration     time.Duration
	refused      []string // the refused changes' kinds
	files, drift int
	success      bool
	at           time.Time
}

func metricsOf(result api.Outcome, res *apply.Result, started time.Time) *refreshMetrics {
	m := &refreshMetrics{result: result, duration: time.Since(started), at: time.Now(),
		success: result == api.OutcomeApplied || result == api.OutcomeNoop}
	if result == api.OutcomeInvalid {
		m.result = api.OutcomeFailed
	}
	if res != nil {
		for _, r := range res.Refused {
			m.refused = append(m.refused, string(r.Kind))
		}
		m.files, m.drift = res.FilesWritten, res.Drift
	}
	return m
}

// count adds the refresh to the metrics (nil-safe: some tests run without them).
func (r *refreshMetrics) count(m *Metrics) {
	if m == nil {
		return
	}
	for _, k := range r.refused {
		m.refused.WithLabelValues(k).Inc()
	}
	m.filesWritten.Add(float64(r.files))
	m.drift.Add(float64(r.drift))
	m.refreshes.WithLabelValues(string(r.result)).Inc()
	m.duration.Observe(r.duration.Seconds())
	if r.success {
		m.lastSuccess.Set(float64(r.at.UnixNano()) / 1e9)
	}
}

// delegated lists the files someone else owns on this Node: on a Node labelled for HyperShift's
// global pull-secret syncer, the kubelet's pull secret.
func delegated(n *corev1.Node) map[string]string {
	if n == nil || n.Labels[api.LabelGlobalPullSecret] != "true" {
		return nil
	}
	return map[string]string{GlobalPullSecretPath: "owned by HyperShift's global pull-secret syncer (node label " +
		api.LabelGlobalPullSecret + "=true)"}
}

func appliedMessage(r *apply.Result) string {
	msg := fmt.Sprintf("applied %s: %s, %s, no reboot", r.Hash, api.Count(r.FilesWritten, "file"), api.Count(len(r.Actions), "unit action"))
	if r.ActionsSkipped && len(r.Actions) > 0 {
		msg = fmt.Sprintf("applied %s: %s, %s skipped, no reboot", r.Hash, api.Count(r.FilesWritten, "file"), api.Count(len(r.Actions), "unit action"))
	}
	if d := delegatedChanges(r); len(d) > 0 {
		msg += fmt.Sprintf("; %d delegated, not written: %s", len(d), strings.Join(d, "; "))
	}
	return msg
}

// delegatedChanges describes the plan's delegated changes (path and owner).
func delegatedChanges(r *apply.Result) []string {
	if r == nil || r.Plan == nil {
		return nil
	}
	var out []string
	for _, c := range r.Changes {
		if c.Delegated {
			out = append(out, c.Path+" ("+c.Reason+")")
		}
	}
	return out
}

// graceContext is ctx for a refresh: it survives ctx's cancellation for at most grace.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(rctx, func() { t.Stop() })
	})
	return rctx, func() { stop(); cancel() }
}
