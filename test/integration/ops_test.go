package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/mcs"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// TestOperatingAPoolAsAnSRE follows the SRE's path through the binary against the real API server
// and two agent processes on nodes provisioned from the machine-config server's payload: status of
// a mistyped pool, the published payload fetched and edited with `payload`, checked with `diff`,
// published with a plan and --wait while `status --watch` follows; a reload that fails on one node
// (--wait exits 1 naming it); a kernel-argument change refused by publish, and forced (exit 1).
func TestOperatingAPoolAsAnSRE(t *testing.T) {
	kube := requireKube(t)
	systemdtest.Require(t)
	bin := agentBinary(t)
	admin, err := kubernetes.NewForConfig(kube.Config(kubetest.AdminUser))
	require.NoError(t, err)
	adminKC, err := kube.Kubeconfig(kubetest.AdminUser)
	require.NoError(t, err)
	agentKC, err := kube.Kubeconfig(kubetest.AgentUser)
	require.NoError(t, err)
	const pool = "ops-pool"
	// A namespace of its own per run: a namespace deleted by an earlier run (-count) goes asynchronously.
	ns := fmt.Sprintf("ops-refresh-%d", time.Now().UnixNano()%1e9)
	ctx := context.Background()
	dir := t.TempDir()
	env := []string{"KUBECONFIG=" + adminKC}
	run := func(args ...string) (int, string, string) { return cliRun(t, env, args...) }
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o600))
		return p
	}
	cmHash := func() string {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, api.ConfigMapName("", pool), metav1.GetOptions{})
		require.NoError(t, err)
		return cm.Data[api.KeyHash]
	}

	// A mistyped pool: no nodes is never Complete; --watch says so at once (exit 2).
	code, out, stderr := run("status", "--pool", "ops-typo", "--namespace", ns, "--hash", "h1")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^ConfigRefreshComplete\s+False\s+NoNodes\s`, out)
	assert.Contains(t, out, "(no nodes match "+api.LabelNodePool+"=ops-typo)")
	code, _, stderr = run("status", "--pool", "ops-typo", "--namespace", ns, "--hash", "h1", "--watch", "--timeout", "30s")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "NoNodes")

	// Two nodes provisioned from the server's payload, each with its agent and its systemd.
	base := mcs.Base()
	served := base.Served()
	var nodes []simNode
	for _, name := range []string{"ops-n1", "ops-n2"} {
		n := newSimNode(t, name)
		require.NoError(t, base.Provision(n.root))
		nodes = append(nodes, n)
		_, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{api.LabelNodePool: pool}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	// Nodes no agent reported on yet are not refreshing: they are not reporting.
	code, out, _ = run("status", "--pool", pool, "--namespace", ns, "--hash", "h1")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^ConfigRefreshProgressing\s+Unknown\s+NodesNotReporting\s+2/2 nodes not reporting`, out)

	// The first publication: the payload the server serves, the ConfigMap's form.
	cfg := file("served.cfg", mcs.ConfigMapValue(served))
	code, out, stderr = run("publish", "--pool", pool, "--namespace", ns, "--create-namespace", "--payload", cfg)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "does not exist yet")
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	assert.Equal(t, api.Hash(mcs.ConfigMapValue(served)), cmHash())
	for _, n := range nodes {
		n.startAgent(t, "--namespace", ns, "--kubeconfig", agentKC, "--max-concurrent", "0")
	}
	code, out, stderr = run("status", "--pool", pool, "--namespace", ns, "--watch", "--timeout", "60s")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "complete: 2/2 updated, 0 refreshing, 0 degraded")

	// The pull secret rotated: the published payload fetched, edited, checked, published.
	got := filepath.Join(dir, "got.cfg")
	code, _, stderr = run("payload", "get", "--pool", pool, "--namespace", ns, "--out", got)
	require.Equal(t, 0, code, stderr)
	gotBytes, err := os.ReadFile(got)
	require.NoError(t, err)
	assert.Equal(t, string(mcs.ConfigMapValue(served)), string(gotBytes), "as published")
	secret := []byte(`{"auths":{"quay.io":{"auth":"cm90YXRlZA=="}}}`)
	edited := filepath.Join(dir, "edited.cfg")
	code, _, stderr = run("payload", "set-file", "--payload", got, "--path", mcs.PullSecret, "--from-file", file("secret.json", secret), "--out", edited)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "updated the embedded MachineConfig "+"/etc/mcs-machine-config-content.json")
	code, out, stderr = run("diff", "--current", got, "--desired", edited)
	require.Equal(t, 0, code, "diff accepts the edited payload:\n%s%s", out, stderr)
	editedBytes, err := os.ReadFile(edited)
	require.NoError(t, err)
	next := api.Hash(editedBytes)

	// status --watch follows the pool toward the new hash while it is published.
	watch := exec.Command(bin, "status", "--pool", pool, "--namespace", ns, "--hash", next, "--watch", "--timeout", "90s")
	watch.Env = append(os.Environ(), env...)
	pipe, err := watch.StdoutPipe()
	require.NoError(t, err)
	var watchErr strings.Builder
	watch.Stderr = &watchErr
	require.NoError(t, watch.Start())
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	first := <-lines // the pool as it stands, before the publication
	assert.Equal(t, "0/2 updated, 2 refreshing, 0 degraded", first)

	code, out, stderr = run("publish", "--pool", pool, "--namespace", ns, "--payload", edited, "--wait", "--timeout", "90s")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "plan against the payload published in ConfigMap "+ns+"/"+pool+"-refresh")
	assert.Contains(t, out, mcs.PullSecret)
	assert.Contains(t, out, "published "+next)
	assert.Contains(t, out, "complete: 2/2 updated")
	assert.NotContains(t, out+stderr, "cm90YXRlZA", "never a file's contents")
	for _, n := range nodes {
		assert.Equal(t, string(secret), read(t, n.root, mcs.PullSecret), n.name)
	}
	var followed []string
	for l := range lines {
		followed = append(followed, l)
	}
	require.NoError(t, watch.Wait(), "status --watch: %s", watchErr.String())
	require.NotEmpty(t, followed)
	assert.Equal(t, "refresh to "+next[:12]+" complete: 2/2 updated, 0 refreshing, 0 degraded", followed[len(followed)-1])
	for i := 1; i < len(followed); i++ {
		assert.NotEqual(t, followed[i-1], followed[i], "one line per change")
	}

	// Node 2's crio cannot reload the new mirrors: it rolls back, --wait exits 1 naming it.
	nodes[1].mgr.StandIn(t, crio, true)
	mirrors := filepath.Join(dir, "mirrors.cfg")
	code, _, stderr = run("payload", "set-file", "--payload", edited, "--path", mcs.RegistriesConf,
		"--from-file", file("registries.conf", []byte("unqualified-search-registries = [\"quay.io\"]\n")), "--out", mirrors)
	require.Equal(t, 0, code, stderr)
	code, out, stderr = run("publish", "--pool", pool, "--namespace", ns, "--payload", mirrors, "--wait", "--timeout", "90s")
	assert.Equal(t, 1, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "would reload crio.service")
	assert.Contains(t, stderr, "ops-n2 (Degraded: ")
	assert.Contains(t, stderr, "crio.service")
	mirrorsHash := cmHash()

	// A kernel-argument change: the plan says the nodes refuse it; nothing is published.
	kargs := base.Clone()
	kargs.KernelArguments = append(kargs.KernelArguments, "nosmt")
	kfile := file("kargs.ign", kargs.Served())
	code, out, stderr = run("publish", "--pool", pool, "--namespace", ns, "--payload", kfile, "--dry-run")
	assert.Equal(t, 3, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "kernelArguments")
	assert.Contains(t, out, "dry run: nothing published")
	code, out, stderr = run("publish", "--pool", pool, "--namespace", ns, "--payload", kfile, "--wait")
	assert.Equal(t, 3, code, "%s\n%s", out, stderr)
	assert.Contains(t, stderr, "nothing published (--force publishes it anyway)")
	assert.Equal(t, mirrorsHash, cmHash(), "the refused payload was not published")

	// Forced: every node refuses it (Unreconcilable), and --wait says so with exit 1. (Node 2's crio
	// fixed first: until then its rollback stays incomplete, and it is Degraded whatever comes.)
	nodes[1].mgr.StandIn(t, crio, false)
	code, out, stderr = run("publish", "--pool", pool, "--namespace", ns, "--payload", kfile, "--force", "--wait", "--timeout", "90s")
	assert.Equal(t, 1, code, "%s\n%s", out, stderr)
	// The first failure for the hash ends the wait: node 1's refusal, or node 2 still Degraded
	// while its rollback on the fixed crio is retried (with backoff).
	assert.Regexp(t, `failed to refresh: ops-n[12] \((Unreconcilable: kernel arguments change requires a reboot|Degraded: )`, stderr)
	assert.Equal(t, api.Hash(kargs.Served()), cmHash())
	assert.True(t, kubetest.WaitFor(ctx, 60*time.Second, func() bool {
		code, out, _ = run("status", "--pool", pool, "--namespace", ns)
		return code == 0 && regexp.MustCompile(`(?m)^ConfigRefreshDegraded\s+True\s+NodesUnreconcilable\s+2 nodes failed to refresh: `+
			`ops-n1 \(Unreconcilable: kernel arguments change requires a reboot.*ops-n2 \(Unreconcilable: kernel arguments`).MatchString(out)
	}), "both nodes refuse the kernel arguments:\n%s", out)
}

