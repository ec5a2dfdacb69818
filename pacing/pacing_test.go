package pacing

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/openshift/refresh-agent/api"
)

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "1": "1", "10%": "10%", " 3 ": "3", "100%": "100%", "+10%": "10%", "010": "10",
		"2147483647": "2147483647"} {
		l, err := ParseLimit(in)
		if err != nil || l.String() != want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %s", in, l, err, want)
		}
	}
	// Beyond int32 (intstr's range) is refused: no pool has that many nodes.
	for _, bad := range []string{"", "-1", "0%", "101%", "x", "1.5", "%", "-5%", "10 %", "2147483648", "1e3", "0x10"} {
		if _, err := ParseLimit(bad); err == nil || !strings.Contains(err.Error(), "--max-concurrent") {
			t.Errorf("ParseLimit(%q): want an error naming the flag, got %v", bad, err)
		}
	}
	if l, _ := ParseLimit("0"); !l.Unpaced() {
		t.Error("0 must be unpaced")
	}
}

func TestSlots(t *testing.T) {
	l, _ := ParseLimit("10%")
	for size, want := range map[int]int{0: 1, 5: 1, 19: 1, 20: 2, 100: 10, 105: 10} {
		if got := l.Slots(size); got != want {
			t.Errorf("10%% of %d = %d, want %d", size, got, want)
		}
	}
	n, _ := ParseLimit("3")
	if n.Slots(100) != 3 {
		t.Error("a number is a number")
	}
}

