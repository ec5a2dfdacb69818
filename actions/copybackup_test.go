package actions

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a filesystem that refuses hard links the backup is a copy with the original's mode and owner;
// a rollback restores it by copy, checks contents, mode and owner, and keeps it until that passes.
func TestCopyBackupWhereHardLinksAreRefused(t *testing.T) {
	linkBackup = func(*nofollowRoot, string, string) error { return syscall.EPERM }
	t.Cleanup(func() { linkBackup = (*nofollowRoot).Link })
	dir, state := t.TempDir(), t.TempDir()
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.MkdirAll(filepath.Dir(reg), 0o755))
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o640))
	require.NoError(t, os.Chown(reg, 1000, 1001))
	r, err := OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()

	txn, err := Prepare(r, state, []Op{{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644}}, Meta{})
	require.NoError(t, err)
	assert.True(t, txn.j.Entries[0].BackupCopy)
	backup := filepath.Join(dir, sideName("/etc/containers/registries.conf", sideBackup))
	fi, err := os.Stat(backup)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the copy never has looser permissions than the original")
	require.NoError(t, txn.Commit())

	// The restored file is then changed before the cleanup: not finished, backup kept, and the next
	// rollback leaves the changed file as it is (it is not the agent's, so putting the backup over
	// it would lose it); once it is gone the rollback restores the original.
	require.NoError(t, txn.Rollback())
	require.NoError(t, os.WriteFile(reg, []byte("tampered"), 0o640))
	assert.ErrorIs(t, txn.Finish(), ErrNotRestored)
	_, err = os.Stat(backup)
	require.NoError(t, err, "backup kept")
	assert.ErrorIs(t, txn.Rollback(), ErrNotRestored)
	b, err := os.ReadFile(reg)
	require.NoError(t, err)
	assert.Equal(t, "tampered", string(b), "a file the agent did not write is never replaced")
	_, err = os.Stat(backup)
	require.NoError(t, err, "backup kept")

	require.NoError(t, os.Remove(reg))
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
	b, err = os.ReadFile(reg)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	fi, err = os.Stat(reg)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.Equal(t, []int{1000, 1001}, []int{int(st.Uid), int(st.Gid)})
	_, err = os.Stat(backup)
	assert.True(t, os.IsNotExist(err))
}
