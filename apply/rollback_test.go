package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

func (n *node) journalPhase(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(n.StateDir, "journal.json"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	require.NoError(t, err)
	var j struct{ Phase string }
	require.NoError(t, json.Unmarshal(data, &j))
	return j.Phase
}

func (n *node) treeHash(t *testing.T) string {
	t.Helper()
	h, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	return h
}

// Double fault: the reload fails on the new content and again on the restored old content. The
// files are back, but the rollback is not complete: it says so, keeps the journal, refuses the next
// refresh, and finishes once the unit recovers.
func TestRollbackIncompleteWhenTheActionsFailAgain(t *testing.T) {
	n := newNode(t)
	before := n.treeHash(t)
	n.units.fail["crio.service"] = -1
	res := n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.False(t, res.RolledBack, "not rolled back while the units never ran on the restored files")
	assert.True(t, res.RollbackIncomplete)
	assert.Contains(t, res.Reason, "rollback incomplete")
	assert.Contains(t, res.Reason, "files restored, but the unit actions on them failed: Reload crio.service")
	assert.Equal(t, "# v1 mirrors", n.read(t, registries), "the originals are back")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	assert.Equal(t, "rolledback", n.journalPhase(t), "journal kept")

	// The next refresh first retries the rollback; while it cannot complete, nothing else starts.
	n.units.ran = nil
	_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.ErrorIs(t, err, apply.ErrRollbackPending)
	assert.Contains(t, err.Error(), "crio.service")
	// (A rollback runs it only if the manager has the unit: IfLoaded.)
	assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: "Reload", IfLoaded: true}}, n.units.ran, "only the rollback's action was retried")
	assert.Equal(t, "# v1 mirrors", n.read(t, registries))

	n.units.fail["crio.service"] = 0
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	assert.True(t, rec.Found)
	assert.Equal(t, actions.PhaseRolledBack, rec.Phase)
	assert.True(t, rec.RolledBack)
	assert.Equal(t, api.OutcomeFailed, rec.Outcome)
	assert.Empty(t, n.journalPhase(t))
	assert.Equal(t, before, n.treeHash(t), "every original byte-identical, nothing left behind")

	res = n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
}

// Double fault: the restore itself fails (a directory in the way of the restore's temporary name).
// The result never claims a rollback while the file holds the new content.
func TestRollbackIncompleteWhenTheRestoreFails(t *testing.T) {
	n := newNode(t)
	before := n.treeHash(t)
	obstacle := filepath.Join(n.dir, restoreOf("/etc/containers/registries.conf"))
	n.units.hook = func(context.Context, plan.UnitAction) error {
		// Between the commit and the restore.
		require.NoError(t, os.MkdirAll(filepath.Join(obstacle, "x"), 0o755))
		return errors.New("Reload crio.service: job result \"failed\"")
	}
	res := n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.False(t, res.RolledBack)
	assert.True(t, res.RollbackIncomplete)
	assert.Contains(t, res.Reason, "restoring "+registries)
	assert.Equal(t, "# v2 mirrors", n.read(t, registries), "the restore failed, and the result says so")
	assert.Equal(t, `{"auths":{"v1":{}}}`, n.read(t, pullSecret), "the other originals are back")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	assert.Equal(t, "rollingback", n.journalPhase(t))
	assert.Len(t, n.units.ran, 1, "no action runs on half-restored files")

	n.units.hook = nil
	_, err := apply.Recover(context.Background(), n.Host)
	require.ErrorIs(t, err, apply.ErrRollbackPending)
	assert.Contains(t, err.Error(), registries)

	require.NoError(t, os.RemoveAll(obstacle))
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	assert.True(t, rec.RolledBack)
	assert.Equal(t, before, n.treeHash(t), "every original byte-identical, nothing left behind")
	assert.Len(t, n.units.ran, 2, "the action ran again once the originals were back")
}

