package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// plainHost is a node root at base(), recorded as v1, with no unit manager.
func plainHost(t *testing.T) (apply.Host, string) {
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	recordBase(t, dir)
	return hostAt(t, dir, actions.NoUnits{}, nil), dir
}

func mount(t *testing.T, args ...string) {
	out, err := exec.Command("mount", args...).CombinedOutput()
	require.NoError(t, err, "mount %v: %s", args, out)
}

func TestFaultDBusLostMidRefresh(t *testing.T) {
	systemdtest.Require(t)
	mgr := systemdtest.Another(t, "dbus-lost")
	require.NoError(t, mgr.InstallStandIn(crio, mgr.SlowReload(crio, 3*time.Second)))
	n, dir := plainHost(t)
	socket := mgr.Socket()
	units := &actions.LazyUnits{Connect: func() (actions.Units, error) { return actions.DialSystemd(context.Background(), socket) }}
	t.Cleanup(units.Close)
	n.Units = units
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)

	go func() { time.Sleep(time.Second); _ = mgr.Kill() }() // during crio's slow reload
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.Contains(t, res.Reason, "D-Bus connection to systemd lost")
	// The files are back, but crio cannot be reloaded on them while the manager is gone: the rollback
	// is incomplete, and kept.
	assert.False(t, res.RolledBack)
	assert.True(t, res.RollbackIncomplete)
	assert.Equal(t, "# v1 mirrors", readMaybe(dir, registries))
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	requireJournal(t, n.StateDir, true)

	// A new manager comes up: the next attempt reconnects, completes the rollback (crio reloaded on
	// the old content), then applies.
	mgr = systemdtest.Restart(t, mgr)
	require.NoError(t, mgr.InstallStandIn(crio, mgr.MarkerReload(crio)))
	res, err = apply.Run(context.Background(), n, apply.Request{Desired: base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), Hash: "v2"})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, 2, mgr.Reloads(crio), "once to finish the rollback, once for v2")
	assert.NotEqual(t, before, func() string { h, _ := fixture.TreeHash(dir); return h }())
}

