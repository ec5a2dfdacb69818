package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/hypershifttest"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// TestControllerDrivesAgentsThroughDrift: two real kube-apiservers (management and guest), three
// simulated guest nodes each with a real agent and systemd manager, and the controller binary.
// Management-side drift as HyperShift's rollout-hash design reports it (ConfigUpdatePending=True/
// ManagementConfigDrift, the proposed refresh version and its token Secret; the workload untouched)
// is published, the agents refresh, and the NodePool goes Progressing -> Complete with counts; a node
// whose crio cannot reload makes the pool Degraded naming it, and fixed, Complete again. HyperShift's
// own condition is untouched throughout.
func TestControllerDrivesAgentsThroughDrift(t *testing.T) {
	systemdtest.Require(t)
	e := newCtlEnv(t, "drift")
	agentKC, err := e.guest.Kubeconfig(kubetest.AgentUser)
	require.NoError(t, err)
	const pool = "workers"

	hs := e.hyperShift(pool, true, false, false)
	v1, err := hs.Create(e.ctx, base().JSON())
	require.NoError(t, err)
	var nodes []simNode
	for i := 1; i <= 3; i++ {
		n := newSimNode(t, fmt.Sprintf("drift-node-%d", i))
		recordBase(t, n.root)
		e.guestNode(n.name, pool)
		nodes = append(nodes, n)
		n.startAgent(t, "--namespace", e.guestNS, "--configmap", api.ConfigMapName("", pool), "--kubeconfig", agentKC)
	}
	ctl := e.startController()

	// The first config version seen is the baseline: published, the agents confirm it.
	cm := e.waitPublished(pool, v1)
	assert.Equal(t, string(fixture.GzipBase64(base().JSON())), cm.Data[api.KeyConfig], "the token Secret's payload, verbatim")
	assert.Equal(t, v1, cm.Annotations[controller.AnnotationBaseline])
	c := e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated, 0 degraded", "All 3 nodes run "+v1)
	ready := meta.FindStatusCondition(e.conditions(pool), "Ready")
	require.NotNil(t, ready, "HyperShift's condition kept")
	completeSince := c.LastTransitionTime

	// Management-side drift: a new Hash(), the same rollout hash; HyperShift keeps the workload on v1.
	seen := e.watchConditions(pool)
	v2, err := hs.Drift(e.ctx, base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), true)
	require.NoError(t, err)
	e.waitPublished(pool, v2)
	e.waitEvent(pool, controller.EventPublished, v2)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated", "All 3 nodes run "+v2)
	// The status written with the publication, when no node had v2 yet, said Progressing.
	assert.Contains(t, seen(), "ConfigRefreshProgressing=True Refreshing: 0/3 nodes updated, 0 degraded: Refreshing 3/3 nodes toward "+v2)
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
	v3, err := hs.Drift(e.ctx, base().File(registries, []byte("# v3 mirrors"), 0o644).JSON(), true)
	require.NoError(t, err)
	c = e.waitCondition(pool, fleet.ConditionDegraded, metav1.ConditionTrue, "drift-node-3", "crio.service")
	assert.Contains(t, c.Message, "1 degraded")
	assert.NotContains(t, c.Message, "drift-node-1 (")
	assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(e.conditions(pool), fleet.ConditionComplete).Status)
	assert.Equal(t, "# v2 mirrors", read(t, nodes[2].root, registries), "node 3 rolled back")

	// Fixed, its retry succeeds: Complete, not Degraded.
	nodes[2].mgr.StandIn(t, crio, false)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated, 0 degraded", "All 3 nodes run "+v3)
	e.waitCondition(pool, fleet.ConditionDegraded, metav1.ConditionFalse)
	assert.Equal(t, "# v3 mirrors", read(t, nodes[2].root, registries))
	assert.Equal(t, v1, hs.Completed(), "no rollout: the NodePool's completed version stays")
	assert.True(t, ctl.alive())
}

// agentFree is a pool of HyperShift's with nodes guest nodes whose refresh annotations the test
// writes, as agents would. It returns the pool, its nodes and its first config version.
func agentFree(t *testing.T, e *ctlEnv, pool string, nodes int, contract, inPlace, v1beta2 bool) (*hypershifttest.Pool, []string, string) {
	hs := e.hyperShift(pool, contract, inPlace, v1beta2)
	v1, err := hs.Create(e.ctx, base().JSON())
	require.NoError(t, err)
	var names []string
	for i := range nodes {
		names = append(names, fmt.Sprintf("%s-%c", pool, 'a'+i))
		e.guestNode(names[i], pool)
	}
	return hs, names, v1
}

