package pacing

// What this node watches of its pool's Leases. Watching all of them delivered every Lease write of
// the pool to every agent of the pool: the events per node per refresh grew with the pool's size
// (127 per node at 100 nodes, 1,388 at 1,000). A node in the pool's order needs only the order
// Lease and its own queue's slot (and the slot it holds): it takes its slot after the node before
// it in its queue, whose Done it follows on that node's Node. It watches all of the pool's Leases
// only while it waits for a slot and needs to see every one: its queue is stalled (its slot kept by
// a failed node, or taken by a node of another queue: the next node goes to any free slot, the
// ones behind follow it there), it is not in the order (it takes a slot that stayed free), or the
// pool has no order for the content (the nodes race for slots). So a node's Lease events per
// refresh are bounded by its queue's length, whatever the pool's size.

import (
	"context"
	"time"

	coordv1 "k8s.io/api/coordination/v1"

	"github.com/openshift/refresh-agent/api"
)

// scope is what the node watches: all of the pool's Leases (wide), or the Leases of names.
type scope struct {
	wide  bool
	names map[string]bool
}

func (s scope) has(name string) bool { return s.wide || s.names[name] }

func (s scope) equal(o scope) bool {
	if s.wide != o.wide || len(s.names) != len(o.names) {
		return false
	}
	for n := range s.names {
		if !o.names[n] {
			return false
		}
	}
	return true
}

// keys are the watches the scope needs: "" for the pool's Leases, else one per name.
func (s scope) keys() map[string]bool {
	if s.wide {
		return map[string]bool{"": true}
	}
	return s.names
}

// scopeLocked is the scope this node needs for content hash ("" none); waiting says it waits for
// a slot for hash (a node that does not wait never needs every slot).
func (p *Pacer) scopeLocked(hash string, waiting bool) scope {
	s := scope{names: map[string]bool{api.OrderName(p.pool): true}}
	if p.held != nil {
		s.names[p.held.Name] = true
	}
	if p.cfg.Nodes == nil {
		// No node lister, so no order: the pool always races for slots (and judges a holder's
		// expiry from when it saw the Lease change, so it watches them all the time).
		s.wide = true
		return s
	}
	// Its slot in the newest order it knows: kept while the next content's order is on its way,
	// which gives the same nodes the same places.
	pos := p.order.position(p.cfg.Node)
	m := 0
	if pos >= 0 {
		m = p.slotsOfOrderLocked(p.order.hash)
		s.names[p.slotNameLocked(pos%m)] = true
	}
	switch {
	case hash == "":
	case p.order.hash != hash:
		// No order for hash: on its way (nothing to decide until it comes), or the pool races.
		s.wide = waiting && p.unordered == hash
	case pos < 0:
		s.wide = waiting // not in the order: it takes a slot that stayed free
	case waiting && p.stalledLocked(p.slotNameLocked(pos%m), pos, m, hash):
		s.wide = true
	}
	return s
}

// slotsOfOrderLocked is the pool's slot count for hash, whose order is known (see slotsFor).
func (p *Pacer) slotsOfOrderLocked(hash string) int {
	if s := p.sized; s.pool == p.pool && s.hash == hash && s.m > 0 {
		return s.m
	}
	return p.orderSlots(p.order)
}

// orderSlots is the slot count for o's content: the count its writer computed, but never more
// than this node's own.
func (p *Pacer) orderSlots(o order) int {
	if o.m > 0 {
		return max(1, min(o.m, p.cfg.Limit.Slots(o.n)))
	}
	return max(1, p.cfg.Limit.Slots(o.n))
}

// stalledLocked says this node's queue cannot go on in its own slot own: a failed node keeps it
// for hash, or a node of another queue took it.
func (p *Pacer) stalledLocked(own string, pos, m int, hash string) bool {
	s, ok := p.slots[own]
	if !ok || holder(s.lease) == "" || holder(s.lease) == p.cfg.Node || s.lease.Annotations[api.AnnotationSlotHash] != hash {
		return false
	}
	if s.lease.Annotations[api.AnnotationSlotFailed] == "true" {
		return true
	}
	t, ok := turnOf(s.lease, hash)
	return ok && t%m != pos%m
}

// seesLocked says this node's watches deliver the Lease name (a Pacer without a watcher is fed
// by its caller, and sees all).
func (p *Pacer) seesLocked(name string) bool {
	return p.cfg.Watch == nil || p.scope.has(name) || p.expect[name] || (p.held != nil && p.held.Name == name)
}

// expectLocked takes the Leases this node needs now as seen, before the next Acquire or Settle
// opens their watches (the watch's first list brings them then): the order came, and with it this
// node's slot.
func (p *Pacer) expectLocked() {
	s := p.scopeLocked(p.want.hash, p.want.hash != "")
	if s.wide {
		return
	}
	for n := range s.names {
		if !p.scope.has(n) {
			if p.expect == nil {
				p.expect = map[string]bool{}
			}
			p.expect[n] = true
		}
	}
}

// scopeSyncWait bounds how long Acquire and Settle wait for a new watch's first list: past it
// (the API server is away) they go on, and the watch's events wake the agent when they come.
const scopeSyncWait = 2 * time.Second

// ensureScope opens and closes watches so that this node watches what it needs for hash: a few
// rounds, since what a first list shows (the order, a stalled slot) can change what is needed.
func (p *Pacer) ensureScope(ctx context.Context, hash string, waiting bool) {
	for range 4 {
		p.mu.Lock()
		s := p.scopeLocked(hash, waiting)
		if p.scopeSet && s.equal(p.scope) {
			p.mu.Unlock()
			return
		}
		p.scope, p.scopeSet, p.expect = s, true, nil
		for name := range p.slots {
			if !p.seesLocked(name) {
				delete(p.slots, name) // no longer watched: it would only go stale
			}
		}
		p.mu.Unlock()
		p.applyWatches(ctx, s)
	}
}

// applyWatches stops the watches s does not need and starts those it needs, waiting (up to
// scopeSyncWait) for the new ones' first lists.
func (p *Pacer) applyWatches(ctx context.Context, s scope) {
	if p.cfg.Watch == nil || p.ctx == nil {
		return
	}
	if p.watches == nil {
		p.watches = map[string]context.CancelFunc{}
	}
	want := s.keys()
	for k, stop := range p.watches {
		if !want[k] {
			stop()
			delete(p.watches, k)
		}
	}
	var started []chan struct{}
	for k := range want {
		if _, ok := p.watches[k]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(p.ctx)
		p.watches[k] = cancel
		done := make(chan struct{})
		started = append(started, done)
		go func() {
			defer close(done)
			p.cfg.Watch.WatchLeases(wctx, p.cfg.Namespace, api.LabelSlotPool+"="+p.pool, k, p.changed)
		}()
	}
	timeout := time.NewTimer(scopeSyncWait)
	defer timeout.Stop()
	for _, done := range started {
		select {
		case <-done:
		case <-timeout.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// stopWatches stops every Lease watch of this node.
func (p *Pacer) stopWatches() {
	for k, stop := range p.watches {
		stop()
		delete(p.watches, k)
	}
}

// changed takes a watch's change.
func (p *Pacer) changed(old, cur *coordv1.Lease) {
	if cur == nil {
		p.forget(old)
		return
	}
	p.Observe(cur)
}
