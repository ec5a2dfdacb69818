// Command demo runs refresh-agent end to end on one simulated node: a real kube-apiserver and etcd
// (built from source on first use), a real systemd user manager with stand-in crio, kubelet and
// coreos-update-ca-trust units, and a temporary node root. It publishes an eligible refresh, then a
// refused one, prints what happened, and stops everything it started. Needs root (for the private
// mount namespace systemd --user needs); it re-executes itself under `unshare -m`.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/fleet"
	kubeclient "github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/critest"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/mcs"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

const (
	nodeName = "demo-node"
	ns       = "refresh-agent"
	cmName   = "demo-refresh" // api.ConfigMapName for pool "demo" (the Node's label)
)

type demo struct{}

func main() { os.Exit(systemdtest.Main(demo{})) }

func (demo) Run() int {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		return 1
	}
	return 0
}

func step(format string, args ...any) { fmt.Printf("\n== "+format+"\n", args...) }

func run() error {
	mgr, reason := systemdtest.Default()
	if mgr == nil {
		return fmt.Errorf("no systemd user manager: %s", reason)
	}
	step("starting a local kube-apiserver and etcd (built from source on first use: ~10 minutes once)")
	kube, err := kubetest.Start()
	if err != nil {
		return err
	}
	defer kube.Stop()
	fmt.Println("kube-apiserver ready at", kube.URL)
	admin, err := kubernetes.NewForConfig(kube.Config(kubetest.AdminUser))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	step("a node: stand-in units in a real systemd user manager, a CRI runtime (with kubelet's static pod restart) and a temp root as Ignition left it")
	for _, u := range []string{"crio.service", "kubelet.service", "coreos-update-ca-trust.service"} {
		if err := mgr.InstallStandIn(u, mgr.MarkerReload(u)); err != nil {
			return err
		}
	}
	root, err := os.MkdirTemp("", "demo-node-root-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	host, err := firstBoot(root)
	if err != nil {
		return err
	}
	defer host.Root.Close()
	runtime, stopCRI, err := critest.Serve(filepath.Join(root, "..", filepath.Base(root)+"-crio.sock"))
	if err != nil {
		return err
	}
	defer stopCRI()
	runtime.AddPod("kube-system", "kube-apiserver-proxy-"+nodeName, true)
	if host.Pods, err = actions.DialCRI(runtime.Socket, nodeName); err != nil {
		return err
	}
	defer host.Pods.Close()
	if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName,
		Labels: map[string]string{"hypershift.openshift.io/nodePool": "demo"}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	crioPID, _ := mgr.PID("crio.service")
	fmt.Printf("root %s (provisioned from the MCS-served base payload, no agent record yet); crio.service MainPID %d\n", root, crioPID)

	base := mcs.Base()
	publisher, err := kubeclient.New(kube.Config(kubetest.AdminUser))
	if err != nil {
		return err
	}
	publishPool := func(p *mcs.Pool, hash string) error {
		// As HyperShift stores it: base64 of gzip of the served Ignition 3.2.0 JSON.
		_, err := publish.Publish(ctx, publisher, ns, cmName, p.Served(), nil, hash)
		return err
	}
	if err := publishPool(base, "v1"); err != nil {
		return err
	}
	step("starting the agent (source: API watch on ConfigMap %s/%s); the first refresh is the payload the node booted from", ns, cmName)
	agentClient, err := kubeclient.New(kube.Config(kubetest.AgentUser))
	if err != nil {
		return err
	}
	sd, err := actions.DialSystemd(ctx, actions.UserSocket())
	if err != nil {
		return err
	}
	defer sd.Close()
	host.Units = sd
	rec, stopEvents := agent.NewRecorder(agentClient, nodeName)
	defer stopEvents()
	a := agent.New(agent.Config{NodeName: nodeName, Client: agentClient, Recorder: rec, Host: host,
		Source: &agent.APISource{Client: agentClient, Namespace: ns, Name: cmName},
		Log:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if err := waitState(ctx, admin, "v1", api.StateDone); err != nil {
		return err
	}
	fmt.Printf("Done with nothing written (kubeconfig skipped: first boot only; node-annotations.json is metadata); crio reloaded %d time(s)\n", mgr.Reloads("crio.service"))
	fmt.Println("node annotations:", annotations(ctx, admin))

	step("publishing an eligible refresh: pull secret, registries.conf mirror, user CA bundle, a second SSH key for core, the HAProxy image")
	multi := scenario(mcs.Eligible(), "multi").Change(base.Clone())
	start := time.Now()
	if err := publishPool(multi, "v2"); err != nil {
		return err
	}
	if err := waitState(ctx, admin, "v2", api.StateDone); err != nil {
		return err
	}
	fmt.Printf("Done in %s\n", time.Since(start).Round(time.Millisecond))
	reg, _ := os.ReadFile(filepath.Join(root, mcs.RegistriesConf))
	fmt.Printf("registries.conf now mirrors to mirror2.example.com: %t\n", strings.Contains(string(reg), "mirror2.example.com"))
	keys, _ := os.ReadFile(filepath.Join(root, "var/home/core/.ssh/authorized_keys.d/ignition"))
	fmt.Printf("core's authorized keys: %d\n", strings.Count(string(keys), "\n"))
	pid, _ := mgr.PID("crio.service")
	fmt.Printf("coreos-update-ca-trust then crio.service restarted: crio MainPID %d -> %d; nothing rebooted\n", crioPID, pid)
	fmt.Println("node annotations:", annotations(ctx, admin))
	printConditions(ctx, admin, "v2")

	step("publishing haproxy.cfg: HAProxy never re-reads it, so the static pod is restarted through the CRI")
	before := runtime.Ready("kube-apiserver-proxy-" + nodeName)
	if err := publishPool(scenario(mcs.Eligible(), "haproxy-cfg").Change(multi.Clone()), "v3"); err != nil {
		return err
	}
	if err := waitState(ctx, admin, "v3", api.StateDone); err != nil {
		return err
	}
	after := runtime.Ready("kube-apiserver-proxy-" + nodeName)
	fmt.Printf("kube-system/kube-apiserver-proxy sandbox stopped %d time(s); kubelet's new sandbox ready: %t\n",
		runtime.Stops("kube-apiserver-proxy-"+nodeName), len(after) == 1 && len(before) == 1 && after[0] != before[0])

	step("publishing a refused refresh: the OS image bumped as an upgrade does it (needs a reboot)")
	osimage := scenario(mcs.Refused(), "osimage").Change(multi.Clone())
	beforeReg, _ := os.ReadFile(filepath.Join(root, mcs.RegistriesConf))
	if err := publishPool(osimage, "v4"); err != nil {
		return err
	}
	if err := waitState(ctx, admin, "v4", api.StateUnreconcilable); err != nil {
		return err
	}
	afterReg, _ := os.ReadFile(filepath.Join(root, mcs.RegistriesConf))
	fmt.Printf("nothing written: registries.conf unchanged %t\n", string(beforeReg) == string(afterReg))
	fmt.Println("node annotations:", annotations(ctx, admin))
	printConditions(ctx, admin, "v4")
	events, _ := admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + nodeName})
	step("events on the node")
	for _, e := range events.Items {
		fmt.Printf("%s %s: %s\n", e.Type, e.Reason, e.Message)
	}

	step("stopping the agent, the API server, etcd and the systemd manager")
	cancel()
	<-done
	return nil
}

// firstBoot lays out a node root as Ignition leaves it after booting from the MCS-served base
// payload: the files, the server's metadata files, core's keys. The agent has no record yet.
func firstBoot(root string) (apply.Host, error) {
	for _, d := range []string{"etc", "var/home/core"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return apply.Host{}, err
		}
	}
	_ = os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n"), 0o644)
	_ = os.WriteFile(filepath.Join(root, "etc/group"), []byte("root:x:0:\ncore:x:1000:\n"), 0o644)
	if err := mcs.Base().Provision(root); err != nil {
		return apply.Host{}, err
	}
	r, err := actions.OpenRoot(root)
	if err != nil {
		return apply.Host{}, err
	}
	return apply.Host{Root: r, StateDir: filepath.Join(root, "var/lib/refresh-agent"), Units: actions.NoUnits{}}, nil
}

func scenario(list []mcs.Scenario, name string) mcs.Scenario {
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	panic("no scenario " + name)
}

func waitState(ctx context.Context, c kubernetes.Interface, hash, state string) error {
	ok := kubetest.WaitFor(ctx, 60*time.Second, func() bool {
		n, err := c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && n.Annotations[api.AnnotationDesired] == hash && n.Annotations[api.AnnotationState] == state
	})
	if !ok {
		return fmt.Errorf("node never reached %s for %s: %s", state, hash, annotations(ctx, c))
	}
	return nil
}

func annotations(ctx context.Context, c kubernetes.Interface) string {
	n, err := c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	a := n.Annotations
	return fmt.Sprintf("current=%s desired=%s state=%s reason=%q", a[api.AnnotationCurrent], a[api.AnnotationDesired],
		a[api.AnnotationState], a[api.AnnotationReason])
}

func printConditions(ctx context.Context, c kubernetes.Interface, hash string) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "hypershift.openshift.io/nodePool=demo"})
	if err != nil {
		fmt.Println("conditions:", err)
		return
	}
	for _, cond := range fleet.Conditions(list.Items, hash, nil, time.Now()) {
		fmt.Printf("NodePool condition %s=%s (%s): %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
}