// confirm has every node report the hash Done.
func confirm(e *ctlEnv, nodes []string, hash string) {
	for _, n := range nodes {
		e.report(n, hash, hash, api.StateDone, "")
	}
}

// mirrors is a payload that differs from base() in management-side content only.
func mirrors(s string) []byte {
	return base().File(registries, []byte("# "+s+" mirrors"), 0o644).JSON()
}

// TestControllerPausesForRolloutsAndInPlaceUpgrades: a drift announced while the MachineDeployment
// has not settled or a Machine of the pool is being deleted waits with the reason visible; each ends,
// and the drift is published without anyone asking. An InPlace pool's spec-driven in-place upgrade is
// left to HyperShift's upgrader and its version adopted when it completes.
func TestControllerPausesForRolloutsAndInPlaceUpgrades(t *testing.T) {
	e := newCtlEnv(t, "pause")
	replace, rnodes, r1 := agentFree(t, e, "replace", 2, true, false, false)
	inplace, inodes, i1 := agentFree(t, e, "inplace", 2, true, true, false)
	e.startController()
	e.waitPublished("replace", r1)
	e.waitPublished("inplace", i1)
	confirm(e, rnodes, r1)
	confirm(e, inodes, i1)

	// A Machine remediated: 2/3 replicas up to date while its replacement comes up.
	require.NoError(t, replace.Progress(e.ctx, 2))
	r2, err := replace.Drift(e.ctx, mirrors("r2"), true)
	require.NoError(t, err)
	e.waitCondition("replace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "rolling out (2/3 replicas up to date)")
	assert.Equal(t, r1, e.publishedHash("replace"))
	require.NoError(t, replace.Progress(e.ctx, 3))
	e.waitPublished("replace", r2)
	e.waitCondition("replace", fleet.ConditionProgressing, metav1.ConditionTrue, "Refreshing 2/2 nodes toward "+r2)
	confirm(e, rnodes, r2)
	e.waitCondition("replace", fleet.ConditionComplete, metav1.ConditionTrue, "2/2 nodes updated")

	// A Machine of the pool being deleted (a finalizer holds it).
	machine := map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
		"metadata": map[string]any{"name": "replace-abc", "namespace": e.ns, "finalizers": []any{"test/hold"},
			"labels": map[string]any{"cluster.x-k8s.io/deployment-name": "replace"}}}
	_, err = e.res(controller.GVRMachine).Create(e.ctx, unstructuredOf(machine), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, e.res(controller.GVRMachine).Delete(e.ctx, "replace-abc", metav1.DeleteOptions{}))
	r3, err := replace.Drift(e.ctx, mirrors("r3"), true)
	require.NoError(t, err)
	e.waitCondition("replace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "replace-abc is being deleted")
	assert.Equal(t, r2, e.publishedHash("replace"))
	_, err = e.res(controller.GVRMachine).Patch(e.ctx, "replace-abc", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	e.waitPublished("replace", r3)

	// A spec-driven in-place upgrade: the MachineSet targets i2, the upgrader works, then completes.
	i2, err := inplace.SpecChange(e.ctx, mirrors("i2"))
	require.NoError(t, err)
	e.waitCondition("inplace", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout, controller.AnnotationInProgressRolloutConfig)
	assert.Equal(t, i1, e.publishedHash("inplace"))
	require.NoError(t, inplace.Complete(e.ctx))
	e.waitPublished("inplace", i2)
	e.waitEvent("inplace", controller.EventPublished, "rollout that delivered it has completed")
	confirm(e, inodes, i2)
	e.waitCondition("inplace", fleet.ConditionComplete, metav1.ConditionTrue, "2/2 nodes updated")
}

// TestControllerBadInput: a token Secret without payload, an undecodable payload, one too large for
// a ConfigMap, a ConfigMap the controller does not own, a pool whose nodes are gone and a NodePool
// being deleted each end in a condition or an Event; nothing is published that should not be, and
// the controller keeps running.
func TestControllerBadInput(t *testing.T) {
	e := newCtlEnv(t, "bad")
	const pool = "bad"
	hs := e.hyperShift(pool, true, false, false)
	v1, err := hs.Create(e.ctx, nil)
	require.NoError(t, err)
	e.guestNode("bad-a", pool)
	ctl := e.startControllerAs(e.leastPrivilege())

	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing, "token-bad-"+v1, `no "payload" key`)
	e.waitEvent(pool, controller.EventNotPublished, "token-bad-"+v1)
	assert.Nil(t, e.configMap(pool))

	e.setPayload(pool, v1, []byte("not a payload at all"), true)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadInvalid, "does not decode")
	assert.Nil(t, e.configMap(pool))

	e.setPayload(pool, v1, tooLargeForAConfigMap(t), true)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadTooLarge, "too large for a ConfigMap")
	assert.Nil(t, e.configMap(pool))

	// Fixed: published; the node confirms; then the pool's nodes are gone.
	e.setPayload(pool, v1, base().JSON(), false)
	e.waitPublished(pool, v1)
	e.report("bad-a", v1, v1, api.StateDone, "")
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "1/1 nodes updated")
	require.NoError(t, e.guestCS.CoreV1().Nodes().Delete(e.ctx, "bad-a", metav1.DeleteOptions{}))
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionFalse, fleet.ReasonNoNodes, "no guest Node carries "+api.LabelNodePool+"=bad")

	// A ConfigMap of the same name that the controller does not own is left alone.
	const other = "foreign"
	_, err = e.guestCS.CoreV1().ConfigMaps(e.guestNS).Create(e.ctx, configMapOf(e.guestNS, api.ConfigMapName("", other)), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = e.hyperShift(other, true, false, false).Create(e.ctx, base().JSON())
	require.NoError(t, err)
	e.waitCondition(other, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonNotManaged)
	assert.Equal(t, "someone else's", e.configMap(other).Data["hash"])

	// The NodePool is deleted mid-refresh (a drift published, no node has it; HyperShift's finalizer
	// holds it): the ConfigMap is withdrawn, Progressing and one Warning Event say so.
	e.guestNode("bad-b", pool)
	v2, err := hs.Drift(e.ctx, mirrors("v2"), true)
	require.NoError(t, err)
	e.waitPublished(pool, v2)
	_, err = e.res(controller.GVRNodePool).Patch(e.ctx, pool, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":["hypershift.openshift.io/finalizer"]}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.NoError(t, e.res(controller.GVRNodePool).Delete(e.ctx, pool, metav1.DeleteOptions{}))
	ok := kubetest.WaitFor(e.ctx, 30*time.Second, func() bool { return e.configMap(pool) == nil })
	assert.True(t, ok, "ConfigMap withdrawn")
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonNodePoolDeleting, "withdrawn")
	ev := e.waitEvent(pool, controller.EventWithdrawn, "withdrawn")
	assert.Equal(t, corev1.EventTypeWarning, ev.Type)
	for range 5 {
		require.NoError(t, hs.Touch(e.ctx, 1)) // HyperShift keeps writing while its nodes go
	}
	_, err = e.res(controller.GVRNodePool).Patch(e.ctx, pool, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	ok = kubetest.WaitFor(e.ctx, 30*time.Second, func() bool {
		_, err := e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	require.True(t, ok)
	assert.Len(t, e.events(pool, controller.EventWithdrawn), 1, "one Warning Event")
	assert.True(t, ctl.alive(), "the controller keeps running")
	assert.NotContains(t, ctl.logText(), "panic")
}

// TestControllerLeaderElection: two replicas, one leads; SIGKILLed (it cannot hand the Lease
// back), the other takes over once the Lease expires and publishes the next drift.
func TestControllerLeaderElection(t *testing.T) {
	e := newCtlEnv(t, "leader")
	const pool = "ha"
	hs, nodes, v1 := agentFree(t, e, pool, 2, true, false, false)
	a, b := e.startController(), e.startController()
	e.waitPublished(pool, v1)
	confirm(e, nodes, v1)
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
	v2, err := hs.Drift(e.ctx, mirrors("v2"), true)
	require.NoError(t, err)
	e.waitPublished(pool, v2)
	confirm(e, nodes, v2)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "All 2 nodes run "+v2)
}