func TestSettle(t *testing.T) {
	cases := []struct {
		name          string
		held, desired string
		shown         api.NodeStatus
		marked        bool
		want          settleAction
	}{
		{"working", "h1", "h1", shownAs(api.StateWorking, "h0", "h1", ""), false, keep},
		{"new content while still shown refreshing", "h1", "h2", shownAs(api.StateWorking, "h0", "h1", ""), false, keep},
		{"new content while shown waiting", "h1", "h2", shownAs(api.StateWorking, "h0", "h1", api.ReasonWaitingPrefix+" (1/1 in use)"), false, release},
		{"new content after a no-op's Done", "h1", "h2", shownAs(api.StateDone, "h2", "h2", ""), false, release},
		{"done patch not seen yet", "h1", "h1", shownAs(api.StateWorking, "h0", "h1", ""), false, keep},
		{"done accepted", "h1", "h1", shownAs(api.StateDone, "h1", "h1", ""), false, release},
		{"failed keeps and marks", "h1", "h1", shownAs(api.StateDegraded, "h0", "h1", ""), false, markFailed},
		{"failed, marked", "h1", "h1", shownAs(api.StateDegraded, "h0", "h1", ""), true, keep},
		{"new content releases a failed slot", "h1", "h2", shownAs(api.StateDegraded, "h0", "h1", ""), true, release},
		{"refused releases", "h1", "h1", shownAs(api.StateUnreconcilable, "h0", "h1", ""), false, release},
		{"desired unknown", "h1", "", shownAs(api.StateDegraded, "h0", "h1", ""), true, keep},
		{"old Done does not release", "h1", "h1", shownAs(api.StateDone, "h0", "h0", ""), false, keep},
	}
	for _, c := range cases {
		if got := settle(c.held, c.desired, c.shown, c.marked); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

// fakeLeases is an API server's Lease store: resourceVersions, conflicts, and a watch that
// delivers every write to every pacer.
type fakeLeases struct {
	mu       sync.Mutex
	rv       int
	leases   map[string]*coordv1.Lease
	watchers []*Pacer
	pending  []*coordv1.Lease
	writes   int
	// failCreates fails that many creates with a server error (a transient API failure).
	failCreates int
	opened      []string     // the watches opened, "node selector/name"
	delivered   atomic.Int64 // Lease events the pacers' scopes let through
}

var leaseGR = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func (f *fakeLeases) Create(_ context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	f.mu.Lock()
	f.writes++
	if f.failCreates > 0 {
		f.failCreates--
		f.mu.Unlock()
		return nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	}
	if _, ok := f.leases[l.Name]; ok {
		f.mu.Unlock()
		return nil, apierrors.NewAlreadyExists(leaseGR, l.Name)
	}
	return f.store(l), nil
}

func (f *fakeLeases) Update(_ context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	f.mu.Lock()
	f.writes++
	cur, ok := f.leases[l.Name]
	if !ok {
		f.mu.Unlock()
		return nil, apierrors.NewNotFound(leaseGR, l.Name)
	}
	if cur.ResourceVersion != l.ResourceVersion {
		f.mu.Unlock()
		return nil, apierrors.NewConflict(leaseGR, l.Name, nil)
	}
	return f.store(l), nil
}

// store saves l (f.mu held) and unlocks; the watchers see it on the next sync, as a watch
// delivers after the write's answer.
func (f *fakeLeases) store(l *coordv1.Lease) *coordv1.Lease {
	f.rv++
	l = l.DeepCopy()
	l.ResourceVersion = strconv.Itoa(f.rv)
	f.leases[l.Name] = l
	ws := append([]*Pacer(nil), f.watchers...)
	f.mu.Unlock()
	// The watch: every other pacer sees the write now (the tests call one pacer at a time; the
	// writer, whose lock is held, saw its own write in the answer).
	for _, w := range ws {
		if w.mu.TryLock() {
			if w.seesLocked(l.Name) {
				f.delivered.Add(1) // what its watches would have delivered to it
			}
			w.observeLocked(l.DeepCopy())
			w.mu.Unlock()
		}
	}
	return l.DeepCopy()
}

// WatchLeases is the watch's first list (what selector and name select); the writes after it reach
// the pacers through store, as far as each one's scope lets them (observeLocked).
func (f *fakeLeases) WatchLeases(_ context.Context, _, selector, name string, changed func(old, cur *coordv1.Lease)) {
	f.watchFor("", selector, name, changed)
}

// watchOf is node's watcher of f, so that f.opened says whose watch each is.
type watchOf struct {
	f    *fakeLeases
	node string
}

func (w watchOf) WatchLeases(_ context.Context, _, selector, name string, changed func(old, cur *coordv1.Lease)) {
	w.f.watchFor(w.node, selector, name, changed)
}

func (f *fakeLeases) watchFor(node, selector, name string, changed func(old, cur *coordv1.Lease)) {
	f.mu.Lock()
	f.opened = append(f.opened, node+" "+selector+"/"+name)
	var list []*coordv1.Lease
	for _, l := range f.leases {
		if (name == "" || l.Name == name) && selector == api.LabelSlotPool+"="+l.Labels[api.LabelSlotPool] {
			list = append(list, l.DeepCopy())
		}
	}
	f.mu.Unlock()
	for _, l := range list {
		changed(nil, l)
	}
}

// sync delivers the writes so far to every watcher.
func (f *fakeLeases) sync() {
	f.mu.Lock()
	pending, ws := f.pending, append([]*Pacer(nil), f.watchers...)
	f.pending = nil
	f.mu.Unlock()
	for _, l := range pending {
		for _, w := range ws {
			w.Observe(l.DeepCopy())
		}
	}
}

func (f *fakeLeases) holders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.leases {
		if h := holder(l); h != "" {
			out = append(out, h)
		}
	}
	return out
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type pushFunc = func(map[string]string, bool)

// fakeNodes lists the pool's node names and delivers Node annotations to the pacers that follow them.
type fakeNodes struct {
	names []string
	lists *atomic.Int64

	mu     sync.Mutex
	shown  map[string]map[string]string
	follow map[string][]pushFunc
}

func newFakeNodes(n int) *fakeNodes {
	f := &fakeNodes{lists: &atomic.Int64{}, shown: map[string]map[string]string{}, follow: map[string][]pushFunc{}}
	for i := 0; i < n; i++ {
		f.names = append(f.names, "node-"+strconv.Itoa(i))
	}
	return f
}

func (f *fakeNodes) NodeNames(context.Context, string) ([]string, error) {
	f.lists.Add(1)
	return f.names, nil
}

func (f *fakeNodes) WatchNodeAnnotations(ctx context.Context, name string, push func(map[string]string, bool)) {
	f.mu.Lock()
	f.follow[name] = append(f.follow[name], push)
	a := f.shown[name]
	f.mu.Unlock()
	push(a, true) // every node of the pool exists

	<-ctx.Done()
}

// set is what node's Node shows now; its followers see it.
func (f *fakeNodes) set(name string, s api.NodeStatus) {
	a := s.Annotations()
	f.mu.Lock()
	f.shown[name] = a
	fs := append([]pushFunc{}, f.follow[name]...)
	f.mu.Unlock()
	for _, push := range fs {
		push(a, true)
	}
}

// pool is n pacers racing for slots (no node lister: no order).
func pool(t *testing.T, name string, n int, limit string, clk *clock) (*fakeLeases, []*Pacer) {
	return newPool(t, name, n, limit, clk, nil)
}

func newPool(t *testing.T, name string, n int, limit string, clk *clock, nodes *fakeNodes) (*fakeLeases, []*Pacer) {
	l, err := ParseLimit(limit)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLeases{leases: map[string]*coordv1.Lease{}}
	var ps []*Pacer
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for i := 0; i < n; i++ {
		cfg := Config{Leases: f, Watch: watchOf{f, "node-" + strconv.Itoa(i)}, Namespace: "ns", Node: "node-" + strconv.Itoa(i), Limit: l, TTL: time.Minute, Now: clk.now}
		if nodes != nil {
			cfg.Nodes = nodes
		}
		p := New(cfg)
		p.Start(ctx, func() {})
		p.ensurePool(name) // the watch's first list
		ps = append(ps, p)
	}
	f.watchers = ps
	return f, ps
}

func TestAtMostNHoldAndFailuresHaltThePool(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "workers", 10, "3", clk)
	ctx := context.Background()
	var got []int
	for i, p := range ps {
		if ok, _ := p.Acquire(ctx, "workers", "h1"); ok {
			got = append(got, i)
		}
	}
	if len(got) != 3 || len(f.holders()) != 3 {
		t.Fatalf("holders %v (%v), want 3", got, f.holders())
	}
	ok, waiting := ps[5].Acquire(ctx, "workers", "h1")
	if ok || reasonOf(waiting) != "waiting for a refresh slot (3/3 in use)" {
		t.Fatalf("a fourth node: ok %v, %q", ok, reasonOf(waiting))
	}
	// Two fail and keep their slots; the third is Done and gives its slot back once the Node says so.
	ps[got[0]].Settle(ctx, "workers", "h1", shownAs(api.StateDegraded, "h0", "h1", ""))
	ps[got[1]].Settle(ctx, "workers", "h1", shownAs(api.StateDegraded, "h0", "h1", ""))
	ps[got[2]].Settle(ctx, "workers", "h1", shownAs(api.StateWorking, "h0", "h1", ""))
	if len(f.holders()) != 3 {
		t.Fatal("released before the Done patch was seen")
	}
	ps[got[2]].Settle(ctx, "workers", "h1", shownAs(api.StateDone, "h1", "h1", ""))
	if len(f.holders()) != 2 {
		t.Fatalf("holders after Done: %v", f.holders())
	}
	// One more gets the free slot and fails too: the pool halts.
	ok, _ = ps[5].Acquire(ctx, "workers", "h1")
	if !ok {
		t.Fatal("the freed slot was not taken")
	}
	ps[5].Settle(ctx, "workers", "h1", shownAs(api.StateDegraded, "h0", "h1", ""))
	ok, waiting = ps[6].Acquire(ctx, "workers", "h1")
	if ok || reasonOf(waiting) != "waiting for a refresh slot (3/3 in use); halted: 3 nodes failed" {
		t.Fatalf("halted pool: ok %v, %q", ok, reasonOf(waiting))
	}
	// A failed node renews: its slot never expires while it lives.
	clk.add(50 * time.Second)
	for _, p := range ps {
		p.renew(ctx)
	}
	clk.add(50 * time.Second)
	if ok, _ := ps[7].Acquire(ctx, "workers", "h1"); ok {
		t.Fatal("took the slot of a failed node that renews")
	}
	// New content: each failed node releases its own slot when it sees it.
	for _, i := range []int{got[0], got[1], 5} {
		ps[i].Settle(ctx, "workers", "h2", shownAs(api.StateDegraded, "h0", "h1", ""))
	}
	if h := f.holders(); len(h) != 0 {
		t.Fatalf("new content left holders %v", h)
	}
}

func TestExpiredSlotIsTakenOver(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "p", 3, "1", clk)
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("first node got no slot")
	}
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("two holders of one slot")
	}
	clk.add(59 * time.Second)
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("taken over before the TTL")
	}
	clk.add(2 * time.Second) // node-0 died: it never renewed
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("an expired slot was not taken over")
	}
	if h := f.holders(); len(h) != 1 || h[0] != "node-1" {
		t.Fatalf("holders %v", h)
	}
	// node-0 comes back: it sees it lost the slot and does not release node-1's.
	ps[0].Settle(ctx, "p", "h1", shownAs(api.StateDone, "h1", "h1", ""))
	if h := f.holders(); len(h) != 1 || h[0] != "node-1" {
		t.Fatalf("holders after the old holder settled: %v", h)
	}
}

