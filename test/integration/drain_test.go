package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// standInKubelet finishes what a kubelet would: a pod on the node that is terminating is deleted
// for good (the API server only marks a bound pod; its kubelet removes it).
func standInKubelet(t *testing.T, ctx context.Context, admin kubernetes.Interface, ns string) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		zero := int64(0)
		for ctx.Err() == nil {
			pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for _, p := range pods.Items {
					if p.DeletionTimestamp != nil {
						_ = admin.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// watchCordon records every value of the node's spec.unschedulable the API server reports.
func watchCordon(t *testing.T, ctx context.Context, admin kubernetes.Interface, node string) func() []bool {
	w, err := admin.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node})
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []bool
	go func() {
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type == watch.Modified {
				mu.Lock()
				if len(seen) == 0 || seen[len(seen)-1] != n.Spec.Unschedulable {
					seen = append(seen, n.Spec.Unschedulable)
				}
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return func() []bool { mu.Lock(); defer mu.Unlock(); return append([]bool(nil), seen...) }
}

func pod(name, node string, mod func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/app:1"}}}}
	if mod != nil {
		mod(p)
	}
	return p
}

func TestDrainHonoursPDBsAndTimesOutCleanly(t *testing.T) {
	srv := requireKube(t)
	admin, err := kubernetes.NewForConfig(srv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	const node, ns = "drain-node", "drain-test"
	_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	_, err = admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	// No controller manager runs here to create the namespace's default service account.
	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	yes := true
	for _, p := range []*corev1.Pod{
		pod("free", node, nil),
		pod("protected", node, nil),
		pod("elsewhere", "other-node", nil),
		pod("ds", node, func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "0000-ds", Controller: &yes}}
		}),
		pod("static-"+node, node, func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}),
	} {
		created, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err, p.Name)
		// Running and ready, as its kubelet would report it: only such pods count for a PDB (a
		// pending pod is evicted whatever the budget says).
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		_, err = admin.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err, p.Name)
	}
	one := intstr.FromInt32(1)
	pdb, err := admin.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "protected"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "protected"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// The disruption controller's verdict (no controller manager runs here): nothing may go.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	pdb, err = admin.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)
	standInKubelet(t, ctx, admin, ns)
	cordons := watchCordon(t, ctx, admin, node)

	client, err := kube.New(srv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	d := &kube.Drainer{Client: client, Node: node, Timeout: 3 * time.Second, Interval: 200 * time.Millisecond}

	// The PDB blocks: the drain evicts what it may, waits, and times out naming the pod.
	err = d.Drain(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "drain-test/protected (a PodDisruptionBudget blocks it)")
	n, err := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, n.Spec.Unschedulable, "cordoned")
	_, err = admin.CoreV1().Pods(ns).Get(ctx, "free", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the unprotected pod was evicted")
	for _, name := range []string{"protected", "elsewhere", "ds", "static-" + node} {
		p, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err, name)
		assert.Nil(t, p.DeletionTimestamp, name)
	}
	require.NoError(t, d.Uncordon(ctx))

	// The PDB allows one disruption now: the drain succeeds.
	pdb.Status.DisruptionsAllowed, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy = 1, 2, 1
	_, err = admin.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, d.Drain(ctx))
	_, err = admin.CoreV1().Pods(ns).Get(ctx, "protected", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the protected pod was evicted once its PDB allowed it")
	for _, name := range []string{"elsewhere", "ds", "static-" + node} {
		_, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		assert.NoError(t, err, "%s is left alone", name)
	}
	require.NoError(t, d.Uncordon(ctx))
	require.Eventually(t, func() bool { return len(cordons()) >= 4 }, 5*time.Second, 50*time.Millisecond)
	assert.Equal(t, []bool{true, false, true, false}, cordons(), "cordon, uncordon, cordon, uncordon seen")
}
