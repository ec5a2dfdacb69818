package agent

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// reconnectBackoff is how the agent's watches retry after the API server went away. client-go's
// default (800 ms doubling to 30 s, jitter 1.0, reset only after 2 min without failure) means that
// after an outage of a minute the next attempt can come 30–60 s after the server is back: payloads
// published right after an outage took 18–26 s to arrive. The agent watches one object per
// resource, so a short cap costs the API server one cheap request per node per second at most, and
// the jitter spreads a fleet's reconnects.
var reconnectBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Cap: time.Second, Factor: 2, Jitter: 0.2, Steps: 1 << 20}

// oneWatch keeps one named object (a field selector on its name) in a reflector with the agent's
// reconnect backoff, and calls push with the object, or nil when it does not exist, after every
// change, re-list included. It is an informer without the shared machinery: no indexers, no resync.
type oneWatch struct {
	store  *cache.UndeltaStore
	synced atomic.Bool
}

func watchOne(ctx context.Context, client cache.Getter, resource, namespace, name string, obj runtime.Object, push func(any)) *oneWatch {
	w := &oneWatch{}
	w.store = cache.NewUndeltaStore(func(items []any) {
		w.synced.Store(true)
		var cur any
		for _, it := range items {
			cur = it // the selector admits at most one object
		}
		push(cur)
	}, cache.MetaNamespaceKeyFunc)
	lw := cache.NewListWatchFromClient(client, resource, namespace, fields.OneTermEqualSelector("metadata.name", name))
	backoff := reconnectBackoff
	r := cache.NewReflectorWithOptions(lw, obj, w.store, cache.ReflectorOptions{Name: resource + "/" + name, Backoff: &backoff})
	go r.RunWithContext(ctx)
	return w
}

// get returns the object as last seen, or nil.
func (w *oneWatch) get() any {
	items := w.store.List()
	if len(items) == 0 {
		return nil
	}
	return items[0]
}

// HasSynced reports whether the first list arrived.
func (w *oneWatch) HasSynced() bool { return w.synced.Load() }

// waitSynced waits for the first list, or ctx's end.
func (w *oneWatch) waitSynced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), w.HasSynced)
}