func TestPercentCountsThePool(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	nodes := newFakeNodes(30)
	f, ps := newPool(t, "p", 30, "10%", clk, nodes)
	for _, p := range ps {
		p.Acquire(context.Background(), "p", "h1") // waits for the order: none was written yet
	}
	clk.add(time.Second) // past every node's turn to write the order
	for _, p := range ps {
		p.Acquire(context.Background(), "p", "h1")
	}
	if h := f.holders(); len(h) != 3 {
		t.Fatalf("10%% of 30: %d holders", len(h))
	}
	// The first node lists the pool and writes the order; the others count the order.
	if c := nodes.lists.Load(); c != 1 {
		t.Fatalf("the pool was listed %d times", c)
	}
}

func TestSpreadDelaysTheFirstAttemptSilently(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	_, ps := pool(t, "p", 1, "1", clk)
	p := ps[0]
	p.cfg.Spread = time.Hour
	ok, waiting := p.Acquire(context.Background(), "p", "h1")
	if !ok && reasonOf(waiting) != "" {
		t.Fatalf("in the spread delay: %q, want nothing to report", reasonOf(waiting))
	}
	clk.add(time.Hour)
	if ok, _ := p.Acquire(context.Background(), "p", "h1"); !ok {
		t.Fatal("no slot after the spread delay")
	}
}

