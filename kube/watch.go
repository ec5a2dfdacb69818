package kube

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// ReconnectBackoff is how every watch the agent opens retries while the API server is away: from
// 100 ms doubling to 1 s, each delay up to a fifth longer (so a pool's reconnects spread), for as
// long as it takes. client-go's default for reflectors and informers (800 ms doubling to 30 s,
// jitter 1.0, reset only after two minutes without a failure) left a pool's slot Lease watch 4–45 s
// behind a restarted API server while every slot was free, and made each outage within two minutes
// slower than the last. The agent watches a handful of named objects, so a short cap costs the API
// server at most one cheap request per node per watch per second while it is down.
var ReconnectBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Cap: time.Second, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32}

// Watched is a watch opened by Watch.
type Watched struct {
	store  cache.Store
	synced atomic.Bool
}

// Watch keeps the objects lw lists and watches in a client-go reflector that reconnects with
// ReconnectBackoff, until ctx ends. changed gets every object that appears (old nil), changes or
// goes (cur nil), a relist included, after the store has it; calls are one at a time, in order. No
// indexers, no resync: an object that does not change costs nothing.
// listed, when not nil, is called after every (re)list, once its changes were said.
func Watch(ctx context.Context, name string, lw cache.ListerWatcher, obj runtime.Object, changed func(old, cur any), listed func()) *Watched {
	w := &Watched{}
	s := &notifyStore{Store: cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc), changed: changed, listed: listed, synced: &w.synced}
	w.store = s
	backoff := ReconnectBackoff
	r := cache.NewReflectorWithOptions(lw, obj, s, cache.ReflectorOptions{Name: name, Backoff: &backoff})
	go r.RunWithContext(ctx)
	return w
}

// NameListWatch lists and watches the one object called name (a field selector on it).
func NameListWatch(c cache.Getter, resource, namespace, name string) *cache.ListWatch {
	return cache.NewFilteredListWatchFromClient(c, resource, namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	})
}

// List is the objects as last seen.
func (w *Watched) List() []any { return w.store.List() }

// HasSynced reports whether the first list (or the watch's initial events) arrived.
func (w *Watched) HasSynced() bool { return w.synced.Load() }

// WaitSynced waits for the first list, or ctx's end.
func (w *Watched) WaitSynced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), w.HasSynced)
}

// notifyStore is a store that says what changed.
type notifyStore struct {
	cache.Store
	mu      sync.Mutex // one change at a time, in order
	changed func(old, cur any)
	listed  func()
	synced  *atomic.Bool
}

func (s *notifyStore) Add(obj any) error    { return s.put(obj) }
func (s *notifyStore) Update(obj any) error { return s.put(obj) }

func (s *notifyStore) put(obj any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, _, _ := s.Store.Get(obj)
	if err := s.Store.Update(obj); err != nil {
		return err
	}
	s.changed(old, obj)
	return nil
}

func (s *notifyStore) Delete(obj any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok, _ := s.Store.Get(obj)
	if !ok {
		old = obj
	}
	if err := s.Store.Delete(obj); err != nil {
		return err
	}
	s.changed(old, nil)
	return nil
}

// Replace takes a (re)list: what differs from the store is said as changes.
func (s *notifyStore) Replace(items []any, rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := map[string]any{}
	for _, o := range s.Store.List() {
		if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(o); err == nil {
			before[k] = o
		}
	}
	if err := s.Store.Replace(items, rv); err != nil {
		return err
	}
	for _, o := range items {
		k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(o)
		if err != nil {
			continue
		}
		old, was := before[k]
		delete(before, k)
		if !was {
			s.changed(nil, o)
		} else if resourceVersion(old) != resourceVersion(o) {
			s.changed(old, o)
		}
	}
	for _, old := range before {
		s.changed(old, nil)
	}
	s.synced.Store(true)
	if s.listed != nil {
		s.listed()
	}
	return nil
}

func resourceVersion(o any) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
