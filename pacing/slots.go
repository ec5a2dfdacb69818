package pacing

import (
	"time"

	coordv1 "k8s.io/api/coordination/v1"

	"github.com/openshift/refresh-agent/api"
)

// slot is one Lease of the pool as the watch has it, with the time this agent last saw it change
// (expiry is judged on the local clock from that moment, never on the holder's clock).
type slot struct {
	lease    *coordv1.Lease
	observed time.Time
	// deleted: the Lease was deleted (by hand, a namespace cleanup) when observed. Its last holder
	// counts as holding it until it expires, as if it had stopped renewing: a deleted slot is taken
	// (created again) only by its holder, or once its TTL ran out.
	deleted bool
}

func holder(l *coordv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func ttlOf(l *coordv1.Lease) time.Duration {
	if l.Spec.LeaseDurationSeconds == nil {
		return 0
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}

// expired says the holder has not renewed for the Lease's duration since this agent last saw it
// change. A slot whose holder failed refreshing to hash (marked failed) never expires for hash:
// the failure stands, and the pool stays halted, until new content, even when the failed node is
// gone (else a bad payload would walk through the pool one node per TTL).
func (s slot) expired(now time.Time, hash string) bool {
	if hash != "" && s.lease.Annotations[api.AnnotationSlotFailed] == "true" && s.lease.Annotations[api.AnnotationSlotHash] == hash {
		return false
	}
	return holder(s.lease) != "" && now.Sub(s.observed) > ttlOf(s.lease)
}

// view is the pool's slots from one node's point of view.
type view struct {
	inUse  int // held and not expired, whatever their index
	failed int // of those, the ones whose holder failed and keeps its slot
	mine   *coordv1.Lease
	// free are the slot indexes below the limit that can be taken: no Lease yet (create), or a
	// Lease free or expired (update; lease set).
	free []candidate
}

type candidate struct {
	index    int
	lease    *coordv1.Lease // nil: create it
	handover bool           // held by a node whose refresh is Done: taken without its release
}

// inspectLocked is inspect of this node's slots: a slot below m that it does not watch counts as
// in use (not one this node may take; see scope.go).
func (p *Pacer) inspectLocked(hash string, m int, now time.Time) view {
	return inspect(p.slots, p.slotNameLocked, p.cfg.Node, hash, m, now, p.seesLocked)
}

// slotNameLocked is api.SlotName(p.pool, i), from a cache: the deciders look at every slot index
// on each event, and a pool of 5,000 nodes at 10% has 500.
func (p *Pacer) slotNameLocked(i int) string {
	for len(p.slotNames) <= i {
		p.slotNames = append(p.slotNames, api.SlotName(p.pool, len(p.slotNames)))
	}
	return p.slotNames[i]
}

// inspect reads the pool's slots (slotName names slot i) for node me with m slots, for content
// hash; sees says which Leases the node watches.
func inspect(slots map[string]slot, slotName func(int) string, me, hash string, m int, now time.Time, sees func(string) bool) view {
	var v view
	for _, s := range slots {
		h := holder(s.lease)
		if h == me {
			v.mine = s.lease
		}
		if h == "" || s.expired(now, hash) {
			continue
		}
		v.inUse++
		if s.lease.Annotations[api.AnnotationSlotFailed] == "true" {
			v.failed++
		}
	}
	for i := 0; i < m; i++ {
		s, ok := slots[slotName(i)]
		switch {
		case !ok && !sees(slotName(i)):
			v.inUse++ // not watched: not free for this node
		case !ok:
			v.free = append(v.free, candidate{index: i})
		case holder(s.lease) == "" || s.expired(now, hash):
			v.free = append(v.free, candidate{index: i, lease: s.lease})
		}
	}
	return v
}

// waitingFor is the wait of a node without a slot, as its Node shows it.
func waitingFor(v view, m int) *api.Waiting {
	w := &api.Waiting{InUse: v.inUse, Slots: m}
	if v.failed >= m {
		w.Halted, w.Failed = true, v.failed
	}
	return w
}

// settleAction is what to do with a slot held for a hash.
type settleAction int

const (
	keep settleAction = iota
	release
	markFailed // keep it, and say on the Lease that the holder failed
)

// settle decides on the slot this node holds for heldHash, given the content the pool asks for now
// (desired, "" when unknown) and what the Node shows. It releases only once the Node shows the
// outcome: Done for the held hash (so the API never shows more nodes refreshing than slots), a
// refusal of it (nothing was touched), or new content (the pool's fix frees the failed nodes'
// slots). A failure keeps the slot: N failures halt the pool.
//
// New content while the Node still shows this node refreshing (Working with its slot, the outcome
// not patched yet) keeps the slot: releasing it then would let another node start while the API
// still shows this one Working. The next Acquire moves the slot to the new content, or the outcome
// (a no-op's Done, a refusal) releases it once shown.
func settle(heldHash, desired string, shown api.NodeStatus, failedMarked bool) settleAction {
	refreshing := shown.Refreshing()
	switch {
	case shown.State == api.StateDone && shown.Current == heldHash:
		return release
	case desired != "" && desired != heldHash && !refreshing:
		return release
	case shown.Desired == heldHash && shown.State == api.StateUnreconcilable:
		return release
	case shown.Desired == heldHash && shown.State == api.StateDegraded && !failedMarked:
		return markFailed
	}
	return keep
}