func TestRestartedHolderFindsItsSlot(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "p", 2, "1", clk)
	ctx := context.Background()
	ps[0].Acquire(ctx, "p", "h1")
	// A new Pacer for the same node (the agent restarted) sees its Lease through the watch.
	l, _ := ParseLimit("1")
	again := New(Config{Leases: f, Namespace: "ns", Node: "node-0", Limit: l, TTL: time.Minute, Now: clk.now})
	again.ensurePool("p")
	for _, le := range f.leases {
		again.Observe(le.DeepCopy())
	}
	if ok, _ := again.Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("the restarted holder did not find its slot")
	}
	again.Settle(ctx, "p", "h1", shownAs(api.StateDone, "h1", "h1", ""))
	if h := f.holders(); len(h) != 0 {
		t.Fatalf("holders %v", h)
	}
}

func TestWaitingReasonIsStableButForHalting(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "p", 4, "2", clk)
	ctx := context.Background()
	ps[0].Acquire(ctx, "p", "h1")
	ps[1].Acquire(ctx, "p", "h1")
	_, first := ps[2].Acquire(ctx, "p", "h1")
	if reasonOf(first) != "waiting for a refresh slot (2/2 in use)" {
		t.Fatalf("first: %q", reasonOf(first))
	}
	// ps[0] is Done: a slot frees, ps[3] takes it; ps[2] keeps its reason (no patch per slot change).
	ps[0].Settle(ctx, "p", "h1", shownAs(api.StateDone, "h1", "h1", ""))
	if ok, _ := ps[3].Acquire(ctx, "p", "h1"); !ok {
		t.Fatalf("the freed slot: %v", f.holders())
	}
	ps[1].Settle(ctx, "p", "h1", shownAs(api.StateDegraded, "h0", "h1", ""))
	if _, again := ps[2].Acquire(ctx, "p", "h1"); reasonOf(again) != reasonOf(first) {
		t.Fatalf("reason changed without halting: %q", reasonOf(again))
	}
	ps[3].Settle(ctx, "p", "h1", shownAs(api.StateDegraded, "h0", "h1", ""))
	if _, halted := ps[2].Acquire(ctx, "p", "h1"); reasonOf(halted) != "waiting for a refresh slot (2/2 in use); halted: 2 nodes failed" {
		t.Fatalf("halting not said: %q", reasonOf(halted))
	}
}

