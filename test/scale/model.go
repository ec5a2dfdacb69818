package main

// The large-pool model: package pacing itself, in-process, one Pacer per simulated node, against a
// simulated API server whose watches fan out as the real one's do (every watcher whose selector
// matches a write gets an event). It counts what the real harness counts from the audit log and
// the API server's metrics: requests (Lease writes, node lists, Node patches) and watch events
// delivered, per node per refresh, and the time from publish to all Done.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/pacing"
)

type simAPI struct {
	mu       sync.Mutex
	rv       int
	leases   map[string]*coordv1.Lease
	leaseW   []*simWatcher
	nodes    map[string]map[string]string // annotations
	nodeW    map[string][]*simWatcher
	names    []string
	requests atomic.Int64
	events   struct{ leases, nodes atomic.Int64 }
}

// simWatcher delivers a watch's events in order on its own goroutine, as a watch stream does.
type simWatcher struct {
	selector, name string
	mu             sync.Mutex
	queue          []func()
	signal         chan struct{}
	changed        func(old, cur *coordv1.Lease)
	pushNode       func(map[string]string, bool)
}

func newSimWatcher(ctx context.Context, selector, name string) *simWatcher {
	w := &simWatcher{selector: selector, name: name, signal: make(chan struct{}, 1)}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.signal:
			}
			w.mu.Lock()
			q := w.queue
			w.queue = nil
			w.mu.Unlock()
			for _, f := range q {
				f()
			}
		}
	}()
	return w
}

