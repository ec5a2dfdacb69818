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
	"sort"
	"strconv"
	"strings"
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
	mu     sync.Mutex
	rv     int
	leases map[string]*coordv1.Lease
	// leaseW are the Lease watches by the name they select ("": a label selector only).
	leaseW   map[string]map[*simWatcher]bool
	nodes    map[string]map[string]string // annotations
	nodeW    map[string][]*simWatcher
	names    []string
	requests atomic.Int64
	// by counts the requests by kind, as the audit log's "verb resource".
	by     sync.Map // string → *atomic.Int64
	events struct{ leases, nodes atomic.Int64 }
	// watches counts the Lease watches opened, the pool's (wide) ones apart.
	watches, wide atomic.Int64
}

func (s *simAPI) count(kind string) {
	s.requests.Add(1)
	c, _ := s.by.LoadOrStore(kind, &atomic.Int64{})
	c.(*atomic.Int64).Add(1)
}

func (s *simAPI) breakdown(n int) string {
	var parts []string
	s.by.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(v.(*atomic.Int64).Load())/float64(n)))
		return true
	})
	sort.Strings(parts)
	return strings.Join(parts, ", ")
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
	s.count("create leases")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.leases[l.Name]; ok {
		s.count("create leases existing")
		s.requests.Add(-1)
		return nil, apierrors.NewAlreadyExists(simLeaseGR, l.Name)
	}
	return s.storeLocked(l), nil
}