// eventually polls f (the follow watches deliver on their own goroutines).
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if f() {
			return
		}
	}
	t.Fatalf("never: %s", what)
}

// orderedPool is n pacers with the pool's node lister, past the delay before writing the order.
func orderedPool(t *testing.T, n int, limit string) (*fakeLeases, []*Pacer, *fakeNodes, *clock) {
	clk := &clock{t: time.Unix(1000, 0)}
	nodes := newFakeNodes(n)
	f, ps := newPool(t, "p", n, limit, clk, nodes)
	for _, p := range ps {
		if ok, waiting := p.Acquire(context.Background(), "p", "h1"); ok || reasonOf(waiting) != "" {
			t.Fatalf("%s before any order: %v %q", p.cfg.Node, ok, reasonOf(waiting))
		}
	}
	clk.add(time.Second)
	return f, ps, nodes, clk
}

// A pool of 10 with 3 slots refreshes in the order's queues: each next node takes its slot when
// the holder's Done is on its Node, with no release and no lost race: one order, one take per node,
// one release per queue.
func TestOrderedPoolHandsOverWithoutRaces(t *testing.T) {
	f, ps, nodes, clk := orderedPool(t, 10, "3")
	if most := runPool(t, f, ps, nodes, "h1"); most > 3 {
		t.Fatalf("%d holders at once", most)
	}
	// 1 order + 10 takes + 3 releases (the last node of each queue); no conflict.
	if f.writes != 14 {
		t.Fatalf("%d Lease writes, want 14", f.writes)
	}
	for _, p := range ps {
		if p.lost != 0 {
			t.Fatalf("%s lost %d races", p.cfg.Node, p.lost)
		}
	}
	// New content: a new order over the slots the last content left (free, its turns stale).
	for _, p := range ps {
		p.Acquire(context.Background(), "p", "h2")
	}
	clk.add(time.Second)
	if most := runPool(t, f, ps, nodes, "h2"); most > 3 {
		t.Fatalf("%d holders at once", most)
	}
	if f.writes != 28 {
		t.Fatalf("%d Lease writes after the second content, want 28", f.writes)
	}
}

// runPool runs every node of the pool to Done for hash and returns the most slots held at once.
func runPool(t *testing.T, f *fakeLeases, ps []*Pacer, nodes *fakeNodes, hash string) int {
	t.Helper()
	ctx := context.Background()
	done := map[int]bool{}
	most := 0
	for rounds := 0; len(done) < len(ps); rounds++ {
		if rounds > 2000 {
			t.Fatalf("the pool did not complete %s: done %v, holders %v", hash, done, f.holders())
		}
		for i, p := range ps {
			if done[i] {
				continue
			}
			if ok, _ := p.Acquire(ctx, "p", hash); !ok {
				continue
			}
			most = max(most, len(f.holders()))
			shown := shownAs(api.StateDone, hash, hash, "")
			nodes.set(p.cfg.Node, shown)
			p.Settle(ctx, "p", hash, shown)
			done[i] = true
		}
		time.Sleep(time.Millisecond) // the follow watches
	}
	if h := f.holders(); len(h) != 0 {
		t.Fatalf("slots still held after %s: %v", hash, h)
	}
	return most
}

// A holder that is Done keeps its slot for the handover window only: when the next node of its
// queue does not take it (it needed no refresh), the holder gives it back and the node after takes
// it one window later.
func TestHandoverWindowSkipsANodeThatDoesNotCome(t *testing.T) {
	f, ps, nodes, clk := orderedPool(t, 4, "1")
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("node-0 is first")
	}
	if ok, _ := ps[2].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("node-2 before its turn")
	}
	done := shownAs(api.StateDone, "h1", "h1", "")
	nodes.set("node-0", done)
	ps[0].Settle(ctx, "p", "h1", done)
	if h := f.holders(); len(h) != 1 {
		t.Fatalf("released at once although node-1 may come: %v", h)
	}
	clk.add(ps[0].handover())
	ps[0].Settle(ctx, "p", "h1", done)
	if h := f.holders(); len(h) != 0 {
		t.Fatalf("not released after the handover window: %v", h)
	}
	if ok, _ := ps[2].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("node-2 took node-1's turn at once")
	}
	clk.add(ps[0].handover())
	if ok, _ := ps[2].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("node-2 did not take the slot once node-1's turn passed")
	}
}

