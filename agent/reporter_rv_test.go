package agent

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
)

// rvPatcher is an API server that says the resourceVersion each patch produced.
type rvPatcher struct {
	rv      int
	patches int
}

func (p *rvPatcher) PatchNode(ctx context.Context, name string, patch []byte) error {
	_, err := p.PatchNodeRV(ctx, name, patch)
	return err
}

func (p *rvPatcher) PatchNodeRV(context.Context, string, []byte) (string, error) {
	p.patches++
	p.rv++
	return strconv.Itoa(p.rv), nil
}

// A late watch event showing the agent's own earlier patch does not make it send the newer one again.
func TestReporterIgnoresItsOwnLateEvents(t *testing.T) {
	patcher := &rvPatcher{rv: 10}
	var shown *corev1.Node
	node := func(rv string, s api.NodeStatus) *corev1.Node {
		ann := s.Annotations()
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: rv, Annotations: ann}}
	}
	old := api.NodeStatus{Current: "h0", Desired: "h0", State: api.StateDone}
	working := api.NodeStatus{Current: "h0", Desired: "h1", State: api.StateWorking}
	done := api.NodeStatus{Current: "h1", Desired: "h1", State: api.StateDone}
	shown = node("10", old)
	r := newReporter(patcher, "n", slog.New(slog.DiscardHandler), func() *corev1.Node { return shown })
	ctx := context.Background()
	r.set(working)
	if err := r.sync(ctx); err != nil || patcher.patches != 1 {
		t.Fatalf("Working: %v, %d patches", err, patcher.patches)
	}
	r.set(done) // the refresh ended before the watch showed Working
	if err := r.sync(ctx); err != nil || patcher.patches != 2 {
		t.Fatalf("Done: %v, %d patches", err, patcher.patches)
	}
	shown = node("11", working) // the watch catches up with the first patch
	if err := r.sync(ctx); err != nil || patcher.patches != 2 {
		t.Fatalf("a late event of its own Working patch sent Done again: %d patches", patcher.patches)
	}
	shown = node("13", old) // a newer Node edited by hand: corrected
	if err := r.sync(ctx); err != nil || patcher.patches != 3 {
		t.Fatalf("a hand edit was not corrected: %d patches", patcher.patches)
	}
}

// A lazy status (a waiting node that took its slot) is sent only once due: a Done that comes first
// replaces it unsent, and the final flush sends it whatever the delay.
func TestReporterLazyStatus(t *testing.T) {
	patcher := &rvPatcher{rv: 10}
	waiting := api.NodeStatus{Current: "h0", Desired: "h1", State: api.StateWorking, Waiting: &api.Waiting{InUse: 1, Slots: 1}}
	shown := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "10"}}
	r := newReporter(patcher, "n", slog.New(slog.DiscardHandler), func() *corev1.Node { return shown })
	ctx := context.Background()
	r.set(waiting)
	if err := r.sync(ctx); err != nil || patcher.patches != 1 {
		t.Fatalf("waiting: %v, %d patches", err, patcher.patches)
	}
	r.setLazy(api.NodeStatus{Current: "h0", Desired: "h1", State: api.StateWorking}, time.Hour)
	if err := r.sync(ctx); err != nil || patcher.patches != 1 {
		t.Fatalf("a lazy status was sent before it was due: %d patches", patcher.patches)
	}
	r.set(api.NodeStatus{Current: "h1", Desired: "h1", State: api.StateDone})
	if err := r.sync(ctx); err != nil || patcher.patches != 2 {
		t.Fatalf("Done: %v, %d patches", err, patcher.patches)
	}
	r.setLazy(api.NodeStatus{Current: "h1", Desired: "h2", State: api.StateWorking}, time.Hour)
	if err := r.flush(time.Second); err != nil || patcher.patches != 3 {
		t.Fatalf("the final flush held a lazy status back: %v, %d patches", err, patcher.patches)
	}
	r.setLazy(api.NodeStatus{Current: "h1", Desired: "h3", State: api.StateWorking}, 10*time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	if err := r.sync(ctx); err != nil || patcher.patches != 4 {
		t.Fatalf("a due lazy status was not sent: %v, %d patches", err, patcher.patches)
	}
}
