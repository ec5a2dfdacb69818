package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/critest"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/verify"
)

// breakingCrio makes the stand-in crio's reload break what a real crio would break on a
// registries.conf it cannot use: when the file says "broken", the reload leaves a marker that the
// node's health endpoint and the stand-in CRI read (unhealthy, Version failing); a reload on good
// content clears it. Returns the marker's path.
func breakingCrio(t *testing.T, n *sdHost) string {
	marker := filepath.Join(t.TempDir(), "crio-broken")
	conf := filepath.Join(n.dir, registries)
	n.mgr.StandInReload(t, crio, "/bin/sh -c 'if grep -q broken "+conf+"; then touch "+marker+"; else rm -f "+marker+"; fi; echo x >> "+filepath.Join(n.mgr.MarkerDir, crio+".reload")+"'")
	return marker
}

// health serves 200 while marker does not exist, 503 once it does.
func health(t *testing.T, marker string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := os.Stat(marker); err == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL + "/healthz"
}

func TestVerifiedRefreshRollsBackWhenAProbeGoesBadAfterTheReload(t *testing.T) {
	n := newSystemdNode(t, false)
	marker := breakingCrio(t, n)
	url := health(t, marker)
	pol, err := allowlist.ParsePolicy([]byte(`{"paths":[{"path":"` + registries + `","action":"Reload","services":["crio.service"],"probe":{"http":"` + url + `"}}]}`))
	require.NoError(t, err)
	n.Policy = pol
	n.Verify = verify.Options{Window: 2 * time.Second}

	res := n.apply(t, base().File(registries, []byte("# v2 broken mirrors"), 0o644), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Contains(t, res.Reason, "verification failed: probe "+url)
	assert.Contains(t, res.Reason, "answered 503, expected 200")
	assert.Equal(t, "# v1 mirrors", readMaybe(n.dir, registries), "the old content is back")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	assert.NoFileExists(t, marker, "crio reloaded again on the old content: healthy")
	assert.Equal(t, 2, n.mgr.Reloads(crio), "reloaded onto v2, then back onto v1")

	// Good content passes the same checks and is applied.
	res = n.apply(t, base().File(registries, []byte("# v3 mirrors"), 0o644), "v3")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, "v3", apply.CurrentHash(n.StateDir))
}

func TestVerifiedRefreshRollsBackWhenCRIStopsAnswering(t *testing.T) {
	n := newSystemdNode(t, false)
	marker := breakingCrio(t, n)
	rt := critest.Start(t)
	rt.FailVersionIf = marker
	pods, err := actions.DialCRI(rt.Socket, "")
	require.NoError(t, err)
	t.Cleanup(pods.Close)
	n.Pods = pods
	n.Verify = verify.Options{Window: 2 * time.Second, CRISocket: rt.Socket}

	// The dry run shows the check it will make.
	dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: base().File(registries, []byte("# v2 broken mirrors"), 0o644).JSON(), Hash: "v2", DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.Checks, 1)
	assert.Equal(t, verify.Check{Name: "crio", Kind: verify.KindCRI, Target: rt.Socket, For: crio}, dry.Checks[0])

	res := n.apply(t, base().File(registries, []byte("# v2 broken mirrors"), 0o644), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Contains(t, res.Reason, "verification failed: crio: not healthy within 2s after the actions: CRI Version")
	assert.Equal(t, "# v1 mirrors", readMaybe(n.dir, registries))
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	assert.NoError(t, pods.Version(context.Background()), "the runtime answers again on the old content")
}

func TestVerifiedRefreshDoesNotBlameWhatWasBrokenBefore(t *testing.T) {
	n := newSystemdNode(t, false)
	marker := breakingCrio(t, n)
	require.NoError(t, os.WriteFile(marker, nil, 0o644)) // unhealthy before the refresh
	url := health(t, marker)
	pol, err := allowlist.ParsePolicy([]byte(`{"paths":[{"path":"` + registries + `","action":"Reload","services":["crio.service"],"probe":{"http":"` + url + `"}}]}`))
	require.NoError(t, err)
	n.Policy = pol
	n.Verify = verify.Options{Window: 2 * time.Second}
	// A node broken before is not made worse by a good refresh, and the refresh may be its fix.
	res := n.apply(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.NoFileExists(t, marker, "the reload on good content healed it")
}

func setReady(t *testing.T, e *agentEnv, status corev1.ConditionStatus, reason string) {
	ctx := context.Background()
	// The agent annotates the same Node meanwhile (its state as the refresh goes): a conflict is
	// read again, as a kubelet's status update would be.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason, Message: "set by the test",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = e.admin.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	require.NoError(t, err)
}

func TestAgentRollsBackWhenTheNodeTurnsNotReadyDuringTheWindow(t *testing.T) {
	e := newAgentEnv(t, false)
	e.agentHost.Verify = verify.Options{Window: 8 * time.Second}
	setReady(t, e, corev1.ConditionTrue, "KubeletReady")
	e.publish(t, base(), "v1")
	e.start(t)
	e.waitState(t, "v1", api.StateDone, 30*time.Second)

	e.publish(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	require.True(t, kubetest.WaitFor(context.Background(), 20*time.Second, func() bool {
		return readMaybe(e.root, registries) == "# v2 mirrors" // committed: the window follows crio's reload
	}), "v2 never written; agent log:\n%s", e.logText())
	setReady(t, e, corev1.ConditionFalse, "KubeletNotReady")
	ann := e.waitState(t, "v2", api.StateDegraded, 30*time.Second)
	assert.Contains(t, ann[api.AnnotationReason], "verification failed: node Ready: Ready is False (KubeletNotReady")
	assert.Contains(t, ann[api.AnnotationReason], "rolled back")
	assert.Equal(t, "# v1 mirrors", readMaybe(e.root, registries), "the old content is back")
	assert.Equal(t, "v1", apply.CurrentHash(e.stateDir))

	// Ready again: new content is applied and verified.
	setReady(t, e, corev1.ConditionTrue, "KubeletReady")
	e.publish(t, base().File(registries, []byte("# v3 mirrors"), 0o644), "v3")
	e.waitState(t, "v3", api.StateDone, 60*time.Second)
	assert.Equal(t, "# v3 mirrors", readMaybe(e.root, registries))
}