// The next node never takes the slot of a holder whose refresh failed: the failure keeps the slot,
// and with every slot kept the pool halts.
func TestNextNodeDoesNotTakeAFailedHoldersSlot(t *testing.T) {
	f, ps, nodes, _ := orderedPool(t, 5, "2")
	ctx := context.Background()
	for _, i := range []int{0, 1} {
		if ok, _ := ps[i].Acquire(ctx, "p", "h1"); !ok {
			t.Fatalf("node-%d is first", i)
		}
		failed := shownAs(api.StateDegraded, "h0", "h1", "reload failed")
		nodes.set(ps[i].cfg.Node, failed)
		ps[i].Settle(ctx, "p", "h1", failed)
	}
	// node-2 is next in node-0's queue; behind a failure it looks for any free slot (issue 26: it
	// used to follow node-0's Node), and finds none.
	eventually(t, "node-2 sees both failures", func() bool {
		_, waiting := ps[2].Acquire(ctx, "p", "h1")
		return waiting != nil && waiting.Halted
	})
	ok, waiting := ps[2].Acquire(ctx, "p", "h1")
	if ok || !strings.Contains(reasonOf(waiting), "halted: 2 nodes failed") {
		t.Fatalf("node-2: %v %q (holders %v)", ok, reasonOf(waiting), f.holders())
	}
}

// A node that joined the pool after its order was written takes a slot that stayed free for a
// while, once the order's nodes are through.
func TestNodeOutsideTheOrderGetsASlotLater(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	nodes := newFakeNodes(3) // node-3 is not listed yet when the order is written
	f, ps := newPool(t, "p", 4, "1", clk, nodes)
	for _, p := range ps {
		p.Acquire(context.Background(), "p", "h1")
	}
	clk.add(time.Second)
	runPool(t, f, ps[:3], nodes, "h1")
	late := ps[3]
	if ok, waiting := late.Acquire(context.Background(), "p", "h1"); ok || waiting == nil {
		t.Fatalf("the late node took a slot at once (%v) or said nothing (%q)", ok, reasonOf(waiting))
	}
	clk.add(late.handover())
	if ok, _ := late.Acquire(context.Background(), "p", "h1"); !ok {
		t.Fatalf("the late node got no slot: %v", f.holders())
	}
}

// An order whose first hundred names never come (stale, or written by a hostile node) delays the
// real nodes by a few handover windows, not by a hundred.
func TestAnOrderOfAbsentNodesDoesNotStallThePool(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	nodes := newFakeNodes(0)
	for i := 0; i < 100; i++ {
		nodes.names = append(nodes.names, "absent-"+strconv.Itoa(i))
	}
	nodes.names = append(nodes.names, "node-0")
	f, ps := newPool(t, "p", 1, "1", clk, nodes)
	p := ps[0]
	p.Acquire(context.Background(), "p", "h1")
	clk.add(time.Second)
	if ok, _ := p.Acquire(context.Background(), "p", "h1"); ok {
		t.Fatal("took the slot ahead of the order")
	}
	clk.add(time.Duration(maxBehind) * p.handover())
	if ok, _ := p.Acquire(context.Background(), "p", "h1"); !ok {
		t.Fatalf("still waiting after %d handover windows: %v", maxBehind, f.holders())
	}
}

// remove deletes a Lease as an admin would; every pacer's watch sees it.
func (f *fakeLeases) remove(name string) {
	f.mu.Lock()
	l := f.leases[name]
	delete(f.leases, name)
	ws := append([]*Pacer(nil), f.watchers...)
	f.mu.Unlock()
	for _, w := range ws {
		w.forget(l.DeepCopy())
	}
}

// A slot deleted under a refresh in progress is created again by its holder at once, and the next
// node does not take it meanwhile: still one node refreshing.
func TestADeletedSlotIsTakenAgainByItsHolder(t *testing.T) {
	f, ps, _, _ := orderedPool(t, 3, "1")
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("node-0 is first")
	}
	f.remove(api.SlotName("p", 0))
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("the next node took a slot deleted under a refresh at once")
	}
	eventually(t, "node-0 holds its slot again", func() bool {
		h := f.holders()
		return len(h) == 1 && h[0] == "node-0"
	})
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatalf("the next node took the recreated slot: %v", f.holders())
	}
}

