package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// plainNode is a node root at base(), recorded as v1, with no unit manager.
func plainNode(t *testing.T) (apply.Node, string) {
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	recordBase(t, dir)
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	return apply.Node{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: actions.NoUnits{}}, dir
}

func mount(t *testing.T, args ...string) {
	out, err := exec.Command("mount", args...).CombinedOutput()
	require.NoError(t, err, "mount %v: %s", args, out)
}

func TestFaultDBusLostMidRefresh(t *testing.T) {
	systemdtest.Require(t)
	mgr := systemdtest.Another(t, "dbus-lost")
	require.NoError(t, mgr.InstallStandIn(crio, mgr.SlowReload(crio, 3*time.Second)))
	n, dir := plainNode(t)
	socket := mgr.Socket()
	units := &actions.LazyUnits{Connect: func() (actions.Units, error) { return actions.DialSystemd(context.Background(), socket) }}
	t.Cleanup(units.Close)
	n.Units = units
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)

	go func() { time.Sleep(time.Second); _ = mgr.Kill() }() // during crio's slow reload
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: base().File(registries, []byte("v2 mirrors"), 0o644).JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, apply.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack)
	assert.Contains(t, res.Reason, "D-Bus connection to systemd lost")
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "rolled back")

	// A new manager comes up: the next attempt reconnects and succeeds.
	mgr = systemdtest.Restart(t, mgr)
	require.NoError(t, mgr.InstallStandIn(crio, mgr.MarkerReload(crio)))
	res, err = apply.Run(context.Background(), n, apply.Request{Desired: base().File(registries, []byte("v2 mirrors"), 0o644).JSON(), Hash: "v2"})
	require.NoError(t, err)
	require.Equal(t, apply.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, 1, mgr.Reloads(crio))
}

func TestFaultReadOnlyTargetDirectory(t *testing.T) {
	systemdtest.Require(t) // runs in the private mount namespace
	n, dir := plainNode(t)
	kubelet := filepath.Join(dir, "var/lib/kubelet")
	mount(t, "--bind", kubelet, kubelet)
	mount(t, "-o", "remount,bind,ro", kubelet)
	t.Cleanup(func() { _ = exec.Command("umount", kubelet).Run() })
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	// registries.conf (staged first) is writable; the pull secret's directory is not.
	des := base().File(registries, []byte("v2 mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, apply.OutcomeFailed, res.Outcome)
	assert.Contains(t, res.Reason, pullSecret)
	assert.Contains(t, res.Reason, "read-only file system")
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed, no temp file left")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
}

func TestFaultFullTargetDirectory(t *testing.T) {
	systemdtest.Require(t)
	n, dir := plainNode(t)
	full := filepath.Join(dir, "etc/containers/registries.d")
	require.NoError(t, os.MkdirAll(full, 0o755))
	mount(t, "-t", "tmpfs", "-o", "size=16k", "tmpfs", full)
	t.Cleanup(func() { _ = exec.Command("umount", full).Run() })
	require.NoError(t, os.WriteFile(filepath.Join(full, "a.yaml"), []byte("old a"), 0o644))
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	des := base().File(registries, []byte("v2 mirrors"), 0o644).
		File("/etc/containers/registries.d/a.yaml", []byte("new a"), 0o644).
		File("/etc/containers/registries.d/b.yaml", []byte(strings.Repeat("b", 64<<10)), 0o644)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, apply.OutcomeFailed, res.Outcome)
	assert.Contains(t, res.Reason, "no space left on device")
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed, the partial temp files are gone")
}
