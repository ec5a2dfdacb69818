package pacing

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/refresh-agent/api"
)

// LeaseAPI writes Leases (kube.Leases implements it).
type LeaseAPI interface {
	Create(ctx context.Context, l *coordv1.Lease) (*coordv1.Lease, error)
	Update(ctx context.Context, l *coordv1.Lease) (*coordv1.Lease, error)
}

// Nodes lists the names of a pool's nodes (for its refresh order and a percentage limit) and
// follows one Node's annotations (the holder of the slot a node is next for); kube.Client
// implements it.
type Nodes interface {
	NodeNames(ctx context.Context, selector string) ([]string, error)
	WatchNodeAnnotations(ctx context.Context, name string, push func(annotations map[string]string, exists bool))
}

// Config wires a Pacer.
type Config struct {
	Leases LeaseAPI
	// Watch lists and watches the namespace's Leases (kube.Leases.REST()); nil in tests that feed
	// Observe themselves.
	Watch     cache.Getter
	Nodes     Nodes
	Namespace string
	Node      string // this node: the holderIdentity of its slot
	Limit     Limit
	// TTL is how long a slot whose holder stopped renewing blocks its pool (default 5 min); the
	// holder renews every TTL/3.
	TTL time.Duration
	// Spread bounds the random delay before each attempt at a slot.
	Spread time.Duration
	Log    *slog.Logger
	Now    func() time.Time // tests
}

// DefaultTTL is the default --slot-ttl.
const DefaultTTL = 5 * time.Minute

// Pacer is one node's side of its pool's slots. Acquire and Settle are called by the agent's one
// worker; the Lease watch and the renewal run beside it.
type Pacer struct {
	cfg  Config
	ctx  context.Context
	wake func()

	// pool is the pool whose Leases are watched (the worker's; not under mu).
	pool      string
	watching  bool
	stopWatch context.CancelFunc

	mu      sync.Mutex
	slots   map[string]slot // the pool's Leases by name
	held    *coordv1.Lease  // the slot this node holds, as last written or seen
	want    wanted          // the refresh waiting for a slot
	sized   sizing
	timer   *time.Timer // a pending wake, at timerAt
	timerAt time.Time
	renews  int // renewals sent (tests, logs)
	// halted is whether the waiting reason last returned said the pool halted: a change wakes the
	// agent to say so (the in-use count alone does not, or every slot change would patch every
	// waiting Node).
	halted bool
	// lost counts this node's lost races for a slot since it began waiting: each widens its next
	// delay (up to 4 spreads), so that the nodes of a busy pool thin out instead of colliding again.
	lost int
	// reason is the waiting reason reported for want: kept as it is while the node waits (but for
	// halting), so that waiting costs one Node patch, not one per slot change.
	reason string

	// The pool's refresh order (order.go): the newest seen, its Lease, and the hash for which it
	// could not be written (the pool races for slots then).
	order      order
	orderLease *coordv1.Lease
	unordered  string
	// followed is the holder of the slot this node is next for.
	followed followed
	// doneAt is when the held slot's refresh was first seen Done: the handover window runs from it.
	doneAt time.Time
}

// followed is the Node this node follows, as its watch last showed it.
type followed struct {
	name   string
	known  bool // the watch delivered
	exists bool
	shown  Shown
	stop   context.CancelFunc
}

// done says the followed holder's refresh to hash concluded (or its Node is gone): its slot is
// free for the next node of the queue.
func (f followed) done(hash string) bool {
	if !f.known {
		return false
	}
	return !f.exists || settle(hash, "", f.shown, true) == release
}

type wanted struct {
	pool, hash string
	since      time.Time // when this node began to want a slot for hash
	notBefore  time.Time
}

type sizing struct {
	pool, hash string
	m          int
}

// New returns a Pacer; Start must run before the other methods.
func New(cfg Config) *Pacer {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Pacer{cfg: cfg, slots: map[string]slot{}}
}

// Start runs the renewal until ctx ends; wake asks the agent to decide again (a slot may be free, a
// release must be retried).
func (p *Pacer) Start(ctx context.Context, wake func()) {
	p.ctx, p.wake = ctx, wake
	go p.renewLoop(ctx)
}

// poolKey is the pool's name in slot names: nodes without a NodePool label share "default".
func poolKey(pool string) string {
	if pool == "" {
		return "default"
	}
	return pool
}

