package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/hypershifttest"
	"github.com/openshift/refresh-agent/test/kubetest"
)

var (
	guestOnce   sync.Once
	guestServer *kubetest.Server
	guestErr    error
	crdOnce     sync.Once
	crdErr      error
)

// requireClusters returns a management and a guest cluster: the shared API server, and a second
// kube-apiserver on its etcd under another prefix. The management one has the minimal NodePool and
// Cluster API CRDs of test/testdata/crds.
func requireClusters(t *testing.T) (mgmt, guest *kubetest.Server) {
	t.Helper()
	mgmt = requireKube(t)
	guestOnce.Do(func() { guestServer, guestErr = mgmt.Another("/guest") })
	require.NoError(t, guestErr, "guest kube-apiserver")
	crdOnce.Do(func() { crdErr = installCRDs(mgmt) })
	require.NoError(t, crdErr, "CRDs")
	return mgmt, guestServer
}

func installCRDs(s *kubetest.Server) error {
	dyn, err := dynamic.NewForConfig(s.Config(kubetest.AdminUser))
	if err != nil {
		return err
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	files, _ := filepath.Glob("../testdata/crds/*.yaml")
	if len(files) == 0 {
		return fmt.Errorf("no CRDs under test/testdata/crds")
	}
	ctx := context.Background()
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if _, err := crds.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", f, err)
		}
		names = append(names, u.GetName())
	}
	for _, n := range names {
		ok := kubetest.WaitFor(ctx, 30*time.Second, func() bool {
			u, err := crds.Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
			return false
		})
		if !ok {
			return fmt.Errorf("CRD %s never established", n)
		}
	}
	return nil
}

// ctlEnv is one test's share of the two clusters: a control plane namespace (which also holds the
// NodePools) on the management cluster, and the agents' namespace on the guest cluster.
type ctlEnv struct {
	t               *testing.T
	mgmt, guest     *kubetest.Server
	dyn             dynamic.Interface
	mgmtCS, guestCS kubernetes.Interface
	ns, guestNS     string
	mgmtKC, guestKC string
	ctx             context.Context
}

var envSeq atomic.Int32

func newCtlEnv(t *testing.T, name string) *ctlEnv {
	mgmt, guest := requireClusters(t)
	name = fmt.Sprintf("%s-%d", name, envSeq.Add(1)) // unique across -count runs on the same servers
	e := &ctlEnv{t: t, mgmt: mgmt, guest: guest, ns: "clusters-" + name, guestNS: name + "-agents", ctx: context.Background()}
	var err error
	e.dyn, err = dynamic.NewForConfig(mgmt.Config(kubetest.AdminUser))
	require.NoError(t, err)
	e.mgmtCS, err = kubernetes.NewForConfig(mgmt.Config(kubetest.AdminUser))
	require.NoError(t, err)
	e.guestCS, err = kubernetes.NewForConfig(guest.Config(kubetest.AdminUser))
	require.NoError(t, err)
	e.mgmtKC, err = mgmt.Kubeconfig(kubetest.AdminUser)
	require.NoError(t, err)
	e.guestKC, err = guest.Kubeconfig(kubetest.AdminUser)
	require.NoError(t, err)
	_, err = e.mgmtCS.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = e.guestCS.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.guestNS}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return e
}

// controllerProc is a running `refresh-agent controller`.
type controllerProc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

func (e *ctlEnv) startController(extra ...string) *controllerProc {
	return e.startControllerAs(e.mgmtKC, e.guestKC, extra...)
}

