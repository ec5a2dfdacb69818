// Command idlerss follows one idle agent's memory over time: a real kube-apiserver, one Node, a
// published payload, and `refresh-agent run` on a temp root, whose VmRSS, RssAnon and RssFile it
// prints at fixed times (docs/performance.md, Analysis: idle RSS).
//
//	go run ./test/idlerss bin/refresh-agent
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/api"
	kubeclient "github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

func status(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "RssAnon") || strings.HasPrefix(l, "RssFile") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}

func main() {
	k, err := kubetest.Start()
	if err != nil {
		panic(err)
	}
	defer k.Stop()
	admin, _ := kubernetes.NewForConfig(k.Config(kubetest.AdminUser))
	ctx := context.Background()
	admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "refresh-agent"}}, metav1.CreateOptions{})
	admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "exp-node", Labels: map[string]string{"hypershift.openshift.io/nodePool": "exp"}}}, metav1.CreateOptions{})
	kc, _ := k.Kubeconfig(kubetest.AgentUser)
	root, _ := os.MkdirTemp("", "exp-root")
	_ = fixture.NodeRoot(root)
	pub, _ := kubeclient.New(k.Config(kubetest.AdminUser))
	payload := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File("/etc/containers/registries.conf", []byte("# v1"), 0o644)
	if _, err := publish.Publish(ctx, pub, "refresh-agent", api.ConfigMapName("", "exp"), payload.JSON(), nil, "v1"); err != nil {
		panic(err)
	}
	cmd := exec.Command(os.Args[1], "run", "--node-name", "exp-node", "--root", root, "--source", "api", "--namespace", "refresh-agent",
		"--systemd", "none", "--cri-socket", "none", "--kubeconfig", kc, "--metrics-addr", "", "--health-addr", "", "--drift", "off", "--max-concurrent", "0")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer cmd.Process.Kill()
	start := time.Now()
	for _, at := range []time.Duration{5, 30, 60, 110, 125, 140, 250, 260} {
		time.Sleep(time.Until(start.Add(at * time.Second)))
		fmt.Printf("%3ds %s\n", at, status(cmd.Process.Pid))
	}
}