func (w *simWatcher) send(f func()) {
	w.mu.Lock()
	w.queue = append(w.queue, f)
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

var simLeaseGR = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func (s *simAPI) Create(_ context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	s.requests.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.leases[l.Name]; ok {
		return nil, apierrors.NewAlreadyExists(simLeaseGR, l.Name)
	}
	return s.storeLocked(l), nil
}

func (s *simAPI) Update(_ context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	s.requests.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.leases[l.Name]
	if !ok {
		return nil, apierrors.NewNotFound(simLeaseGR, l.Name)
	}
	if cur.ResourceVersion != l.ResourceVersion {
		return nil, apierrors.NewConflict(simLeaseGR, l.Name, nil)
	}
	return s.storeLocked(l), nil
}

func (s *simAPI) storeLocked(l *coordv1.Lease) *coordv1.Lease {
	s.rv++
	old := s.leases[l.Name]
	l = l.DeepCopy()
	l.ResourceVersion = strconv.Itoa(s.rv)
	s.leases[l.Name] = l
	for _, w := range s.leaseW {
		if w.matches(l) {
			s.events.leases.Add(1)
			o, c := old.DeepCopy(), l.DeepCopy()
			w.send(func() { w.deliver(o, c) })
		}
	}
	return l.DeepCopy()
}

func (w *simWatcher) matches(l *coordv1.Lease) bool {
	if w.name != "" && l.Name != w.name {
		return false
	}
	return w.selector == "" || w.selector == api.LabelSlotPool+"="+l.Labels[api.LabelSlotPool]
}

// deliver is set per watcher by WatchLeases.
func (w *simWatcher) deliver(old, cur *coordv1.Lease) { w.changed(old, cur) }

// WatchLeases: the first list, then every matching write.
func (s *simAPI) WatchLeases(ctx context.Context, _, selector, name string, changed func(old, cur *coordv1.Lease)) {
	w := newSimWatcher(ctx, selector, name)
	w.changed = changed
	s.mu.Lock()
	var initial []*coordv1.Lease
	for _, l := range s.leases {
		if w.matches(l) {
			initial = append(initial, l.DeepCopy())
		}
	}
	s.leaseW = append(s.leaseW, w)
	s.mu.Unlock()
	for _, l := range initial {
		s.events.leases.Add(1)
		changed(nil, l)
	}
}

func (s *simAPI) NodeNames(context.Context, string) ([]string, error) {
	s.requests.Add(1)
	return s.names, nil
}

func (s *simAPI) WatchNodeAnnotations(ctx context.Context, name string, push func(map[string]string, bool)) {
	w := newSimWatcher(ctx, "", name)
	s.mu.Lock()
	a, ok := s.nodes[name]
	s.nodeW[name] = append(s.nodeW[name], w)
	s.mu.Unlock()
	if ok {
		s.events.nodes.Add(1)
		push(a, true)
	}
	w.pushNode = push
	<-ctx.Done()
	s.mu.Lock()
	ws := s.nodeW[name]
	for i, x := range ws {
		if x == w {
			s.nodeW[name] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
}

// patch sets a Node's status (a Node patch); its followers see it.
func (s *simAPI) patch(name string, st api.NodeStatus) {
	s.requests.Add(1)
	a := st.Annotations()
	s.mu.Lock()
	s.nodes[name] = a
	ws := append([]*simWatcher(nil), s.nodeW[name]...)
	s.mu.Unlock()
	for _, w := range ws {
		if w.pushNode != nil {
			s.events.nodes.Add(1)
			push := w.pushNode
			w.send(func() { push(a, true) })
		}
	}
}

func (s *simAPI) shown(name string) api.NodeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return api.FromAnnotations(s.nodes[name])
}

// modelRun runs n simulated nodes at limit through one refresh (each refresh takes refreshTime).
func modelRun(n int, limit string, refreshTime time.Duration) (string, error) {
	l, err := pacing.ParseLimit(limit)
	if err != nil {
		return "", err
	}
	s := &simAPI{leases: map[string]*coordv1.Lease{}, nodes: map[string]map[string]string{}, nodeW: map[string][]*simWatcher{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%05d", i)
		s.names = append(s.names, name)
		s.nodes[name] = map[string]string{api.AnnotationCurrent: "v0", api.AnnotationDesired: "v0", api.AnnotationState: api.StateDone}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const pool, hash = "model", "v1"
	var done sync.WaitGroup
	var most, working atomic.Int64
	wakes := make([]chan struct{}, n)
	pacers := make([]*pacing.Pacer, n)
	for i, name := range s.names {
		wake := make(chan struct{}, 1)
		wakes[i] = wake
		p := pacing.New(pacing.Config{Leases: s, Watch: s, Nodes: s, Namespace: "ns", Node: name, Limit: l, Spread: 500 * time.Millisecond})
		p.Start(ctx, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		pacers[i] = p
	}
	start := time.Now()
	w0, r0 := s.events.leases.Load()+s.events.nodes.Load(), s.requests.Load()
	done.Add(n)
	for i, name := range s.names {
		go func(p *pacing.Pacer, name string, wake chan struct{}) {
			concluded := false
			for {
				shown := s.shown(name)
				p.Settle(ctx, pool, hash, shown)
				if shown.State == api.StateDone && shown.Current == hash {
					if !concluded {
						concluded = true
						done.Done()
					}
				} else if ok, waiting := p.Acquire(ctx, pool, hash); ok {
					w := working.Add(1)
					for m := most.Load(); w > m && !most.CompareAndSwap(m, w); m = most.Load() {
					}
					if shown.State != api.StateWorking || shown.Waiting != nil {
						s.patch(name, api.NodeStatus{Current: "v0", Desired: hash, State: api.StateWorking})
					}
					time.Sleep(refreshTime)
					working.Add(-1)
					s.patch(name, api.NodeStatus{Current: hash, Desired: hash, State: api.StateDone})
					continue
				} else if waiting != nil && shown.Waiting == nil {
					s.patch(name, api.NodeStatus{Current: "v0", Desired: hash, State: api.StateWorking, Waiting: waiting})
				}
				select {
				case <-ctx.Done():
					return
				case <-wake:
				}
			}
		}(pacers[i], name, wakes[i])
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(20 * time.Minute):
		return "", fmt.Errorf("model: %d nodes not all Done within 20 minutes", n)
	}
	took := time.Since(start)
	time.Sleep(3 * time.Second) // the last handovers and releases
	ev := float64(s.events.leases.Load()+s.events.nodes.Load()-w0) / float64(n)
	req := float64(s.requests.Load()-r0) / float64(n)
	fmt.Fprintf(os.Stderr, "scale: model %d nodes: %.1f s, %.2f requests, %.1f watch events per node\n", n, took.Seconds(), req, ev)
	slots := l.Slots(n)
	return row(fmt.Sprintf("model: %d nodes, --max-concurrent %s (%d slots), package pacing in-process against a simulated API with watch fan-out, each refresh %s", n, limit, slots, refreshTime),
		fmt.Sprintf("publish → all Done %.1f s; %.2f requests per node per refresh (Lease writes, node lists, Node patches); %.1f watch events per node per refresh (Leases %.1f, followed Nodes %.1f); most refreshing at once %d",
			took.Seconds(), req, ev, float64(s.events.leases.Load())/float64(n), float64(s.events.nodes.Load())/float64(n), most.Load()),
		"requests bounded; watch events ≤ a small constant", req <= 5 && ev <= 20 && int(most.Load()) <= slots), nil
}
