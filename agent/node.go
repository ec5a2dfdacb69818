package agent

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/refresh-agent/api"
)

// Machine-config daemon annotations that say an in-place upgrade is in progress.
const (
	mcdCurrentConfig = "machineconfiguration.openshift.io/currentConfig"
	mcdDesiredConfig = "machineconfiguration.openshift.io/desiredConfig"
	mcdState         = "machineconfiguration.openshift.io/state"
)

// deferReason says why the node must not be refreshed now, or "". An in-place upgrade delivers the
// full config itself, so a refresh after it may well be a no-op.
func deferReason(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	if n.DeletionTimestamp != nil {
		return "the node is being deleted"
	}
	a := n.Annotations
	if a[mcdDesiredConfig] != a[mcdCurrentConfig] {
		return fmt.Sprintf("an in-place upgrade is in progress (machine-config desiredConfig %s, currentConfig %s)", a[mcdDesiredConfig], a[mcdCurrentConfig])
	}
	if a[mcdState] == "Working" {
		return "an in-place upgrade is in progress (machine-config state Working)"
	}
	return ""
}

// nodeWatch keeps the agent's own Node (a watch restricted to its name) and calls changed on every
// change the agent acts on: the Node appearing or going, its NodePool or pull-secret label, the
// machine-config daemon's annotations, the agent's own annotations (corrected when edited by hand)
// and the retry annotation. Heartbeats and status updates wake nothing.
type nodeWatch struct {
	w    *oneWatch
	name string
	last atomic.Pointer[corev1.Node]
}

func watchNode(ctx context.Context, client cache.Getter, name string, changed func(), observed func()) (*nodeWatch, error) {
	nw := &nodeWatch{name: name}
	nw.w = watchOne(ctx, client, "nodes", "", name, &corev1.Node{}, func(obj any) {
		n, _ := obj.(*corev1.Node)
		old := nw.last.Swap(n)
		if observed != nil {
			observed()
		}
		if relevantChange(old, n) {
			changed()
		}
	})
	if !nw.w.waitSynced(ctx) {
		return nil, ctx.Err()
	}
	return nw, nil
}

// relevantChange says whether the loop must look again after the Node went from old to cur.
func relevantChange(old, cur *corev1.Node) bool {
	if old == nil || cur == nil {
		return old != cur
	}
	if old.UID != cur.UID {
		return true // recreated
	}
	for _, l := range []string{api.LabelNodePool, api.LabelGlobalPullSecret} {
		if old.Labels[l] != cur.Labels[l] {
			return true
		}
	}
	return deferReason(old) != deferReason(cur) || !api.FromAnnotations(old.Annotations).Equal(api.FromAnnotations(cur.Annotations)) ||
		old.Annotations[api.AnnotationRetry] != cur.Annotations[api.AnnotationRetry]
}

// get returns the node as last seen, or nil.
func (w *nodeWatch) get() *corev1.Node {
	if w == nil {
		return nil
	}
	return w.last.Load()
}

// nodeReady says whether n's Ready condition is True (nil) or what it shows: what a verified refresh
// asks of the Node during its window.
func nodeReady(n *corev1.Node) error {
	if n == nil {
		return fmt.Errorf("the Node is gone")
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("Ready is %s (%s: %s)", c.Status, c.Reason, api.Truncate(c.Message, 200))
		}
	}
	return fmt.Errorf("the Node has no Ready condition")
}