// ensurePool watches pool's Leases (and only them), switching from another pool's.
func (p *Pacer) ensurePool(pool string) {
	if p.watching && p.pool == pool {
		return
	}
	if p.stopWatch != nil {
		p.stopWatch()
	}
	p.mu.Lock()
	p.slots, p.held, p.want, p.sized = map[string]slot{}, nil, wanted{}, sizing{}
	p.order, p.orderLease, p.unordered = order{}, nil, ""
	p.followLocked("")
	p.pool, p.watching = pool, true
	p.mu.Unlock()
	if p.cfg.Watch == nil {
		return
	}
	ctx, cancel := context.WithCancel(p.ctx)
	p.stopWatch = cancel
	lw := cache.NewFilteredListWatchFromClient(p.cfg.Watch, "leases", p.cfg.Namespace, func(o *metav1.ListOptions) {
		o.LabelSelector = api.LabelSlotPool + "=" + pool
	})
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: &coordv1.Lease{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    p.Observe,
			UpdateFunc: func(_, n any) { p.Observe(n) },
			DeleteFunc: p.forget,
		}})
	go ctrl.RunWithContext(ctx)
	cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced)
}

// Observe records a Lease as the watch delivers it.
func (p *Pacer) Observe(obj any) {
	l, ok := obj.(*coordv1.Lease)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observeLocked(l)
	p.maybeWakeLocked()
}

func (p *Pacer) observeLocked(l *coordv1.Lease) {
	if l.Labels[api.LabelSlotPool] != p.pool {
		return
	}
	if l.Name == api.OrderName(p.pool) {
		if p.orderLease != nil && older(l.ResourceVersion, p.orderLease.ResourceVersion) {
			return
		}
		p.orderLease = l
		if o, ok := parseOrder(l, p.cfg.Now()); ok && o.hash != p.order.hash {
			p.order = o
		}
		return
	}
	old, ok := p.slots[l.Name]
	if ok && old.lease.ResourceVersion == l.ResourceVersion {
		return
	}
	if ok && older(l.ResourceVersion, old.lease.ResourceVersion) {
		return // our own write's answer came before the watch caught up
	}
	p.slots[l.Name] = slot{lease: l, observed: p.cfg.Now()}
	if p.held != nil && p.held.Name == l.Name {
		switch h := holder(l); {
		case h == p.cfg.Node:
			p.held = l
		case h == "":
			p.held, p.doneAt = nil, time.Time{}
		case !p.doneAt.IsZero():
			p.cfg.Log.Info("handed the refresh slot over", "slot", l.Name, "to", h)
			p.held, p.doneAt = nil, time.Time{}
		default:
			p.cfg.Log.Warn("pacing slot taken over by another node", "slot", l.Name, "holder", holder(l))
			p.held = nil
		}
	}
}

func (p *Pacer) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	l, ok := obj.(*coordv1.Lease)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.Name == api.OrderName(p.pool) {
		p.orderLease = nil
		return
	}
	delete(p.slots, l.Name)
	if p.held != nil && p.held.Name == l.Name {
		p.held = nil
	}
	p.maybeWakeLocked()
}

// mineLocked is the slot this node holds: the one it wrote, or one the watch shows it holding
// (taken before a restart).
func (p *Pacer) mineLocked() *coordv1.Lease {
	if p.held != nil {
		return p.held
	}
	for _, s := range p.slots {
		if holder(s.lease) == p.cfg.Node {
			p.held = s.lease
			return s.lease
		}
	}
	return nil
}

// maybeWakeLocked wakes the agent after a random delay within the spread when it waits for a slot
// and the watch shows one free.
func (p *Pacer) maybeWakeLocked() {
	if p.want.hash == "" || p.mineLocked() != nil {
		return
	}
	now := p.cfg.Now()
	if p.sized.m == 0 || p.sized.hash != p.want.hash {
		if p.order.hash == p.want.hash && !now.Before(p.want.notBefore) {
			p.wakeAtLocked(now) // the order this node waited for
		}
		return
	}
	v := inspect(p.slots, p.pool, p.cfg.Node, p.sized.m, now)
	pos := -1
	if p.order.hash == p.want.hash {
		pos = p.order.position(p.cfg.Node)
	}
	switch {
	case (v.failed >= p.sized.m) != p.halted && !now.Before(p.want.notBefore):
		p.wakeAtLocked(now)
	case p.order.hash == p.want.hash:
		c := p.chooseOrdered(p.order, pos, p.sized.m, p.want.hash, now)
		switch {
		case c.take != nil && (v.inUse < p.sized.m || c.take.handover):
			p.wakeAtLocked(now)
		case c.follow != p.followed.name:
			p.wakeAtLocked(now) // next for a slot: follow its holder
		case !c.later.IsZero():
			p.wakeAtLocked(c.later)
		}
	case v.inUse < p.sized.m && len(v.free) > 0:
		try, later := p.tryable(v, now)
		switch {
		case len(try) > 0:
			p.wakeAtLocked(now.Add(p.jitter()))
		case !later.IsZero():
			p.wakeAtLocked(later.Add(p.jitter()))
		}
	}
}

