package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// publishTo publishes c under hash into the named ConfigMap of the env's namespace.
func (e *agentEnv) publishTo(t *testing.T, name string, c *fixture.Config, hash string) {
	t.Helper()
	_, err := publish.Publish(context.Background(), e.publisher, e.ns, name, c.JSON(), nil, hash)
	require.NoError(t, err)
}

// patchNode applies a JSON merge patch to the env's Node as an administrator.
func (e *agentEnv) patchNode(t *testing.T, patch string) {
	t.Helper()
	_, err := e.admin.CoreV1().Nodes().Patch(context.Background(), e.node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
}

// waitAnnotations waits until cond holds for the Node's annotations.
func (e *agentEnv) waitAnnotations(t *testing.T, what string, timeout time.Duration, cond func(map[string]string) bool) map[string]string {
	t.Helper()
	var ann map[string]string
	ok := kubetest.WaitFor(context.Background(), timeout, func() bool {
		n, err := e.admin.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		if err != nil {
			return false
		}
		ann = n.Annotations
		return cond(ann)
	})
	require.True(t, ok, "%s: never; annotations %v\nlog:\n%s", what, ann, e.logText())
	return ann
}

func poolLabel(pool string) map[string]string { return map[string]string{api.LabelNodePool: pool} }

// Two NodePools, three nodes: every node writes its own pool's files, a node whose label changes
// follows its new pool, and a node that loses the label (no fallback ConfigMap) reports Degraded and
// writes nothing.
func TestAgentFollowsItsNodePool(t *testing.T) {
	a1 := newAgentEnvNode(t, false, "-a1", poolLabel("alpha"))
	a2 := newAgentEnvNode(t, false, "-a2", poolLabel("alpha"))
	b1 := newAgentEnvNode(t, false, "-b1", poolLabel("beta"))
	alpha := base().File(registries, []byte("# alpha mirrors"), 0o644)
	beta := base().File(registries, []byte("# beta mirrors"), 0o644)
	a1.publishTo(t, api.ConfigMapName("", "alpha"), alpha, "alpha-1")
	a1.publishTo(t, api.ConfigMapName("", "beta"), beta, "beta-1")
	for _, e := range []*agentEnv{a1, a2, b1} {
		e.cm = "" // no fallback: a Node without the label has no payload
		e.start(t)
	}
	a1.waitState(t, "alpha-1", api.StateDone, 30*time.Second)
	a2.waitState(t, "alpha-1", api.StateDone, 30*time.Second)
	b1.waitState(t, "beta-1", api.StateDone, 30*time.Second)
	assert.Equal(t, "# alpha mirrors", read(t, a1.root, registries))
	assert.Equal(t, "# alpha mirrors", read(t, a2.root, registries))
	assert.Equal(t, "# beta mirrors", read(t, b1.root, registries))

	// A change to one pool reaches only its nodes.
	a1.publishTo(t, api.ConfigMapName("", "beta"), base().File(registries, []byte("# beta mirrors 2"), 0o644), "beta-2")
	b1.waitState(t, "beta-2", api.StateDone, 30*time.Second)
	assert.Equal(t, "# beta mirrors 2", read(t, b1.root, registries))
	assert.Equal(t, "alpha-1", a1.annotations(t)[api.AnnotationCurrent])
	assert.Equal(t, "# alpha mirrors", read(t, a1.root, registries))

	// a2 moves to beta.
	a2.patchNode(t, `{"metadata":{"labels":{"`+api.LabelNodePool+`":"beta"}}}`)
	a2.waitState(t, "beta-2", api.StateDone, 30*time.Second)
	assert.Equal(t, "# beta mirrors 2", read(t, a2.root, registries))

	// a1 loses its label: Degraded, nothing written.
	tree, err := fixture.TreeHash(a1.root)
	require.NoError(t, err)
	a1.patchNode(t, `{"metadata":{"labels":{"`+api.LabelNodePool+`":null}}}`)
	ann := a1.waitAnnotations(t, "no NodePool label", 30*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationState] == api.StateDegraded
	})
	assert.Equal(t, agent.ReasonNoNodePool, ann[api.AnnotationReason])
	assert.Equal(t, "alpha-1", ann[api.AnnotationCurrent])
	a1.waitEvent(t, agent.EventFailed)
	a1.publishTo(t, api.ConfigMapName("", "alpha"), base().File(registries, []byte("# alpha mirrors 2"), 0o644), "alpha-2")
	time.Sleep(2 * time.Second)
	after, err := fixture.TreeHash(a1.root)
	require.NoError(t, err)
	assert.Equal(t, tree, after, "a node without a pool writes nothing")
	// And back in a pool, it converges.
	a1.patchNode(t, `{"metadata":{"labels":{"`+api.LabelNodePool+`":"alpha"}}}`)
	a1.waitState(t, "alpha-2", api.StateDone, 30*time.Second)
	assert.Equal(t, "# alpha mirrors 2", read(t, a1.root, registries))
}

