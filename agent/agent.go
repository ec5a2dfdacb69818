package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/kube"
)

// Event reasons on the Node.
const (
	EventApplied  = "RefreshApplied"
	EventRefused  = "RefreshRefused"
	EventFailed   = "RefreshFailed"
	EventDeferred = "RefreshDeferred"
)

// Config wires an Agent.
type Config struct {
	NodeName string
	Client   *kube.Client
	Source   Source
	Node     apply.Node // root, state dir, units, policy
	Recorder record.EventRecorder
	Metrics  *Metrics
	Log      *slog.Logger
	// ShutdownGrace bounds how long a refresh in progress may go on after the agent is asked to stop.
	ShutdownGrace time.Duration
}

// Agent is the per-node loop.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	wake     chan struct{}
	desired  latest
	nodes    *nodeWatch
	reporter *reporter
	// What the loop last concluded for a snapshot, so the same content is not redone after success
	// or a refusal.
	lastDigest, lastState string
	lastProblem           string
	deferredFor           string
	started               atomic.Bool
	busySince             atomic.Int64 // unix nanos when the current refresh began, 0 when idle
}

// New builds an Agent.
func New(cfg Config) *Agent {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 90 * time.Second
	}
	if cfg.Metrics != nil {
		if _, none := cfg.Node.Units.(actions.NoUnits); !none && cfg.Node.Units != nil {
			cfg.Node.Units = countingUnits{Units: cfg.Node.Units, m: cfg.Metrics}
		}
	}
	cfg.Node.Log = cfg.Log
	a := &Agent{cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1)}
	a.desired.wake = a.wake
	return a
}

// Run recovers any interrupted refresh, starts the watches and refreshes on every change until ctx
// ends. A refresh in progress when ctx ends runs to completion (bounded by ShutdownGrace).
func (a *Agent) Run(ctx context.Context) error {
	if rec, err := apply.Recover(context.WithoutCancel(ctx), a.cfg.Node); err != nil {
		a.log.Error("recovering an interrupted refresh failed", "err", err)
	} else if rec.Found {
		a.log.Info("recovered an interrupted refresh", "phase", rec.Phase, "outcome", rec.Outcome, "hash", rec.Hash)
	}
	nodes, err := watchNode(ctx, a.cfg.Client.REST(), a.cfg.NodeName, func() { signal(a.wake) })
	if err != nil {
		return fmt.Errorf("watching node %s: %w", a.cfg.NodeName, err)
	}
	a.nodes = nodes
	a.reporter = newReporter(a.cfg.Client, a.cfg.NodeName, a.log, nodes.annotations)
	go a.reporter.run(ctx)
	a.report(a.initialStatus())
	if err := a.cfg.Source.Start(ctx, a.desired.put); err != nil {
		return fmt.Errorf("starting the source: %w", err)
	}
	a.started.Store(true)
	return a.loop(ctx)
}

// initialStatus reports what the node's record says before any payload is seen.
func (a *Agent) initialStatus() Status {
	cur := apply.CurrentHash(a.cfg.Node.StateDir)
	if prev, ok := a.nodes.annotations(); ok && prev[AnnotationDesired] != "" && prev[AnnotationDesired] != cur {
		return statusOf(prev) // a refresh toward it was under way: the loop picks it up again
	}
	return Status{Current: cur, Desired: cur, State: StateDone}
}

func (a *Agent) loop(ctx context.Context) error {
	b := newBackoff(time.Second, 5*time.Minute)
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.wake:
		case <-retry:
		}
		if a.step(ctx) {
			d := b.next()
			a.log.Info("refresh will be retried", "in", d)
			retry = time.After(d)
		} else {
			// Concluded (or nothing to do): a pending retry is moot and the next failure starts over.
			retry = nil
			b.reset()
		}
	}
}

// step handles the newest snapshot once; it reports whether to retry later.
func (a *Agent) step(ctx context.Context) bool {
	snap, ok := a.desired.get()
	if !ok {
		return false
	}
	status, _ := a.reporter.current()
	if snap.Problem != "" {
		// Nothing on the node changes; say so once.
		if snap.Problem != a.lastProblem {
			a.lastProblem = snap.Problem
			a.log.Warn("no desired payload", "problem", snap.Problem)
			a.event(corev1.EventTypeWarning, EventFailed, "no desired payload: "+snap.Problem)
		}
		return false
	}
	a.lastProblem = ""
	if reason := deferReason(a.nodes.get()); reason != "" {
		if a.deferredFor != snap.Hash+reason {
			a.deferredFor = snap.Hash + reason
			a.cfg.Metrics.observe(ResultDeferred, time.Time{})
			a.event(corev1.EventTypeNormal, EventDeferred, "refresh deferred: "+reason)
			a.log.Info("refresh deferred", "hash", snap.Hash, "reason", reason)
		}
		a.report(Status{Current: status.Current, Desired: snap.Hash, State: StateWorking, Reason: "deferred: " + reason})
		return false
	}
	a.deferredFor = ""
	if snap.digest() == a.lastDigest && (a.lastState == StateDone || a.lastState == StateUnreconcilable) {
		return false // already concluded for this content
	}
	return a.refresh(ctx, snap)
}