func (s *simAPI) Update(_ context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	s.count("update leases")
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.leases[l.Name]
	if !ok {
		return nil, apierrors.NewNotFound(simLeaseGR, l.Name)
	}
	if cur.ResourceVersion != l.ResourceVersion {
		s.count("update leases conflicting") // counted twice: as an update, and as one that conflicted
		s.requests.Add(-1)
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
	for _, key := range []string{"", l.Name} {
		for w := range s.leaseW[key] {
			if !w.matches(l) {
				continue
			}
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

// WatchLeases: the Leases as they are, then every matching write, until ctx ends. Both are watch
// events and no list: client-go's reflector (watch-list, on by default since 1.35) gets the
// initial state as the watch's first events, as the audit log of test/scale shows (no list of
// Leases).
func (s *simAPI) WatchLeases(ctx context.Context, _, selector, name string, changed func(old, cur *coordv1.Lease)) {
	s.watches.Add(1)
	if name == "" {
		s.wide.Add(1)
	}
	w := newSimWatcher(ctx, selector, name)
	w.changed = changed
	s.mu.Lock()
	var initial []*coordv1.Lease
	if name != "" {
		if l, ok := s.leases[name]; ok && w.matches(l) {
			initial = append(initial, l.DeepCopy())
		}
	} else {
		for _, l := range s.leases {
			if w.matches(l) {
				initial = append(initial, l.DeepCopy())
			}
		}
	}
	if s.leaseW[name] == nil {
		s.leaseW[name] = map[*simWatcher]bool{}
	}
	s.leaseW[name][w] = true
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		delete(s.leaseW[name], w)
		s.mu.Unlock()
	}()
	for _, l := range initial {
		s.events.leases.Add(1)
		changed(nil, l)
	}
}

func (s *simAPI) NodeNames(context.Context, string) ([]string, error) {
	for i := 0; i == 0 || i < len(s.names); i += 500 {
		s.count("list nodes") // kube.NodeNames lists pages of 500
	}
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
	s.count("patch nodes")
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

// modelRun runs n simulated nodes at limit through two refreshes, each refresh taking refreshTime:
// the first after the agents' start-up, the second with their watches open from the first.
func modelRun(n int, limit string, refreshTime time.Duration) ([]string, error) {
	l, err := pacing.ParseLimit(limit)
	if err != nil {
		return nil, err
	}
	s := &simAPI{leases: map[string]*coordv1.Lease{}, leaseW: map[string]map[*simWatcher]bool{}, nodes: map[string]map[string]string{}, nodeW: map[string][]*simWatcher{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%05d", i)
		s.names = append(s.names, name)
		s.nodes[name] = map[string]string{api.AnnotationCurrent: "v0", api.AnnotationDesired: "v0", api.AnnotationState: api.StateDone}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const pool = "model"
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
	// Start-up, as an agent's: each settles the content it already runs (its watches open then).
	for i, name := range s.names {
		pacers[i].Settle(ctx, pool, "v0", s.shown(name))
	}
	var rows []string
	for k, hash := range []string{"v1", "v2"} {
		r, err := s.refresh(ctx, pacers, wakes, pool, "v"+strconv.Itoa(k), hash, refreshTime)
		if err != nil {
			return nil, err
		}
		which := "the first refresh after start-up"
		if k > 0 {
			which = "the next refresh (watches open)"
		}
		slots := l.Slots(n)
		fmt.Fprintf(os.Stderr, "scale: model %d nodes, %s: %.1f s, %.2f requests (%s), %.1f watch events per node\n", n, which, r.took.Seconds(), r.req, r.by, r.leaseEv+r.nodeEv)
		rows = append(rows, row(fmt.Sprintf("model: %d nodes, --max-concurrent %s (%d slots), %s; package pacing in-process against a simulated API with watch fan-out, each refresh %s (`go run ./test/scale -model-only -model %d`)", n, limit, slots, which, refreshTime, n),
			fmt.Sprintf("publish → all Done %.1f s; %.2f requests per node per refresh (%s); %.1f watch events per node per refresh (Leases %.1f, followed Nodes %.1f); Lease watches opened per node %.2f (of all the pool's Leases %.3f); most refreshing at once %d",
				r.took.Seconds(), r.req, r.by, r.leaseEv+r.nodeEv, r.leaseEv, r.nodeEv, r.watches, r.wide, r.most),
			"requests bounded; watch events ≤ a small constant (20), whatever the pool's size", r.req <= 6 && r.leaseEv+r.nodeEv <= 20 && r.most <= slots))
	}
	return rows, nil
}

type modelResult struct {
	took                                time.Duration
	req, leaseEv, nodeEv, watches, wide float64
	by                                  string
	most                                int
}

// refresh publishes hash (the nodes run from) and runs every node's agent loop until all are Done,
// then a few seconds more (the last handovers and releases).
func (s *simAPI) refresh(parent context.Context, pacers []*pacing.Pacer, wakes []chan struct{}, pool, from, hash string, refreshTime time.Duration) (modelResult, error) {
	n := len(pacers)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s.by.Clear()
	s.watches.Store(0)
	s.wide.Store(0)
	l0, n0, r0 := s.events.leases.Load(), s.events.nodes.Load(), s.requests.Load()
	var done, exited sync.WaitGroup
	var most, working atomic.Int64
	start := time.Now()
	done.Add(n)
	exited.Add(n)
	for i, name := range s.names {
		go func(p *pacing.Pacer, name string, wake chan struct{}) {
			defer exited.Done()
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
						s.patch(name, api.NodeStatus{Current: from, Desired: hash, State: api.StateWorking})
					}
					time.Sleep(refreshTime)
					working.Add(-1)
					s.patch(name, api.NodeStatus{Current: hash, Desired: hash, State: api.StateDone})
					continue
				} else if waiting != nil && shown.Waiting == nil {
					s.patch(name, api.NodeStatus{Current: from, Desired: hash, State: api.StateWorking, Waiting: waiting})
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
		return modelResult{}, fmt.Errorf("model: %d nodes not all Done within 20 minutes", n)
	}
	took := time.Since(start)
	time.Sleep(3 * time.Second) // the last handovers and releases
	cancel()
	exited.Wait()
	perNode := func(v int64) float64 { return float64(v) / float64(n) }
	return modelResult{took: took, req: perNode(s.requests.Load() - r0), leaseEv: perNode(s.events.leases.Load() - l0),
		nodeEv: perNode(s.events.nodes.Load() - n0), watches: perNode(s.watches.Load()), wide: perNode(s.wide.Load()),
		by: s.breakdown(n), most: int(most.Load())}, nil
}
