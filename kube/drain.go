package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Drainer drains one node as the machine-config daemon does (kubectl's drain helper with
// IgnoreAllDaemonSets, DeleteEmptyDirData and Force): cordon, then evict every pod bound to the node
// through the Eviction API, so PodDisruptionBudgets are honoured, except DaemonSet pods (their
// controller would put them back at once, and the node stays theirs) and mirror pods (the kubelet
// runs static pods whatever the API says), until none is left or Timeout runs out. Pods are only
// ever evicted, never deleted: a PDB that never allows an eviction fails the drain at Timeout.
//
// It is a few calls over the agent's core/v1 client rather than k8s.io/kubectl/pkg/drain, which
// needs client-go's typed clientset (see the commit that added it for the measurements).
type Drainer struct {
	Client *Client
	Node   string
	// Timeout bounds the wait for every pod to be evicted (default 10m); Interval is the pause
	// between rounds (default 5s).
	Timeout, Interval time.Duration
	Log               *slog.Logger
}

// Cordon marks the node unschedulable.
func (d *Drainer) Cordon(ctx context.Context) error { return d.setUnschedulable(ctx, true) }

// Uncordon marks the node schedulable again.
func (d *Drainer) Uncordon(ctx context.Context) error { return d.setUnschedulable(ctx, false) }

func (d *Drainer) setUnschedulable(ctx context.Context, v bool) error {
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, v)
	if err := d.Client.PatchNode(ctx, d.Node, patch); err != nil {
		return fmt.Errorf("node %s: set unschedulable=%t: %w", d.Node, v, err)
	}
	return nil
}

// Drain cordons the node and evicts its pods; see Drainer. It leaves the node cordoned on failure
// too (the caller uncordons).
func (d *Drainer) Drain(ctx context.Context) error {
	if err := d.Cordon(ctx); err != nil {
		return err
	}
	timeout, interval := d.Timeout, d.Interval
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	if interval <= 0 {
		interval = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	blocked := map[string]bool{} // pods a PDB blocked in some round: named so when time runs out
	var waiting []string         // the last round's pods, named when time runs out
	var listErr error            // the last failed listing, retried next round
	for {
		pods, err := d.evictable(ctx)
		switch {
		case err == nil:
			listErr = nil
			if len(pods) == 0 {
				return nil
			}
			if waiting, err = d.evictRound(ctx, pods, blocked); err != nil {
				return err
			}
			d.logger().Info("draining", "node", d.Node, "pods", len(pods))
		case !transient(err):
			return err
		case ctx.Err() != nil:
			// Time ran out during the listing (the client's rate limiter refuses a wait past the
			// deadline): the answer is the timeout and the pods of the last round, not the listing.
		default:
			// An API server restarting or overloaded: the drain keeps its timeout, not the first error.
			listErr = err
			d.logger().Info("draining: listing failed, retried", "node", d.Node, "err", err)
		}
		select {
		case <-ctx.Done():
			return d.timedOut(timeout, waiting, listErr)
		case <-time.After(interval):
		}
	}
}

// evictRound evicts what it may of pods and returns each one's state, for the timeout's message.
func (d *Drainer) evictRound(ctx context.Context, pods []corev1.Pod, blocked map[string]bool) ([]string, error) {
	var waiting []string
	for _, p := range pods {
		name := p.Namespace + "/" + p.Name
		if p.DeletionTimestamp != nil {
			waiting = append(waiting, name+" (terminating)")
			continue
		}
		err := d.evict(ctx, p)
		switch {
		case err == nil, apierrors.IsNotFound(err):
			waiting = append(waiting, name+" (evicted)")
		case apierrors.IsTooManyRequests(err):
			// A PodDisruptionBudget does not allow it now: retried next round.
			blocked[name] = true
			waiting = append(waiting, name+" (a PodDisruptionBudget blocks it)")
		case transient(err) && blocked[name]:
			// Retried next round, within Timeout.
			waiting = append(waiting, name+" (a PodDisruptionBudget blocks it)")
		case transient(err):
			waiting = append(waiting, name)
		default:
			return nil, fmt.Errorf("evicting %s: %w", name, err)
		}
	}
	return waiting, nil
}

// transient: err is not a refusal that retrying leaves as it is: the transport's or the client's
// error (the deadline, the client's rate limiter refusing a wait past it, a dropped connection) or
// an API server that is restarting or overloaded. Another refusal (403, a pod with two PDBs' 500)
// fails the drain at once, naming it.
func transient(err error) bool {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return true
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err)
}

func (d *Drainer) timedOut(timeout time.Duration, waiting []string, listErr error) error {
	if len(waiting) == 0 && listErr != nil {
		return fmt.Errorf("drain of node %s: not done within %s: %w", d.Node, timeout, listErr)
	}
	slices.Sort(waiting)
	msg := fmt.Sprintf("drain of node %s: %d pods not evicted within %s: %s", d.Node, len(waiting), timeout, strings.Join(waiting, ", "))
	if listErr != nil {
		return fmt.Errorf("%s (the last listing failed: %w)", msg, listErr)
	}
	return errors.New(msg)
}

// evictable lists the pods bound to the node that a drain must evict.
func (d *Drainer) evictable(ctx context.Context) ([]corev1.Pod, error) {
	l := &corev1.PodList{}
	opts := &metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", d.Node).String()}
	if err := d.Client.rest.Get().Resource("pods").VersionedParams(opts, metav1.ParameterCodec).Do(ctx).Into(l); err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", d.Node, err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.Spec.NodeName != d.Node || skipped(p) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// skipped: DaemonSet pods, mirror pods, and pods that have finished (nothing to stop).
func skipped(p corev1.Pod) bool {
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return true
	}
	if c := metav1.GetControllerOf(&p); c != nil && c.Kind == "DaemonSet" {
		return true
	}
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// evict posts a policy/v1 Eviction for the pod; the API server refuses it with 429 while a
// PodDisruptionBudget does not allow it. The pod's UID is a precondition, so a pod recreated under
// the same name is not evicted by a stale request.
func (d *Drainer) evict(ctx context.Context, p corev1.Pod) error {
	body := fmt.Appendf(nil, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q,"namespace":%q},"deleteOptions":{"preconditions":{"uid":%q}}}`,
		p.Name, p.Namespace, string(p.UID))
	return d.Client.rest.Post().Namespace(p.Namespace).Resource("pods").Name(p.Name).SubResource("eviction").
		// No retries inside the client: a 429 (a PDB blocks) comes back at once, and Drain retries
		// every Interval until its Timeout.
		MaxRetries(0).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
}

func (d *Drainer) logger() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.New(slog.DiscardHandler)
}
