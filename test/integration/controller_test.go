package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// TestControllerDrivesAgentsThroughDrift: two real kube-apiservers (management and guest), three
// simulated guest nodes each with a real agent and systemd manager, and the controller binary.
// Management-side drift (a new config version, the rollout hash unchanged) is published, the agents
// refresh, and the NodePool goes Progressing -> Complete with counts; a node whose crio cannot reload
// makes the pool Degraded naming it, and fixed, Complete again. HyperShift's own condition is
// untouched throughout.
func TestControllerDrivesAgentsThroughDrift(t *testing.T) {
	systemdtest.Require(t)
	e := newCtlEnv(t, "drift")
	bin := agentBinary(t)
	agentKC, err := e.guest.Kubeconfig(kubetest.AgentUser)
	require.NoError(t, err)
	const pool = "workers"

	e.nodePool(pool, map[string]string{controller.AnnotationCurrentRolloutConfig: "r1"})
	e.workload("MachineDeployment", pool, "v1")
	e.tokenSecret(pool, "v1", base().JSON(), false)
	var nodes []simNode
	for i := 1; i <= 3; i++ {
		n := simNode{name: fmt.Sprintf("drift-node-%d", i), root: t.TempDir(), mgr: systemdtest.Another(t, fmt.Sprintf("drift-%d", i))}
		for _, u := range []string{crio, kubelet, updateCA} {
			n.mgr.StandIn(t, u, false)
		}
		require.NoError(t, fixture.NodeRoot(n.root))
		recordBase(t, n.root)
		e.guestNode(n.name, pool)
		nodes = append(nodes, n)
		cmd := exec.Command(bin, "run", "--node-name", n.name, "--root", n.root, "--namespace", e.guestNS,
			"--configmap", api.ConfigMapName("", pool), "--systemd", "user", "--kubeconfig", agentKC, "--metrics-addr", "", "--health-addr", "")
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+n.mgr.RuntimeDir)
		logf, err := os.Create(filepath.Join(t.TempDir(), n.name+".log"))
		require.NoError(t, err)
		cmd.Stderr = logf
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("%s log:\n%s", n.name, tailLines(string(b), 30))
			}
		})
	}
	ctl := e.startController()

	// The first config version seen is the baseline: published, the agents confirm it.
	cm := e.waitPublished(pool, "v1")
	assert.Equal(t, string(fixture.GzipBase64(base().JSON())), cm.Data[api.KeyConfig], "the token Secret's payload, verbatim")
	assert.Equal(t, "r1", cm.Annotations[controller.AnnotationRolloutConfig])
	c := e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated, 0 degraded", "All 3 nodes run v1")
	ready := meta.FindStatusCondition(e.conditions(pool), "Ready")
	require.NotNil(t, ready, "HyperShift's condition kept")
	completeSince := c.LastTransitionTime

	// Management-side drift: a new config version, the same rollout hash.
	seen := e.watchConditions(pool)
	e.tokenSecret(pool, "v2", base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, pool, map[string]any{controller.AnnotationTargetConfigVersion: "v2"})
	e.waitPublished(pool, "v2")
	e.waitEvent(pool, controller.EventPublished, "v2")
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated", "All 3 nodes run v2")
	// The status written with the publication, when no node had v2 yet, said Progressing.
	assert.Contains(t, seen(), "ConfigRefreshProgressing=True Refreshing: 0/3 nodes updated, 0 degraded: Refreshing 3/3 nodes toward v2")
	for _, n := range nodes {
		assert.Equal(t, "# v2 mirrors", read(t, n.root, registries), n.name)
		assert.Equal(t, 1, n.mgr.Reloads(crio), n.name)
	}
	c = e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse)
	assert.Contains(t, c.Message, "3/3 nodes updated")
	after := meta.FindStatusCondition(e.conditions(pool), "Ready")
	require.NotNil(t, after)
	assert.Equal(t, *ready, *after, "HyperShift's condition untouched")
	cc := meta.FindStatusCondition(e.conditions(pool), fleet.ConditionComplete)
	assert.False(t, cc.LastTransitionTime.Before(&completeSince))

	// Node 3's crio cannot reload: Degraded names it, the others complete.
	nodes[2].mgr.StandIn(t, crio, true)
	e.tokenSecret(pool, "v3", base().File(registries, []byte("# v3 mirrors"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, pool, map[string]any{controller.AnnotationTargetConfigVersion: "v3"})
	c = e.waitCondition(pool, fleet.ConditionDegraded, metav1.ConditionTrue, "drift-node-3", "crio.service")
	assert.Contains(t, c.Message, "1 degraded")
	assert.NotContains(t, c.Message, "drift-node-1 (")
	assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(e.conditions(pool), fleet.ConditionComplete).Status)
	assert.Equal(t, "# v2 mirrors", read(t, nodes[2].root, registries), "node 3 rolled back")

	// Fixed, its retry succeeds: Complete, not Degraded.
	nodes[2].mgr.StandIn(t, crio, false)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated, 0 degraded", "All 3 nodes run v3")
	e.waitCondition(pool, fleet.ConditionDegraded, metav1.ConditionFalse)
	assert.Equal(t, "# v3 mirrors", read(t, nodes[2].root, registries))
	assert.True(t, ctl.alive())
}

