package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/test/hypershifttest"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// The controller against HyperShift's rollout contract (package hypershifttest writes the objects
// as HyperShift's code does): which versions it publishes, which it leaves to rollouts, and how its
// conditions live beside HyperShift's status writes.

// settled is a pool of HyperShift's whose first version the running controller published and the
// nodes confirmed.
func settled(t *testing.T, e *ctlEnv, pool string, n int, contract, v1beta2 bool) (*hypershifttest.Pool, []string, string, *controllerProc) {
	t.Helper()
	hs, nodes, h1 := agentFree(t, e, pool, n, contract, false, v1beta2)
	ctl := e.startController()
	e.waitPublished(pool, h1)
	confirm(e, nodes, h1)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, fmt.Sprintf("%d/%d nodes updated", n, n), "All ")
	return hs, nodes, h1, ctl
}

// stays asserts that the pool's published hash is still want (callers first wait for the condition
// that says the controller decided on the latest objects).
func (e *ctlEnv) stays(pool, want string) {
	e.t.Helper()
	assert.Equal(e.t, want, e.publishedHash(pool))
}

// TestControllerPublishesManagementDrift: ConfigUpdatePending=True/ManagementConfigDrift with the
// refresh version and its payload, no rollout in progress: published (hash = H2), the agents report
// it, Complete 3/3. The workload and the NodePool's completed annotations stay on H1.
func TestControllerPublishesManagementDrift(t *testing.T) {
	e := newCtlEnv(t, "hsdrift")
	const pool = "workers"
	hs, nodes, h1, _ := settled(t, e, pool, 3, true, false)

	h2, err := hs.Drift(e.ctx, mirrors("h2"), true)
	require.NoError(t, err)
	require.NotEqual(t, h1, h2)
	cm := e.waitPublished(pool, h2)
	assert.Equal(t, h1, cm.Annotations[controller.AnnotationBaseline], "published over the completed version")
	e.waitEvent(pool, controller.EventPublished, "management-side drift over the completed config version "+h1)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionTrue, "0/3 nodes updated", "toward "+h2)
	confirm(e, nodes, h2)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated, 0 degraded", "All 3 nodes run "+h2)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, fleet.ReasonAsExpected)

	md, err := e.res(controller.GVRMachineDeployment).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	ds, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "dataSecretName")
	assert.Equal(t, "user-data-"+pool+"-"+h1, ds, "HyperShift keeps the workload on the deployed hash")
	ready := meta.FindStatusCondition(e.conditions(pool), "Ready")
	require.NotNil(t, ready, "HyperShift's own condition kept")
	assert.Equal(t, metav1.ConditionTrue, meta.FindStatusCondition(e.conditions(pool), controller.ConditionConfigUpdatePending).Status)
}

// TestControllerLeavesSpecRolloutsToHyperShift: a spec-driven rollout (the in-progress annotation,
// a new bootstrap Secret, UpdatingConfig) publishes nothing; once HyperShift records it complete its
// version is the baseline. The workload's target rollout annotation stays after completion and
// differs from the NodePool's current rollout hash (another flavour): never a permanent LeftToRollout.
func TestControllerLeavesSpecRolloutsToHyperShift(t *testing.T) {
	e := newCtlEnv(t, "hsspec")
	const pool = "spec"
	hs, nodes, h1, _ := settled(t, e, pool, 3, true, false)

	h3, err := hs.SpecChange(e.ctx, mirrors("spec"))
	require.NoError(t, err)
	c := e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout, controller.AnnotationInProgressRolloutConfig)
	assert.Contains(t, c.Message, h1+" stays published")
	e.stays(pool, h1)
	require.NoError(t, hs.Progress(e.ctx, 2))
	require.NoError(t, hs.Touch(e.ctx, 2))
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout)
	e.stays(pool, h1)

	require.NoError(t, hs.Complete(e.ctx))
	e.waitPublished(pool, h3)
	e.waitEvent(pool, controller.EventPublished, "rollout that delivered it has completed")
	confirm(e, nodes, h3) // the replaced nodes booted from h3: their agents find nothing to do
	c = e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "3/3 nodes updated", "All 3 nodes run "+h3)
	p := meta.FindStatusCondition(e.conditions(pool), fleet.ConditionProgressing)
	assert.Equal(t, fleet.ReasonAsExpected, p.Reason, "not LeftToRollout after completion: %+v", p)

	md, err := e.res(controller.GVRMachineDeployment).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	np, err := e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	target := md.GetAnnotations()[controller.AnnotationTargetRolloutConfig]
	require.NotEmpty(t, target, "the target rollout annotation stays after completion")
	assert.NotEqual(t, np.GetAnnotations()[controller.AnnotationCurrentRolloutConfig], target, "two flavours: with and without the version")
	assert.NotContains(t, np.GetAnnotations(), controller.AnnotationInProgressRolloutConfig)
}

