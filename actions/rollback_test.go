package actions_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

func journalPhase(t *testing.T, state string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(state, "journal.json"))
	require.NoError(t, err, "the journal is kept")
	var j struct{ Phase string }
	require.NoError(t, json.Unmarshal(data, &j))
	return j.Phase
}

// The rollback renames the original inode back: same inode, so contents, owner, mode and extended
// attributes (SELinux labels are one) come back without a byte copied.
func TestRollbackRelinksTheOriginalInode(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o640))
	require.NoError(t, os.Chown(reg, 1000, 1001))
	xattr := syscall.Setxattr(reg, "user.refresh-agent-test", []byte("label"), 0) == nil
	orig := ino(t, reg)

	txn, err := actions.Prepare(r, state, []actions.Op{
		{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644},
		{Path: "/etc/containers/policy.json", Remove: true},
	}, actions.Meta{})
	require.NoError(t, err)
	backup := filepath.Join(dir, backupOf("/etc/containers/registries.conf"))
	assert.Equal(t, orig, ino(t, backup), "the backup is a hard link beside the target")
	require.NoError(t, txn.Commit())
	assert.NotEqual(t, orig, ino(t, reg))
	require.NoError(t, txn.Rollback())
	assert.Equal(t, actions.PhaseRolledBack, txn.Phase())
	require.NoError(t, txn.Finish())

	assert.Equal(t, orig, ino(t, reg), "the original inode is back")
	b, _ := os.ReadFile(reg)
	assert.Equal(t, "old", string(b))
	mode, uid, gid := stat(t, reg)
	assert.Equal(t, os.FileMode(0o640), mode.Perm())
	assert.Equal(t, []int{1000, 1001}, []int{uid, gid})
	if xattr {
		buf := make([]byte, 64)
		n, err := syscall.Getxattr(reg, "user.refresh-agent-test", buf)
		require.NoError(t, err)
		assert.Equal(t, "label", string(buf[:n]), "extended attributes kept")
	}
	_, err = os.Stat(filepath.Join(dir, "etc/containers/policy.json"))
	assert.True(t, os.IsNotExist(err), "a removal of a file that did not exist stays a no-op")
	assertNoLeftovers(t, dir, state)
}

// A restore that fails keeps the journal (rolling back) and every backup; nothing can finish it or
// start over it; once the fault is gone the next rollback restores the original byte for byte.
func TestFailedRestoreKeepsBackupsAndJournal(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o644))
	orig := ino(t, reg)
	ops := []actions.Op{
		{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644},
		{Path: "/etc/containers/registries.d/new.yaml", Data: []byte("x"), Mode: 0o644},
	}
	txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h", Actions: crio})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())

	// The fault: a non-empty directory where the restore needs its temporary name (root can neither
	// link over it nor remove it).
	obstacle := filepath.Join(dir, restoreOf("/etc/containers/registries.conf"))
	require.NoError(t, os.MkdirAll(filepath.Join(obstacle, "x"), 0o755))
	err = txn.Rollback()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/etc/containers/registries.conf")
	assert.Equal(t, actions.PhaseRollingBack, txn.Phase())
	assert.Equal(t, "rollingback", journalPhase(t, state))
	assert.ErrorIs(t, txn.Finish(), actions.ErrUnfinished)
	b, _ := os.ReadFile(reg)
	assert.Equal(t, "new", string(b), "still new: and nothing claims otherwise")
	assert.Equal(t, orig, ino(t, filepath.Join(dir, backupOf("/etc/containers/registries.conf"))), "backup kept")
	_, err = actions.Prepare(r, state, ops, actions.Meta{})
	assert.ErrorIs(t, err, actions.ErrUnfinished, "nothing starts over a pending rollback")

	// After a restart: recovery resumes the rollback, and still cannot finish while the fault lasts.
	got, err := actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, actions.PhaseRollingBack, got.Phase())
	assert.Error(t, got.Rollback())
	assert.Equal(t, "rollingback", journalPhase(t, state))

	require.NoError(t, os.RemoveAll(obstacle))
	require.NoError(t, got.Rollback())
	assert.Equal(t, "rolledback", journalPhase(t, state))
	assert.Equal(t, crio, got.Rerun(), "the unit actions ran on the new content: they run again")
	require.NoError(t, got.Finish())
	b, _ = os.ReadFile(reg)
	assert.Equal(t, "old", string(b))
	assert.Equal(t, orig, ino(t, reg))
	_, err = os.Stat(filepath.Join(dir, "etc/containers/registries.d"))
	assert.True(t, os.IsNotExist(err))
	assertNoLeftovers(t, dir, state)
}