// agentFree is a pool with two guest nodes whose refresh annotations the test writes, as agents
// would, and a running controller.
func agentFree(t *testing.T, e *ctlEnv, pool, kind string) []string {
	e.nodePool(pool, map[string]string{controller.AnnotationCurrentRolloutConfig: "r1"})
	e.workload(kind, pool, "v1")
	e.tokenSecret(pool, "v1", base().JSON(), false)
	names := []string{pool + "-a", pool + "-b"}
	for _, n := range names {
		e.guestNode(n, pool)
	}
	return names
}

// confirm has every node report the hash Done.
func confirm(e *ctlEnv, nodes []string, hash string) {
	for _, n := range nodes {
		e.report(n, hash, hash, api.StateDone, "")
	}
}

// TestControllerLeavesRolloutClassChangesToTheRollout: a config version that comes with a new
// rollout hash is not published and the conditions say why; once the rollout has completed, its
// version becomes the baseline.
func TestControllerLeavesRolloutClassChangesToTheRollout(t *testing.T) {
	e := newCtlEnv(t, "rollout")
	const pool = "rollout"
	nodes := agentFree(t, e, pool, "MachineDeployment")
	// With deploy/controller's least-privilege RBAC on both sides.
	e.startControllerAs(e.leastPrivilege())
	e.waitPublished(pool, "v1")
	confirm(e, nodes, "v1")
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "2/2 nodes updated")

	// HyperShift propagates a spec-driven change: a new rollout hash in progress, a new version.
	e.tokenSecret(pool, "v2", base().File(registries, []byte("# v2"), 0o644).JSON(), false)
	e.annotate(controller.GVRNodePool, pool, map[string]any{controller.AnnotationInProgressRolloutConfig: "r2"})
	e.annotate(controller.GVRMachineDeployment, pool, map[string]any{controller.AnnotationTargetConfigVersion: "v2"})
	c := e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout, "v1 -> v2", "left to the rollout")
	assert.Contains(t, c.Message, "2/2 nodes updated")
	assert.Equal(t, "v1", e.publishedHash(pool), "not published")
	assert.Equal(t, metav1.ConditionTrue, meta.FindStatusCondition(e.conditions(pool), fleet.ConditionComplete).Status, "the nodes still run what was published")

	// The rollout completes (HyperShift records the new rollout hash): v2 becomes the baseline.
	e.annotate(controller.GVRNodePool, pool, map[string]any{controller.AnnotationCurrentRolloutConfig: "r2",
		controller.AnnotationInProgressRolloutConfig: nil})
	cm := e.waitPublished(pool, "v2")
	assert.Equal(t, "r2", cm.Annotations[controller.AnnotationRolloutConfig])
	e.waitEvent(pool, controller.EventPublished, "rollout that delivered it has completed")

	// The form of the rollout target, on the workload, is honoured too.
	e.tokenSecret(pool, "v3", base().File(registries, []byte("# v3"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, pool, map[string]any{controller.AnnotationTargetRolloutConfig: "r3",
		controller.AnnotationTargetConfigVersion: "v3"})
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionTrue, controller.ReasonLeftToRollout, "v2 -> v3")
	assert.Equal(t, "v2", e.publishedHash(pool))
}

