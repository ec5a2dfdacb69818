package pacing

// When to wake the agent: a slot that may be free, a holder whose Lease may have expired.

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/openshift/refresh-agent/api"
)

// maybeWakeLocked wakes the agent after a random delay within the spread when it waits for a slot
// and the watch shows one free.
func (p *Pacer) maybeWakeLocked() {
	if p.want.hash == "" || p.mineLocked() != nil {
		return
	}
	now := p.cfg.Now()
	if p.cfg.Watch != nil && p.scopeSet && !p.scopeLocked(p.want.hash, true).equal(p.scope) {
		p.wakeAtLocked(now) // its queue stalled, or its slot came: watch what it needs now
		return
	}
	if p.sized.m == 0 || p.sized.hash != p.want.hash {
		if p.order.hash == p.want.hash && !now.Before(p.want.notBefore) {
			p.wakeAtLocked(now) // the order this node waited for
		}
		return
	}
	v := p.inspectLocked(p.want.hash, p.sized.m, now)
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
		if h == "" || h == p.cfg.Node || s.expired(now, p.want.hash) {
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
		s, ok := p.slots[p.slotNameLocked(i)]
		if ok && holder(s.lease) != "" && !s.expired(now, p.want.hash) && s.lease.Annotations[api.AnnotationSlotFailed] == "true" {
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
		if s, seen := p.slots[p.slotNameLocked(c.index)]; seen {
			freeSince = s.observed
		}
		if (c.index == preferred && !now.Before(freeSince)) || now.Sub(freeSince) >= p.cfg.Spread {
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
