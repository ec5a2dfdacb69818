package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/refresh-agent/kube"
)

// Source feeds snapshots to the loop until ctx ends.
type Source interface {
	// Start begins watching and returns once the first state is known (or ctx ends).
	Start(ctx context.Context, out func(Snapshot)) error
	// Synced reports whether the source has delivered its first state.
	Synced() bool
}

// APISource watches one ConfigMap through an informer restricted to its name: one watch, never a
// list of the namespace, and no periodic resync (an idle agent sends nothing).
type APISource struct {
	Client    *kube.Client
	Namespace string
	Name      string
	informer  cache.SharedIndexInformer
}

func (s *APISource) Start(ctx context.Context, out func(Snapshot)) error {
	lw := cache.NewListWatchFromClient(s.Client.REST(), "configmaps", s.Namespace,
		fields.OneTermEqualSelector("metadata.name", s.Name))
	s.informer = cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	where := fmt.Sprintf("ConfigMap %s/%s", s.Namespace, s.Name)
	emit := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm.Name != s.Name {
			return
		}
		snap := snapshotFromData(where, cm.Data, cm.BinaryData)
		snap.Version = cm.ResourceVersion
		out(snap)
	}
	_, err := s.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    emit,
		UpdateFunc: func(_, obj any) { emit(obj) },
		DeleteFunc: func(any) { out(Snapshot{Problem: where + " was deleted"}) },
	})
	if err != nil {
		return err
	}
	go s.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return ctx.Err()
	}
	if len(s.informer.GetStore().List()) == 0 {
		out(Snapshot{Problem: where + " not found"})
	}
	return nil
}

func (s *APISource) Synced() bool { return s.informer != nil && s.informer.HasSynced() }
