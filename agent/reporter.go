package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/openshift/refresh-agent/api"
)

// reporter keeps the node's annotations equal to the newest api.NodeStatus. It compares with the Node as
// the watch last saw it, not with what it sent: a recreated Node or a hand-edited annotation is
// corrected. It sends one merge patch of the agent's annotations, only when they differ, retried
// with jittered backoff while the API server is unreachable (the loop never waits for it).
type reporter struct {
	client   nodePatcher
	nodeName string
	log      *slog.Logger
	node     func() *corev1.Node // the Node as the watch last saw it, nil when it does not exist

	mu   sync.Mutex
	want api.NodeStatus
	has  bool
	wake chan struct{}
	// notBefore holds a lazy status back until then (setLazy).
	notBefore time.Time

	// syncMu makes sync one at a time (the run loop, and the final flush on shutdown).
	syncMu sync.Mutex
	// The last patch sent and the Node's resourceVersion when it was sent: until the watch shows a
	// newer Node, that patch is taken as applied rather than sent again.
	sent   api.NodeStatus
	sentRV string
	// ackRV is the Node's resourceVersion after the last patch, when the client says it: a watch
	// event older than it (the agent's own earlier patch, delivered late) is not a reason to send
	// the same patch again.
	ackRV string
}

// nodePatcherRV is a nodePatcher that also says the resourceVersion its patch produced.
type nodePatcherRV interface {
	PatchNodeRV(ctx context.Context, name string, patch []byte) (string, error)
}

// nodePatcher is the one API call the reporter makes (kube.Client implements it).
type nodePatcher interface {
	PatchNode(ctx context.Context, name string, patch []byte) error
}

func newReporter(client nodePatcher, nodeName string, log *slog.Logger, node func() *corev1.Node) *reporter {
	return &reporter{client: client, nodeName: nodeName, log: log, node: node, wake: make(chan struct{}, 1)}
}

// set records the status to publish.
func (r *reporter) set(s api.NodeStatus) {
	s = s.Bounded()
	r.mu.Lock()
	r.want, r.has, r.notBefore = s, true, time.Time{}
	r.mu.Unlock()
	signal(r.wake)
}

// setLazy records s to publish once it has been wanted for delay: sooner, another status replaces
// it unsent. A node shown Working while it waited for a pacing slot stays Working when it takes
// one; saying so again is worth a patch only when the refresh lasts (its Done follows otherwise).
func (r *reporter) setLazy(s api.NodeStatus, delay time.Duration) {
	s = s.Bounded()
	r.mu.Lock()
	r.want, r.has, r.notBefore = s, true, time.Now().Add(delay)
	r.mu.Unlock()
	time.AfterFunc(delay, r.poke)
}

// current returns the status last asked for.
func (r *reporter) current() (api.NodeStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.want, r.has
}

// poke makes the reporter compare again (the Node changed).
func (r *reporter) poke() { signal(r.wake) }

func (r *reporter) run(ctx context.Context) {
	// Capped lower than refresh retries: a patch is tiny, and the node's state should show soon after
	// the API server comes back. Jittered, so a fleet does not retry in lockstep.
	b := retryBackoff(time.Second, 30*time.Second)
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-retry:
		}
		retry = nil
		if err := r.sync(ctx); err != nil {
			d := b.Step()
			r.log.Warn("updating node annotations failed; will retry", "err", err, "in", d)
			retry = time.After(d)
			continue
		}
		b = retryBackoff(time.Second, 30*time.Second)
	}
}

// retryBackoff doubles from min to max, each delay up to half longer so that many nodes retrying
// the same failure do not do it in lockstep.
func retryBackoff(min, max time.Duration) wait.Backoff {
	return wait.Backoff{Duration: min, Factor: 2, Jitter: 0.5, Cap: max, Steps: math.MaxInt32}
}

// sync patches when the wanted status differs from what the Node shows (a lazy status only once
// due, unless final).
func (r *reporter) sync(ctx context.Context) error { return r.syncNow(ctx, false) }

func (r *reporter) syncNow(ctx context.Context, final bool) error {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	r.mu.Lock()
	want, has, notBefore := r.want, r.has, r.notBefore
	r.mu.Unlock()
	if !has || (!final && time.Now().Before(notBefore)) {
		return nil
	}
	n := r.node()
	if n == nil {
		return nil // no Node to annotate; its creation wakes the reporter
	}
	if api.FromAnnotations(n.Annotations).Equal(want) {
		return nil
	}
	if r.sent.Equal(want) && (r.sentRV == n.ResourceVersion || olderRV(n.ResourceVersion, r.ackRV)) {
		return nil // sent; the watch has not delivered the result yet
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": mergePatch(want)}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ack := ""
	if c, ok := r.client.(nodePatcherRV); ok {
		if ack, err = c.PatchNodeRV(ctx, r.nodeName, patch); err != nil {
			return err
		}
	} else if err := r.client.PatchNode(ctx, r.nodeName, patch); err != nil {
		return err
	}
	r.sent, r.sentRV, r.ackRV = want, n.ResourceVersion, ack
	return nil
}

// mergePatch is the annotations of a merge patch that makes the Node show s: every annotation of
// the status set, the ones s leaves out (no drift) removed.
func mergePatch(s api.NodeStatus) map[string]any {
	ann := s.Annotations()
	out := make(map[string]any, len(api.StatusAnnotations))
	for _, k := range api.StatusAnnotations {
		if v, ok := ann[k]; ok {
			out[k] = v
		} else {
			out[k] = nil
		}
	}
	return out
}

// olderRV says resourceVersion a is older than b (the API server's are etcd revisions, integers;
// anything else is never older).
func olderRV(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

// flush patches the wanted status now, retrying for up to timeout: the last word before exit.
func (r *reporter) flush(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var err error
	_ = retryBackoff(100*time.Millisecond, 2*time.Second).DelayFunc().Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		err = r.syncNow(ctx, true)
		return err == nil, nil
	})
	return err
}