// The rollback runs under its own context: a caller's context cancelled mid-refresh (SIGTERM, the
// shutdown grace over) fails the forward action but not the rollback's.
func TestRollbackOutlivesTheCallersContext(t *testing.T) {
	n := newNode(t)
	before := n.treeHash(t)
	ctx, cancel := context.WithCancel(context.Background())
	n.units.hook = func(ctx context.Context, a plan.UnitAction) error {
		cancel()
		return ctx.Err()
	}
	res, err := apply.Run(ctx, n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Equal(t, before, n.treeHash(t))
	assert.Len(t, n.units.ran, 2)
}

// With --systemd none no action runs, and every path says they were skipped, the rollback included.
func TestActionsSkippedOnEveryPath(t *testing.T) {
	n := newNode(t)
	n.Units = actions.NoUnits{}
	// The payload cannot be saved (a directory in the way of its temp file, put there after the
	// node checks, which refuse one already there): the commit never happens and the refresh rolls
	// back.
	obstacle := filepath.Join(n.StateDir, "payloads", "."+apply.PayloadHash(v2().JSON())+".tmp")
	p, err := apply.Prepare(context.Background(), n.Host, apply.Request{Desired: v2().JSON()})
	require.NoError(t, err)
	res, err := p.Execute(context.Background(), gateFunc(func() error { return os.MkdirAll(filepath.Join(obstacle, "x"), 0o700) }))
	require.NoError(t, err)
	require.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.True(t, res.ActionsSkipped)
	assert.Zero(t, res.ActionsRun)
	require.NoError(t, os.RemoveAll(obstacle))

	res, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON()})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.True(t, res.ActionsSkipped)
	assert.Zero(t, res.ActionsRun)
	var b strings.Builder
	require.NoError(t, res.WriteText(&b))
	assert.Contains(t, b.String(), "skipped reload crio.service (--systemd none)")
	assert.Contains(t, b.String(), "1 unit actions skipped (--systemd none)")
	assert.NotContains(t, b.String(), "reloaded")
}

func TestActionsRunCounted(t *testing.T) {
	n := newNode(t)
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.False(t, res.ActionsSkipped)
	assert.Equal(t, 1, res.ActionsRun)
	var b strings.Builder
	require.NoError(t, res.WriteText(&b))
	assert.Contains(t, b.String(), "reloaded crio.service")
	assert.Contains(t, b.String(), "1 unit actions, no reboot")
}

