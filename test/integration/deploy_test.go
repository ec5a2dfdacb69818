package integration

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/metricsserver"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// render builds a kustomization exactly as `kubectl kustomize` does (the same library).
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	var out []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		require.NoError(t, err)
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// minimalCRDs stand in for the Prometheus Operator's: the group, version, kind and scope, any content.
var minimalCRDs = []string{"ServiceMonitor:servicemonitors", "PrometheusRule:prometheusrules"}

func installMonitoringCRDs(t *testing.T, dyn dynamic.Interface) {
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, kr := range minimalCRDs {
		kind, plural, _ := strings.Cut(kr, ":")
		crd := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: `+plural+`.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: `+kind+`, plural: `+plural+`, listKind: `+kind+`List, singular: `+strings.ToLower(kind)+`}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`), &crd.Object))
		_, err := crds.Apply(context.Background(), crd.GetName(), crd, metav1.ApplyOptions{FieldManager: "deploy-test", Force: true})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := crds.Get(context.Background(), crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				c := c.(map[string]any)
				if c["type"] == "Established" && c["status"] == "True" {
					return true
				}
			}
			return false
		}, 30*time.Second, 100*time.Millisecond, "CRD %s established", crd.GetName())
	}
}

// applyDeploy renders deploy/ (the base and both components) and server-side applies it to the real
// API server, after installing minimal ServiceMonitor and PrometheusRule CRDs.
func applyDeploy(t *testing.T, kube *kubetest.Server) []*unstructured.Unstructured {
	cfg := kube.Config(kubetest.AdminUser)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	installMonitoringCRDs(t, dyn)
	// The console's dashboards live in openshift-config-managed, which every OpenShift cluster has.
	_, err = client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-config-managed"}}, metav1.CreateOptions{})
	require.True(t, err == nil || apierrors.IsAlreadyExists(err), "%v", err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	objs := render(t, "../../deploy")
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err, gvk.String())
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if ns := u.GetNamespace(); ns != "" {
			r = dyn.Resource(m.Resource).Namespace(ns)
		}
		// Strict field validation (server-side apply's default): a misspelt field is an error, not
		// silently dropped.
		_, err = r.Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "refresh-agent-deploy-test", Force: true})
		require.NoError(t, err, "%s %s", gvk.Kind, u.GetName())
	}
	return objs
}

func TestDeployRendersBaseAndComponents(t *testing.T) {
	all := render(t, "../../deploy")
	base := render(t, "../../deploy/base")
	for _, k := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ServiceMonitor", "PrometheusRule"} {
		assert.True(t, slicesHasKind(all, k), "deploy/ has a %s", k)
		assert.False(t, slicesHasKind(base, k), "deploy/base leaves %s to a component", k)
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "DaemonSet", "Service", "ClusterRole", "Role"} {
		assert.True(t, slicesHasKind(base, k), "deploy/base has a %s", k)
	}
}

func slicesHasKind(objs []*unstructured.Unstructured, kind string) bool {
	for _, o := range objs {
		if o.GetKind() == kind {
			return true
		}
	}
	return false
}

func TestDeployManifestsAndAdmissionPolicy(t *testing.T) {
	kube := requireKube(t)
	applyDeploy(t, kube)
	admin, err := kubernetes.NewForConfig(kube.Config(kubetest.AdminUser))
	require.NoError(t, err)
	ctx := context.Background()

	// What the API server kept of the DaemonSet: OpenShift's and the image conventions.
	ds, err := admin.AppsV1().DaemonSets("refresh-agent").Get(ctx, "refresh-agent", metav1.GetOptions{})
	require.NoError(t, err)
	pod := ds.Spec.Template
	assert.Equal(t, "privileged", pod.Annotations["openshift.io/required-scc"])
	assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, pod.Spec.NodeSelector)
	c := pod.Spec.Containers[0]
	assert.NotContains(t, c.Image, ":latest")
	assert.Regexp(t, `^quay\.io/openshift/refresh-agent(:v[0-9.]+|@sha256:[0-9a-f]{64})$`, c.Image)
	assert.Equal(t, corev1.PullIfNotPresent, c.ImagePullPolicy)
	assert.Equal(t, corev1.TerminationMessageFallbackToLogsOnError, c.TerminationMessagePolicy)
	require.NotNil(t, c.SecurityContext.ReadOnlyRootFilesystem)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.Empty(t, c.Resources.Limits, "requests only")
	assert.NotEmpty(t, c.Resources.Requests)
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/host" {
			require.NotNil(t, m.MountPropagation)
			assert.Equal(t, corev1.MountPropagationHostToContainer, *m.MountPropagation)
		}
	}
	ns, err := admin.CoreV1().Namespaces().Get(ctx, "refresh-agent", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "", ns.Annotations["openshift.io/node-selector"])
	assert.Contains(t, ns.Annotations, "openshift.io/node-selector")
	assert.Equal(t, "true", ns.Labels["openshift.io/cluster-monitoring"])
	assert.Equal(t, "false", ns.Labels["security.openshift.io/scc.podSecurityLabelSync"])
	assert.Equal(t, "privileged", ns.Labels["pod-security.kubernetes.io/enforce"])
	rb, err := admin.RbacV1().RoleBindings("refresh-agent").Get(ctx, "refresh-agent-scc-privileged", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "system:openshift:scc:privileged", rb.RoleRef.Name)
	svc, err := admin.CoreV1().Services("refresh-agent").Get(ctx, "refresh-agent-metrics", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "refresh-agent-metrics-tls", svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"])

	for _, n := range []string{"deploy-node-a", "deploy-node-b"} {
		_, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n,
			Labels: map[string]string{"role": "worker"}, Annotations: map[string]string{"other": "x"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}) })
	}
	sa, err := kubernetes.NewForConfig(agentSA(kube, "deploy-node-a"))
	require.NoError(t, err)
	patch := func(node, p string) error {
		_, err := sa.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	refresh := `{"metadata":{"annotations":{"` + api.AnnotationState + `":"Working","` + api.AnnotationDesired + `":"h1"}}}`

	// The policy is compiled asynchronously after creation: wait until it denies.
	require.Eventually(t, func() bool {
		return apierrors.IsForbidden(patch("deploy-node-b", refresh)) || apierrors.IsInvalid(patch("deploy-node-b", refresh))
	}, 30*time.Second, 200*time.Millisecond, "the admission policy never took effect")

	require.NoError(t, patch("deploy-node-a", refresh), "its own node's refresh annotations")
	n, err := admin.CoreV1().Nodes().Get(ctx, "deploy-node-a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "Working", n.Annotations[api.AnnotationState])

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

	// RBAC: any pool's ConfigMap in the agent's namespace (the name comes from a template), nothing
	// else there and no ConfigMap elsewhere.
	poolCM := api.ConfigMapName("", "pool-a")
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").Get(ctx, poolCM, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "allowed to read %s (not created here): %v", poolCM, err)
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + poolCM})
	assert.NoError(t, err, "the informer's list by name")
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + poolCM})
	assert.NoError(t, err, "the informer's watch by name")
	_, err = sa.CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "ConfigMaps of another namespace: %v", err)
	_, err = sa.CoreV1().Secrets("refresh-agent").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err))
	_, err = sa.CoreV1().ConfigMaps("refresh-agent").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "read only: %v", err)
	_, err = sa.CoreV1().Nodes().Get(ctx, "deploy-node-a", metav1.GetOptions{})
	assert.NoError(t, err, "its Node")
	_, err = sa.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "deploy-node-a"}, Reason: "RefreshApplied", Message: "test"}, metav1.CreateOptions{})
	assert.NoError(t, err, "events on nodes")
}

// agentSA is the agent's ServiceAccount as a pod on node presents it.
func agentSA(kube *kubetest.Server, node string) *rest.Config {
	cfg := kube.Config(kubetest.AdminUser)
	cfg.Impersonate.UserName = "system:serviceaccount:refresh-agent:refresh-agent"
	cfg.Impersonate.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:refresh-agent", "system:authenticated"}
	cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
	return cfg
}

// TestMetricsOverHTTPSWithRBAC serves metrics as the agent does, reviewing tokens with the deployed
// RBAC against the real API server: a scraper bound to refresh-agent-metrics-reader gets 200, another
// ServiceAccount 403, a bad token 401.
func TestMetricsOverHTTPSWithRBAC(t *testing.T) {
	kubeSrv := requireKube(t)
	applyDeploy(t, kubeSrv)
	admin, err := kubernetes.NewForConfig(kubeSrv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const ns = "metrics-scrapers"
	_, err = admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	token := func(name string) string {
		_, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	allowed, denied := token("prometheus"), token("curious")
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "refresh-agent-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: ns}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), "test-metrics-reader", metav1.DeleteOptions{})
	})

	// The reviews go out as the agent's own ServiceAccount: the deployed auth-delegator binding must
	// allow them.
	reviewer, err := kube.New(agentSA(kubeSrv, "deploy-node-a"))
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	m := newTestRegistry()
	require.NoError(t, metricsserver.Serve(ctx, metricsserver.Config{Addr: addr, Gatherer: m, Reviewer: reviewer, CertDir: t.TempDir()}))

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(tok string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := scrape(allowed)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "refresh_agent_build_info")
	code, body = scrape(denied)
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.NotContains(t, body, "refresh_agent_build_info")
	code, _ = scrape("not-a-token")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = scrape("")
	assert.Equal(t, http.StatusUnauthorized, code)
}
