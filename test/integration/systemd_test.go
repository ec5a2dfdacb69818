package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

const (
	registries = "/etc/containers/registries.conf"
	pullSecret = "/var/lib/kubelet/config.json"
	trust      = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"
	crio       = "crio.service"
	kubelet    = "kubelet.service"
	updateCA   = "coreos-update-ca-trust.service"
	unrelated  = "unrelated.service"
)

func base() *fixture.Config {
	return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(registries, []byte("# v1 mirrors"), 0o644).
		File(pullSecret, []byte(`{"auths":{"v1":{}}}`), 0o600).
		File(trust, []byte("v1 CA"), 0o644).
		SSHKeys("ssh-ed25519 AAAA one")
}

type sdHost struct {
	apply.Host
	dir string
	mgr *systemdtest.Manager
}

// newSystemdNode starts stand-in units (crio's reload fails when failCrioReload) and returns a node
// root at base(), with actions going to the real user manager over D-Bus.
func newSystemdNode(t *testing.T, failCrioReload bool) *sdHost {
	mgr := systemdtest.Require(t)
	for _, u := range []string{kubelet, updateCA, unrelated} {
		mgr.StandIn(t, u, false)
	}
	mgr.StandIn(t, crio, failCrioReload)
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	n := &sdHost{Host: hostAt(t, dir, userSystemd(t), nil), dir: dir, mgr: mgr}
	empty, err := diff.Decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: base().JSON(), Hash: "v1", Current: empty})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	mgr.ResetMarkers(t)
	return n
}

func (n *sdHost) pids(t *testing.T) map[string]int {
	out := map[string]int{}
	for _, u := range []string{crio, kubelet, updateCA, unrelated} {
		out[u] = n.mgr.MainPID(t, u)
		require.NotZero(t, out[u], u)
	}
	return out
}

func (n *sdHost) apply(t *testing.T, c *fixture.Config, hash string) *apply.Result {
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: c.JSON(), Hash: hash})
	require.NoError(t, err)
	return res
}

func TestRegistriesChangeReloadsCrioOnly(t *testing.T) {
	n := newSystemdNode(t, false)
	before := n.pids(t)
	res := n.apply(t, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, 1, n.mgr.Reloads(crio), "crio reloaded once")
	assert.Equal(t, before, n.pids(t), "a reload keeps every MainPID, and no other unit was touched")
	assert.Empty(t, n.mgr.Starts())
}

func TestTrustBundleRestartsUpdateCAThenCrio(t *testing.T) {
	n := newSystemdNode(t, false)
	before := n.pids(t)
	res := n.apply(t, base().File(trust, []byte("v2 CA"), 0o644).File(registries, []byte("# v2"), 0o644), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	after := n.pids(t)
	assert.NotEqual(t, before[updateCA], after[updateCA])
	assert.NotEqual(t, before[crio], after[crio])
	assert.Equal(t, before[kubelet], after[kubelet])
	assert.Equal(t, before[unrelated], after[unrelated])
	assert.Equal(t, []string{updateCA, crio}, n.mgr.Starts(), "restarted in that order, crio once")
	assert.Zero(t, n.mgr.Reloads(crio), "restart supersedes the reload")
}

func TestPullSecretChangeTouchesNoUnit(t *testing.T) {
	n := newSystemdNode(t, false)
	before := n.pids(t)
	res := n.apply(t, base().File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600).SSHKeys("ssh-ed25519 BBBB two"), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, before, n.pids(t))
	assert.Zero(t, n.mgr.Reloads(crio))
	assert.Empty(t, n.mgr.Starts())
	b, err := os.ReadFile(filepath.Join(n.dir, pullSecret))
	require.NoError(t, err)
	assert.Equal(t, `{"auths":{"v2":{}}}`, string(b))
}

func TestRefusedPayloadTouchesNothing(t *testing.T) {
	n := newSystemdNode(t, false)
	before := n.pids(t)
	tree, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	m := fixture.DefaultMachine()
	m.FIPS = true
	res := n.apply(t, base().EmbedMachine(m).File(registries, []byte("# v2"), 0o644), "fips")
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	after, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	assert.Equal(t, tree, after, "root tree byte-identical")
	assert.Equal(t, before, n.pids(t))
	assert.Zero(t, n.mgr.Reloads(crio))
}

func TestFailedReloadRollsBack(t *testing.T) {
	n := newSystemdNode(t, false)
	// crio's reload fails on the new registries (as on a bad config), and works again on the old.
	n.mgr.StandInReload(t, crio, reloadFailingOn(n.mgr, n.dir, registries, "v2"))
	n.mgr.ResetMarkers(t)
	before := n.pids(t)
	tree, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	res := n.apply(t, base().File(registries, []byte("# v2 mirrors"), 0o644).File(pullSecret, []byte("v2"), 0o600), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.False(t, res.RollbackIncomplete)
	assert.Equal(t, 1, n.mgr.Reloads(crio), "reloaded again on the restored content")
	assert.Contains(t, res.Reason, "Reload crio.service")
	assert.Contains(t, res.Reason, `job result "failed"`)
	after, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	assert.Equal(t, tree, after, "every file restored")
	assert.Equal(t, before[unrelated], n.pids(t)[unrelated])
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
}

func systemdtestManager(t *testing.T) *systemdtest.Manager { return systemdtest.Require(t) }