// A holder counts on its slot only while its last renewal is younger than the TTL (less a margin),
// by its own clock, and never once the watch shows another holder: a drain that outlasted the slot
// must not go on into the transaction.
func TestHoldsByTheHoldersOwnClock(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "p", 2, "1", clk)
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("no slot")
	}
	if !ps[0].Holds("p", "h1") || ps[0].Holds("p", "h2") || ps[1].Holds("p", "h1") {
		t.Fatal("Holds: the holder for its hash only")
	}
	clk.add(time.Minute - time.Minute/6) // TTL a minute, never renewed (a stalled process)
	if ps[0].Holds("p", "h1") {
		t.Fatal("held past its TTL less the margin")
	}
	ps[0].renew(ctx)
	if !ps[0].Holds("p", "h1") {
		t.Fatal("a renewal did not count")
	}
	// Another node takes the slot over (it saw it expire): the old holder's watch shows it.
	clk.add(2 * time.Minute)
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); !ok {
		t.Fatalf("no takeover: %v", f.holders())
	}
	if ps[0].Holds("p", "h1") {
		t.Fatal("still holds a slot taken over")
	}
}

// Agents whose --max-concurrent differ (a DaemonSet rollout that changes it) agree on the count the
// order's writer computed, each never above its own: with the writer at 1, an agent at 3 takes one
// slot only.
func TestTheOrdersSlotCountBindsThePool(t *testing.T) {
	f, ps, nodes, _ := orderedPool(t, 4, "1")
	three, _ := ParseLimit("3")
	ps[3].cfg.Limit = three // node-3 runs with --max-concurrent 3
	if most := runPool(t, f, ps, nodes, "h1"); most > 1 {
		t.Fatalf("%d slots held at once under an order written at 1", most)
	}
	if ps[3].sized.m != 1 {
		t.Fatalf("node-3 used %d slots", ps[3].sized.m)
	}
}

// A deleted slot whose re-creation fails for a while stays its holder's: the next node does not
// take it while its TTL runs (however many handover windows pass), the holder retries until it is
// created again.
func TestADeletedSlotStaysItsHoldersThroughFailedCreates(t *testing.T) {
	f, ps, _, clk := orderedPool(t, 3, "1")
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("node-0 is first")
	}
	f.mu.Lock()
	f.failCreates = 2
	f.mu.Unlock()
	f.remove(api.SlotName("p", 0))
	clk.add(3 * ps[1].handover())
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("the next node took a deleted slot before its TTL")
	}
	eventually(t, "node-0 holds its slot again", func() bool {
		h := f.holders()
		return len(h) == 1 && h[0] == "node-0"
	})
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatalf("the next node took the recreated slot: %v", f.holders())
	}
}

// A slot deleted while its holder is gone (nobody creates it again) frees once its TTL ran out.
func TestADeletedSlotOfAGoneHolderFreesAfterItsTTL(t *testing.T) {
	f, ps, _, clk := orderedPool(t, 3, "1")
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("node-0 is first")
	}
	ps[0].mu.Lock()
	f.watchers = f.watchers[1:] // node-0's agent is gone: it sees nothing more
	ps[0].mu.Unlock()
	f.remove(api.SlotName("p", 0))
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); ok {
		t.Fatal("taken at once")
	}
	clk.add(time.Minute + time.Second) // the TTL
	if ok, _ := ps[1].Acquire(ctx, "p", "h1"); !ok {
		t.Fatalf("not taken after the TTL: %v", f.holders())
	}
}

// A node that stops waiting (its refresh concluded without a slot) stops following the holder's
// Node: no watch is left open on an idle node.
func TestFollowEndsWithTheWait(t *testing.T) {
	_, ps, nodes, _ := orderedPool(t, 3, "1")
	ctx := context.Background()
	ps[0].Acquire(ctx, "p", "h1")
	nodes.set("node-0", shownAs(api.StateWorking, "h0", "h1", ""))
	eventually(t, "node-1 follows node-0", func() bool {
		ps[1].Acquire(ctx, "p", "h1")
		ps[1].mu.Lock()
		defer ps[1].mu.Unlock()
		return ps[1].followed.name == "node-0"
	})
	ps[1].Settle(ctx, "p", "h1", shownAs(api.StateDone, "h1", "h1", "")) // concluded without a slot
	ps[1].mu.Lock()
	defer ps[1].mu.Unlock()
	if ps[1].want.hash != "" || ps[1].followed.stop != nil {
		t.Fatalf("node-1 stopped waiting (%q) but still follows %q", ps[1].want.hash, ps[1].followed.name)
	}
}