func (e *ctlEnv) startControllerAs(mgmtKC, guestKC string, extra ...string) *controllerProc {
	t := e.t
	bin := agentBinary(t)
	args := append([]string{"controller", "--management-kubeconfig", mgmtKC, "--guest-kubeconfig", guestKC,
		"--namespace", e.ns, "--guest-namespace", e.guestNS, "--health-addr", "",
		"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "500ms"}, extra...)
	cmd := exec.Command(bin, args...)
	f, err := os.CreateTemp("", "controller-*.log")
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = f, f
	require.NoError(t, cmd.Start())
	p := &controllerProc{cmd: cmd, log: f.Name(), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-p.done
		if t.Failed() {
			b, _ := os.ReadFile(f.Name())
			t.Logf("controller log:\n%s", tailLines(string(b), 60))
		}
		_ = os.Remove(f.Name())
	})
	return p
}

func (p *controllerProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the process (it cannot release its Lease) and waits for it.
func (p *controllerProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (p *controllerProc) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (e *ctlEnv) res(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
	return e.dyn.Resource(gvr).Namespace(e.ns)
}

// hyperShift returns the fake HyperShift of one pool in this test's control plane namespace: the
// objects exactly as HyperShift writes them (package hypershifttest). contract selects HyperShift's
// rollout-hash design (else today's main, without rollout annotations).
func (e *ctlEnv) hyperShift(pool string, contract, inPlace, v1beta2 bool) *hypershifttest.Pool {
	return &hypershifttest.Pool{Dyn: e.dyn, Core: e.mgmtCS, Namespace: e.ns, Name: pool, Contract: contract, InPlace: inPlace, V1Beta2: v1beta2}
}

// annotate merges annotations into an object (a nil value removes one).
func (e *ctlEnv) annotate(gvr schema.GroupVersionResource, name string, ann map[string]any) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	_, err := e.res(gvr).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(e.t, err)
}

// setPayload writes a token Secret's payload key as the ignition server does (base64 of gzip of
// the Ignition JSON), or raw bytes when raw is set; nil removes the key.
func (e *ctlEnv) setPayload(pool, version string, payload []byte, raw bool) {
	var v any
	switch {
	case payload == nil:
	case raw:
		v = base64.StdEncoding.EncodeToString(payload)
	default:
		v = base64.StdEncoding.EncodeToString(fixture.GzipBase64(payload))
	}
	patch, _ := json.Marshal(map[string]any{"data": map[string]any{"payload": v}})
	_, err := e.mgmtCS.CoreV1().Secrets(e.ns).Patch(e.ctx, controller.TokenSecretName(pool, version), types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(e.t, err)
}

// writesOf counts the controller's NodePool status writes for a pool (it logs each one).
func writesOf(p *controllerProc, pool string) int {
	return strings.Count(p.logText(), `"msg":"conditions written","pool":"`+pool+`"`)
}

// guestNode creates a Node of the pool in the guest cluster.
func (e *ctlEnv) guestNode(name, pool string) {
	_, err := e.guestCS.CoreV1().Nodes().Create(e.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{api.LabelNodePool: pool}}}, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = e.guestCS.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// report writes a node's refresh annotations as an agent would.
func (e *ctlEnv) report(node, current, desired, state, reason string) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		api.AnnotationCurrent: current, api.AnnotationDesired: desired, api.AnnotationState: state, api.AnnotationReason: reason}}})
	_, err := e.guestCS.CoreV1().Nodes().Patch(e.ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(e.t, err)
}

