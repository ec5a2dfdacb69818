package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/openshift/refresh-agent/api"
)

func TestSnapshotFromData(t *testing.T) {
	s := snapshotFromData("cm", map[string]string{"config": "abc", "hash": "h1", "no-reboot-paths": "[]"}, nil)
	assert.Empty(t, s.Problem)
	assert.Equal(t, "h1", s.Hash)
	assert.Equal(t, "abc", string(s.Config))

	s = snapshotFromData("cm", map[string]string{"hash": "h1"}, map[string][]byte{"config": []byte("bin")})
	assert.Equal(t, "bin", string(s.Config), "binaryData works too")

	assert.Contains(t, snapshotFromData("cm", map[string]string{"hash": "h"}, nil).Problem, `no "config" key`)
	assert.Contains(t, snapshotFromData("cm", map[string]string{"config": "x"}, nil).Problem, `no "hash" key`)
	assert.Contains(t, snapshotFromData("cm", map[string]string{"config": "", "hash": "h"}, nil).Problem, `no "config" key`)
}

func TestLatestKeepsOnlyTheNewest(t *testing.T) {
	notified := 0
	l := latest{notify: func() { notified++ }}
	_, ok := l.get()
	assert.False(t, ok)
	for _, h := range []string{"v1", "v2", "v3"} {
		l.put(Snapshot{Hash: h})
	}
	s, ok := l.get()
	require.True(t, ok)
	assert.Equal(t, "v3", s.Hash)
	assert.Equal(t, 3, notified)
	l.clear()
	_, ok = l.get()
	assert.False(t, ok, "cleared when the source changes")
}

func TestDeferReason(t *testing.T) {
	node := func(ann map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: ann}}
	}
	assert.Empty(t, deferReason(nil))
	assert.Empty(t, deferReason(node(nil)))
	assert.Empty(t, deferReason(node(map[string]string{mcdCurrentConfig: "a", mcdDesiredConfig: "a", mcdState: "Done"})))
	assert.Contains(t, deferReason(node(map[string]string{mcdCurrentConfig: "a", mcdDesiredConfig: "b"})), "desiredConfig b, currentConfig a")
	assert.Contains(t, deferReason(node(map[string]string{mcdCurrentConfig: "a", mcdDesiredConfig: "a", mcdState: "Working"})), "state Working")
	n := node(nil)
	now := metav1.Now()
	n.DeletionTimestamp = &now
	assert.Equal(t, "the node is being deleted", deferReason(n))
}

func TestTruncate(t *testing.T) {
	assert.Equal(t, "short", api.Truncate("short", 10))
	long := strings.Repeat("é", 600) // 1200 bytes
	got := api.Truncate(long, api.MaxReasonLen)
	assert.LessOrEqual(t, len(got), api.MaxReasonLen)
	assert.True(t, strings.HasSuffix(got, "…"))
}

func TestBackoff(t *testing.T) {
	b := retryBackoff(time.Second, 5*time.Minute)
	var got []time.Duration
	for i := 0; i < 11; i++ {
		got = append(got, b.Step())
	}
	within := func(d, base time.Duration) {
		t.Helper()
		assert.GreaterOrEqual(t, d, base)
		assert.LessOrEqual(t, d, base+base/2, "jitter is at most half")
	}
	within(got[0], time.Second)
	within(got[1], 2*time.Second)
	within(got[10], 5*time.Minute) // capped
	b = retryBackoff(time.Second, 5*time.Minute)
	within(b.Step(), time.Second)
}

func patches(c *fake.Clientset) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

// fakePatcher sends the reporter's patches to client-go's fake clientset.
type fakePatcher struct{ c *fake.Clientset }

func (f fakePatcher) PatchNode(ctx context.Context, name string, patch []byte) error {
	_, err := f.c.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func TestReporterPatchesOnlyOnChange(t *testing.T) {
	existing := api.NodeStatus{Current: "h1", Desired: "h1", State: api.StateDone}
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{api.AnnotationCurrent: "h1", api.AnnotationDesired: "h1", api.AnnotationState: api.StateDone, api.AnnotationReason: ""}}})
	// The fake clientset stands in for the watch: the reporter reads the Node as it is now.
	current := func() *corev1.Node {
		n, err := client.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return n
	}
	observed := func() (map[string]string, bool) {
		n := current()
		if n == nil {
			return nil, false
		}
		return n.Annotations, true
	}
	r := newReporter(fakePatcher{client}, "n", slog.New(slog.DiscardHandler), current)
	ctx := context.Background()

	r.set(existing)
	require.NoError(t, r.sync(ctx))
	assert.Zero(t, patches(client), "the node already says so: nothing sent")

	working := api.NodeStatus{Current: "h1", Desired: "h2", State: api.StateWorking}
	r.set(working)
	require.NoError(t, r.sync(ctx))
	require.NoError(t, r.sync(ctx))
	assert.Equal(t, 1, patches(client), "one patch, not repeated")
	ann, _ := observed()
	assert.Equal(t, working, api.FromAnnotations(ann))

	// The patch is a merge patch of the four annotations only.
	for _, a := range client.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok {
			assert.Equal(t, "application/merge-patch+json", string(p.GetPatchType()))
			assert.NotContains(t, string(p.GetPatch()), "labels")
			assert.NotContains(t, string(p.GetPatch()), "spec")
		}
	}

	r.set(api.NodeStatus{Current: "h2", Desired: "h2", State: api.StateDone, Reason: strings.Repeat("x", 5000)})
	require.NoError(t, r.sync(ctx))
	ann, _ = observed()
	assert.LessOrEqual(t, len(ann[api.AnnotationReason]), api.MaxReasonLen)

	// Edited by hand: the reporter compares with the Node, not with what it sent, and corrects it.
	n := current()
	n.Annotations[api.AnnotationState] = api.StateDegraded
	n.Annotations[api.AnnotationCurrent] = "edited"
	n.ResourceVersion = "edited" // the fake clientset does not bump it as the API server does
	_, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	before := patches(client)
	require.NoError(t, r.sync(ctx))
	assert.Equal(t, before+1, patches(client))
	ann, _ = observed()
	assert.Equal(t, api.StateDone, ann[api.AnnotationState])
	assert.Equal(t, "h2", ann[api.AnnotationCurrent])

	// Recreated without annotations: written again.
	require.NoError(t, client.CoreV1().Nodes().Delete(ctx, "n", metav1.DeleteOptions{}))
	require.NoError(t, r.sync(ctx), "no Node: nothing to patch, no error")
	_, err = client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "recreated"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, r.sync(ctx))
	ann, _ = observed()
	assert.Equal(t, api.StateDone, ann[api.AnnotationState])

	// Drift is its own annotation, removed (null in the merge patch) when there is none.
	r.set(api.NodeStatus{Current: "h2", Desired: "h2", State: api.StateDone, Drift: "/etc/a,/etc/b"})
	require.NoError(t, r.sync(ctx))
	ann, _ = observed()
	assert.Equal(t, "/etc/a,/etc/b", ann[api.AnnotationDrift])
	r.set(api.NodeStatus{Current: "h2", Desired: "h2", State: api.StateDone})
	require.NoError(t, r.sync(ctx))
	ann, _ = observed()
	_, has := ann[api.AnnotationDrift]
	assert.False(t, has, "removed")
}
