package controller

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Elector holds a coordination.k8s.io/v1 Lease so that one of several replicas leads. It follows
// client-go's leaderelection rules (which this binary does not import, see the package comment): a
// holder renews every RetryPeriod and gives up leading when it could not renew for RenewDeadline;
// another replica takes the Lease once it has seen no renewal for LeaseDuration by its own clock.
type Elector struct {
	Client                                    dynamic.Interface
	Namespace, Name, Identity                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Log                                       *slog.Logger

	observedRV   string
	observedTime time.Time
}

// Run campaigns until ctx ends; each time it leads, it calls lead with a context that ends when
// leadership is lost (or ctx ends) and waits for lead to return. On the way out it releases the
// Lease so that another replica takes over at once.
func (e *Elector) Run(ctx context.Context, lead func(context.Context)) {
	for ctx.Err() == nil {
		if !e.acquire(ctx) {
			return
		}
		e.Log.Info("leading", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
		leadCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); lead(leadCtx) }()
		e.renew(leadCtx)
		cancel()
		<-done
		if ctx.Err() != nil {
			e.release()
			return
		}
		e.Log.Warn("lost the lease, campaigning again", "lease", e.Namespace+"/"+e.Name)
	}
}

func (e *Elector) acquire(ctx context.Context) bool {
	for {
		ok, err := e.tryAcquireOrRenew(ctx)
		if err != nil && ctx.Err() == nil {
			e.Log.Warn("lease", "err", err)
		}
		if ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(e.RetryPeriod):
		}
	}
}

// renew keeps the Lease until a renewal has failed for RenewDeadline or ctx ends.
func (e *Elector) renew(ctx context.Context) {
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(e.RetryPeriod):
		}
		rctx, cancel := context.WithTimeout(ctx, e.RenewDeadline)
		ok, err := e.tryAcquireOrRenew(rctx)
		cancel()
		if ok {
			last = time.Now()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		e.Log.Warn("lease not renewed", "err", err)
		if time.Since(last) >= e.RenewDeadline {
			return
		}
	}
}

func (e *Elector) leases() dynamic.ResourceInterface {
	return e.Client.Resource(GVRLease).Namespace(e.Namespace)
}

func microTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

func (e *Elector) tryAcquireOrRenew(ctx context.Context) (bool, error) {
	now := time.Now()
	seconds := int64(e.LeaseDuration.Round(time.Second) / time.Second)
	if seconds < 1 {
		seconds = 1
	}
	lease, err := e.leases().Get(ctx, e.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": e.Name, "namespace": e.Namespace},
			"spec": map[string]any{"holderIdentity": e.Identity, "leaseDurationSeconds": seconds,
				"acquireTime": microTime(now), "renewTime": microTime(now), "leaseTransitions": int64(0)},
		}}
		_, err = e.leases().Create(ctx, lease, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // another replica created it first
		}
		return err == nil, err
	}
	if err != nil {
		return false, err
	}
	holder, _, _ := unstructured.NestedString(lease.Object, "spec", "holderIdentity")
	if lease.GetResourceVersion() != e.observedRV {
		e.observedRV, e.observedTime = lease.GetResourceVersion(), now
	}
	held := int64Field(lease, "spec", "leaseDurationSeconds")
	if holder != e.Identity && holder != "" && now.Before(e.observedTime.Add(time.Duration(held)*time.Second)) {
		return false, nil
	}
	spec := map[string]any{"holderIdentity": e.Identity, "leaseDurationSeconds": seconds, "renewTime": microTime(now)}
	old, _, _ := unstructured.NestedMap(lease.Object, "spec")
	spec["acquireTime"], spec["leaseTransitions"] = old["acquireTime"], int64Field(lease, "spec", "leaseTransitions")
	if holder != e.Identity {
		spec["acquireTime"] = microTime(now)
		spec["leaseTransitions"] = int64Field(lease, "spec", "leaseTransitions") + 1
	}
	lease.Object["spec"] = spec
	// The resourceVersion makes this a compare-and-swap: of two replicas, one wins.
	upd, err := e.leases().Update(ctx, lease, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) && holder != e.Identity {
		return false, nil // another replica took it first
	}
	if err != nil {
		return false, fmt.Errorf("lease %s/%s: %w", e.Namespace, e.Name, err)
	}
	e.observedRV, e.observedTime = upd.GetResourceVersion(), now
	return true, nil
}

// release hands the Lease back (best effort) when this replica stops.
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := e.leases().Get(ctx, e.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	if holder, _, _ := unstructured.NestedString(lease.Object, "spec", "holderIdentity"); holder != e.Identity {
		return
	}
	_ = unstructured.SetNestedField(lease.Object, "", "spec", "holderIdentity")
	_ = unstructured.SetNestedField(lease.Object, int64(1), "spec", "leaseDurationSeconds")
	if _, err := e.leases().Update(ctx, lease, metav1.UpdateOptions{}); err == nil {
		e.Log.Info("released the lease", "lease", e.Namespace+"/"+e.Name)
	}
}
