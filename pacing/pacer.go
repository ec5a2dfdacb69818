package pacing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
)

// LeaseAPI writes Leases (kube.Leases implements it).
type LeaseAPI interface {
	Create(ctx context.Context, l *coordv1.Lease) (*coordv1.Lease, error)
	Update(ctx context.Context, l *coordv1.Lease) (*coordv1.Lease, error)
}

// LeaseWatcher watches Leases (kube.Leases implements it): the namespace's Leases a label selector
// selects (with name set, only the Lease of that name), until ctx ends. changed gets each Lease that
// appears or changes (old nil when new) and each that goes (cur nil, old its last state), one at a
// time; WatchLeases returns once the first list is in, or ctx ended.
type LeaseWatcher interface {
	WatchLeases(ctx context.Context, namespace, selector, name string, changed func(old, cur *coordv1.Lease))
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
	// Watch lists and watches the pool's Leases (kube.Leases); nil in tests that feed Observe
	// themselves.
	Watch     LeaseWatcher
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

	// pool is the pool whose Leases are watched, watches the watches open (scope.go) by key (the
	// worker's; not under mu).
	pool     string
	watching bool
	watches  map[string]context.CancelFunc

	mu sync.Mutex
	// scope is what the watches deliver (set: once computed); slots holds only what it sees.
	scope    scope
	scopeSet bool
	expect   map[string]bool // needed, watched from the next ensureScope (expectLocked)
	slots    map[string]slot // the pool's Leases by name (a deleted one kept, see forget)
	// slotNames caches the pool's slot names by index (slotNameLocked).
	slotNames []string
	held      *coordv1.Lease // the slot this node holds, as last written or seen
	want      wanted         // the refresh waiting for a slot
	sized     sizing
	timer     *time.Timer // a pending wake, at timerAt
	timerAt   time.Time
	renews    int // renewals sent (tests, logs)
	// halted is whether the waiting reason last returned said the pool halted: a change wakes the
	// agent to say so (the in-use count alone does not, or every slot change would patch every
	// waiting Node).
	halted bool
	// lost counts this node's lost races for a slot since it began waiting: each widens its next
	// delay (up to 4 spreads), so that the nodes of a busy pool thin out instead of colliding again.
	lost int
	// waiting is the wait reported for want: kept as it is while the node waits (but for halting),
	// so that waiting costs one Node patch, not one per slot change.
	waiting *api.Waiting

	// The pool's refresh order (order.go): the newest seen, its Lease, and the hash for which it
	// could not be written (the pool races for slots then).
	order      order
	orderLease *coordv1.Lease
	unordered  string
	// followed is the holder of the slot this node is next for.
	followed followed
	// doneAt is when the held slot's refresh was first seen Done: the handover window runs from it.
	doneAt time.Time
	// lostSlot closes when the watch shows the slot this node took given to another node, or freed
	// by someone else (Lost).
	lostSlot chan struct{}
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

// Acquire asks for a slot to refresh pool's nodes to hash. ok: this node holds one (taken now, or
// kept from an attempt before). Otherwise waiting is the wait to report, or nil while the node is
// still in its spread delay (nothing to report yet); the agent is woken when it may try again.
func (p *Pacer) Acquire(ctx context.Context, pool, hash string) (ok bool, waiting *api.Waiting) {
	pool = poolKey(pool)
	p.ensurePool(pool)
	p.ensureScope(ctx, hash, true)
	if ok, done := p.preAcquire(ctx, pool, hash); done {
		return ok, nil
	}
	if !p.ensureOrder(ctx, pool, hash) {
		return false, nil // the order is on its way; it wakes this node
	}
	m := p.slotsFor(ctx, pool, hash)
	p.ensureScope(ctx, hash, true) // the order, or the slot count, may have come meanwhile
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	v := p.inspectLocked(hash, m, now)
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
	} else {
		p.followLocked("") // racing for slots: nobody to follow
		if try, l := p.tryable(v, now); v.inUse < m && len(try) > 0 {
			c = &try[0] // one attempt per wake: the preferred slot first, else one that stayed free
		} else if !l.IsZero() {
			later = l.Add(p.jitter())
		}
	}
	if c != nil {
		var l *coordv1.Lease
		var err error
		if p.slots[api.SlotName(pool, c.index)].deleted {
			c.lease = nil // deleted: created again
		}
		if c.lease == nil {
			fresh := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: api.SlotName(pool, c.index), Namespace: p.cfg.Namespace,
				Labels: map[string]string{api.LabelSlotPool: pool}}}
			l, err = p.create(ctx, claim(fresh, p.cfg.Node, hash, p.cfg.TTL, now, m, pos))
		} else {
			l, err = p.write(ctx, claim(c.lease, p.cfg.Node, hash, p.cfg.TTL, now, m, pos))
		}
		if err == nil {
			p.held, p.doneAt = l, time.Time{}
			p.lostSlot = make(chan struct{})
			p.followLocked("")
			inUse := v.inUse
			if !c.handover {
				inUse++
			}
			p.cfg.Log.Info("took a refresh slot", "slot", l.Name, "hash", hash, "position", pos, "inUse", inUse, "slots", m)
			return true, nil
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
	v = p.inspectLocked(hash, m, now)
	halted := v.failed >= m
	if p.waiting == nil || halted != p.halted {
		p.waiting = waitingFor(v, m)
	}
	p.halted = halted
	w := *p.waiting
	return false, &w
}