// Told to stop before the transaction starts: nothing is written, nothing runs.
func TestCancelledBeforeStartWritesNothing(t *testing.T) {
	n := newNode(t)
	before := n.treeHash(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := apply.Run(ctx, n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.Contains(t, res.Reason, "not started")
	assert.Equal(t, before, n.treeHash(t))
	assert.Empty(t, n.units.ran)
}

// A payload file named like the agent's backup of another is refused whole.
func TestReservedNameRefused(t *testing.T) {
	n := newNode(t)
	before := n.treeHash(t)
	res := n.run(t, v2().File("/etc/containers/registries.d/a.yaml", []byte("a"), 0o644).File("/etc/containers/registries.d/.a.yaml.refresh-agent-backup", []byte("x"), 0o644).JSON(), "v2")
	assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Contains(t, res.Reason, "reserved")
	assert.Equal(t, before, n.treeHash(t))
	assert.Empty(t, n.units.ran)
}

// Removing a file whose directory is gone removes nothing and creates no directory. (This used to
// remove all of core's keys, which is refused since issue 25: core must keep a key or a password.)
func TestRemovalUnderMissingParentCreatesNothing(t *testing.T) {
	n := newNode(t)
	res := n.run(t, v1().File("/etc/containers/registries.d/a.yaml", []byte("a"), 0o644).JSON(), "witha")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	require.NoError(t, os.RemoveAll(filepath.Join(n.dir, "etc/containers/registries.d")))
	res = n.run(t, v1().JSON(), "nokeys")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	_, err := os.Stat(filepath.Join(n.dir, "etc/containers/registries.d"))
	assert.True(t, os.IsNotExist(err), "no parent created for a removal")
	assert.Equal(t, "nokeys", apply.CurrentHash(n.StateDir))
}

// gateFunc is a Gate whose Proceed runs f (and never fails): what happens on the node between the
// checks and the transaction.
type gateFunc func() error

func (g gateFunc) Lost() <-chan struct{}         { return nil }
func (g gateFunc) Proceed(context.Context) error { return g() }

// Adversary r18 d/03: every original back and checked, the unit actions run again on them, and
// only the clean-up's journal write failing (a full disk; here a directory in the way of the
// journal's temp name) was reported as an incomplete rollback. It is rolled back with the clean-up
// pending, and the next recovery finishes it.
func TestRolledBackWithTheCleanupPending(t *testing.T) {
	n := newNode(t)
	before := n.treeHash(t)
	obstacle := filepath.Join(n.StateDir, ".journal.json.tmp")
	calls := 0
	n.units.hook = func(context.Context, plan.UnitAction) error {
		calls++
		if calls == 1 {
			return errors.New("Reload crio.service: job result \"failed\"")
		}
		// The rollback's action again, after the restore: the clean-up is next.
		return os.MkdirAll(filepath.Join(obstacle, "x"), 0o755)
	}
	res := n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.True(t, res.CleanupPending, res.Reason)
	assert.False(t, res.RollbackIncomplete, res.Reason)
	assert.Contains(t, res.Reason, "rolled back, but the clean-up after the rollback failed")
	assert.Equal(t, "# v1 mirrors", n.read(t, registries), "the originals are back")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	assert.NotEmpty(t, n.journalPhase(t), "the journal stays for the clean-up")

	// Adversary r20 b/02: a recovery whose clean-up fails again has not finished: an error
	// (recover exits 1), the clean-up still pending, the journal kept.
	n.units.hook = nil
	rec, err := apply.Recover(context.Background(), n.Host)
	require.Error(t, err)
	assert.True(t, rec.Found && rec.CleanupPending, "%+v", rec)
	assert.NotEmpty(t, n.journalPhase(t), "the journal stays for the clean-up")

	require.NoError(t, os.RemoveAll(obstacle))
	rec, err = apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	assert.True(t, rec.Found)
	assert.Empty(t, n.journalPhase(t))
	assert.Equal(t, before, n.treeHash(t), "every original byte-identical, nothing left behind")
}

// Adversary r20 b/01: a file edited by hand between the commit and the rollback is neither the
// original nor the agent's new file, so the rollback leaves both it and its backup as they are and
// is incomplete. The recovery's report names that backup among the kept side files (it named only
// backups refused as sources), so the operator knows which two files to compare.
func TestAnUnrestorableBackupIsReportedKept(t *testing.T) {
	n := newNode(t)
	n.units.hook = func(context.Context, plan.UnitAction) error {
		require.NoError(t, os.WriteFile(filepath.Join(n.dir, registries), []byte("# an edit by hand"), 0o644))
		return errors.New("Reload crio.service: job result \"failed\"")
	}
	res := n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RollbackIncomplete, res.Reason)
	assert.Equal(t, "# an edit by hand", n.read(t, registries), "the edit is never overwritten")

	n.units.hook = nil
	rec, err := apply.Recover(context.Background(), n.Host)
	require.Error(t, err)
	assert.True(t, rec.RollbackIncomplete, "%+v", rec)
	require.Len(t, rec.KeptSideFiles, 1, "%+v", rec)
	assert.Contains(t, rec.KeptSideFiles[0], "(beside "+registries+")")
	assert.Contains(t, rec.KeptSideFiles[0], "not restored")
	assert.NotContains(t, strings.Join(rec.KeptSideFiles, " "), pullSecret, "the restored original is not listed")
	assert.Equal(t, "# an edit by hand", n.read(t, registries))
	assert.Equal(t, `{"auths":{"v1":{}}}`, n.read(t, pullSecret), "the other originals are back")
}