func TestFaultReadOnlyTargetDirectory(t *testing.T) {
	systemdtest.Require(t) // runs in the private mount namespace
	n, dir := plainHost(t)
	kubelet := filepath.Join(dir, "var/lib/kubelet")
	mount(t, "--bind", kubelet, kubelet)
	mount(t, "-o", "remount,bind,ro", kubelet)
	t.Cleanup(func() { _ = exec.Command("umount", kubelet).Run() })
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	// registries.conf (staged first) is writable; the pull secret's directory is not.
	des := base().File(registries, []byte("# v2 mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600)
	// The dry run sees the read-only mount as the write would (issue 27 item 7, adversary F5): a
	// refusal naming the path, the same in both (it used to be a failure half way, exit 1).
	dry, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2", DryRun: true})
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.Contains(t, res.Reason, pullSecret)
	assert.Contains(t, res.Reason, "read-only mount")
	assert.Equal(t, dry.Reason, res.Reason)
	assert.Equal(t, dry.Outcome, res.Outcome)
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed, no temp file left")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
}

func TestFaultFullTargetDirectory(t *testing.T) {
	systemdtest.Require(t)
	n, dir := plainHost(t)
	full := filepath.Join(dir, "etc/containers/registries.d")
	require.NoError(t, os.MkdirAll(full, 0o755))
	mount(t, "-t", "tmpfs", "-o", "size=16k", "tmpfs", full)
	t.Cleanup(func() { _ = exec.Command("umount", full).Run() })
	require.NoError(t, os.WriteFile(filepath.Join(full, "a.yaml"), []byte("old a"), 0o644))
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	des := base().File(registries, []byte("# v2 mirrors"), 0o644).
		File("/etc/containers/registries.d/a.yaml", []byte("new a"), 0o644).
		File("/etc/containers/registries.d/b.yaml", []byte(strings.Repeat("b", 64<<10)), 0o644)
	// The space check sees it first (the dry run's and the real run's one verdict): the files do not
	// fit in the 16k left, and nothing is written, not even a temp.
	dry, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2", DryRun: true})
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.Contains(t, res.Reason, "not enough free space for the transaction: the filesystem of /etc/containers/registries.d")
	assert.Equal(t, dry.Reason, res.Reason, "the dry run says what the real run does")
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed, the partial temp files are gone")
}

// funcUnits runs every action through a function (faults injected in process).
type funcUnits func(ctx context.Context, a plan.UnitAction) error

func (f funcUnits) Run(ctx context.Context, a plan.UnitAction) error { return f(ctx, a) }
func (funcUnits) Close()                                             {}

func requireJournal(t *testing.T, stateDir string, present bool) {
	t.Helper()
	_, err := os.Stat(filepath.Join(stateDir, "journal.json"))
	if present {
		require.NoError(t, err, "journal kept")
	} else {
		require.True(t, os.IsNotExist(err), "journal removed")
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

// reloadFailingOn is an ExecReload that fails while the node's file holds text (a bad config) and
// otherwise records the reload.
func reloadFailingOn(mgr *systemdtest.Manager, dir, file, text string) string {
	return fmt.Sprintf("/bin/sh -c '! grep -q %s %s && date +%%%%s%%%%N >> %s/%s.reload'", text, filepath.Join(dir, file), mgr.MarkerDir, crio)
}

// Double fault: the reload fails, and the directory goes read-only (remounted) before the restore.
// The result says the rollback is incomplete and which file is still new; every later refresh first
// retries it and refuses to start; once the directory is writable again recovery restores the
// original inode, and the tree is byte-identical.
func TestFaultReadOnlyBeforeRestore(t *testing.T) {
	systemdtest.Require(t) // runs in the private mount namespace
	n, dir := plainHost(t)
	containers := filepath.Join(dir, "etc/containers")
	origIno := inode(t, filepath.Join(dir, registries))
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	faulted, mounted, reloads := false, false, 0
	t.Cleanup(func() {
		if mounted {
			_ = exec.Command("umount", containers).Run()
		}
	})
	n.Units = funcUnits(func(_ context.Context, a plan.UnitAction) error {
		if !faulted {
			mount(t, "--bind", containers, containers)
			mount(t, "-o", "remount,bind,ro", containers)
			faulted, mounted = true, true
			return fmt.Errorf("%s %s: job result \"failed\"", a.Action, a.Unit)
		}
		reloads++
		return nil
	})
	des := base().File(registries, []byte("# v2 mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.False(t, res.RolledBack)
	assert.True(t, res.RollbackIncomplete)
	assert.Contains(t, res.Reason, "restoring "+registries)
	assert.Contains(t, res.Reason, "read-only file system")
	assert.Equal(t, "# v2 mirrors", readMaybe(dir, registries), "still new, and the result says so")
	assert.Equal(t, `{"auths":{"v1":{}}}`, readMaybe(dir, pullSecret), "the writable one is back")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	requireJournal(t, n.StateDir, true)

	_, err = apply.Run(context.Background(), n, apply.Request{Desired: base().File(registries, []byte("# v3"), 0o644).JSON(), Hash: "v3"})
	require.ErrorIs(t, err, apply.ErrRollbackPending)
	assert.Contains(t, err.Error(), registries)
	assert.Equal(t, "# v2 mirrors", readMaybe(dir, registries))
	assert.Zero(t, reloads, "no unit runs on half-restored files")

	require.NoError(t, exec.Command("umount", containers).Run())
	mounted = false
	rec, err := apply.Recover(context.Background(), n)
	require.NoError(t, err)
	assert.True(t, rec.RolledBack)
	assert.Equal(t, 1, reloads, "crio reloaded on the restored content")
	assert.Equal(t, origIno, inode(t, filepath.Join(dir, registries)), "the original inode is back")
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "every original byte-identical, nothing left behind")
}

// Double fault: crio's reload fails on the new content and again on the restored one (a real
// systemd user manager). The files are back, but the rollback stays incomplete until the unit can
// be reloaded.
func TestFaultReloadFailsAgainAfterRestore(t *testing.T) {
	mgr := systemdtest.Require(t)
	mgr.StandIn(t, crio, true)
	n, dir := plainHost(t)
	n.Units = userSystemd(t)
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.False(t, res.RolledBack)
	assert.True(t, res.RollbackIncomplete)
	assert.Contains(t, res.Reason, "files restored, but the unit actions on them failed: Reload crio.service")
	assert.Equal(t, "# v1 mirrors", readMaybe(dir, registries))
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	requireJournal(t, n.StateDir, true)

	_, err = apply.Recover(context.Background(), n)
	require.ErrorIs(t, err, apply.ErrRollbackPending)
	requireJournal(t, n.StateDir, true)

	mgr.StandIn(t, crio, false)
	mgr.ResetMarkers(t)
	rec, err := apply.Recover(context.Background(), n)
	require.NoError(t, err)
	assert.True(t, rec.RolledBack)
	assert.Equal(t, 1, mgr.Reloads(crio))
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "every original byte-identical, nothing left behind")
}

// `refresh-agent apply` handles SIGTERM: a refresh waiting for its reload stops waiting and rolls
// back cleanly (under its own deadline), and the process exits with the result rather than dying.
func TestApplySIGTERMRollsBackCleanly(t *testing.T) {
	mgr := systemdtest.Require(t)
	require.NoError(t, mgr.InstallStandIn(crio, mgr.SlowReload(crio, 2*time.Second)))
	t.Cleanup(func() { mgr.StandIn(t, crio, false) })
	bin := agentBinary(t)
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	recordBase(t, dir)
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "v2.ign")
	require.NoError(t, os.WriteFile(f, base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), 0o644))

	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "apply", "--root", dir, "--desired", f, "--hash", "v2", "--systemd", "user", "--output", "json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool {
		state, _ := mgr.Systemctl("show", "-p", "ActiveState", "--value", crio)
		return state == "reloading"
	}, time.Minute, 20*time.Millisecond, "crio's reload under way")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	require.Equal(t, 1, ee.ExitCode(), "exited with the failed result, not killed by the signal; stderr: %s", stderr.String())
	var got struct {
		Outcome            string
		RolledBack         bool
		RollbackIncomplete bool
		Reason             string
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	assert.Equal(t, "failed", got.Outcome)
	assert.True(t, got.RolledBack, got.Reason)
	assert.False(t, got.RollbackIncomplete)
	after, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "every original back, nothing left behind")
}
