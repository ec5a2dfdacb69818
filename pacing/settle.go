package pacing

// Giving a slot back (or keeping it after a failure), and renewing it while held.

import (
	"context"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
)

// Settle gives the slot back, or marks it failed, by what the Node shows (see settle). The agent
// calls it after every decision: it is level-triggered, and a write that failed is retried on a
// wake.
func (p *Pacer) Settle(ctx context.Context, pool, desired string, shown api.NodeStatus) {
	pool = poolKey(pool)
	p.ensurePool(pool)
	p.mu.Lock()
	hash := desired
	if hash == "" {
		hash = p.want.hash
	}
	// Waiting for a slot for the content the pool asks for, and not Done with it (a holder that
	// handed its slot over still has it as its want).
	waiting := hash != "" && p.want.hash == hash && !(shown.State == api.StateDone && shown.Current == hash)
	p.mu.Unlock()
	p.ensureScope(ctx, hash, waiting)
	p.mu.Lock()
	defer p.mu.Unlock()
	mine := p.mineLocked()
	if mine == nil {
		// Concluded without a slot (a no-op's Done, a refusal): stop waiting. Not a Degraded: the
		// Node may show it from before a restart, while this node is about to try again.
		if desired != "" && shown.Desired == desired && (shown.State == api.StateDone || shown.State == api.StateUnreconcilable) &&
			p.want.hash == desired {
			p.want = wanted{} // concluded without a slot (a no-op, a refusal): stop waiting
			p.followLocked("")
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
			p.followLocked("")
		}
		p.cfg.Log.Info("released the refresh slot", "slot", out.Name, "hash", heldHash, "state", shown.State)
	case err == nil:
		p.held = out
		p.cfg.Log.Info("keeping the refresh slot after a failure: the pool halts when every slot is kept", "slot", out.Name, "hash", heldHash)
	case apierrors.IsNotFound(err) && l != nil && holder(l) == "":
		p.freeDeletedLocked(mine.Name) // deleted, and given up: free
		p.held = nil
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
func (p *Pacer) handoverLocked(mine *coordv1.Lease, heldHash, desired string, shown api.NodeStatus) bool {
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

// Holds says this node still holds a slot of pool for hash by its own clock: the watch shows it
// as the holder and its last take or renewal is younger than the TTL less a sixth. A holder cut off
// from the API server (or a stalled process) stops counting on its slot before the other nodes may
// take it over (they count the TTL from when they saw that renewal, later).
func (p *Pacer) Holds(pool, hash string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if poolKey(pool) != p.pool {
		return false
	}
	mine := p.mineLocked()
	if mine == nil || mine.Annotations[api.AnnotationSlotHash] != hash {
		return false
	}
	at := mine.Spec.RenewTime
	if at == nil {
		at = mine.Spec.AcquireTime
	}
	return at != nil && p.cfg.Now().Sub(at.Time) < p.cfg.TTL-p.cfg.TTL/6
}

// Lost is a channel that closes when the slot this node holds is given to another node, or freed by
// someone else, before this node gives it back: a refresh in progress (a drain) must stop then.
func (p *Pacer) Lost() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lostSlot == nil {
		p.lostSlot = make(chan struct{})
	}
	return p.lostSlot
}

func (p *Pacer) slotLostLocked() {
	if p.lostSlot != nil {
		close(p.lostSlot)
		p.lostSlot = nil
	}
}