// recover run by hand beside the running agent (as `oc exec ds/refresh-agent -- refresh-agent
// recover` runs it in the agent's pod, $REFRESH_AGENT_ROOT giving the root): while the agent
// refreshes it refuses at once with --lock-timeout 0, naming the agent's pid, or waits for the
// refresh to end and then finds nothing to recover.
func TestRecoverBesideARunningAgent(t *testing.T) {
	e := newAgentEnv(t, false)
	mgr := systemdtestManager(t)
	mgr.StandInReload(t, crio, mgr.SlowReload(crio, 3*time.Second))
	e.publish(t, base(), "v1")
	cmd := e.runBinary(t, "--configmap", e.cm, "--metrics-addr", "")
	e.waitState(t, "v1", api.StateDone, 30*time.Second)

	e.publish(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	require.True(t, kubetest.WaitFor(context.Background(), 20*time.Second, func() bool {
		return read(t, e.root, registries) == "# v2 mirrors" // committed; the slow reload is running
	}), "v2 never written; agent log:\n%s", e.logText())
	env := []string{"REFRESH_AGENT_ROOT=" + e.root}
	code, out, stderr := cliRun(t, env, "recover", "--systemd", "none", "--cri-socket", "none", "--lock-timeout", "0")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, stderr, fmt.Sprintf("held by pid %d", cmd.Process.Pid), "names the agent")
	assert.Contains(t, out, "not acted on")

	start := time.Now()
	code, out, stderr = cliRun(t, env, "recover", "--systemd", "none", "--cri-socket", "none", "--lock-timeout", "60s")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, `"found": false`, "the agent's refresh finished: nothing to recover")
	assert.Less(t, time.Since(start), 60*time.Second)
	ann := e.waitState(t, "v2", api.StateDone, 30*time.Second)
	assert.Equal(t, "v2", ann[api.AnnotationCurrent])
	assert.Equal(t, 1, mgr.Reloads(crio))
}
