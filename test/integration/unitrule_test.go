package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

const myapp = "myapp.service"

// A NodeDisruptionPolicy unit rule as a platform engineer writes it.
const unitRulePolicy = `nodeDisruptionPolicy:
  units:
  - name: myapp.service
    actions:
    - type: Restart
      restart:
        serviceName: myapp.service
`

func dropinPayload(contents string) *fixture.Config {
	c := fixture.Ignition("3.2.0")
	c.Systemd.Units = []types.Unit{{Name: myapp, Dropins: []types.Dropin{{Name: "10-v.conf", Contents: &contents}}}}
	return c
}

// unitHost is a node root whose /etc/systemd/system is the real user manager's unit directory (a
// bind mount in the test's private mount namespace), so what the agent writes there is what the
// manager loads.
func unitHost(t *testing.T) (apply.Host, string, *systemdtest.Manager) {
	mgr := systemdtest.Require(t)
	mgr.StandIn(t, myapp, false)
	dir := unitRoot(t, mgr, func() {
		_ = os.RemoveAll(filepath.Join(mgr.UnitDir, myapp+".d"))
		_, _ = mgr.Systemctl("daemon-reload")
	})
	// The node's current state: the dropin at v1, loaded.
	require.NoError(t, os.MkdirAll(filepath.Join(mgr.UnitDir, myapp+".d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, myapp+".d", "10-v.conf"), []byte("[Service]\nEnvironment=V=1\n"), 0o644))
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	_, err = mgr.Systemctl("restart", myapp)
	require.NoError(t, err)
	pol, err := allowlist.ParsePolicy([]byte(unitRulePolicy))
	require.NoError(t, err)
	return hostAt(t, dir, userSystemd(t), pol), mgr.UnitDir, mgr
}

// unitRoot is a node root whose /etc/systemd/system is mgr's unit directory (a bind mount in the
// test's private mount namespace); cleanup runs after the unmount.
func unitRoot(t *testing.T, mgr *systemdtest.Manager, cleanup func()) string {
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	unitDir := filepath.Join(dir, "etc/systemd/system")
	require.NoError(t, os.MkdirAll(unitDir, 0o755))
	require.NoError(t, syscall.Mount(mgr.UnitDir, unitDir, "", syscall.MS_BIND, ""))
	t.Cleanup(func() {
		_ = syscall.Unmount(unitDir, syscall.MNT_DETACH)
		cleanup()
	})
	return dir
}

func environment(t *testing.T, mgr *systemdtest.Manager) string {
	out, err := mgr.Systemctl("show", "-p", "Environment", "--value", myapp)
	require.NoError(t, err)
	return out
}

func TestDropinChangeDaemonReloadsAndRestarts(t *testing.T) {
	n, unitDir, mgr := unitHost(t)
	before := mgr.MainPID(t, myapp)
	require.Contains(t, environment(t, mgr), "V=1")
	cur, err := diff.Decode(dropinPayload("[Service]\nEnvironment=V=1\n").JSON())
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: dropinPayload("[Service]\nEnvironment=V=2\n").JSON(), Hash: "v2", Current: cur})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
	assert.Equal(t, []plan.UnitAction{{Action: allowlist.ActionDaemonReload}, {Unit: myapp, Action: allowlist.ActionRestart}}, res.Actions)
	b, err := os.ReadFile(filepath.Join(unitDir, myapp+".d", "10-v.conf"))
	require.NoError(t, err)
	assert.Equal(t, "[Service]\nEnvironment=V=2\n", string(b), "the dropin is written")
	assert.Contains(t, environment(t, mgr), "V=2", "the manager loaded it (daemon-reload)")
	after := mgr.MainPID(t, myapp)
	assert.NotZero(t, after)
	assert.NotEqual(t, before, after, "the unit was restarted")
}

func TestFailingRestartRestoresTheDropinAndReloadsAgain(t *testing.T) {
	n, unitDir, mgr := unitHost(t)
	cur, err := diff.Decode(dropinPayload("[Service]\nEnvironment=V=1\n").JSON())
	require.NoError(t, err)
	// The new dropin makes every start fail: the restart fails, and the rollback must put the old
	// dropin back, reload the manager again and restart the unit on it.
	bad := "[Service]\nEnvironment=V=3\nExecStartPre=/bin/false\n"
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: dropinPayload(bad).JSON(), Hash: "bad", Current: cur})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Contains(t, res.Reason, "Restart "+myapp)
	b, err := os.ReadFile(filepath.Join(unitDir, myapp+".d", "10-v.conf"))
	require.NoError(t, err)
	assert.Equal(t, "[Service]\nEnvironment=V=1\n", string(b), "the dropin is restored")
	env := environment(t, mgr)
	assert.Contains(t, env, "V=1", "the manager reloaded the restored dropin")
	assert.False(t, strings.Contains(env, "V=3"))
	state, err := mgr.Systemctl("is-active", myapp)
	require.NoError(t, err)
	assert.Equal(t, "active", state, "restarted on the restored dropin")
}