// Done, then an in-place upgrade with no new payload: Working (deferred) while it runs, and Done
// again once it ends, without a restart or a new payload.
func TestAgentDeferralWithoutNewContentEndsDone(t *testing.T) {
	e := newAgentEnv(t, false)
	e.publish(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	e.start(t)
	e.waitState(t, "v2", api.StateDone, 30*time.Second)
	e.patchNode(t, `{"metadata":{"annotations":{"machineconfiguration.openshift.io/desiredConfig":"rendered-2","machineconfiguration.openshift.io/currentConfig":"rendered-1","machineconfiguration.openshift.io/state":"Working"}}}`)
	e.waitAnnotations(t, "deferred", 30*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationState] == api.StateWorking && strings.HasPrefix(a[api.AnnotationReason], "deferred:")
	})
	e.patchNode(t, `{"metadata":{"annotations":{"machineconfiguration.openshift.io/currentConfig":"rendered-2","machineconfiguration.openshift.io/state":"Done"}}}`)
	ann := e.waitState(t, "v2", api.StateDone, 30*time.Second)
	assert.Equal(t, "v2", ann[api.AnnotationCurrent])
	assert.Empty(t, ann[api.AnnotationReason])
}

// The reporter compares with the Node the API server has: annotations edited by hand, or a Node
// deleted and created again, are corrected.
func TestAgentCorrectsHandEditedAnnotations(t *testing.T) {
	e := newAgentEnv(t, false)
	e.publish(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	e.start(t)
	e.waitState(t, "v2", api.StateDone, 30*time.Second)
	e.patchNode(t, `{"metadata":{"annotations":{"`+api.AnnotationState+`":"Degraded","`+api.AnnotationCurrent+`":"edited","`+api.AnnotationReason+`":"by hand"}}}`)
	ann := e.waitAnnotations(t, "corrected", 30*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationState] == api.StateDone && a[api.AnnotationCurrent] == "v2"
	})
	assert.Empty(t, ann[api.AnnotationReason])

	n, err := e.admin.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, e.admin.CoreV1().Nodes().Delete(context.Background(), e.node, metav1.DeleteOptions{}))
	n.ObjectMeta = metav1.ObjectMeta{Name: e.node, Labels: n.Labels}
	_, err = e.admin.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	require.NoError(t, err)
	e.waitState(t, "v2", api.StateDone, 30*time.Second)
}

// A unit that always fails: the payload is tried --max-attempts times, then the node stays Degraded
// (no more unit restarts) until an operator sets the retry annotation.
func TestAgentFailureCap(t *testing.T) {
	e := newAgentEnv(t, true) // crio's reload fails
	e.publish(t, base(), "v1")
	e.cfg = func(c *agent.Config) {
		c.MaxAttempts = 2
		c.RetryBase, c.RetryMax = 200*time.Millisecond, time.Second
	}
	e.start(t)
	e.waitState(t, "v1", api.StateDone, 30*time.Second)
	e.publish(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	ann := e.waitAnnotations(t, "gave up", 60*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationState] == api.StateDegraded && strings.Contains(a[api.AnnotationReason], "gave up after 2 attempts")
	})
	assert.Contains(t, ann[api.AnnotationReason], api.AnnotationRetry)
	assert.Equal(t, "v1", ann[api.AnnotationCurrent])
	assert.Equal(t, "# v1 mirrors", read(t, e.root, registries), "rolled back")
	time.Sleep(3 * time.Second) // several backoffs' worth: no further attempt
	assert.Equal(t, 2.0, e.metricValue(t, "refresh_agent_refreshes_total", "result", "failed"))

	e.patchNode(t, `{"metadata":{"annotations":{"`+api.AnnotationRetry+`":"1"}}}`)
	require.True(t, kubetest.WaitFor(context.Background(), 30*time.Second, func() bool {
		return e.metricValue(t, "refresh_agent_refreshes_total", "result", "failed") >= 3
	}), "the operator's retry was not attempted")
	e.waitAnnotations(t, "gave up again", 30*time.Second, func(a map[string]string) bool {
		return strings.Contains(a[api.AnnotationReason], "gave up after 2 attempts")
	})
	time.Sleep(2 * time.Second)
	assert.Equal(t, 4.0, e.metricValue(t, "refresh_agent_refreshes_total", "result", "failed"), "two more attempts, then the cap")
}