// TestControllerPausesForRolloutsAndInPlaceUpgrades: a rolling MachineDeployment, a Machine being
// deleted and an in-place upgrade each hold a drift back with the reason visible; each ends, and
// the drift is published without anyone asking.
func TestControllerPausesForRolloutsAndInPlaceUpgrades(t *testing.T) {
	e := newCtlEnv(t, "pause")
	replace := agentFree(t, e, "replace", "MachineDeployment")
	inplace := agentFree(t, e, "inplace", "MachineSet")
	e.startController()
	e.waitPublished("replace", "v1")
	e.waitPublished("inplace", "v1")
	confirm(e, replace, "v1")
	confirm(e, inplace, "v1")

	// A rolling MachineDeployment.
	e.mdStatus("replace", 3, 1)
	e.tokenSecret("replace", "v2", base().File(registries, []byte("# v2"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, "replace", map[string]any{controller.AnnotationTargetConfigVersion: "v2"})
	e.waitCondition("replace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "rolling out (1/3 replicas updated)")
	assert.Equal(t, "v1", e.publishedHash("replace"))
	e.mdStatus("replace", 3, 3)
	e.waitPublished("replace", "v2")
	e.waitCondition("replace", fleet.ConditionProgressing, metav1.ConditionTrue, "Refreshing 2/2 nodes toward v2")
	confirm(e, replace, "v2")
	e.waitCondition("replace", fleet.ConditionComplete, metav1.ConditionTrue, "2/2 nodes updated")

	// A Machine of the pool being deleted (a finalizer holds it).
	machine := map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
		"metadata": map[string]any{"name": "replace-abc", "namespace": e.ns, "finalizers": []any{"test/hold"},
			"labels": map[string]any{"cluster.x-k8s.io/deployment-name": "replace"}}}
	_, err := e.res(controller.GVRMachine).Create(e.ctx, unstructuredOf(machine), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, e.res(controller.GVRMachine).Delete(e.ctx, "replace-abc", metav1.DeleteOptions{}))
	e.tokenSecret("replace", "v3", base().File(registries, []byte("# v3"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, "replace", map[string]any{controller.AnnotationTargetConfigVersion: "v3"})
	e.waitCondition("replace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "replace-abc is being deleted")
	assert.Equal(t, "v2", e.publishedHash("replace"))
	_, err = e.res(controller.GVRMachine).Patch(e.ctx, "replace-abc", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	e.waitPublished("replace", "v3")

	// An in-place upgrade: target != current, then the upgrader's in-progress annotation.
	e.tokenSecret("inplace", "v2", base().File(registries, []byte("# v2"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineSet, "inplace", map[string]any{controller.AnnotationTargetConfigVersion: "v2"})
	e.waitCondition("inplace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "in-place upgrade in progress", "v1 -> v2")
	e.annotate(controller.GVRMachineSet, "inplace", map[string]any{controller.AnnotationCurrentConfigVersion: "v2",
		controller.AnnotationUpgradeInProgressTrue: "Nodepool update in progress. Target Config version: v2. Total Nodes: 2. Upgraded: 1"})
	e.waitCondition("inplace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "Upgraded: 1")
	assert.Equal(t, "v1", e.publishedHash("inplace"))
	e.annotate(controller.GVRMachineSet, "inplace", map[string]any{controller.AnnotationUpgradeInProgressTrue: nil})
	e.waitPublished("inplace", "v2")
	confirm(e, inplace, "v2")
	e.waitCondition("inplace", fleet.ConditionComplete, metav1.ConditionTrue, "2/2 nodes updated")
}

// TestControllerBadInput: a token Secret without payload, an undecodable payload, one too large for
// a ConfigMap, a ConfigMap the controller does not own, a pool whose nodes are gone and a NodePool
// deleted mid-refresh each end in a condition or an Event; nothing is published that should not
// be, and the controller keeps running.
func TestControllerBadInput(t *testing.T) {
	e := newCtlEnv(t, "bad")
	const pool = "bad"
	e.nodePool(pool, map[string]string{controller.AnnotationCurrentRolloutConfig: "r1"})
	e.workload("MachineDeployment", pool, "v1")
	e.tokenSecret(pool, "v1", nil, false)
	e.guestNode("bad-a", pool)
	ctl := e.startControllerAs(e.leastPrivilege())

	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing, "token-bad-v1", `no "payload" key`)
	e.waitEvent(pool, controller.EventNotPublished, "token-bad-v1")
	assert.Nil(t, e.configMap(pool))

	e.tokenSecret(pool, "v1", []byte("not a payload at all"), true)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadInvalid, "does not decode")
	assert.Nil(t, e.configMap(pool))

	e.tokenSecret(pool, "v1", tooLargeForAConfigMap(t), true)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadTooLarge, "too large for a ConfigMap")
	assert.Nil(t, e.configMap(pool))

	// Fixed: published; the node confirms; then the pool's nodes are gone.
	e.tokenSecret(pool, "v1", base().JSON(), false)
	e.waitPublished(pool, "v1")
	e.report("bad-a", "v1", "v1", api.StateDone, "")
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "1/1 nodes updated")
	require.NoError(t, e.guestCS.CoreV1().Nodes().Delete(e.ctx, "bad-a", metav1.DeleteOptions{}))
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionFalse, fleet.ReasonNoNodes, "no guest Node carries "+api.LabelNodePool+"=bad")

	// A ConfigMap of the same name that the controller does not own is left alone.
	const other = "foreign"
	e.nodePool(other, nil)
	e.workload("MachineDeployment", other, "v1")
	e.tokenSecret(other, "v1", base().JSON(), false)
	_, err := e.guestCS.CoreV1().ConfigMaps(e.guestNS).Create(e.ctx, configMapOf(e.guestNS, api.ConfigMapName("", other)), metav1.CreateOptions{})
	require.NoError(t, err)
	e.waitCondition(other, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonNotManaged)
	assert.Equal(t, "someone else's", e.configMap(other).Data["hash"])

	// The NodePool is deleted mid-refresh (a new version published, no node has it): the ConfigMap
	// is withdrawn and an Event says so.
	e.guestNode("bad-b", pool)
	e.tokenSecret(pool, "v2", base().File(registries, []byte("# v2"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, pool, map[string]any{controller.AnnotationTargetConfigVersion: "v2"})
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionTrue, "toward v2")
	require.NoError(t, e.res(controller.GVRNodePool).Delete(e.ctx, pool, metav1.DeleteOptions{}))
	ok := kubetest.WaitFor(e.ctx, 30*time.Second, func() bool { return e.configMap(pool) == nil })
	assert.True(t, ok, "ConfigMap withdrawn")
	e.waitEvent(pool, controller.EventWithdrawn, "withdrawn")
	assert.True(t, ctl.alive(), "the controller keeps running")
	assert.NotContains(t, ctl.logText(), "panic")
}

// TestControllerLeaderElection: two replicas, one leads; SIGKILLed (it cannot hand the Lease
// back), the other takes over once the Lease expires and publishes the next drift.
func TestControllerLeaderElection(t *testing.T) {
	e := newCtlEnv(t, "leader")
	const pool = "ha"
	nodes := agentFree(t, e, pool, "MachineDeployment")
	a, b := e.startController(), e.startController()
	e.waitPublished(pool, "v1")
	confirm(e, nodes, "v1")
	var leader, standby *controllerProc
	ok := kubetest.WaitFor(e.ctx, 30*time.Second, func() bool {
		la, lb := strings.Contains(a.logText(), `"msg":"leading"`), strings.Contains(b.logText(), `"msg":"leading"`)
		switch {
		case la && !lb:
			leader, standby = a, b
		case lb && !la:
			leader, standby = b, a
		}
		return leader != nil
	})
	require.True(t, ok, "exactly one replica leads")
	holder := func() string {
		l, err := e.mgmtCS.CoordinationV1().Leases(e.ns).Get(e.ctx, "refresh-agent-controller", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	first := holder()
	require.NotEmpty(t, first)
	assert.Contains(t, leader.logText(), first, "the leader's identity holds the Lease")

	leader.kill()
	ok = kubetest.WaitFor(e.ctx, 30*time.Second, func() bool { return strings.Contains(standby.logText(), `"msg":"leading"`) })
	require.True(t, ok, "the standby takes over")
	assert.NotEqual(t, first, holder())
	e.tokenSecret(pool, "v2", base().File(registries, []byte("# v2"), 0o644).JSON(), false)
	e.annotate(controller.GVRMachineDeployment, pool, map[string]any{controller.AnnotationTargetConfigVersion: "v2"})
	e.waitPublished(pool, "v2")
	confirm(e, nodes, "v2")
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "All 2 nodes run v2")
}
