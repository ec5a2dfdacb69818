package agent

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/refresh-agent/kube"
)

// oneWatch keeps one named object (a field selector on its name) in a kube.Watch (the agent's
// reconnect backoff), and calls push with the object, or nil when it does not exist, after every
// change, the first list included.
type oneWatch struct {
	w *kube.Watched
}

func watchOne(ctx context.Context, client cache.Getter, resource, namespace, name string, obj runtime.Object, push func(any)) *oneWatch {
	var mu sync.Mutex
	pushed := false
	lw := kube.NameListWatch(client, resource, namespace, name)
	w := kube.Watch(ctx, resource+"/"+name, lw, obj, func(_, cur any) {
		mu.Lock()
		pushed = true
		mu.Unlock()
		push(cur) // the selector admits at most one object: cur is it, or nil when it went
	}, func() {
		mu.Lock()
		first := !pushed
		pushed = true
		mu.Unlock()
		if first {
			push(nil) // listed, and not there
		}
	})
	return &oneWatch{w: w}
}

// get returns the object as last seen, or nil.
func (w *oneWatch) get() any {
	items := w.w.List()
	if len(items) == 0 {
		return nil
	}
	return items[0]
}

// HasSynced reports whether the first list arrived.
func (w *oneWatch) HasSynced() bool { return w.w.HasSynced() }

// waitSynced waits for the first list, or ctx's end.
func (w *oneWatch) waitSynced(ctx context.Context) bool { return w.w.WaitSynced(ctx) }