// nextExpiryLocked is when the first slot held by another node expires if its holder does not renew
// it (zero: none is held).
func (p *Pacer) nextExpiryLocked(now time.Time) time.Time {
	var next time.Time
	for _, s := range p.slots {
		h := holder(s.lease)
		if h == "" || h == p.cfg.Node || s.expired(now) {
			continue
		}
		if t := s.observed.Add(ttlOf(s.lease) + 100*time.Millisecond); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

// tryable are the free slots this node may try now, and when another becomes tryable. Each node
// prefers one slot (by a hash of its name, among the slots no failed node keeps): when a slot frees,
// only the nodes that prefer it try at once, within the spread, and the others only once it stayed
// free for a spread. So a freed slot is not raced for by every waiting node of a large pool
// (conflicts grow with the waiters per slot, not with the waiters).
func (p *Pacer) tryable(v view, now time.Time) ([]candidate, time.Time) {
	m := p.sized.m
	var open []int // slot indexes no failed node keeps
	for i := 0; i < m; i++ {
		s, ok := p.slots[api.SlotName(p.pool, i)]
		if ok && holder(s.lease) != "" && !s.expired(now) && s.lease.Annotations[api.AnnotationSlotFailed] == "true" {
			continue
		}
		open = append(open, i)
	}
	preferred := -1
	if len(open) > 0 {
		h := fnv.New32a()
		h.Write([]byte(p.cfg.Node))
		preferred = open[int(h.Sum32()%uint32(len(open)))]
	}
	var try []candidate
	var later time.Time
	for _, c := range v.free {
		// A slot never created counts as free since this node's own spread delay ended: by the time
		// a node that does not prefer it would create it, one that does has usually done so.
		freeSince := p.want.notBefore
		if s, seen := p.slots[api.SlotName(p.pool, c.index)]; seen {
			freeSince = s.observed
		}
		if c.index == preferred || now.Sub(freeSince) >= p.cfg.Spread {
			if c.index == preferred {
				try = append([]candidate{c}, try...)
			} else {
				try = append(try, c)
			}
			continue
		}
		if t := freeSince.Add(p.cfg.Spread); later.IsZero() || t.Before(later) {
			later = t
		}
	}
	return try, later
}

func (p *Pacer) jitter() time.Duration {
	if p.cfg.Spread <= 0 {
		return 0
	}
	return rand.N(p.cfg.Spread << min(p.lost, 2))
}

// wakeAtLocked wakes the agent at t: one pending wake at a time, the earliest asked for.
func (p *Pacer) wakeAtLocked(t time.Time) {
	if p.wake == nil {
		return
	}
	if p.timer != nil {
		if !t.Before(p.timerAt) {
			return
		}
		p.timer.Stop()
	}
	var fire *time.Timer
	fire = time.AfterFunc(max(t.Sub(p.cfg.Now()), 0), func() {
		p.mu.Lock()
		if p.timer == fire {
			p.timer = nil
		}
		p.mu.Unlock()
		p.wake()
	})
	p.timer, p.timerAt = fire, t
}

// Acquire asks for a slot to refresh pool's nodes to hash. ok: this node holds one (taken now, or
// kept from an attempt before). Otherwise waiting is the Working reason to report, or "" while the
// node is still in its spread delay (nothing to report yet); the agent is woken when it may try
// again.
func (p *Pacer) Acquire(ctx context.Context, pool, hash string) (ok bool, waiting string) {
	pool = poolKey(pool)
	p.ensurePool(pool)
	if ok, done := p.preAcquire(ctx, pool, hash); done {
		return ok, ""
	}
	if !p.ensureOrder(ctx, pool, hash) {
		return false, "" // the order is on its way; it wakes this node
	}
	m := p.slotsFor(ctx, pool, hash)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	v := inspect(p.slots, pool, p.cfg.Node, m, now)
	pos := -1
	if p.order.hash == hash {
		pos = p.order.position(p.cfg.Node)
	}
	var c *candidate
	var later time.Time
	if p.order.hash == hash {
		ch := p.chooseOrdered(p.order, pos, m, hash, now)
		p.followLocked(ch.follow)
		if ch.take != nil && (v.inUse < m || ch.take.handover) {
			c = ch.take
		}
		later = ch.later
	} else if try, l := p.tryable(v, now); v.inUse < m && len(try) > 0 {
		c = &try[0] // one attempt per wake: the preferred slot first, else one that stayed free
	} else {
		later = l.Add(p.jitter())
		if l.IsZero() {
			later = time.Time{}
		}
	}
	if c != nil {
		var l *coordv1.Lease
		var err error
		if c.lease == nil {
			fresh := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: api.SlotName(pool, c.index), Namespace: p.cfg.Namespace,
				Labels: map[string]string{api.LabelSlotPool: pool}}}
			l, err = p.create(ctx, claim(fresh, p.cfg.Node, hash, p.cfg.TTL, now, m, pos))
		} else {
			l, err = p.write(ctx, claim(c.lease, p.cfg.Node, hash, p.cfg.TTL, now, m, pos))
		}
		if err == nil {
			p.held, p.doneAt = l, time.Time{}
			p.followLocked("")
			inUse := v.inUse
			if !c.handover {
				inUse++
			}
			p.cfg.Log.Info("took a refresh slot", "slot", l.Name, "hash", hash, "position", pos, "inUse", inUse, "slots", m)
			return true, ""
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			p.cfg.Log.Warn("taking a refresh slot failed", "slot", api.SlotName(pool, c.index), "err", err)
			p.wakeAtLocked(now.Add(time.Second + p.jitter()))
		}
		// Another node was faster (or the holder renewed): the watch shows who, and wakes this node
		// when a slot frees; a second look in a while in case it does not.
		p.lost++
		p.wakeAtLocked(now.Add(p.handover() + p.jitter()))
	} else if !later.IsZero() {
		p.wakeAtLocked(later)
	}
	if t := p.nextExpiryLocked(now); !t.IsZero() {
		p.wakeAtLocked(t) // a holder that stops renewing frees its slot then: no event says so
	}
	v = inspect(p.slots, pool, p.cfg.Node, m, now)
	halted := v.failed >= m
	if p.reason == "" || halted != p.halted {
		p.reason = waitingReason(v, m)
	}
	p.halted = halted
	return false, p.reason
}