// refresh applies one snapshot and reports the outcome.
func (a *Agent) refresh(ctx context.Context, snap Snapshot) bool {
	started := time.Now()
	a.busySince.Store(started.UnixNano())
	defer a.busySince.Store(0)
	current := apply.CurrentHash(a.cfg.Node.StateDir)
	if current != snap.Hash {
		a.report(Status{Current: current, Desired: snap.Hash, State: StateWorking})
	}
	rules, err := allowlist.ParseRules(snap.NoRebootPaths)
	if err != nil {
		return a.conclude(snap, current, StateDegraded, "no-reboot-paths: "+err.Error(), ResultFailed, started, false)
	}
	// A refresh in progress finishes even when the agent is told to stop, within ShutdownGrace.
	rctx, cancel := graceContext(ctx, a.cfg.ShutdownGrace)
	defer cancel()
	res, err := apply.Run(rctx, a.cfg.Node, apply.Request{Desired: snap.Config, Hash: snap.Hash, NoRebootPaths: rules})
	var inv *apply.InvalidError
	switch {
	case errors.As(err, &inv):
		a.event(corev1.EventTypeWarning, EventFailed, "invalid payload: "+err.Error())
		return a.conclude(snap, current, StateDegraded, "invalid payload: "+err.Error(), ResultFailed, started, false)
	case err != nil:
		a.event(corev1.EventTypeWarning, EventFailed, err.Error())
		return a.conclude(snap, current, StateDegraded, err.Error(), ResultFailed, started, true)
	}
	a.countResult(res)
	switch res.Outcome {
	case apply.OutcomeApplied:
		a.event(corev1.EventTypeNormal, EventApplied, appliedMessage(res))
		return a.conclude(snap, snap.Hash, StateDone, "", ResultApplied, started, false)
	case apply.OutcomeNoop:
		return a.conclude(snap, snap.Hash, StateDone, "", ResultNoop, started, false)
	case apply.OutcomeRefused:
		a.event(corev1.EventTypeWarning, EventRefused, "refused: "+res.Reason)
		return a.conclude(snap, current, StateUnreconcilable, res.Reason, ResultRefused, started, false)
	default:
		a.event(corev1.EventTypeWarning, EventFailed, "failed: "+res.Reason)
		return a.conclude(snap, current, StateDegraded, res.Reason, ResultFailed, started, true)
	}
}

func (a *Agent) conclude(snap Snapshot, current, state, reason, result string, started time.Time, retry bool) bool {
	a.lastDigest, a.lastState = snap.digest(), state
	desired := snap.Hash
	a.report(Status{Current: current, Desired: desired, State: state, Reason: reason})
	a.cfg.Metrics.observe(result, started)
	a.log.Info("refresh concluded", "hash", desired, "state", state, "result", result, "reason", reason,
		"duration", time.Since(started).Round(time.Millisecond))
	// Idle from here on, possibly for weeks: give the refresh's garbage back to the node now.
	debug.FreeOSMemory()
	return retry
}

func (a *Agent) countResult(res *apply.Result) {
	m := a.cfg.Metrics
	if m == nil {
		return
	}
	for _, r := range res.Refused {
		m.refused.WithLabelValues(string(r.Kind)).Inc()
	}
	m.filesWritten.Add(float64(res.FilesWritten))
	m.drift.Add(float64(res.Drift))
}

func (a *Agent) report(s Status) {
	a.reporter.set(s)
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.setState(s.State)
	}
}

func (a *Agent) event(kind, reason, msg string) {
	if a.cfg.Recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{Kind: "Node", Name: a.cfg.NodeName, UID: "", APIVersion: "v1"}
	if n := a.nodes.get(); n != nil {
		ref.UID = n.UID
	}
	a.cfg.Recorder.Event(ref, kind, reason, truncate(msg, MaxReasonLen))
}

func appliedMessage(r *apply.Result) string {
	return fmt.Sprintf("applied %s: %d files, %d unit actions, no reboot", r.Hash, r.FilesWritten, len(r.Actions))
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
