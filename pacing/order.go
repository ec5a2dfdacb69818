package pacing

import (
	"context"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
)

// The pool's refresh order. Racing for a freed slot costs a conflict per loser, and under load (the
// Lease watch lagging) most handovers had losers. So the first node that needs a slot for new
// content lists the pool's node names once and writes them, sorted, on the pool's order Lease; node
// k of that order refreshes in slot k mod m, after node k-m. The next node of a slot follows its
// holder's Node (a watch, no list) and takes the slot as soon as the holder's Done is on it: no
// release, no race. The holder gives the slot back itself only when no node follows it in its
// queue, or when none took it within the handover window (the next node did not need it, or is
// gone). A node missing from the order, or a pool whose order could not be written, races for slots
// as before (preferred slot by name, the others after a spread).

// maxOrderBytes bounds the order annotation (the API server takes 256 KiB of annotations per
// object): nodes beyond it are not in the order and race for slots.
const maxOrderBytes = 200 << 10

// maxSlots bounds a slot count read from the order Lease (written by any node of the pool).
const maxSlots = 10000

type order struct {
	hash string
	pos  map[string]int
	n    int
	m    int       // the slot count its writer computed (0: not said)
	seen time.Time // when this agent first saw it
}

// parseOrder reads an order Lease.
func parseOrder(l *coordv1.Lease, now time.Time) (order, bool) {
	h, list := l.Annotations[api.AnnotationSlotHash], l.Annotations[api.AnnotationSlotOrder]
	if h == "" || list == "" {
		return order{}, false
	}
	o := order{hash: h, pos: map[string]int{}, seen: now}
	if m := slotCount(l, h); m <= maxSlots {
		o.m = m
	}
	for _, name := range strings.Split(list, ",") {
		if _, dup := o.pos[name]; name == "" || dup {
			continue
		}
		o.pos[name] = o.n
		o.n++
	}
	return o, o.n > 0
}

// position is node's place in o, -1 when it is not in it.
func (o order) position(node string) int {
	if p, ok := o.pos[node]; ok {
		return p
	}
	return -1
}

// orderList is the annotation for names: sorted, so that SREs can tell which nodes go first, and
// cut at maxOrderBytes.
func orderList(names []string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		if b.Len()+len(n)+1 > maxOrderBytes {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
	}
	return b.String()
}

// turnOf is the position of the node that last took slot l for hash (ok false: none for hash).
func turnOf(l *coordv1.Lease, hash string) (int, bool) {
	if l == nil {
		return 0, false
	}
	v, h, ok := strings.Cut(l.Annotations[api.AnnotationSlotTurn], "/")
	if !ok || h != hash {
		return 0, false
	}
	p, err := strconv.Atoi(v)
	return p, err == nil && p >= 0
}

// maxBehind caps how many handover windows a node waits for the nodes before it in its queue that
// did not come: an order is written by any node of the pool, and one listing many names that never
// come (stale, or hostile) must not stall the pool for long. Past it, the nodes behind race.
const maxBehind = 4

// handover is how long a holder that is Done waits for the next node of its queue to take its slot
// before giving it back, and how long a node waits per node missing before it in its queue.
func (p *Pacer) handover() time.Duration { return 2 * max(p.cfg.Spread, time.Second) }

// fraction is a number in [0, 1) fixed by the node's name and the hash.
func fraction(node, hash string) float64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	h.Write([]byte{0})
	h.Write([]byte(hash))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// ensureOrder makes sure the pool has an order for hash, writing it when this node is the one to:
