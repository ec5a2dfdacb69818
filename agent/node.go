package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
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

// nodeWatch keeps the agent's own Node in an informer restricted to its name.
type nodeWatch struct {
	informer cache.SharedIndexInformer
	name     string
}

func watchNode(ctx context.Context, client cache.Getter, name string, changed func()) (*nodeWatch, error) {
	lw := cache.NewListWatchFromClient(client, "nodes", "", fields.OneTermEqualSelector("metadata.name", name))
	w := &nodeWatch{informer: cache.NewSharedIndexInformer(lw, &corev1.Node{}, 0, cache.Indexers{}), name: name}
	_, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { changed() },
		UpdateFunc: func(old, cur any) {
			// Heartbeats and status updates are no reason to wake: only what deferral reads is.
			o, n := old.(*corev1.Node), cur.(*corev1.Node)
			if deferReason(o) != deferReason(n) {
				changed()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	go w.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) {
		return nil, ctx.Err()
	}
	return w, nil
}

// get returns the node as last seen, or nil.
func (w *nodeWatch) get() *corev1.Node {
	obj, ok, err := w.informer.GetStore().GetByKey(w.name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*corev1.Node)
}

func (w *nodeWatch) annotations() (map[string]string, bool) {
	n := w.get()
	if n == nil {
		return nil, false
	}
	return n.Annotations, true
}
