package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/pacing"
)

// Event reasons on the Node.
const (
	EventApplied  = "RefreshApplied"
	EventRefused  = "RefreshRefused"
	EventFailed   = "RefreshFailed"
	EventDeferred = "RefreshDeferred"
	EventDrift    = "RefreshDrift"
)

// GlobalPullSecretPath is the file HyperShift's global pull-secret syncer owns on Nodes labelled
// api.LabelGlobalPullSecret=true.
const GlobalPullSecretPath = "/var/lib/kubelet/config.json"

// Config wires an Agent.
type Config struct {
	NodeName string
	Client   *kube.Client
	Source   Source
	Host     apply.Host // root, state dir, units, policy
	Recorder record.EventRecorder
	Metrics  *Metrics
	Log      *slog.Logger
	// ShutdownGrace bounds how long a refresh in progress may go on after the agent is asked to stop.
	ShutdownGrace time.Duration
	// MaxAttempts is how many times a failing payload is tried before the node stays Degraded until
	// the content changes or the retry annotation does (default 3).
	MaxAttempts int
	// RetryBase and RetryMax bound the jittered exponential backoff between failed attempts
	// (defaults 1 s and 5 min).
	RetryBase, RetryMax time.Duration
	// Drift is DriftReport, DriftHeal or DriftOff (default DriftReport).
	Drift string
	// Pacer paces refreshes across the node's pool (a slot before changing the node); nil: unpaced.
	Pacer *pacing.Pacer
	// RefreshGCPercent is the GC target while the agent refreshes to a payload under
	// SmallPayload bytes, until it is idle again (0: the process's setting throughout). The agent
	// runs with a low GC target so that a large payload's peak stays near its size; a small one's
	// peak stays small anyway, and fewer collections save CPU on every node of a pool at once.
	RefreshGCPercent int
}

// SmallPayload is the payload size (as received: gzip compresses a machine-config server's payload
// about threefold) under which Config.RefreshGCPercent applies.
const SmallPayload = 256 << 10

// Agent is the per-node loop.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	desired  latest
	nodes    *nodeWatch
	reporter *reporter
	queue    workqueue.TypedRateLimitingInterface[string]
	retries  *retries // the queue's limiter: the loop's one backoff
	drift    *driftWatch
	// last is what the loop last concluded; only the worker touches it.
	last      LastRefresh
	lastEvent string
	lastHeal  string
	// counted holds the metrics of the refresh that concluded last until publish counts them.
	counted *refreshMetrics
	// unsettled counts refreshes in a row that concluded applied or no-op for the same content
	// while the decision still asked for one.
	unsettled int
	following bool   // follow ran once
	pool      string // the NodePool followed
	started   atomic.Bool
	busySince atomic.Int64 // unix nanos when the current refresh began, 0 when idle
	releaseMu sync.Mutex
	release   *time.Timer // a pending releaseNow
	gcBase    int         // the GC target to restore when idle (0: not raised)
}

// workKey is the loop's one work item: everything is decided afresh from the current state.
const workKey = "node"

// New builds an Agent.
func New(cfg Config) *Agent {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 90 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = time.Second
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = 5 * time.Minute
	}
	if cfg.Drift == "" {
		cfg.Drift = DriftReport
	}
	if cfg.Metrics != nil {
		if _, none := cfg.Host.Units.(actions.NoUnits); !none && cfg.Host.Units != nil {
			cfg.Host.Units = countingUnits{Units: cfg.Host.Units, m: cfg.Metrics}
		}
	}
	cfg.Host.Log = cfg.Log
	if cfg.Host.Decoded == nil {
		cfg.Host.Decoded = &apply.Decoded{}
	}
	a := &Agent{cfg: cfg, log: cfg.Log}
	a.retries = newRetries(cfg.RetryBase, cfg.RetryMax)
	a.queue = workqueue.NewTypedRateLimitingQueueWithConfig[string](a.retries, workqueue.TypedRateLimitingQueueConfig[string]{Name: "refresh"})
	a.desired.notify = a.enqueue
	return a
}

func (a *Agent) enqueue() { a.queue.Add(workKey) }