// TestControllerDriftDuringRolloutWaits: drift announced while the workload has not settled waits,
// then is published by itself; drift arriving during a spec-driven rollout is announced by HyperShift
// only after it completes, and the controller publishes it then.
func TestControllerDriftDuringRolloutWaits(t *testing.T) {
	e := newCtlEnv(t, "hswait")
	const pool = "wait"
	hs, nodes, h1, _ := settled(t, e, pool, 3, true, false)

	// Announced while a Machine is being replaced (2/3 replicas up to date).
	require.NoError(t, hs.Progress(e.ctx, 2))
	h2, err := hs.Drift(e.ctx, mirrors("h2"), true)
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "2/3 replicas up to date", "resumes")
	e.stays(pool, h1)
	require.NoError(t, hs.Progress(e.ctx, 3))
	e.waitPublished(pool, h2)
	confirm(e, nodes, h2)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "All 3 nodes run "+h2)

	// A spec edit HyperShift has not reconciled yet (its conditions speak of the older generation):
	// the drift it reported waits for it.
	np, err := e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, hs.EditSpec(e.ctx, map[string]string{"team": "a"}))
	hs.Observed = np.GetGeneration() // its reconcile of the spec before the edit lands now
	h2b, err := hs.Drift(e.ctx, mirrors("h2b"), true)
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "not observed by HyperShift yet")
	e.stays(pool, h2)
	hs.Observed = 0
	require.NoError(t, hs.Touch(e.ctx, 1))
	e.waitPublished(pool, h2b)
	confirm(e, nodes, h2b)
	h2 = h2b

	// A spec change, then management drift while it rolls (HyperShift's ContinuedRollout).
	h3, err := hs.SpecChange(e.ctx, mirrors("h3"))
	require.NoError(t, err)
	_, err = hs.Drift(e.ctx, mirrors("h4"), true)
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout)
	e.stays(pool, h2)
	require.NoError(t, hs.Complete(e.ctx)) // completes h3, then announces the drift over it
	require.Equal(t, h3, hs.Completed())
	np, err = e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	h4 := np.GetAnnotations()[controller.AnnotationRefreshConfigVersion]
	require.NotEmpty(t, h4)
	require.NotEqual(t, h3, h4)
	cm := e.waitPublished(pool, h4)
	assert.Equal(t, h3, cm.Annotations[controller.AnnotationBaseline])
}

// TestControllerTodaysHyperShiftNeverPublishesANewVersion: without rollout annotations a drift
// rolls the pool like any change, and a new config version is never published, even once the
// rollout completed; Progressing says why. The first version seen was the baseline.
func TestControllerTodaysHyperShiftNeverPublishesANewVersion(t *testing.T) {
	e := newCtlEnv(t, "hstoday")
	const pool = "today"
	// A pool whose first rollout is still in progress when the controller starts.
	late := e.hyperShift("late", false, false, false)
	_, err := late.Create(e.ctx, base().JSON())
	require.NoError(t, err)
	l2, err := late.SpecChange(e.ctx, mirrors("late"))
	require.NoError(t, err)
	hs, _, h1, ctl := settled(t, e, pool, 3, false, false)

	h2, err := hs.Drift(e.ctx, mirrors("h2"), true) // today: a new bootstrap Secret and a rollout
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout, h2)
	require.NoError(t, hs.Complete(e.ctx))
	c := e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonRolloutContractUnavailable, h1+" -> "+h2)
	assert.Contains(t, c.Message, controller.AnnotationCurrentRolloutConfig)
	for i := range 5 {
		require.NoError(t, hs.Touch(e.ctx, i))
	}
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonRolloutContractUnavailable)
	e.stays(pool, h1)
	for _, ev := range e.events(pool, controller.EventPublished) {
		assert.NotContains(t, ev.Message, h2)
	}

	// The pool seen first in the middle of a rollout: nothing until it completes, then its baseline.
	e.waitCondition("late", fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonLeftToRollout)
	assert.Nil(t, e.configMap("late"))
	require.NoError(t, late.Complete(e.ctx))
	e.waitPublished("late", l2)
	assert.True(t, ctl.alive())
}

// TestControllerV1Beta2Rolling: Cluster API v1beta2 status (upToDateReplicas, observedGeneration)
// holds a drift back while the MachineDeployment rolls.
func TestControllerV1Beta2Rolling(t *testing.T) {
	e := newCtlEnv(t, "hsv1b2")
	const pool = "v1b2"
	hs, _, h1, ctl := settled(t, e, pool, 2, true, true)
	assert.Contains(t, ctl.logText(), `"clusterAPI":"cluster.x-k8s.io/v1beta2"`)

	// A template change the controller of the MachineDeployment has not observed yet.
	gvr := controller.GVRMachineDeployment
	gvr.Version = "v1beta2"
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "y"}}}}})
	_, err := e.dyn.Resource(gvr).Namespace(e.ns).Patch(e.ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	h2, err := hs.Drift(e.ctx, mirrors("h2"), true)
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "not observed yet")
	require.NoError(t, hs.Progress(e.ctx, 1))
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPaused, "1/3 replicas up to date")
	e.stays(pool, h1)
	require.NoError(t, hs.Progress(e.ctx, 3))
	e.waitPublished(pool, h2)
}

