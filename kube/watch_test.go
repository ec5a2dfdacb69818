package kube

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// listThenWatch is a ListerWatcher whose lists and watches the test scripts; it asks the
// reflector for a list and a watch (no watch-list), as an API server without it would.
type listThenWatch struct {
	*cache.ListWatch
}

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}}
}

func TestWatchSaysWhatChangedAcrossRelistsAndBrokenWatches(t *testing.T) {
	lists := make(chan *corev1.ConfigMapList, 3)
	watches := make(chan *watch.FakeWatcher, 3)
	lw := listThenWatch{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return <-lists, nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return <-watches, nil
		},
	}}
	var mu sync.Mutex
	var got []string
	seen := make(chan struct{}, 100)
	say := func(o any) string {
		if o == nil {
			return "-"
		}
		c := o.(*corev1.ConfigMap)
		return c.Name + "@" + c.ResourceVersion
	}
	listed := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Watch(ctx, "test", lw, &corev1.ConfigMap{}, func(old, cur any) {
		mu.Lock()
		got = append(got, say(old)+">"+say(cur))
		mu.Unlock()
		seen <- struct{}{}
	}, func() {
		mu.Lock()
		listed++
		mu.Unlock()
	})
	wait := func(n int) []string {
		t.Helper()
		for i := 0; i < n; i++ {
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
				t.Fatalf("waiting for %d changes, got %v", n, got)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}

	lists <- &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.ConfigMap{*cm("a", "1"), *cm("b", "1")}}
	w1 := watch.NewFake()
	watches <- w1
	assert.ElementsMatch(t, []string{"->a@1", "->b@1"}, wait(2), "the first list")
	require.True(t, w.WaitSynced(ctx))

	w1.Modify(cm("a", "2"))
	w1.Delete(cm("b", "3"))
	assert.Equal(t, []string{"a@1>a@2", "b@1>-"}, wait(2), "watch events, the deleted object's last state")

	// The watch breaks (an ERROR event, as an API server going away sends): nothing is said about the
	// objects; the relist says only what differs (c is new, a is unchanged).
	lists <- &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "4"}, Items: []corev1.ConfigMap{*cm("a", "2"), *cm("c", "4")}}
	w2 := watch.NewFake()
	watches <- w2
	w1.Error(&apierrors.NewInternalError(fmt.Errorf("etcdserver: request timed out")).ErrStatus)
	assert.Equal(t, []string{"->c@4"}, wait(1))

	// A relist without a is its deletion.
	lists <- &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.ConfigMap{*cm("c", "4")}}
	watches <- watch.NewFake()
	w2.Error(&apierrors.NewGone("too old").ErrStatus)
	assert.Equal(t, []string{"a@2>-"}, wait(1))
	assert.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return listed == 3 }, 10*time.Second, 10*time.Millisecond,
		"listed after every list")
	assert.Len(t, w.List(), 1)
}