// Run recovers any interrupted refresh, starts the watches and converges the node on every change
// until ctx ends. A refresh in progress when ctx ends runs to completion (bounded by ShutdownGrace)
// and its outcome is patched onto the Node before Run returns.
func (a *Agent) Run(ctx context.Context) error {
	// A crashed transaction is settled before anything else reads the node (the drift watch, the
	// first decision, the first report). After this, recovery runs only inside apply.Prepare, each
	// time the node lock is taken for a change (a paced refresh lets the lock go while it waits for
	// its slot, so it prepares, and recovers, again): there an incomplete rollback is retried
	// (Decide's pending), and a hand-run apply that crashed meanwhile is settled first.
	if rec, err := apply.Recover(context.WithoutCancel(ctx), a.cfg.Host); err != nil {
		a.log.Error("recovering an interrupted refresh failed", "err", err)
	} else if rec.Found {
		a.log.Info("recovered an interrupted refresh", "phase", rec.Phase, "outcome", rec.Outcome, "hash", rec.Hash)
	}
	if t := apply.RecordTime(a.cfg.Host.StateDir); !t.IsZero() && a.cfg.Metrics != nil {
		a.cfg.Metrics.lastSuccess.Set(float64(t.UnixNano()) / 1e9)
	}
	a.reporter = newReporter(a.cfg.Client, a.cfg.NodeName, a.log, func() *corev1.Node { return a.nodes.get() })
	nodeChanged := make(chan struct{}, 1)
	observed := func() {
		a.reporter.poke()
		select { // wakes a verification window at once when the Node changes (its Ready condition)
		case nodeChanged <- struct{}{}:
		default:
		}
	}
	nodes, err := watchNode(ctx, a.cfg.Client.REST(), a.cfg.NodeName, a.enqueue, observed)
	if err != nil {
		return fmt.Errorf("watching node %s: %w", a.cfg.NodeName, err)
	}
	a.nodes = nodes
	a.cfg.Host.VerifyEnv.NodeReady = func() error { return nodeReady(a.nodes.get()) }
	a.cfg.Host.VerifyEnv.Changed = nodeChanged
	if a.cfg.Pacer != nil {
		a.cfg.Pacer.Start(ctx, a.enqueue)
	}
	go a.reporter.run(ctx)
	if err := a.cfg.Source.Start(ctx, a.desired.put); err != nil {
		return fmt.Errorf("starting the source: %w", err)
	}
	a.follow()
	if a.cfg.Drift != DriftOff {
		a.drift = newDriftWatch(a.log, a.enqueue, a.driftFound)
		go a.drift.run(ctx)
	}
	a.started.Store(true)
	go func() { <-ctx.Done(); a.queue.ShutDown() }()
	a.warm()
	a.enqueue()
	for first := true; a.work(ctx); first = false {
		if first {
			a.releaseSoon() // started and decided: what start-up touched need not stay resident
		}
	}
	// Stopping: the last refresh (if any) has concluded. Say so on the Node before exiting.
	in, _ := a.observe()
	a.publish(in, Decide(in))
	if err := a.reporter.flush(10 * time.Second); err != nil {
		a.log.Warn("the final node state could not be patched", "err", err)
	}
	return nil
}

// warm decodes the node's recorded payload once at start-up, into the node's Decoded cache (the
// first refresh's starting point); the first decode in a process also builds encoding/json's
// per-type caches. Better spent now than between a publish and the node's Done. Errors are the
// refresh's to report.
func (a *Agent) warm() {
	_, _ = a.cfg.Host.LoadCurrent()
}

// releaseSoon gives the heap's free pages back to the node (debug.FreeOSMemory) once the agent
// stayed idle for a moment, with the process's GC target back: never between a refresh and the
// report of its outcome. (The executable's own pages are left alone: dropping them from the process
// lowered RSS, not the working set the kubelet sees, which never counted them; docs/performance.md.)
func (a *Agent) releaseSoon() {
	a.releaseMu.Lock()
	defer a.releaseMu.Unlock()
	if a.release == nil {
		a.release = time.AfterFunc(releaseDelay, a.releaseNow)
		return
	}
	a.release.Reset(releaseDelay)
}

func (a *Agent) releaseNow() {
	a.releaseMu.Lock()
	if a.gcBase != 0 {
		debug.SetGCPercent(a.gcBase)
		a.gcBase = 0
	}
	a.releaseMu.Unlock()
	debug.FreeOSMemory()
}