func (e *ctlEnv) configMap(pool string) *corev1.ConfigMap {
	cm, err := e.guestCS.CoreV1().ConfigMaps(e.guestNS).Get(e.ctx, api.ConfigMapName("", pool), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(e.t, err)
	return cm
}

func (e *ctlEnv) publishedHash(pool string) string {
	if cm := e.configMap(pool); cm != nil {
		return cm.Data[api.KeyHash]
	}
	return ""
}

// conditions reads the NodePool's status.conditions (all of them, HyperShift's included).
func (e *ctlEnv) conditions(pool string) []metav1.Condition {
	u, err := e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(e.t, err)
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	js, _ := json.Marshal(list)
	var out []metav1.Condition
	require.NoError(e.t, json.Unmarshal(js, &out))
	return out
}

// waitCondition waits until the pool's condition has the status and its reason or message
// contains each of want.
func (e *ctlEnv) waitCondition(pool, typ string, status metav1.ConditionStatus, want ...string) metav1.Condition {
	e.t.Helper()
	var c *metav1.Condition
	ok := kubetest.WaitFor(e.ctx, 60*time.Second, func() bool {
		c = meta.FindStatusCondition(e.conditions(pool), typ)
		if c == nil || c.Status != status {
			return false
		}
		for _, w := range want {
			if !strings.Contains(c.Reason+" "+c.Message, w) {
				return false
			}
		}
		return true
	})
	require.True(e.t, ok, "%s of %s never %s with %q; last: %+v", typ, pool, status, want, c)
	return *c
}

func (e *ctlEnv) waitPublished(pool, hash string) *corev1.ConfigMap {
	e.t.Helper()
	ok := kubetest.WaitFor(e.ctx, 60*time.Second, func() bool { return e.publishedHash(pool) == hash })
	require.True(e.t, ok, "%s never published for %s (have %q)", hash, pool, e.publishedHash(pool))
	return e.configMap(pool)
}

// events lists the management cluster's Events about a NodePool with a reason.
func (e *ctlEnv) events(pool, reason string) []corev1.Event {
	l, err := e.mgmtCS.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
	require.NoError(e.t, err)
	var out []corev1.Event
	for _, ev := range l.Items {
		if ev.InvolvedObject.Name == pool && ev.InvolvedObject.Kind == "NodePool" && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

func (e *ctlEnv) waitEvent(pool, reason, contains string) corev1.Event {
	e.t.Helper()
	var found corev1.Event
	ok := kubetest.WaitFor(e.ctx, 30*time.Second, func() bool {
		for _, ev := range e.events(pool, reason) {
			if strings.Contains(ev.Message, contains) {
				found = ev
				return true
			}
		}
		return false
	})
	require.True(e.t, ok, "no %s Event about %s containing %q", reason, pool, contains)
	return found
}

func unstructuredOf(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

func configMapOf(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"hash": "someone else's"}}
}

// tooLargeForAConfigMap returns a payload in HyperShift's encoding that fits in a Secret (1 MiB)
// but not in the per-pool ConfigMap.
func tooLargeForAConfigMap(t *testing.T) []byte {
	size := 700 << 10
	for range 20 {
		content := make([]byte, size)
		r := rand.New(rand.NewPCG(1, 2)) // incompressible, deterministic
		for i := range content {
			content[i] = byte(r.Uint32())
		}
		enc := fixture.GzipBase64(fixture.Ignition("3.2.0").File("/etc/containers/registries.conf", content, 0o644).JSON())
		lo, hi := publish.MaxConfigMapSize+4<<10, 1<<20-8<<10
		if len(enc) >= lo && len(enc) <= hi {
			return enc
		}
		size = int(int64(size) * int64((lo+hi)/2) / int64(len(enc)))
	}
	t.Fatal("no payload size between the ConfigMap and the Secret limits")
	return nil
}

// leastPrivilege applies deploy/controller's ServiceAccounts and RBAC to the two clusters (with this
// test's namespaces) and returns kubeconfigs holding those ServiceAccounts' tokens.
func (e *ctlEnv) leastPrivilege() (mgmtKC, guestKC string) {
	t := e.t
	apply := func(s *kubetest.Server, dir string, ns map[string]string) {
		cfg := s.Config(kubetest.AdminUser)
		dyn, err := dynamic.NewForConfig(cfg)
		require.NoError(t, err)
		cs, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
		for _, f := range []string{"serviceaccount.yaml", "rbac.yaml"} {
			data, err := os.ReadFile(filepath.Join("../../deploy/controller", dir, f))
			require.NoError(t, err)
			text := string(data)
			for from, to := range ns {
				text = strings.ReplaceAll(text, "namespace: "+from+"\n", "namespace: "+to+"\n")
			}
			for _, doc := range strings.Split(text, "\n---\n") {
				js, err := yaml.YAMLToJSON([]byte(doc))
				require.NoError(t, err)
				u := &unstructured.Unstructured{}
				require.NoError(t, u.UnmarshalJSON(js))
				if u.GetKind() == "Secret" {
					continue // the test asks for tokens instead
				}
				gvk := u.GroupVersionKind()
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				require.NoError(t, err)
				var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if u.GetNamespace() != "" {
					r = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
				}
				_, err = r.Apply(e.ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "controller-test", Force: true})
				require.NoError(t, err, "%s %s", gvk.Kind, u.GetName())
			}
		}
	}
	apply(e.mgmt, "management", map[string]string{"clusters-example": e.ns, "clusters": e.ns})
	apply(e.guest, "guest", map[string]string{"refresh-agent": e.guestNS})
	kubeconfig := func(s *kubetest.Server, cs kubernetes.Interface, ns, name string) string {
		tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(e.ctx, "refresh-agent-controller",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
		require.NoError(t, err)
		kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]\n"+
			"users: [{name: u, user: {token: %q}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n",
			s.URL, base64.StdEncoding.EncodeToString(s.CAData), tok.Status.Token)
		p := filepath.Join(t.TempDir(), name+".kubeconfig")
		require.NoError(t, os.WriteFile(p, []byte(kc), 0o600))
		return p
	}
	return kubeconfig(e.mgmt, e.mgmtCS, e.ns, "management"), kubeconfig(e.guest, e.guestCS, e.guestNS, "guest")
}

// watchConditions records every distinct condition ("Type=Status Reason: Message") the NodePool
// shows from now on; the returned func lists them so far.
func (e *ctlEnv) watchConditions(pool string) func() []string {
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	w, err := e.res(controller.GVRNodePool).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pool})
	require.NoError(e.t, err)
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			mu.Lock()
			for _, c := range list {
				m, _ := c.(map[string]any)
				s := fmt.Sprintf("%s=%s %s: %s", m["type"], m["status"], m["reason"], m["message"])
				if !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
