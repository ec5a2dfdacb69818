package pacing

// The pool's Leases as this node's watch shows them, and the Node it follows (the holder of the slot
// it is next for).

import (
	"context"
	"math"
	"strconv"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/refresh-agent/api"
)

// followed is the Node this node follows, as its watch last showed it.
type followed struct {
	name   string
	known  bool // the watch delivered
	exists bool
	shown  api.NodeStatus
	stop   context.CancelFunc
}

// done says the followed holder's refresh to hash concluded, as its Node shows: its slot is free for
// the next node of the queue.
func (f followed) done(hash string) bool {
	if !f.known {
		return false
	}
	// A deleted Node is not done: its agent may still be refreshing (the Node object goes before the
	// machine). Its slot frees when its holder stops renewing it.
	return f.exists && settle(hash, "", f.shown, true) == release
}

// ensurePool makes pool's Leases the ones this node watches (scope.go), switching from another
// pool's: its order Lease at first.
func (p *Pacer) ensurePool(pool string) {
	if p.watching && p.pool == pool {
		return
	}
	p.stopWatches()
	p.mu.Lock()
	p.slots, p.held, p.want, p.sized = map[string]slot{}, nil, wanted{}, sizing{}
	p.order, p.orderLease, p.unordered = order{}, nil, ""
	p.scope, p.scopeSet, p.expect, p.slotNames = scope{}, false, nil, nil
	p.followLocked("")
	p.pool, p.watching = pool, true
	p.mu.Unlock()
	p.ensureScope(p.ctx, "", false)
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
	if l.Labels[api.LabelSlotPool] != p.pool || !p.seesLocked(l.Name) {
		return // another pool's, or from a watch this node closed
	}
	if l.Name == api.OrderName(p.pool) {
		if p.orderLease != nil && older(l.ResourceVersion, p.orderLease.ResourceVersion) {
			return
		}
		p.orderLease = l
		if o, ok := parseOrder(l, p.cfg.Now()); ok && o.hash != p.order.hash {
			p.order = o
			p.expectLocked()
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
			if p.doneAt.IsZero() {
				p.slotLostLocked() // freed, not by this node (its release clears held first)
			}
			p.held, p.doneAt = nil, time.Time{}
		case !p.doneAt.IsZero():
			p.cfg.Log.Info("handed the refresh slot over", "slot", l.Name, "to", h)
			p.held, p.doneAt = nil, time.Time{}
		default:
			p.cfg.Log.Warn("pacing slot taken over by another node", "slot", l.Name, "holder", holder(l))
			p.slotLostLocked()
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
	if l.Labels[api.LabelSlotPool] != p.pool || !p.seesLocked(l.Name) {
		return
	}
	if l.Name == api.OrderName(p.pool) {
		p.orderLease = nil
		return
	}
	last := l
	if s, ok := p.slots[l.Name]; ok && !older(s.lease.ResourceVersion, l.ResourceVersion) {
		last = s.lease
	}
	p.slots[l.Name] = slot{lease: last, observed: p.cfg.Now(), deleted: true}
	if holder(last) == p.cfg.Node && p.held != nil && p.held.Name == l.Name {
		if p.doneAt.IsZero() && p.ctx != nil {
			// Deleted under a refresh in progress: this node still refreshes in it, so it creates
			// it again (the others wait for it to expire meanwhile).
			go p.recreate(l.Name)
		} else {
			p.freeDeletedLocked(l.Name) // Done: nobody needs it kept
		}
	}
	p.maybeWakeLocked()
}

// freeDeletedLocked says a deleted slot this node held is free (it gave it up).
func (p *Pacer) freeDeletedLocked(name string) {
	s, ok := p.slots[name]
	if !ok || !s.deleted {
		return
	}
	l := s.lease.DeepCopy()
	l.Spec.HolderIdentity = nil
	p.slots[name] = slot{lease: l, observed: s.observed, deleted: true}
	if p.held != nil && p.held.Name == name {
		p.held = nil
	}
}

// recreate creates again the deleted slot name that this node holds, retrying until it exists
// again (created by this node or another), this node no longer holds it, or the pacer stops.
func (p *Pacer) recreate(name string) {
	_ = recreateBackoff.DelayFunc().Until(p.ctx, true, true, func(context.Context) (bool, error) { return p.recreateOnce(name), nil })
}

// recreateBackoff paces recreate's attempts.
var recreateBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: math.MaxInt32}

// recreateOnce tries once; true when there is nothing more to do.
func (p *Pacer) recreateOnce(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.slots[name]
	if !ok || !s.deleted || holder(s.lease) != p.cfg.Node || p.ctx.Err() != nil {
		return true
	}
	again := s.lease.DeepCopy()
	again.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: s.lease.Namespace, Labels: s.lease.Labels, Annotations: s.lease.Annotations}
	now := metav1.NewMicroTime(p.cfg.Now())
	again.Spec.RenewTime = &now
	out, err := p.create(p.ctx, again)
	switch {
	case err == nil:
		p.held = out
		p.cfg.Log.Warn("the refresh slot this node holds was deleted: created it again", "slot", name)
		p.wakeAtLocked(p.cfg.Now())
		return true
	case apierrors.IsAlreadyExists(err):
		return true // created meanwhile: the watch shows by whom
	}
	p.cfg.Log.Warn("the refresh slot this node holds was deleted, and creating it again failed; retrying", "slot", name, "err", err)
	return false
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
		p.followed.shown = api.FromAnnotations(a)
		if p.want.hash != "" && p.followed.done(p.want.hash) {
			p.wakeAtLocked(p.cfg.Now())
		}
	})
}

// older says resourceVersion a is older than b. Resource versions are opaque in general; the
// API server's are etcd revisions, integers, and an unparsable one is never taken as older.
func older(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}
