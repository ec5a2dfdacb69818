package actions_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/critest"
)

const proxy = "kube-system/kube-apiserver-proxy"

func dial(t *testing.T, rt *critest.Runtime, node string) *actions.CRI {
	t.Helper()
	c, err := actions.DialCRI(rt.Socket, node)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	c.Poll = 10 * time.Millisecond
	return c
}

func TestRestartStaticPod(t *testing.T) {
	for _, node := range []string{"node-1", ""} { // by exact name, and by static-pod annotation
		t.Run("node="+node, func(t *testing.T) {
			rt := critest.Start(t)
			old := rt.AddPod("kube-system", "kube-apiserver-proxy-node-1", true)
			rt.AddPod("kube-system", "kube-apiserver-proxy-other", false) // not static: never touched
			rt.AddPod("default", "kube-apiserver-proxy-node-1", false)    // another namespace
			require.NoError(t, dial(t, rt, node).RestartPod(context.Background(), proxy))
			assert.Equal(t, 1, rt.Stops("kube-apiserver-proxy-node-1"))
			ready := rt.Ready("kube-apiserver-proxy-node-1")
			require.Len(t, ready, 2, "the new sandbox, and the one in namespace default")
			assert.NotContains(t, ready, old)
			assert.Equal(t, 0, rt.Stops("kube-apiserver-proxy-other"))
		})
	}
}

func TestRestartPodNotRunningIsNothingToDo(t *testing.T) {
	rt := critest.Start(t)
	require.NoError(t, dial(t, rt, "node-1").RestartPod(context.Background(), proxy))
	assert.Equal(t, 0, rt.Stops("kube-apiserver-proxy-node-1"))
}

func TestRestartPodFailures(t *testing.T) {
	rt := critest.Start(t)
	rt.AddPod("kube-system", "kube-apiserver-proxy-node-1", true)
	rt.NoRecreate = true
	c := dial(t, rt, "node-1")
	c.Timeout = 300 * time.Millisecond
	err := c.RestartPod(context.Background(), proxy)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no new sandbox ready")

	rt2 := critest.Start(t)
	rt2.AddPod("kube-system", "kube-apiserver-proxy-node-1", true)
	rt2.FailStop = true
	err = dial(t, rt2, "node-1").RestartPod(context.Background(), proxy)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopping sandbox")

	err = dial(t, rt2, "node-1").RestartPod(context.Background(), "no-slash")
	assert.ErrorContains(t, err, "not namespace/name")
}

func TestRunnerDispatches(t *testing.T) {
	rt := critest.Start(t)
	rt.AddPod("kube-system", "kube-apiserver-proxy-node-1", true)
	r := actions.Runner{Units: actions.NoUnits{}, Pods: dial(t, rt, "node-1")}
	_, err := actions.RunAll(context.Background(), r, []plan.UnitAction{
		{Unit: "crio.service", Action: "Reload"}, {Pod: proxy, Action: "Restart"}})
	require.NoError(t, err)
	assert.Equal(t, 1, rt.Stops("kube-apiserver-proxy-node-1"))
	// Without a CRI, pod actions are skipped.
	require.NoError(t, actions.Runner{}.Run(context.Background(), plan.UnitAction{Pod: proxy, Action: "Restart"}))
}

// Without the node's name, an unmarked sandbox is taken only when it is the only candidate: never a
// guess between several pods.
func TestRestartPodWithoutNodeName(t *testing.T) {
	rt := critest.Start(t)
	rt.AddPod("kube-system", "kube-apiserver-proxy-n1", false)
	require.NoError(t, dial(t, rt, "").RestartPod(context.Background(), proxy))
	assert.Equal(t, 1, rt.Stops("kube-apiserver-proxy-n1"))

	rt2 := critest.Start(t)
	rt2.AddPod("kube-system", "kube-apiserver-proxy-a", false)
	rt2.AddPod("kube-system", "kube-apiserver-proxy-b", false)
	assert.ErrorContains(t, dial(t, rt2, "").RestartPod(context.Background(), proxy), "set --node-name")
	assert.Equal(t, 0, rt2.Stops("kube-apiserver-proxy-a")+rt2.Stops("kube-apiserver-proxy-b"))
}