// busy begins a refresh: no release while it runs (a pending one waits for the next releaseSoon),
// and the GC target raised for a small payload (Config.RefreshGCPercent) until releaseNow.
func (a *Agent) busy(payload int) {
	a.releaseMu.Lock()
	defer a.releaseMu.Unlock()
	if a.release != nil {
		a.release.Stop()
	}
	if a.cfg.RefreshGCPercent > 0 && payload < SmallPayload && a.gcBase == 0 {
		a.gcBase = debug.SetGCPercent(a.cfg.RefreshGCPercent)
	}
}

// releaseDelay is how long the agent waits after a refresh (or its start) before FreeOSMemory.
const releaseDelay = 2 * time.Second

// follow points a pool-following source at the Node's NodePool. A snapshot of the pool followed
// before is not this node's any more: it is dropped before the switch.
func (a *Agent) follow() {
	f, ok := a.cfg.Source.(PoolFollower)
	if !ok {
		return
	}
	n := a.nodes.get()
	if n == nil && a.following {
		return // the Node is gone for now (or being recreated): keep the pool it had
	}
	pool := ""
	if n != nil {
		pool = n.Labels[api.LabelNodePool]
	}
	if a.following && pool == a.pool {
		return
	}
	a.desired.clear()
	a.following, a.pool = true, pool
	f.Follow(pool)
	a.cfg.Metrics.setPool(pool)
	a.log.Info("following the NodePool's payload", "pool", pool)
}

// work takes the work item and reconciles once; false when the queue shut down. The queue's
// limiter is the loop's one backoff: a reconcile that failed comes back when the limiter says, and
// the failure's next attempt is when it said (Decide reads the limiter's Backoff and holds a retry
// back until then, whatever else wakes the loop).
func (a *Agent) work(ctx context.Context) bool {
	key, shutdown := a.queue.Get()
	if shutdown {
		return false
	}
	defer a.queue.Done(key)
	requeueAfter, err := a.reconcile(ctx)
	switch {
	case err != nil:
		a.queue.AddRateLimited(key)
	case requeueAfter > 0:
		a.queue.AddAfter(key, requeueAfter)
	}
	return true
}

// errRefreshFailed makes a failed refresh's retry wait for the limiter.
var errRefreshFailed = errors.New("the refresh failed")

// errNotSettled: refreshes that concluded, yet the decision still asks for one (the record does not
// follow): back off rather than spin.
var errNotSettled = errors.New("refreshed twice and the decision still asks for a refresh")

// reconcile decides from the observed state and converges one step: observe, decide (pure),
// report (annotations, Events, metrics, pacing), then act at most once. After an act it asks for
// another reconcile at once, which decides on the outcome.
func (a *Agent) reconcile(ctx context.Context) (requeueAfter time.Duration, err error) {
	a.follow()
	in, snap := a.observe()
	d := Decide(in)
	a.publish(in, d)
	if ctx.Err() != nil {
		return 0, nil
	}
	switch d.Action {
	case ActHeal:
		a.heal(ctx, snap, d)
		a.enqueue()
		return 0, nil
	case ActRefresh:
		if a.last.Digest == snap.digest() && (a.last.Outcome == api.OutcomeApplied || a.last.Outcome == api.OutcomeNoop) {
			if a.unsettled++; a.unsettled > 1 {
				a.unsettled = 0
				return 0, errNotSettled
			}
		}
		switch a.refresh(ctx, snap, d) { // the snapshot decided on, even if a newer one arrived meanwhile
		case waitingForSlot:
			return 0, nil // the pacer wakes the loop
		case slotLost:
			return time.Second, nil // wait for a slot again
		}
		a.enqueue() // decide at once on the outcome (a failure is reported now, retried when work says)
		if a.last.Outcome == api.OutcomeFailed {
			return 0, errRefreshFailed
		}
		return 0, nil
	}
	a.unsettled = 0
	return d.Wait, nil
}