// A node restarted after a failure (its Node still shows Degraded for the content) tries again: the
// Degraded it shows from before is not a conclusion that ends its wait (which started its spread
// delay over on every decision, for ever).
func TestARestartedDegradedNodeTriesAgain(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "p", 1, "1", clk)
	p := ps[0]
	p.cfg.Spread = time.Second
	ctx := context.Background()
	degraded := shownAs(api.StateDegraded, "h0", "h1", "reload failed (attempt 2 of 3; retrying)")
	for i := 0; i < 3; i++ {
		p.Settle(ctx, "p", "h1", degraded) // every decision settles first
		if ok, _ := p.Acquire(ctx, "p", "h1"); ok {
			if i == 0 {
				t.Fatal("no spread delay")
			}
			return
		}
		clk.add(time.Second)
	}
	t.Fatalf("never took the free slot: %v", f.holders())
}

// A failed canary whose agent then dies keeps the pool halted for that content (its failure stands:
// no takeover by TTL walks the bad payload through the pool); new content frees its slot once the
// TTL ran out.
func TestAFailedHoldersSlotDoesNotExpireForItsContent(t *testing.T) {
	f, ps, _, clk := orderedPool(t, 3, "1")
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("node-0 is first")
	}
	ps[0].Settle(ctx, "p", "h1", shownAs(api.StateDegraded, "h0", "h1", "reload failed"))
	f.watchers = f.watchers[1:] // node-0's agent dies: it renews nothing more
	clk.add(10 * time.Minute)
	ok, waiting := ps[1].Acquire(ctx, "p", "h1")
	if ok || !strings.Contains(reasonOf(waiting), "halted: 1 node failed") {
		t.Fatalf("a dead failed holder's slot was taken for the same content: %v %q (%v)", ok, reasonOf(waiting), f.holders())
	}
	// The fix: new content. Its slot frees by the TTL (nobody is left to release it).
	for _, p := range ps[1:] {
		p.Acquire(ctx, "p", "h2")
	}
	taken := false
	for round := 0; round < 3 && !taken; round++ {
		clk.add(ps[1].handover()) // node-0, first in the order, does not come
		for _, p := range ps[1:] {
			if ok, _ := p.Acquire(ctx, "p", "h2"); ok {
				taken = true
			}
		}
	}
	if !taken {
		t.Fatalf("new content did not get the dead failed holder's slot: %v", f.holders())
	}
}

// Lost closes when the watch shows the held slot given to another node or freed by someone else (a
// drain in progress stops then); not while the holder keeps it.
func TestLostClosesWhenTheSlotIsTakenFromTheHolder(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f, ps := pool(t, "p", 2, "1", clk)
	ctx := context.Background()
	if ok, _ := ps[0].Acquire(ctx, "p", "h1"); !ok {
		t.Fatal("no slot")
	}
	lost := ps[0].Lost()
	ps[0].renew(ctx)
	select {
	case <-lost:
		t.Fatal("closed while held")
	default:
	}
	// An admin clears the holder.
	f.mu.Lock()
	l := f.leases[api.SlotName("p", 0)].DeepCopy()
	l.Spec.HolderIdentity = nil
	f.store(l) // unlocks
	select {
	case <-lost:
	case <-time.After(time.Second):
		t.Fatal("not closed when the slot was freed by someone else")
	}
}

// shownAs is what a Node shows, read as the pacer reads it (a waiting reason becomes a wait).
func shownAs(state, current, desired, reason string) api.NodeStatus {
	return api.FromAnnotations(map[string]string{api.AnnotationState: state, api.AnnotationCurrent: current,
		api.AnnotationDesired: desired, api.AnnotationReason: reason})
}

// reasonOf is a wait as the Node's reason says it ("" for none).
func reasonOf(w *api.Waiting) string {
	if w == nil {
		return ""
	}
	return w.String()
}