// preAcquire settles what needs no slot count: a slot this node holds already (ok, done), or the spread
// delay not over yet (not ok, done).
func (p *Pacer) preAcquire(ctx context.Context, pool, hash string) (ok, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	if p.want.pool != pool || p.want.hash != hash {
		p.want = wanted{pool: pool, hash: hash, since: now, notBefore: now.Add(p.jitter())}
		p.followLocked("")
		p.waiting, p.lost = nil, 0
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
	}
	if mine := p.mineLocked(); mine != nil {
		if mine.Annotations[api.AnnotationSlotHash] == hash {
			p.followLocked("")
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
			p.lostSlot = make(chan struct{})
			p.followLocked("")
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
	if o.hash == hash {
		// The count the order's writer computed, so that the pool agrees on one per content (a
		// rollout that changes --max-concurrent), but never more than this node's own.
		m = p.orderSlots(o)
	} else if p.cfg.Limit.IsPercent() {
		p.mu.Lock()
		counted := countedFor(p.slots, hash)
		p.mu.Unlock()
		switch {
		case counted > 0:
			m = counted
		default:
			var names []string
			err := errors.New("no node lister")
			if p.cfg.Nodes != nil {
				names, err = p.cfg.Nodes.NodeNames(ctx, poolSelector(pool))
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

// Status describes the pool's slots for logs and tests.
func (p *Pacer) Status() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.inspectLocked(p.want.hash, p.sized.m, p.cfg.Now())
	return fmt.Sprintf("%d/%d in use, %d failed, mine %v", v.inUse, p.sized.m, v.failed, v.mine != nil)
}

// countedFor is the slot count a node that took a slot for hash wrote on it (0: none did yet).
func countedFor(slots map[string]slot, hash string) int {
	for _, s := range slots {
		if m := slotCount(s.lease, hash); m > 0 {
			return m
		}
	}
	return 0
}

// slotCount reads a Lease's AnnotationSlotCount for hash (0: none, another hash's, or unreadable).
func slotCount(l *coordv1.Lease, hash string) int {
	v, h, ok := strings.Cut(l.Annotations[api.AnnotationSlotCount], "/")
	if !ok || h != hash {
		return 0
	}
	m, err := strconv.Atoi(v)
	if err != nil || m <= 0 {
		return 0
	}
	return m
}

// poolSelector selects pool's Nodes: nodes without a NodePool label make the pool "default".
func poolSelector(pool string) string {
	if pool == "default" {
		return "!" + api.LabelNodePool
	}
	return api.LabelNodePool + "=" + pool
}