// followLocked follows the Node of name (the holder of the slot this node is next for), or stops
// following when name is "".
func (p *Pacer) followLocked(name string) {
	if p.followed.name == name {
		return
	}
	if p.followed.stop != nil {
		p.followed.stop()
	}
	p.followed = followed{name: name}
	if name == "" || p.cfg.Nodes == nil || p.ctx == nil {
		return
	}
	ctx, cancel := context.WithCancel(p.ctx)
	p.followed.stop = cancel
	go p.cfg.Nodes.WatchNodeAnnotations(ctx, name, func(a map[string]string, exists bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if ctx.Err() != nil || p.followed.name != name {
			return
		}
		p.followed.known, p.followed.exists = true, exists
		p.followed.shown = Shown{State: a[api.AnnotationState], Current: a[api.AnnotationCurrent],
			Desired: a[api.AnnotationDesired], Reason: a[api.AnnotationReason]}
		if p.want.hash != "" && p.followed.done(p.want.hash) {
			p.wakeAtLocked(p.cfg.Now())
		}
	})
}

// preAcquire settles what needs no slot count: a slot this node holds already (ok, done), or the spread
// delay not over yet (not ok, done).
func (p *Pacer) preAcquire(ctx context.Context, pool, hash string) (ok, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	if p.want.pool != pool || p.want.hash != hash {
		p.want = wanted{pool: pool, hash: hash, since: now, notBefore: now.Add(p.jitter())}
		p.reason, p.lost = "", 0
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
	}
	if mine := p.mineLocked(); mine != nil {
		if mine.Annotations[api.AnnotationSlotHash] == hash {
			return true, true
		}
		// Held for other content (the release on new content did not go through yet): the slot is
		// this node's; move it to the new hash.
		pos := -1
		if p.order.hash == hash {
			pos = p.order.position(p.cfg.Node)
		}
		if l, err := p.write(ctx, claim(mine, p.cfg.Node, hash, p.cfg.TTL, now, p.sized.m, pos)); err == nil {
			p.held, p.doneAt = l, time.Time{}
			return true, true
		}
	}
	if now.Before(p.want.notBefore) {
		p.wakeAtLocked(p.want.notBefore)
		return false, true
	}
	return false, false
}

