package integration

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// deployObjects reads every resource the kustomization lists.
func deployObjects(t *testing.T) []*unstructured.Unstructured {
	var kust struct{ Resources []string }
	data, err := os.ReadFile("../../deploy/kustomization.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &kust))
	require.NotEmpty(t, kust.Resources)
	var out []*unstructured.Unstructured
	for _, f := range kust.Resources {
		data, err := os.ReadFile(filepath.Join("../../deploy", f))
		require.NoError(t, err)
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			require.NoError(t, err, f)
			u := &unstructured.Unstructured{}
			require.NoError(t, u.UnmarshalJSON(js), f)
			out = append(out, u)
		}
	}
	return out
}

// applyDeploy server-side applies deploy/ to the real API server.
func applyDeploy(t *testing.T, kube *kubetest.Server) {
	cfg := kube.Config(kubetest.AdminUser)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	for _, u := range deployObjects(t) {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err, gvk.String())
		ri := dyn.Resource(m.Resource)
		var r dynamic.ResourceInterface = ri
		if ns := u.GetNamespace(); ns != "" {
			r = ri.Namespace(ns)
		}
		_, err = r.Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "refresh-agent-deploy-test", Force: true})
		require.NoError(t, err, "%s %s", gvk.Kind, u.GetName())
	}
}

func TestDeployManifestsAndAdmissionPolicy(t *testing.T) {
	kube := requireKube(t)
	applyDeploy(t, kube)
	admin, err := kubernetes.NewForConfig(kube.Config(kubetest.AdminUser))
	require.NoError(t, err)
	ctx := context.Background()
	for _, n := range []string{"deploy-node-a", "deploy-node-b"} {
		_, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n,
			Labels: map[string]string{"role": "worker"}, Annotations: map[string]string{"other": "x"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}) })
	}
	// The agent's ServiceAccount, as a pod on deploy-node-a presents it.
	cfg := kube.Config(kubetest.AdminUser)
	cfg.Impersonate.UserName = "system:serviceaccount:refresh-agent:refresh-agent"
	cfg.Impersonate.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:refresh-agent", "system:authenticated"}
	cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {"deploy-node-a"}}
	sa, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	patch := func(node, p string) error {
		_, err := sa.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	refresh := `{"metadata":{"annotations":{"` + agent.AnnotationState + `":"Working","` + agent.AnnotationDesired + `":"h1"}}}`

	// The policy is compiled asynchronously after creation: wait until it denies.
	require.Eventually(t, func() bool {
		return apierrors.IsForbidden(patch("deploy-node-b", refresh)) || apierrors.IsInvalid(patch("deploy-node-b", refresh))
	}, 30*time.Second, 200*time.Millisecond, "the admission policy never took effect")

	require.NoError(t, patch("deploy-node-a", refresh), "its own node's refresh annotations")
	n, err := admin.CoreV1().Nodes().Get(ctx, "deploy-node-a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "Working", n.Annotations[agent.AnnotationState])

	denied := map[string]struct{ node, patch, msg string }{
		"another node":       {"deploy-node-b", refresh, "only change the node its pod runs on"},
		"a label":            {"deploy-node-a", `{"metadata":{"labels":{"role":"control-plane"}}}`, "may not change node labels"},
		"another annotation": {"deploy-node-a", `{"metadata":{"annotations":{"other":"y"}}}`, "only change the hypershift.openshift.io refresh annotations"},
		"a new annotation":   {"deploy-node-a", `{"metadata":{"annotations":{"machineconfiguration.openshift.io/state":"Done"}}}`, "refresh annotations"},
		"removing one":       {"deploy-node-a", `{"metadata":{"annotations":{"other":null}}}`, "refresh annotations"},
		"a taint":            {"deploy-node-a", `{"spec":{"taints":[{"key":"x","effect":"NoSchedule"}]}}`, "may not change the node spec"},
		"a provider ID":      {"deploy-node-a", `{"spec":{"providerID":"aws:///x"}}`, "may not change the node spec"},
		"cordon another":     {"deploy-node-b", `{"spec":{"unschedulable":true}}`, "only change the node its pod runs on"},
	}
	for name, d := range denied {
		err := patch(d.node, d.patch)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), d.msg, name)
	}
	n, err = admin.CoreV1().Nodes().Get(ctx, "deploy-node-a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "worker", n.Labels["role"])
	assert.Equal(t, "x", n.Annotations["other"])
	for _, taint := range n.Spec.Taints {
		assert.NotEqual(t, "x", taint.Key, "the denied taint")
	}

	// Drain: cordon and uncordon its own node; list pods; evict (here a pod that does not exist:
	// not found, so allowed; RBAC would say forbidden).
	require.NoError(t, patch("deploy-node-a", `{"spec":{"unschedulable":true}}`), "cordon its own node")
	require.NoError(t, patch("deploy-node-a", `{"spec":{"unschedulable":false}}`), "uncordon its own node")
	_, err = sa.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=deploy-node-a"})
	assert.NoError(t, err, "the drain's pod list")
	err = sa.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "nope", Namespace: "default"}})
	assert.True(t, apierrors.IsNotFound(err), "evictions allowed: %v", err)
	_, err = sa.CoreV1().Pods("default").Get(ctx, "nope", metav1.GetOptions{})
	assert.True(t, apierrors.IsForbidden(err), "no pod reads beyond the list: %v", err)

	// RBAC: the one ConfigMap, by name only.
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").Get(ctx, "refresh-config", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "allowed to read refresh-config (not created here): %v", err)
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").Get(ctx, "other", metav1.GetOptions{})
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "listing the namespace: %v", err)
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=refresh-config"})
	assert.NoError(t, err, "the informer's list by name")
	_, err = sa.CoreV1().Secrets("refresh-agent").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err))
	_, err = sa.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "deploy-node-a"}, Reason: agent.EventApplied, Message: "test"}, metav1.CreateOptions{})
	assert.NoError(t, err, "events on nodes")
}