// each node waits a delay fixed by its name (within orderWindowLocked) for another to
// write it, so that the pool's nodes do not all list the pool (a few may, when the watch lags). False: not yet, the agent is woken when it appears or
// when this node's turn to write it comes.
func (p *Pacer) ensureOrder(ctx context.Context, pool, hash string) bool {
	p.mu.Lock()
	if p.order.hash == hash || p.unordered == hash || p.cfg.Nodes == nil {
		p.mu.Unlock()
		return true
	}
	now := p.cfg.Now()
	at := p.want.since.Add(time.Duration(fraction(p.cfg.Node, hash) * float64(p.orderWindowLocked())))
	if now.Before(at) {
		p.wakeAtLocked(at)
		p.mu.Unlock()
		return false
	}
	existing := p.orderLease
	p.mu.Unlock()

	names, err := p.cfg.Nodes.NodeNames(ctx, poolSelector(pool))
	if err == nil && len(names) == 0 {
		names = []string{p.cfg.Node}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.order.hash == hash {
		return true // it arrived meanwhile
	}
	if err != nil {
		p.cfg.Log.Warn("listing the pool's nodes for the refresh order failed; racing for slots", "err", err)
		p.unordered = hash
		return true
	}
	l := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: api.OrderName(pool), Namespace: p.cfg.Namespace,
		Labels: map[string]string{api.LabelSlotPool: pool}}}
	if existing != nil {
		l = existing.DeepCopy()
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[api.AnnotationSlotHash] = hash
	l.Annotations[api.AnnotationSlotOrder] = orderList(names)
	// The slot count, so that the pool's agents agree on it for this content even when their
	// --max-concurrent differ (a DaemonSet rollout that changes it).
	l.Annotations[api.AnnotationSlotCount] = strconv.Itoa(p.cfg.Limit.Slots(len(names))) + "/" + hash
	// No holder: the order is nobody's slot (whoever counts the pool's held Leases must not count it).
	l.Spec = coordv1.LeaseSpec{}
	if existing == nil {
		_, err = p.create(ctx, l)
	} else {
		_, err = p.write(ctx, l)
	}
	switch {
	case err == nil:
		p.cfg.Log.Info("wrote the pool's refresh order", "hash", hash, "nodes", p.order.n)
		return p.order.hash == hash
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		p.wakeAtLocked(now.Add(p.handover())) // another node wrote it: the watch brings it
		return false
	default:
		p.cfg.Log.Warn("writing the pool's refresh order failed; racing for slots", "err", err)
		p.unordered = hash
		return true
	}
}

// orderWindowLocked is the time over which the pool's nodes take their turns to write the order:
// the spread (at least 250 ms), and a millisecond per node of the pool's last order, so that as
// few nodes list the pool before the first writer's order reaches them at 5,000 nodes as at 100
// (the first writer comes as soon; only a pool whose writers fail waits longer).
func (p *Pacer) orderWindowLocked() time.Duration {
	return max(p.cfg.Spread, 250*time.Millisecond, time.Duration(p.order.n)*time.Millisecond)
}

// choice is what an ordered node may do now.
type choice struct {
	take   *candidate // a slot to take now (lease nil: create; held: the holder is Done)
	later  time.Time  // when to look again (zero: when the watch shows a change)
	follow string     // the holder whose Node to follow (its Done frees the slot)
}

// chooseOrdered decides for this node at position pos of the order o with m slots.
func (p *Pacer) chooseOrdered(o order, pos, m int, hash string, now time.Time) choice {
	var c choice
	at := func(t time.Time) {
		if c.later.IsZero() || t.Before(c.later) {
			c.later = t
		}
	}
	w := p.handover()
	k := 1 // how many places this node is behind the slot's last taker
	mine := -1
	if pos >= 0 {
		mine = pos % m
		c = p.ownQueue(o, pos, m, hash, now, &k)
		if c.take != nil {
			return c
		}
	}
	// The other slots: free ones that no node of their queue took for a while (their queue is
	// over, or this node's is stalled by a failure, or this node is not in the order), the nodes
	// furthest behind last.
	wait := time.Duration(2+min(k, maxBehind)) * w
	if pos < 0 {
		wait = w // not in the order (it joined later): one handover window
	}
	take, later := p.freeAfter(m, mine, p.want.since, wait, hash, now)
	if !later.IsZero() {
		at(later)
	}
	c.take = take
	return c
}