// claim is l held by node for hash from now; pos is the node's position in the pool's order (-1:
// none).
func claim(l *coordv1.Lease, node, hash string, ttl time.Duration, now time.Time, m, pos int) *coordv1.Lease {
	l = l.DeepCopy()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[api.AnnotationSlotHash] = hash
	if m > 0 {
		// The pool's slot count for hash, so that other nodes need not count the pool again.
		l.Annotations[api.AnnotationSlotCount] = strconv.Itoa(m) + "/" + hash
	}
	delete(l.Annotations, api.AnnotationSlotFailed)
	if pos >= 0 {
		l.Annotations[api.AnnotationSlotTurn] = strconv.Itoa(pos) + "/" + hash
	}
	secs := int32(max(ttl/time.Second, 1))
	t := metav1.NewMicroTime(now)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &node, &secs
	l.Spec.AcquireTime, l.Spec.RenewTime = &t, &t
	return l
}

func (p *Pacer) create(ctx context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	out, err := p.cfg.Leases.Create(ctx, l)
	if err == nil {
		p.observeLocked(out)
	}
	return out, err
}

func (p *Pacer) write(ctx context.Context, l *coordv1.Lease) (*coordv1.Lease, error) {
	out, err := p.cfg.Leases.Update(ctx, l)
	if err == nil {
		p.observeLocked(out)
	}
	return out, err
}

// slotsFor is the number of slots of pool for hash: the limit, or its percentage of the pool's
// nodes (the order's, else counted once per new content).
func (p *Pacer) slotsFor(ctx context.Context, pool, hash string) int {
	p.mu.Lock()
	s, o := p.sized, p.order
	p.mu.Unlock()
	if s.pool == pool && s.hash == hash && s.m > 0 {
		return s.m
	}
	m := p.cfg.Limit.Slots(0)
	if p.cfg.Limit.IsPercent() {
		switch {
		case o.hash == hash:
			m = p.cfg.Limit.Slots(o.n)
		case countedFor(p.slotsCopy(), hash) > 0:
			m = countedFor(p.slotsCopy(), hash)
		default:
			selector := api.LabelNodePool + "=" + pool
			if pool == "default" {
				selector = "!" + api.LabelNodePool
			}
			var names []string
			err := errors.New("no node lister")
			if p.cfg.Nodes != nil {
				names, err = p.cfg.Nodes.NodeNames(ctx, selector)
			}
			switch {
			case err != nil && s.pool == pool && s.m > 0:
				m = s.m
				p.cfg.Log.Warn("counting the pool's nodes failed; keeping the last slot count", "err", err, "slots", m)
			case err != nil:
				p.cfg.Log.Warn("counting the pool's nodes failed; one slot", "err", err)
			default:
				m = p.cfg.Limit.Slots(len(names))
			}
		}
	}
	p.mu.Lock()
	p.sized = sizing{pool: pool, hash: hash, m: m}
	p.mu.Unlock()
	return m
}

func (p *Pacer) slotsCopy() map[string]slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.slots)
}

