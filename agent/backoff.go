package agent

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"

	"github.com/openshift/refresh-agent/api"
)

// Backoff is the work queue's limiter's account of the failures in a row: how many attempts failed
// and when the next may start. Decide reads it; only the limiter (retries) writes it.
type Backoff struct {
	Failures int
	Until    time.Time
}

// retries is the loop's one backoff and the work queue's rate limiter: client-go's per-item
// exponential failure limiter (RetryBase doubling to RetryMax), each delay jittered up by as much
// as half again so that nodes failing on the same payload do not retry (and restart their units) in
// lockstep. It keeps when the delay it gave ends, so that a reconcile something else wakes meanwhile
// (the agent's own patch, the Node's status, the pacer) holds the retry back until then.
type retries struct {
	limiter workqueue.TypedRateLimiter[string]
	mu      sync.Mutex
	until   map[string]time.Time
}

func newRetries(base, max time.Duration) *retries {
	return &retries{limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, max), until: map[string]time.Time{}}
}

// When is the next delay for item (counting one more failure).
func (r *retries) When(item string) time.Duration {
	d := wait.Jitter(r.limiter.When(item), 0.5)
	r.mu.Lock()
	r.until[item] = time.Now().Add(d)
	r.mu.Unlock()
	return d
}

// Forget starts item's backoff over.
func (r *retries) Forget(item string) {
	r.limiter.Forget(item)
	r.mu.Lock()
	delete(r.until, item)
	r.mu.Unlock()
}

func (r *retries) NumRequeues(item string) int { return r.limiter.NumRequeues(item) }

// state is item's backoff as Decide reads it.
func (r *retries) state(item string) Backoff {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Backoff{Failures: r.limiter.NumRequeues(item), Until: r.until[item]}
}

// conclude counts a concluded refresh (out, after last) into the backoff: a failure goes on the
// streak of the same content's failures under the same retry annotation; anything else (a success,
// a refusal, new content, an operator's retry) starts the backoff over. The failure itself is counted
// when its reconcile returns an error (work).
func (r *retries) conclude(last, out LastRefresh) {
	if out.Outcome != api.OutcomeFailed || !continues(last, out) {
		r.Forget(workKey)
	}
}

// continues says the failure out goes on last's streak of failures.
func continues(last, out LastRefresh) bool {
	return last.Outcome == api.OutcomeFailed && last.Digest == out.Digest && last.RetryToken == out.RetryToken
}