// freeAfter is the first slot but skip that has been free for wait (since base, or since it was seen
// free if later), else when the first one will have been.
func (p *Pacer) freeAfter(m, skip int, base time.Time, wait time.Duration, hash string, now time.Time) (*candidate, time.Time) {
	var later time.Time
	for j := 0; j < m; j++ {
		if j == skip || !p.seesLocked(p.slotNameLocked(j)) {
			continue // a slot this node does not watch is not one it may take
		}
		s, ok := p.slots[p.slotNameLocked(j)]
		if ok && holder(s.lease) != "" && !s.expired(now, hash) {
			continue
		}
		from := base
		if ok && from.Before(s.observed) {
			from = s.observed
		}
		if t := from.Add(wait); now.Before(t) {
			if later.IsZero() || t.Before(later) {
				later = t
			}
			continue
		}
		var l *coordv1.Lease
		if ok {
			l = s.lease
		}
		return &candidate{index: j, lease: l}, time.Time{}
	}
	return nil, later
}

// ownQueue decides on this node's queue (the positions equal to pos mod m): k is set to how many
// places this node is behind the queue's last taker. The queue's last taker is found on whichever
// slot it ran (its turn on the Lease), not only on the queue's own slot: when a failed holder keeps
// its slot, the next node of its queue moves to any free slot at once, and the nodes after it
// follow it there, so that a failure never idles a free slot.
func (p *Pacer) ownQueue(o order, pos, m int, hash string, now time.Time, k *int) choice {
	var c choice
	at := func(t time.Time) {
		if c.later.IsZero() || t.Before(c.later) {
			c.later = t
		}
	}
	w := p.handover()
	idx, q, found := p.lastOfQueue(pos, m, hash)
	if !found {
		idx = pos % m
	}
	name := p.slotNameLocked(idx)
	s, exists := p.slots[name]
	free := !exists || holder(s.lease) == "" || s.expired(now, hash)
	if found {
		*k = max(1, (pos-q)/m)
		switch {
		case free:
			// Free since it was seen so, or since the order: a slot freed for older content does
			// not count as waiting for this one.
			base := s.observed
			if base.Before(o.seen) {
				base = o.seen
			}
			if t := base.Add(time.Duration(min(*k, maxBehind)-1) * w); now.Before(t) {
				at(t)
			} else {
				c.take = &candidate{index: idx, lease: s.lease}
			}
		case s.lease.Annotations[api.AnnotationSlotFailed] == "true" && s.lease.Annotations[api.AnnotationSlotHash] == hash:
			// The queue's last taker failed and keeps its slot: this node goes to any free slot,
			// the first behind the failure at once, each one further a window later (in case the
			// nodes before it do not come).
			c.take, c.later = p.freeAfter(m, -1, o.seen, time.Duration(min(*k-1, maxBehind))*w, hash, now)
		case pos == q+m && s.lease.Annotations[api.AnnotationSlotHash] == hash:
			c.follow = holder(s.lease)
			if p.followed.name == c.follow && p.followed.done(hash) {
				c.take = &candidate{index: idx, lease: s.lease, handover: true}
			}
		}
		return c
	}
	*k = pos/m + 1 // no node of the queue took a slot for hash yet: the first of the queue goes first
	if free {
		base := o.seen
		if exists && base.Before(s.observed) {
			base = s.observed
		}
		if t := base.Add(time.Duration(min(*k, maxBehind)-1) * w); now.Before(t) {
			at(t)
		} else {
			var l *coordv1.Lease
			if exists {
				l = s.lease
			}
			c.take = &candidate{index: idx, lease: l}
		}
	}
	return c
}

// lastOfQueue finds the slot whose last taker for hash is the latest node of this node's queue
// before it (position q < pos, q = pos mod m): its index and q.
func (p *Pacer) lastOfQueue(pos, m int, hash string) (idx, q int, found bool) {
	q = -1
	for j := 0; j < m; j++ {
		s, ok := p.slots[p.slotNameLocked(j)]
		if !ok {
			continue
		}
		if t, ok := turnOf(s.lease, hash); ok && t < pos && t%m == pos%m && t > q {
			idx, q = j, t
		}
	}
	return idx, q, q >= 0
}