// observe gathers what a decision depends on: the desired content, the node's record and pending
// transaction, the Node as the watch has it, the drift watch's finding and the last outcome.
func (a *Agent) observe() (Inputs, Snapshot) {
	in := Inputs{RecordHash: apply.CurrentHash(a.cfg.Host.StateDir), Node: a.nodes.get(), Last: a.last,
		Backoff: a.retries.state(workKey), MaxAttempts: a.cfg.MaxAttempts, Now: time.Now()}
	if phase, err := actions.Pending(a.cfg.Host.StateDir); phase != "" || err != nil {
		in.Pending = phase
		if err != nil {
			in.Pending = "unreadable journal: " + err.Error()
		}
	}
	snap, ok := a.desired.get()
	if ok {
		in.Snapshot = &snap
	}
	if a.drift != nil {
		a.drift.load(a.cfg.Host, in.RecordHash, delegated(in.Node))
		in.Drift = a.drift.report()
		if in.Drift == "" {
			a.lastHeal = ""
		}
		in.Heal, in.LastHeal = a.cfg.Drift == DriftHeal, a.lastHeal
	}
	return in, snap
}

// publish is the one step that reports a decision: the Event (once per EventKey), the metrics of
// the refresh that concluded last (once), the pacing slot settled by what the Node shows, and the
// annotations.
func (a *Agent) publish(in Inputs, d Decision) {
	if d.Event != nil && d.EventKey != a.lastEvent {
		a.event(d.Event.Type, d.Event.Reason, d.Event.Message)
		if d.Event.Reason == EventDeferred {
			a.cfg.Metrics.observe(api.OutcomeDeferred, time.Time{})
		}
		if d.Event.Type == corev1.EventTypeWarning {
			a.log.Warn("refresh problem", "reason", d.Event.Reason, "message", d.Event.Message)
		}
	}
	a.lastEvent = d.EventKey
	if m := a.counted; m != nil {
		a.counted = nil
		m.count(a.cfg.Metrics)
	}
	if a.cfg.Pacer != nil && in.Snapshot != nil {
		// The slot goes back only once the Node shows the outcome (see pacing).
		shown := api.NodeStatus{}
		if in.Node != nil {
			shown = api.FromAnnotations(in.Node.Annotations)
		}
		a.cfg.Pacer.Settle(context.Background(), a.pool, in.Snapshot.Hash, shown)
	}
	// A refresh says Working only once its plan writes (refresh), and paced only once it holds a
	// slot: a no-op, a refusal or an invalid payload shows its outcome in one patch, and the API
	// never shows more nodes refreshing than slots.
	if d.Report != nil && d.Action != ActRefresh {
		a.report(*d.Report)
	}
}

// takeSlot takes a pacing slot for a refresh that will write, or reports the wait: false when the
// node must wait (the pacer wakes the loop).
func (a *Agent) takeSlot(ctx context.Context, snap Snapshot, d Decision) bool {
	ok, waiting := a.cfg.Pacer.Acquire(ctx, a.pool, snap.Hash)
	if !ok {
		if waiting != nil {
			r := *d.Report
			r.Waiting = waiting
			a.report(r)
		}
		return false
	}
	if shown, _ := a.reporter.current(); shown.Waiting != nil && shown.Desired == d.Report.Desired {
		a.reportLazy(*d.Report) // already shown Working: its Done may well come first
		return true
	}
	a.report(*d.Report)
	return true
}

// lazyWorking is how long a refresh that took a pacing slot after waiting for one goes on showing
// its waiting reason before it says it is refreshing.
const lazyWorking = time.Second

func (a *Agent) reportLazy(s api.NodeStatus) {
	a.reporter.setLazy(s, lazyWorking)
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.setState(s.State)
	}
}

// slotGate is apply's Gate for a paced refresh: a drain stops as soon as the watch shows the slot
// taken over, and the slot must still be this node's, by its own clock, when the transaction begins
// (after a drain that may have outlasted it).
type slotGate struct {
	pacer      *pacing.Pacer
	pool, hash string
}

func (g slotGate) Lost() <-chan struct{} { return g.pacer.Lost() }

func (g slotGate) Proceed(context.Context) error {
	if !g.pacer.Holds(g.pool, g.hash) {
		return errLostSlot
	}
	return nil
}

// errLostSlot stops a paced refresh whose slot expired or was taken over before its transaction.
var errLostSlot = errors.New("the refresh slot was lost before the transaction (expired or taken over); nothing written")

func (a *Agent) report(s api.NodeStatus) {
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
	a.cfg.Recorder.Event(ref, kind, reason, api.Truncate(msg, api.MaxReasonLen))
}
