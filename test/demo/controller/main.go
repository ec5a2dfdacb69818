// Command controller demonstrates `refresh-agent controller` driving a NodePool end to end: two local
// kube-apiservers (management and guest, one etcd), minimal NodePool and Cluster API CRDs, HyperShift's
// objects for one pool (NodePool, MachineDeployment, token Secrets), two guest nodes each running the
// agent on a temporary root (--systemd none), and the controller between them. It shows a
// management-side drift published and applied, a rollout-class change left to the rollout, and a
// rolling MachineDeployment pausing the controller.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

const (
	examples = "test/testdata/examples"
	hcp      = "clusters-demo"
	guestNS  = "refresh-agent"
	pool     = "workers"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func step(format string, args ...any) { fmt.Printf("\n== "+format+"\n", args...) }

type env struct {
	ctx             context.Context
	dyn             dynamic.Interface
	mgmtCS, guestCS kubernetes.Interface
}

func run() error {
	bin := os.Getenv("BIN")
	if bin == "" {
		bin = "bin/refresh-agent"
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: build it first (make build)", bin)
	}
	step("starting two local kube-apiservers on one etcd: management and guest")
	mgmt, err := kubetest.Start()
	if err != nil {
		return err
	}
	defer mgmt.Stop()
	guest, err := mgmt.Another("/guest")
	if err != nil {
		return err
	}
	defer guest.Stop()
	fmt.Println("management", mgmt.URL, "guest", guest.URL)
	e := &env{ctx: context.Background()}
	if e.dyn, err = dynamic.NewForConfig(mgmt.Config(kubetest.AdminUser)); err != nil {
		return err
	}
	if e.mgmtCS, err = kubernetes.NewForConfig(mgmt.Config(kubetest.AdminUser)); err != nil {
		return err
	}
	if e.guestCS, err = kubernetes.NewForConfig(guest.Config(kubetest.AdminUser)); err != nil {
		return err
	}
	if err := e.crds(); err != nil {
		return err
	}

	step("HyperShift's objects for pool %q in %s: NodePool (rollout hash r1), MachineDeployment (config version v1), token Secret", pool, hcp)
	current, _ := os.ReadFile(filepath.Join(examples, "current.ign"))
	eligible, _ := os.ReadFile(filepath.Join(examples, "desired-eligible.ign.gz.b64"))
	for _, ns := range []string{hcp} {
		if _, err := e.mgmtCS.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := e.guestCS.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: guestNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := e.create(controller.GVRNodePool, map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
		"metadata": map[string]any{"name": pool, "namespace": hcp, "annotations": map[string]any{controller.AnnotationCurrentRolloutConfig: "r1"}},
		"spec":     map[string]any{"clusterName": "demo", "replicas": int64(2)}}); err != nil {
		return err
	}
	if err := e.create(controller.GVRMachineDeployment, map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": pool, "namespace": hcp, "annotations": map[string]any{
			controller.AnnotationNodePool: hcp + "/" + pool, controller.AnnotationTargetConfigVersion: "v1"}},
		"spec": map[string]any{"clusterName": "demo", "replicas": int64(2)}}); err != nil {
		return err
	}
	if err := e.mdStatus(2, 2); err != nil {
		return err
	}
	if err := e.token("v1", fixture.GzipBase64(current)); err != nil {
		return err
	}

	step("two guest nodes of the pool, each running the agent on a temp root (--systemd none)")
	agentKC, err := guest.Kubeconfig(kubetest.AgentUser)
	if err != nil {
		return err
	}
	var roots []string
	for i := 1; i <= 2; i++ {
		name := fmt.Sprintf("%s-node-%d", pool, i)
		root, err := os.MkdirTemp("", "demo-ctl-root-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(root)
		if err := fixture.NodeRoot(root); err != nil {
			return err
		}
		// As Ignition left it: the machine-config server's content is the node's current config.
		if err := os.WriteFile(filepath.Join(root, "etc/mcs-machine-config-content.json"), current, 0o644); err != nil {
			return err
		}
		roots = append(roots, root)
		if _, err := e.guestCS.CoreV1().Nodes().Create(e.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{api.LabelNodePool: pool}}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		stop, err := start(bin, "agent-"+name, "run", "--node-name", name, "--root", root, "--namespace", guestNS,
			"--configmap", api.ConfigMapName("", pool), "--systemd", "none", "--kubeconfig", agentKC, "--metrics-addr", "", "--health-addr", "")
		if err != nil {
			return err
		}
		defer stop()
	}

	step("starting the controller (management and guest kubeconfigs, Lease election)")
	mgmtKC, _ := mgmt.Kubeconfig(kubetest.AdminUser)
	guestKC, _ := guest.Kubeconfig(kubetest.AdminUser)
	stop, err := start(bin, "controller", "controller", "--management-kubeconfig", mgmtKC, "--guest-kubeconfig", guestKC,
		"--namespace", hcp, "--guest-namespace", guestNS, "--health-addr", "")
	if err != nil {
		return err
	}
	defer stop()
	if err := e.waitPublished("v1"); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run v1"); err != nil {
		return err
	}
	e.print()

	step("management-side drift: config version v2 (pull secret, registries.conf, a second SSH key), rollout hash still r1")
	if err := e.token("v2", eligible); err != nil {
		return err
	}
	if err := e.annotate(controller.GVRMachineDeployment, map[string]any{controller.AnnotationTargetConfigVersion: "v2"}); err != nil {
		return err
	}
	if err := e.waitPublished("v2"); err != nil {
		return err
	}
	fmt.Println("published v2 to ConfigMap", guestNS+"/"+api.ConfigMapName("", pool))
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run v2"); err != nil {
		return err
	}
	e.print()
	for _, r := range roots {
		reg, _ := os.ReadFile(filepath.Join(r, "etc/containers/registries.conf"))
		fmt.Printf("%s: registries.conf mirrors to mirror.example.com: %t\n", r, strings.Contains(string(reg), "mirror.example.com"))
	}

	step("a rollout-class change: HyperShift propagates rollout hash r2 with config version v3")
	if err := e.token("v3", fixture.GzipBase64(current)); err != nil {
		return err
	}
	if err := e.annotate(controller.GVRNodePool, map[string]any{controller.AnnotationInProgressRolloutConfig: "r2"}); err != nil {
		return err
	}
	if err := e.annotate(controller.GVRMachineDeployment, map[string]any{controller.AnnotationTargetConfigVersion: "v3"}); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshProgressing", "False", controller.ReasonLeftToRollout); err != nil {
		return err
	}
	e.print()
	fmt.Println("published hash still:", e.published())

	step("the MachineDeployment rolls (1/2 replicas updated): the controller pauses")
	if err := e.mdStatus(2, 1); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshProgressing", "False", controller.ReasonPaused); err != nil {
		return err
	}
	e.print()

	step("the rollout completes (2/2 updated, HyperShift records r2): v3 becomes the baseline")
	if err := e.mdStatus(2, 2); err != nil {
		return err
	}
	if err := e.annotate(controller.GVRNodePool, map[string]any{controller.AnnotationCurrentRolloutConfig: "r2",
		controller.AnnotationInProgressRolloutConfig: nil}); err != nil {
		return err
	}
	if err := e.waitPublished("v3"); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run v3"); err != nil {
		return err
	}
	e.print()
	events, _ := e.mgmtCS.CoreV1().Events(hcp).List(e.ctx, metav1.ListOptions{})
	step("events on the NodePool")
	for _, ev := range events.Items {
		fmt.Printf("%s %s: %s\n", ev.Type, ev.Reason, ev.Message)
	}
	step("stopping the controller, the agents, the API servers and etcd")
	return nil
}