// Settle gives the slot back, or marks it failed, by what the Node shows (see settle). The agent
// calls it after every decision: it is level-triggered, and a write that failed is retried on a
// wake.
func (p *Pacer) Settle(ctx context.Context, pool, desired string, shown Shown) {
	pool = poolKey(pool)
	p.ensurePool(pool)
	p.mu.Lock()
	defer p.mu.Unlock()
	mine := p.mineLocked()
	if mine == nil {
		if desired != "" && shown.Desired == desired && shown.State != api.StateWorking && p.want.hash == desired {
			p.want = wanted{} // concluded without a slot (a no-op, a refusal): stop waiting
		}
		return
	}
	heldHash := mine.Annotations[api.AnnotationSlotHash]
	var l *coordv1.Lease
	switch settle(heldHash, desired, shown, mine.Annotations[api.AnnotationSlotFailed] == "true") {
	case keep:
		return
	case markFailed:
		l = mine.DeepCopy()
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[api.AnnotationSlotFailed] = "true"
	case release:
		if wait := p.handoverLocked(mine, heldHash, desired, shown); wait {
			return
		}
		l = mine.DeepCopy()
		l.Spec.HolderIdentity = nil
		delete(l.Annotations, api.AnnotationSlotHash)
		delete(l.Annotations, api.AnnotationSlotFailed)
	}
	out, err := p.write(ctx, l)
	switch {
	case err == nil && holder(out) == "":
		p.held, p.doneAt = nil, time.Time{}
		if p.want.hash == heldHash {
			p.want = wanted{}
		}
		p.cfg.Log.Info("released the refresh slot", "slot", out.Name, "hash", heldHash, "state", shown.State)
	case err == nil:
		p.held = out
		p.cfg.Log.Info("keeping the refresh slot after a failure: the pool halts when every slot is kept", "slot", out.Name, "hash", heldHash)
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		p.held = nil // re-read from the watch; a wake tries again if it is still ours
		p.wakeAtLocked(p.cfg.Now().Add(200 * time.Millisecond))
	default:
		p.cfg.Log.Warn("updating the refresh slot failed; will retry", "slot", mine.Name, "err", err)
		p.wakeAtLocked(p.cfg.Now().Add(time.Second + p.jitter()))
	}
}

// handoverLocked says whether to keep a slot whose refresh is Done for the next node of its queue
// to take (no release, no race): only for a Done of the held hash (not for new content or a
// refusal), only when a node follows this one in the order, and only for the handover window.
func (p *Pacer) handoverLocked(mine *coordv1.Lease, heldHash, desired string, shown Shown) bool {
	if shown.State != api.StateDone || shown.Current != heldHash || (desired != "" && desired != heldHash) ||
		p.order.hash != heldHash || p.sized.m <= 0 {
		return false
	}
	pos, ok := turnOf(mine, heldHash)
	if !ok || pos+p.sized.m >= p.order.n {
		return false // the last of its queue
	}
	now := p.cfg.Now()
	if p.doneAt.IsZero() {
		p.doneAt = now
	}
	if end := p.doneAt.Add(p.handover()); now.Before(end) {
		p.wakeAtLocked(end)
		return true
	}
	return false
}

// renewLoop renews the held slot every TTL/3.
func (p *Pacer) renewLoop(ctx context.Context) {
	t := time.NewTicker(p.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.renew(ctx)
		}
	}
}

func (p *Pacer) renew(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	mine := p.mineLocked()
	if mine == nil {
		return
	}
	now := p.cfg.Now()
	if rt := mine.Spec.RenewTime; rt != nil && now.Sub(rt.Time) < p.cfg.TTL/3-p.cfg.TTL/30 {
		return // taken or renewed recently
	}
	l := mine.DeepCopy()
	t := metav1.NewMicroTime(now)
	l.Spec.RenewTime = &t
	rctx, cancel := context.WithTimeout(ctx, p.cfg.TTL/3)
	defer cancel()
	out, err := p.write(rctx, l)
	if err != nil {
		p.cfg.Log.Warn("renewing the refresh slot failed", "slot", mine.Name, "err", err)
		if apierrors.IsConflict(err) {
			p.held = nil // the watch says who holds it now
		}
		return
	}
	p.held = out
	p.renews++
}

// Status describes the pool's slots for logs and tests.
func (p *Pacer) Status() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := inspect(p.slots, p.pool, p.cfg.Node, p.sized.m, p.cfg.Now())
	return fmt.Sprintf("%d/%d in use, %d failed, mine %v", v.inUse, p.sized.m, v.failed, v.mine != nil)
}

// older says resourceVersion a is older than b. Resource versions are opaque in general; the
// API server's are etcd revisions, integers, and an unparsable one is never taken as older.
func older(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

// countedFor is the slot count a node that took a slot for hash wrote on it (0: none did yet).
func countedFor(slots map[string]slot, hash string) int {
	for _, s := range slots {
		v, h, ok := strings.Cut(s.lease.Annotations[api.AnnotationSlotCount], "/")
		if !ok || h != hash {
			continue
		}
		if m, err := strconv.Atoi(v); err == nil && m > 0 {
			return m
		}
	}
	return 0
}
