package agent

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/kube"
)

// Source feeds snapshots to the loop until ctx ends.
type Source interface {
	// Start begins delivering snapshots to out.
	Start(ctx context.Context, out func(Snapshot)) error
	// Synced reports whether the source has delivered its first state.
	Synced() bool
}

// PoolFollower is a Source that reads the payload of the Node's NodePool.
type PoolFollower interface {
	// Follow makes the source read pool's payload ("" when the Node has no NodePool label). It
	// reports whether the source changed, in which case earlier snapshots are not this node's.
	Follow(pool string) bool
}

// APISource watches one ConfigMap, the one of the Node's NodePool: its name is Template with "{pool}"
// replaced by the pool's name; a Node without the label reads Name when it is set and otherwise
// gets a NoPool snapshot. The watch is restricted to that name (never a list of the namespace, no
// periodic resync: an idle agent sends nothing) and restarts on another ConfigMap when the label
// changes.
type APISource struct {
	Client    *kube.Client
	Namespace string
	Name      string // the ConfigMap of a Node without the NodePool label; "" for none
	Template  string // default api.DefaultConfigMapTemplate

	mu      sync.Mutex
	ctx     context.Context
	out     func(Snapshot)
	started bool
	current string // the ConfigMap watched ("" for none)
	gen     int    // bumped on every switch: a stopped watch's late events are dropped
	stop    context.CancelFunc
	watch   *oneWatch
	noPool  bool
}

// Start records where snapshots go; the watch starts with the first Follow.
func (s *APISource) Start(ctx context.Context, out func(Snapshot)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx, s.out = ctx, out
	return nil
}

// ConfigMapFor names the ConfigMap a Node of pool reads ("" when none).
func (s *APISource) ConfigMapFor(pool string) string {
	if pool == "" {
		return s.Name
	}
	return api.ConfigMapName(s.Template, pool)
}

// Follow switches the watch to pool's ConfigMap.
func (s *APISource) Follow(pool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := s.ConfigMapFor(pool)
	if s.started && name == s.current {
		return false
	}
	if s.stop != nil {
		s.stop()
	}
	s.started, s.current, s.watch, s.stop, s.noPool = true, name, nil, nil, false
	s.gen++
	gen := s.gen
	if name == "" {
		s.noPool = true
		s.out(Snapshot{NoPool: true, Problem: "the Node has no " + api.LabelNodePool + " label and no --configmap was given"})
		return true
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.stop = cancel
	where := fmt.Sprintf("ConfigMap %s/%s", s.Namespace, name)
	emit := func(obj any) {
		// Under the lock, so a switch cannot slip between the check and the delivery.
		s.mu.Lock()
		defer s.mu.Unlock()
		if gen != s.gen {
			return
		}
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm == nil {
			s.out(Snapshot{Problem: where + " not found"})
			return
		}
		snap := snapshotFromData(where, cm.Data, cm.BinaryData)
		snap.Version = cm.ResourceVersion
		s.out(snap)
	}
	s.watch = watchOne(ctx, s.Client.REST(), "configmaps", s.Namespace, name, &corev1.ConfigMap{}, emit)
	return true
}

// Synced reports whether the ConfigMap watched has been listed.
func (s *APISource) Synced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noPool || (s.watch != nil && s.watch.HasSynced())
}

// Watching names the ConfigMap watched ("" for none).
func (s *APISource) Watching() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}