// TestControllerConditionsSurviveStaleWrites: a HyperShift status write from a stale copy drops
// the ConfigRefresh conditions, another reverts them to old values: both corrected within seconds
// from the informer event, and HyperShift's ordinary writes cause no write of the controller's.
func TestControllerConditionsSurviveStaleWrites(t *testing.T) {
	e := newCtlEnv(t, "hsstale")
	const pool = "stale"
	hs, _, h1, ctl := settled(t, e, pool, 2, true, false)

	back := func(what string) {
		t.Helper()
		ok := kubetest.WaitFor(e.ctx, 10*time.Second, func() bool {
			c := meta.FindStatusCondition(e.conditions(pool), fleet.ConditionComplete)
			return c != nil && c.Status == metav1.ConditionTrue && meta.FindStatusCondition(e.conditions(pool), fleet.ConditionProgressing) != nil &&
				meta.FindStatusCondition(e.conditions(pool), fleet.ConditionDegraded) != nil
		})
		require.True(t, ok, "conditions not back within 10s after %s: %+v", what, e.conditions(pool))
	}
	writes := writesOf(ctl, pool)
	require.NoError(t, hs.StaleStatusWrite(e.ctx))
	back("a write that dropped them")
	assert.NotNil(t, meta.FindStatusCondition(e.conditions(pool), "Ready"), "HyperShift's own kept")

	// A stale copy with the controller's older Complete=False.
	u, err := e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for i, c := range list {
		if m := c.(map[string]any); m["type"] == fleet.ConditionComplete {
			m["status"], m["reason"], m["message"] = "False", fleet.ReasonIncomplete, "0/2 nodes updated, 0 degraded: 0/2 nodes run "+h1
			list[i] = m
		}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": list}})
	_, err = e.res(controller.GVRNodePool).Patch(e.ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	back("a write that reverted them")
	corrected := writesOf(ctl, pool)
	assert.LessOrEqual(t, corrected-writes, 4, "one correction per stale write")

	// HyperShift's ordinary writes: no write of the controller's follows.
	for i := range 10 {
		require.NoError(t, hs.Touch(e.ctx, i))
	}
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue)
	assert.Equal(t, corrected, writesOf(ctl, pool), "no write loop")
}

// TestControllerDriftWithoutPayload: a drift whose token Secret has no payload, then one whose
// Secret does not exist: PayloadMissing, one Warning Event each, nothing published, and a handful
// of status writes at most while HyperShift keeps writing the NodePool; the ignition server's
// payload, when it comes, is published.
func TestControllerDriftWithoutPayload(t *testing.T) {
	e := newCtlEnv(t, "hsnopay")
	const pool = "nopay"
	hs, nodes, h1, ctl := settled(t, e, pool, 2, true, false)
	before := writesOf(ctl, pool)

	h2, err := hs.Drift(e.ctx, nil, true)
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing, "token-"+pool+"-"+h2, `no "payload" key`)
	e.waitEvent(pool, controller.EventNotPublished, h2)
	for i := range 30 {
		require.NoError(t, hs.Touch(e.ctx, i))
		if i%10 == 0 {
			require.NoError(t, hs.StaleStatusWrite(e.ctx))
			e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing)
		}
	}
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing)
	e.stays(pool, h1)
	assert.Len(t, e.events(pool, controller.EventNotPublished), 1, "one Warning Event")
	assert.LessOrEqual(t, writesOf(ctl, pool)-before, 5, "a handful of status writes: the first, one per stale write")

	h3, err := hs.Drift(e.ctx, nil, false)
	require.NoError(t, err)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing, "token-"+pool+"-"+h3, "not found")
	e.waitEvent(pool, controller.EventNotPublished, h3)
	e.stays(pool, h1)

	// The ignition server's payload arrives for h2 while HyperShift names h3: still nothing; then
	// the Secret for h3 is created with its payload: published.
	e.setPayload(pool, h2, mirrors("h2"), false)
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadMissing, h3)
	_, err = hs.Drift(e.ctx, mirrors("h4"), true)
	require.NoError(t, err)
	np, err := e.res(controller.GVRNodePool).Get(e.ctx, pool, metav1.GetOptions{})
	require.NoError(t, err)
	h4 := np.GetAnnotations()[controller.AnnotationRefreshConfigVersion]
	e.waitPublished(pool, h4)
	assert.Len(t, e.events(pool, controller.EventNotPublished), 2)
	confirm(e, nodes, h4)
	e.waitCondition(pool, fleet.ConditionComplete, metav1.ConditionTrue, "All 2 nodes run "+h4)

	// A refresh version no Secret can be named after: a condition, nothing read or published.
	e.annotate(controller.GVRNodePool, pool, map[string]any{controller.AnnotationRefreshConfigVersion: "../../kube-system/x"})
	e.waitCondition(pool, fleet.ConditionProgressing, metav1.ConditionFalse, controller.ReasonPayloadInvalid, "is not a config version")
	e.stays(pool, h4)
	assert.Len(t, e.events(pool, controller.EventNotPublished), 3)
}
