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
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/fleet"
	kubeclient "github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

const (
	examples = "test/testdata/examples"
	nodeName = "demo-node"
	ns       = "refresh-agent"
	cmName   = "demo-refresh" // NodePool "demo"'s ConfigMap (api.ConfigMapName with the default template)
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

	step("a node: stand-in units in a real systemd user manager, a temp root as Ignition left it")
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
	node, err := firstBoot(root)
	if err != nil {
		return err
	}
	defer node.Root.Close()
	if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName,
		Labels: map[string]string{"hypershift.openshift.io/nodePool": "demo"}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	crioPID, _ := mgr.PID("crio.service")
	fmt.Printf("root %s; crio.service MainPID %d\n", root, crioPID)

	current, _ := os.ReadFile(filepath.Join(examples, "current.ign"))
	rules, _ := os.ReadFile(filepath.Join(examples, "no-reboot-paths.json"))
	publisher, err := kubeclient.New(kube.Config(kubetest.AdminUser))
	if err != nil {
		return err
	}
	if _, err := publish.Publish(ctx, publisher, ns, cmName, current, rules, "v1"); err != nil {
		return err
	}
	step("starting the agent (source: API watch on ConfigMap %s/%s)", ns, cmName)
	agentClient, err := kubeclient.New(kube.Config(kubetest.AgentUser))
	if err != nil {
		return err
	}
	sd, err := actions.DialSystemd(ctx, actions.UserSocket())
	if err != nil {
		return err
	}
	defer sd.Close()
	node.Units = sd
	rec, stopEvents := agent.NewRecorder(agentClient, nodeName)
	defer stopEvents()
	a := agent.New(agent.Config{NodeName: nodeName, Client: agentClient, Recorder: rec, Node: node,
		Source: &agent.APISource{Client: agentClient, Namespace: ns, Name: cmName},
		Log:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if err := waitState(ctx, admin, "v1", agent.StateDone); err != nil {
		return err
	}
	fmt.Println("node annotations:", annotations(ctx, admin))

	eligible, _ := os.ReadFile(filepath.Join(examples, "desired-eligible.ign.gz.b64"))
	step("publishing an eligible refresh: pull secret, registries.conf mirror, a second SSH key for core")
	start := time.Now()
	if _, err := publish.Publish(ctx, publisher, ns, cmName, eligible, rules, "v2"); err != nil {
		return err
	}
	if err := waitState(ctx, admin, "v2", agent.StateDone); err != nil {
		return err
	}
	fmt.Printf("Done in %s\n", time.Since(start).Round(time.Millisecond))
	reg, _ := os.ReadFile(filepath.Join(root, "etc/containers/registries.conf"))
	fmt.Printf("registries.conf now mirrors to mirror.example.com: %t\n", strings.Contains(string(reg), "mirror.example.com"))
	keys, _ := os.ReadFile(filepath.Join(root, "var/home/core/.ssh/authorized_keys.d/ignition"))
	fmt.Printf("core's authorized keys: %d\n", strings.Count(string(keys), "\n"))
	pid, _ := mgr.PID("crio.service")
	fmt.Printf("crio.service reloaded %d time(s), MainPID %d (unchanged: %t); nothing rebooted\n", mgr.Reloads("crio.service"), pid, pid == crioPID)
	fmt.Println("node annotations:", annotations(ctx, admin))
	printConditions(ctx, admin, "v2")

	refused, _ := os.ReadFile(filepath.Join(examples, "desired-refused.ign"))
	step("publishing a refused refresh: FIPS switched on, and a file under /etc/ssh")
	before, _ := os.ReadFile(filepath.Join(root, "etc/containers/registries.conf"))
	if _, err := publish.Publish(ctx, publisher, ns, cmName, refused, rules, "v3"); err != nil {
		return err
	}
	if err := waitState(ctx, admin, "v3", agent.StateUnreconcilable); err != nil {
		return err
	}
	after, _ := os.ReadFile(filepath.Join(root, "etc/containers/registries.conf"))
	_, sshErr := os.Stat(filepath.Join(root, "etc/ssh"))
	fmt.Printf("nothing written: registries.conf unchanged %t, /etc/ssh absent %t\n", string(before) == string(after), os.IsNotExist(sshErr))
	fmt.Println("node annotations:", annotations(ctx, admin))
	printConditions(ctx, admin, "v3")
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

// firstBoot lays the example's current state on a node root, as Ignition left it.
func firstBoot(root string) (apply.Node, error) {
	for _, d := range []string{"etc", "var/home/core"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return apply.Node{}, err
		}
	}
	_ = os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n"), 0o644)
	_ = os.WriteFile(filepath.Join(root, "etc/group"), []byte("root:x:0:\ncore:x:1000:\n"), 0o644)
	r, err := actions.OpenRoot(root)
	if err != nil {
		return apply.Node{}, err
	}
	n := apply.Node{Root: r, StateDir: filepath.Join(root, "var/lib/refresh-agent"), Units: actions.NoUnits{}}
	raw, err := os.ReadFile(filepath.Join(examples, "current.ign"))
	if err != nil {
		return n, err
	}
	cur, err := diff.Decode(raw)
	if err != nil {
		return n, err
	}
	// Write the files as Ignition did at first boot, then record the config as current.
	for _, f := range cur.Config.Storage.Files {
		if diff.IsMetadataPath(f.Path) {
			continue
		}
		data, err := diff.FileContents(f)
		if err != nil {
			return n, err
		}
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return n, err
		}
		if err := os.WriteFile(p, data, os.FileMode(diff.FileMode(f))); err != nil {
			return n, err
		}
	}
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: raw, Hash: "v1", Current: cur})
	if err != nil {
		return n, err
	}
	if res.Outcome != apply.OutcomeNoop {
		return n, fmt.Errorf("first boot: %s: %s", res.Outcome, res.Reason)
	}
	return n, nil
}

func waitState(ctx context.Context, c kubernetes.Interface, hash, state string) error {
	ok := kubetest.WaitFor(ctx, 60*time.Second, func() bool {
		n, err := c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && n.Annotations[agent.AnnotationDesired] == hash && n.Annotations[agent.AnnotationState] == state
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
	return fmt.Sprintf("current=%s desired=%s state=%s reason=%q", a[agent.AnnotationCurrent], a[agent.AnnotationDesired],
		a[agent.AnnotationState], a[agent.AnnotationReason])
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