// start runs the binary in the background, its log in a temp file; stop ends it.
func start(bin, name string, args ...string) (func(), error) {
	f, err := os.CreateTemp("", "demo-"+name+"-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		f.Close()
		os.Remove(f.Name())
	}, nil
}

func (e *env) crds() error {
	crds := e.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	files, _ := filepath.Glob("test/testdata/crds/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return err
		}
		if _, err := crds.Create(e.ctx, u, metav1.CreateOptions{}); err != nil {
			return err
		}
		ok := kubetest.WaitFor(e.ctx, 30*time.Second, func() bool {
			_, err := e.dyn.Resource(schema.GroupVersionResource{Group: u.Object["spec"].(map[string]any)["group"].(string), Version: "v1beta1",
				Resource: strings.Split(u.GetName(), ".")[0]}).Namespace("default").List(e.ctx, metav1.ListOptions{})
			return err == nil
		})
		if !ok {
			return fmt.Errorf("CRD %s never served", u.GetName())
		}
	}
	return nil
}

func (e *env) create(gvr schema.GroupVersionResource, obj map[string]any) error {
	_, err := e.dyn.Resource(gvr).Namespace(hcp).Create(e.ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	return err
}

func (e *env) annotate(gvr schema.GroupVersionResource, ann map[string]any) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	_, err := e.dyn.Resource(gvr).Namespace(hcp).Patch(e.ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func (e *env) mdStatus(replicas, updated int64) error {
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"replicas": replicas, "updatedReplicas": updated}})
	_, err := e.dyn.Resource(controller.GVRMachineDeployment).Namespace(hcp).Patch(e.ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// token writes HyperShift's token Secret for a config version; payload is base64 of gzip.
func (e *env) token(version string, payload []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: controller.TokenSecretName(pool, version), Namespace: hcp,
		Annotations: map[string]string{controller.AnnotationNodePool: hcp + "/" + pool}},
		Data: map[string][]byte{"payload": []byte(strings.TrimSpace(string(payload)))}}
	_, err := e.mgmtCS.CoreV1().Secrets(hcp).Create(e.ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = e.mgmtCS.CoreV1().Secrets(hcp).Update(e.ctx, s, metav1.UpdateOptions{})
	}
	return err
}

func (e *env) published() string {
	cm, err := e.guestCS.CoreV1().ConfigMaps(guestNS).Get(e.ctx, api.ConfigMapName("", pool), metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.Data[api.KeyHash]
}

func (e *env) waitPublished(hash string) error {
	if !kubetest.WaitFor(e.ctx, 60*time.Second, func() bool { return e.published() == hash }) {
		return fmt.Errorf("%s never published (have %q)", hash, e.published())
	}
	return nil
}

func (e *env) conditions() []map[string]any {
	u, err := e.dyn.Resource(controller.GVRNodePool).Namespace(hcp).Get(e.ctx, pool, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []map[string]any
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func (e *env) waitCondition(typ, status, contains string) error {
	var last map[string]any
	ok := kubetest.WaitFor(e.ctx, 60*time.Second, func() bool {
		for _, c := range e.conditions() {
			if c["type"] == typ {
				last = c
				return c["status"] == status && strings.Contains(fmt.Sprint(c["reason"], " ", c["message"]), contains)
			}
		}
		return false
	})
	if !ok {
		return fmt.Errorf("%s never %s with %q: %v", typ, status, contains, last)
	}
	return nil
}

func (e *env) print() {
	for _, c := range e.conditions() {
		fmt.Printf("NodePool %s=%s (%s): %s\n", c["type"], c["status"], c["reason"], c["message"])
	}
}