// A rolled-back transaction is finished only while every original is still verified in place.
func TestFinishVerifiesTheRollback(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o644))
	txn, err := actions.Prepare(r, state, []actions.Op{{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644}}, actions.Meta{})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.Rollback())
	// Something replaced the restored file before the cleanup.
	require.NoError(t, os.Rename(reg, reg+".moved"))
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o644))
	err = txn.Finish()
	require.ErrorIs(t, err, actions.ErrNotRestored)
	assert.Contains(t, err.Error(), "/etc/containers/registries.conf")
	assert.Equal(t, "rolledback", journalPhase(t, state))
	require.NoError(t, os.Rename(reg+".moved", reg))
	require.NoError(t, txn.Finish())
	assertNoLeftovers(t, dir, state)
}

func TestRollbackRefusedOnceDone(t *testing.T) {
	r, _ := newRoot(t)
	txn, err := actions.Prepare(r, t.TempDir(), []actions.Op{{Path: "/etc/containers/x.conf", Data: []byte("new"), Mode: 0o644}}, actions.Meta{})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.MarkDone())
	assert.Error(t, txn.Rollback())
	require.NoError(t, txn.Finish())
}

// Removing a file whose parent directory is missing is nothing to do: no parent is created.
func TestRemoveUnderMissingParentCreatesNothing(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	txn, err := actions.Prepare(r, state, []actions.Op{
		{Path: "/etc/containers/registries.d/gone/x.yaml", Remove: true},
		{Path: "/var/home/core/.ssh/authorized_keys.d/ignition", Remove: true, DirMode: 0o700, DirUID: 1000, DirGID: 1001},
	}, actions.Meta{})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.MarkDone())
	require.NoError(t, txn.Finish())
	for _, d := range []string{"etc/containers/registries.d", "var/home"} {
		_, err := os.Stat(filepath.Join(dir, d))
		assert.True(t, errors.Is(err, os.ErrNotExist), "%s not created", d)
	}
	assertNoLeftovers(t, dir, state)
}

// A journal written by the previous version (backups copied into the state dir) is still rolled back.
func TestRollbackOfAVersion1Journal(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("new"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(state, "backup"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(state, "backup/0"), []byte("old"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), []byte(`{"version":1,"phase":"rollingback","meta":{"actions":[]},
		"entries":[{"path":"/etc/containers/registries.conf","temp":"/etc/containers/.registries.conf.refresh-agent-tmp","backup":"0","hadOriginal":true,"origMode":416,"origUID":1000,"origGID":1001}]}`), 0o600))
	txn, err := actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
	b, _ := os.ReadFile(reg)
	assert.Equal(t, "old", string(b))
	mode, uid, gid := stat(t, reg)
	assert.Equal(t, os.FileMode(0o640), mode.Perm())
	assert.Equal(t, []int{1000, 1001}, []int{uid, gid})
	assertNoLeftovers(t, dir, state)
}

// A managed path named like another's side file (its backup above all) is refused before anything
// is written: it could overwrite the backup, and a rollback would restore its bytes.
func TestSideFileNamesAreReserved(t *testing.T) {
	r, dir := newRoot(t)
	for _, p := range []string{"/etc/containers/.registries.conf.refresh-agent-backup", "/etc/containers/.x.refresh-agent-tmp",
		"/etc/containers/.x.refresh-agent-restore"} {
		state := t.TempDir()
		_, err := actions.Prepare(r, state, []actions.Op{
			{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644},
			{Path: p, Data: []byte("x"), Mode: 0o644},
		}, actions.Meta{})
		require.ErrorContains(t, err, p)
		assert.ErrorIs(t, err, actions.ErrReserved)
		assertNoLeftovers(t, dir, state)
		_, err = os.Stat(filepath.Join(state, "journal.json"))
		assert.True(t, os.IsNotExist(err))
	}
}
