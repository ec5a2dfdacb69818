package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// TestEndToEndThreeNodes drives publish -> agents -> annotations -> status for three simulated
// nodes, each with its own root, systemd manager and agent process, against one API server.
func TestEndToEndThreeNodes(t *testing.T) {
	kube := requireKube(t)
	systemdtest.Require(t)
	bin := agentBinary(t)
	admin, err := kubernetes.NewForConfig(kube.Config(kubetest.AdminUser))
	require.NoError(t, err)
	adminKC, err := kube.Kubeconfig(kubetest.AdminUser)
	require.NoError(t, err)
	agentKC, err := kube.Kubeconfig(kubetest.AgentUser)
	require.NoError(t, err)
	const ns, cm, pool = "e2e-refresh", "np-e2e-refresh", "np-e2e"
	ctx := context.Background()

	var nodes []simNode
	for i := 1; i <= 3; i++ {
		n := newSimNode(t, fmt.Sprintf("e2e-node-%d", i))
		recordBase(t, n.root)
		_, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name,
			Labels: map[string]string{"hypershift.openshift.io/nodePool": pool}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), n.name, metav1.DeleteOptions{}) })
		nodes = append(nodes, n)
	}

	publishCLI := func(c *fixture.Config, hash string) {
		f := filepath.Join(t.TempDir(), "payload.ign")
		require.NoError(t, os.WriteFile(f, c.JSON(), 0o644))
		out, err := exec.Command(bin, "publish", "--kubeconfig", adminKC, "--create-namespace", "--namespace", ns, "--configmap", cm, "--payload", f, "--hash", hash).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "published "+hash)
	}
	status := func(hash string) []metav1.Condition {
		out, err := exec.Command(bin, "status", "--kubeconfig", adminKC, "--selector", "hypershift.openshift.io/nodePool="+pool,
			"--hash", hash, "--output", "json").Output()
		require.NoError(t, err)
		var got struct {
			Conditions []metav1.Condition
			Nodes      []struct{ Name, State string }
		}
		require.NoError(t, json.Unmarshal(out, &got))
		require.Len(t, got.Nodes, 3)
		return got.Conditions
	}
	waitCondition := func(hash, typ string, want metav1.ConditionStatus) *metav1.Condition {
		t.Helper()
		var c *metav1.Condition
		ok := kubetest.WaitFor(ctx, 60*time.Second, func() bool {
			c = meta.FindStatusCondition(status(hash), typ)
			return c != nil && c.Status == want
		})
		require.True(t, ok, "%s never %s for %s: %+v", typ, want, hash, c)
		return c
	}

	publishCLI(base(), "v1")
	for _, n := range nodes {
		n.startAgent(t, "--namespace", ns, "--configmap", cm, "--kubeconfig", agentKC,
			// Unpaced, and retried until the unit is fixed: pacing and the failure cap have their own tests.
			"--max-concurrent", "0", "--max-attempts", "1000")
	}
	waitCondition("v1", fleet.ConditionComplete, metav1.ConditionTrue)

	// An eligible refresh reaches every node.
	publishCLI(base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	c := waitCondition("v2", fleet.ConditionComplete, metav1.ConditionTrue)
	assert.Contains(t, c.Message, "All 3 nodes run v2")
	for _, n := range nodes {
		assert.Equal(t, "# v2 mirrors", read(t, n.root, registries), n.name)
		assert.Equal(t, 1, n.mgr.Reloads(crio), n.name)
	}

	// Node 3's crio cannot reload: it rolls back and degrades; the others complete.
	nodes[2].mgr.StandIn(t, crio, true)
	publishCLI(base().File(registries, []byte("# v3 mirrors"), 0o644), "v3")
	c = waitCondition("v3", fleet.ConditionDegraded, metav1.ConditionTrue)
	assert.Contains(t, c.Message, "e2e-node-3")
	assert.Contains(t, c.Message, "crio.service")
	assert.NotContains(t, c.Message, "e2e-node-1")
	conds := status("v3")
	assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(conds, fleet.ConditionComplete).Status)
	assert.Equal(t, "# v2 mirrors", read(t, nodes[2].root, registries), "node 3 rolled back")
	for _, n := range nodes[:2] {
		assert.Eventually(t, func() bool { return strings.HasPrefix(readMaybe(n.root, registries), "# v3") }, 30*time.Second, 100*time.Millisecond)
	}

	// Its unit fixed, node 3's retry succeeds and the pool completes.
	nodes[2].mgr.StandIn(t, crio, false)
	waitCondition("v3", fleet.ConditionComplete, metav1.ConditionTrue)
	conds = status("v3")
	assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(conds, fleet.ConditionDegraded).Status)
	assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(conds, fleet.ConditionProgressing).Status)
	assert.Equal(t, "# v3 mirrors", read(t, nodes[2].root, registries))
}

// recordBase lays base() on a node root and records it as current under hash v1.
func recordBase(t *testing.T, dir string) {
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	empty, err := diffDecodeEmpty()
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: actions.NoUnits{}},
		apply.Request{Desired: base().JSON(), Hash: "v1", Current: empty})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
}

func readMaybe(root, p string) string {
	b, _ := os.ReadFile(filepath.Join(root, p))
	return string(b)
}