// On a Node labelled for HyperShift's global pull-secret syncer the agent never writes the kubelet's
// pull secret: the syncer's file stays, the change is delegated (in the applied Event), and the
// syncer's later rewrites are not drift.
func TestAgentLeavesTheGlobalPullSecretToItsSyncer(t *testing.T) {
	e := newAgentEnvNode(t, false, "", map[string]string{api.LabelGlobalPullSecret: "true"})
	e.publish(t, base(), "v1")
	e.start(t)
	e.waitState(t, "v1", api.StateDone, 30*time.Second)
	syncer := []byte(`{"auths":{"merged-by-the-syncer":{}}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, pullSecret), syncer, 0o600))
	e.publish(t, base().File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600).File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	ann := e.waitState(t, "v2", api.StateDone, 30*time.Second)
	assert.Equal(t, "v2", ann[api.AnnotationCurrent])
	assert.Equal(t, "# v2 mirrors", read(t, e.root, registries))
	assert.Equal(t, string(syncer), read(t, e.root, pullSecret), "the syncer's file is kept")
	ev := e.waitEvent(t, agent.EventApplied)
	var msgs []string
	for _, ev := range e.events(t, agent.EventApplied) {
		msgs = append(msgs, ev.Message)
	}
	assert.Contains(t, strings.Join(msgs, "\n"), "delegated, not written: "+pullSecret, ev.Message)
	assert.NotContains(t, strings.Join(msgs, "\n"), "auths")

	// The syncer writes again: not drift.
	require.NoError(t, os.WriteFile(filepath.Join(e.root, pullSecret), []byte(`{"auths":{"again":{}}}`), 0o600))
	time.Sleep(2 * time.Second)
	assert.Empty(t, e.annotations(t)[api.AnnotationDrift])
	assert.Empty(t, e.events(t, agent.EventDrift))
}

// A recorded file changed by hand: reported (annotation, Warning Event, metric) with --drift=report.
func TestAgentReportsDrift(t *testing.T) {
	e := newAgentEnv(t, false)
	e.publish(t, base(), "v1")
	e.start(t)
	e.waitState(t, "v1", api.StateDone, 30*time.Second)
	// No refresh ran (the record is at v1): the last success comes from the record.
	fi, err := os.Stat(filepath.Join(e.stateDir, "current.json"))
	require.NoError(t, err)
	// The Node shows Done from before the start, so the agent may still be in its start-up recovery
	// (under the node lock) when waitState returns: the metric is set right after it.
	require.True(t, kubetest.WaitFor(context.Background(), 10*time.Second, func() bool {
		return e.metricValue(t, "refresh_agent_last_success_timestamp_seconds") != 0
	}), "the last success never came from the record")
	assert.InDelta(t, float64(fi.ModTime().Unix()), e.metricValue(t, "refresh_agent_last_success_timestamp_seconds"), 1.0)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, registries), []byte("edited by hand"), 0o644))
	ann := e.waitAnnotations(t, "drift reported", 30*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationDrift] != ""
	})
	assert.Equal(t, registries, ann[api.AnnotationDrift])
	assert.Equal(t, api.StateDone, ann[api.AnnotationState])
	ev := e.waitEvent(t, agent.EventDrift)
	assert.Contains(t, ev.Message, registries)
	assert.NotContains(t, ev.Message, "edited by hand", "never contents")
	assert.Equal(t, "edited by hand", read(t, e.root, registries), "report only")
	assert.GreaterOrEqual(t, e.metricValue(t, "refresh_agent_drift_detected_total"), 1.0)
	// Restoring the content clears the annotation; a mode change alone is drift too.
	require.NoError(t, os.WriteFile(filepath.Join(e.root, registries), []byte("# v1 mirrors"), 0o644))
	e.waitAnnotations(t, "drift cleared", 30*time.Second, func(a map[string]string) bool { return a[api.AnnotationDrift] == "" })
	require.NoError(t, os.Chmod(filepath.Join(e.root, registries), 0o600))
	e.waitAnnotations(t, "mode drift", 30*time.Second, func(a map[string]string) bool { return a[api.AnnotationDrift] == registries })
	require.NoError(t, os.Chmod(filepath.Join(e.root, registries), 0o644))
	e.waitAnnotations(t, "drift cleared", 30*time.Second, func(a map[string]string) bool { return a[api.AnnotationDrift] == "" })

	// A refresh's own writes are not drift; after it, its files are watched against the new record.
	e.publish(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	e.waitState(t, "v2", api.StateDone, 30*time.Second)
	time.Sleep(2 * time.Second)
	assert.Empty(t, e.annotations(t)[api.AnnotationDrift], "no drift from the refresh itself")
	require.NoError(t, os.WriteFile(filepath.Join(e.root, registries), []byte("# v1 mirrors"), 0o644))
	e.waitAnnotations(t, "drift against the new record", 30*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationDrift] == registries
	})
}

// With --drift=heal the recorded content is written back through a transaction and the path's unit
// action runs.
func TestAgentHealsDrift(t *testing.T) {
	e := newAgentEnv(t, false)
	mgr := systemdtestManager(t)
	e.publish(t, base(), "v1")
	e.cfg = func(c *agent.Config) { c.Drift = agent.DriftHeal }
	e.start(t)
	e.waitState(t, "v1", api.StateDone, 30*time.Second)
	mgr.ResetMarkers(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, registries), []byte("edited by hand"), 0o600))
	require.True(t, kubetest.WaitFor(context.Background(), 30*time.Second, func() bool {
		return read(t, e.root, registries) == "# v1 mirrors"
	}), "never healed; log:\n%s", e.logText())
	fi, err := os.Stat(filepath.Join(e.root, registries))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	e.waitEvent(t, agent.EventDrift)
	e.waitEvent(t, agent.EventDriftHealed)
	assert.Equal(t, 1, mgr.Reloads(crio), "the path's action ran")
	ann := e.waitAnnotations(t, "drift cleared", 30*time.Second, func(a map[string]string) bool { return a[api.AnnotationDrift] == "" })
	assert.Equal(t, api.StateDone, ann[api.AnnotationState])
	assert.Equal(t, "v1", ann[api.AnnotationCurrent])
}

// The binary as the DaemonSet runs it, without --configmap: a Node without the NodePool label is
// Degraded and untouched; labelled, it reads "<pool>-refresh" and converges; SIGTERM exits cleanly.
func TestAgentBinaryReadsItsPoolsConfigMap(t *testing.T) {
	e := newAgentEnv(t, false)
	e.publishTo(t, api.ConfigMapName("", "workers"), base().File(registries, []byte("# workers mirrors"), 0o644), "w1")
	p := e.runBinary(t, "--metrics-addr", "")

	ann := e.waitAnnotations(t, "no NodePool label", 30*time.Second, func(a map[string]string) bool {
		return a[api.AnnotationState] == api.StateDegraded
	})
	assert.Equal(t, agent.ReasonNoNodePool, ann[api.AnnotationReason])
	assert.Equal(t, "# v1 mirrors", read(t, e.root, registries))

	e.patchNode(t, `{"metadata":{"labels":{"`+api.LabelNodePool+`":"workers"}}}`)
	e.waitState(t, "w1", api.StateDone, 30*time.Second)
	assert.Equal(t, "# workers mirrors", read(t, e.root, registries))

	require.NoError(t, p.terminate(t, e.logText), "clean exit")
}
