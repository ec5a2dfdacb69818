package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"
)

// reporter keeps the node's annotations equal to the newest Status: one merge patch of the four
// annotations, sent only when they differ from what the node already says, retried with backoff
// while the API server is unreachable (the loop never waits for it).
type reporter struct {
	client   nodePatcher
	nodeName string
	log      *slog.Logger
	observed func() (map[string]string, bool) // the node's annotations as the informer last saw them

	mu      sync.Mutex
	want    Status
	has     bool
	written Status // the last status patched (or found on the node at start)
	primed  bool   // written is known
	wake    chan struct{}
}

// nodePatcher is the one API call the reporter makes (kube.Client implements it).
type nodePatcher interface {
	PatchNode(ctx context.Context, name string, patch []byte) error
}

func newReporter(client nodePatcher, nodeName string, log *slog.Logger, observed func() (map[string]string, bool)) *reporter {
	return &reporter{client: client, nodeName: nodeName, log: log, observed: observed, wake: make(chan struct{}, 1)}
}

// set records the status to publish.
func (r *reporter) set(s Status) {
	s.Reason = truncate(s.Reason, MaxReasonLen)
	r.mu.Lock()
	r.want, r.has = s, true
	r.mu.Unlock()
	signal(r.wake)
}

// current returns the status last asked for.
func (r *reporter) current() (Status, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.want, r.has
}

func (r *reporter) run(ctx context.Context) {
	// Capped lower than refresh retries: a patch is tiny, and the node's state should show soon after
	// the API server comes back.
	b := newBackoff(time.Second, 30*time.Second)
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
			d := b.next()
			r.log.Warn("updating node annotations failed; will retry", "err", err, "in", d)
			retry = time.After(d)
			continue
		}
		b.reset()
	}
}

// sync patches when the wanted status differs from the last one written. The first comparison is
// against what the node already shows, so a restarted agent sends nothing when nothing changed.
func (r *reporter) sync(ctx context.Context) error {
	r.mu.Lock()
	want, has, written, primed := r.want, r.has, r.written, r.primed
	r.mu.Unlock()
	if !has {
		return nil
	}
	if !primed {
		if ann, ok := r.observed(); ok {
			written = statusOf(ann)
			r.mu.Lock()
			r.written, r.primed = written, true
			r.mu.Unlock()
		}
	}
	if written == want {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": want.annotations()}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = r.client.PatchNode(ctx, r.nodeName, patch)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.written, r.primed = want, true
	r.mu.Unlock()
	return nil
}
