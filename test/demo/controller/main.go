// Command controller demonstrates `refresh-agent controller` driving a NodePool end to end: two local
// kube-apiservers (management and guest, one etcd), minimal NodePool and Cluster API CRDs, HyperShift's
// objects for one pool written as HyperShift writes them (package hypershifttest: the NodePool's
// annotations in both hash flavours and its conditions, the MachineDeployment, token Secrets; the
// refresh version annotation proposed in docs/hypershift.md), two guest nodes each running the agent
// on a temporary root (--systemd none), and the controller between them. It shows a management-side
// drift published and applied, a spec-driven rollout left to HyperShift and its version adopted on
// completion, and a rolling MachineDeployment pausing the controller.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/hypershifttest"
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

	step("HyperShift's objects for pool %q in %s (rollout-hash design): NodePool, MachineDeployment, token and user-data Secrets", pool, hcp)
	current, err := os.ReadFile(filepath.Join(examples, "current.ign"))
	if err != nil {
		return err
	}
	eligible, err := os.ReadFile(filepath.Join(examples, "desired-eligible.ign"))
	if err != nil {
		return err
	}
	if _, err := e.mgmtCS.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hcp}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := e.guestCS.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: guestNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	hs := &hypershifttest.Pool{Dyn: e.dyn, Core: e.mgmtCS, Namespace: hcp, Name: pool, Contract: true, Replicas: 2}
	h1, err := hs.Create(e.ctx, current)
	if err != nil {
		return err
	}
	fmt.Printf("completed config version %s (nodePoolCurrentConfigVersion), MachineDeployment bootstrap user-data-%s-%s\n", h1, pool, h1)

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
	if err := e.waitPublished(h1); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run "+h1); err != nil {
		return err
	}
	e.print()

	step("management-side drift (pull secret, registries.conf, a second SSH key): HyperShift sets ConfigUpdatePending=True/ManagementConfigDrift and names the refresh version; the MachineDeployment stays on %s", h1)
	h2, err := hs.Drift(e.ctx, eligible, true)
	if err != nil {
		return err
	}
	if err := e.waitPublished(h2); err != nil {
		return err
	}
	fmt.Println("published", h2, "to ConfigMap", guestNS+"/"+api.ConfigMapName("", pool))
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run "+h2); err != nil {
		return err
	}
	e.print()
	for _, r := range roots {
		reg, _ := os.ReadFile(filepath.Join(r, "etc/containers/registries.conf"))
		fmt.Printf("%s: registries.conf mirrors to mirror.example.com: %t\n", r, strings.Contains(string(reg), "mirror.example.com"))
	}

	step("a spec-driven rollout (a user MachineConfig change): the in-progress rollout annotation, a new bootstrap Secret, UpdatingConfig=True")
	h3, err := hs.SpecChange(e.ctx, eligible)
	if err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshProgressing", "False", controller.ReasonLeftToRollout); err != nil {
		return err
	}
	e.print()
	fmt.Println("published hash still:", e.published())

	step("the MachineDeployment rolls (1/2 replicas up to date)")
	if err := hs.Progress(e.ctx, 1); err != nil {
		return err
	}
	e.print()

	step("the rollout completes (HyperShift records %s, deletes the in-progress annotation): the new baseline is published", h3)
	if err := hs.Complete(e.ctx); err != nil {
		return err
	}
	if err := e.waitPublished(h3); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run "+h3); err != nil {
		return err
	}
	e.print()

	step("a stale HyperShift status write drops the ConfigRefresh conditions: the controller puts them back")
	if err := hs.StaleStatusWrite(e.ctx); err != nil {
		return err
	}
	if err := e.waitCondition("ConfigRefreshComplete", "True", "All 2 nodes run "+h3); err != nil {
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
