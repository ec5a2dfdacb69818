package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Round 23 (b/01): a removal's commit removes the original and only it. Another process's file
// written at the target since the backup stays, whether the commit sees it or a crash leaves it
// renamed aside; the original stays in its backup until the operator decides.
func TestARemovalNeverUnlinksAnotherProcesssFile(t *testing.T) {
	const a = "/etc/containers/policy.json"
	setup := func(t *testing.T) (*actions.Root, string, string, *actions.Txn) {
		r, dir := newRoot(t)
		state := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.WriteFile(filepath.Join(dir, a), []byte("old"), 0o644))
		txn, err := actions.Prepare(r, state, []actions.Op{{Path: a, Remove: true}}, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		return r, dir, state, txn
	}
	replace := func(t *testing.T, dir, at string) {
		tmp := filepath.Join(dir, "/etc/containers/.x")
		require.NoError(t, os.WriteFile(tmp, []byte("THIRD-PARTY"), 0o644))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, at)))
	}
	t.Run("a target replaced since the backup", func(t *testing.T) {
		_, dir, _, txn := setup(t)
		replace(t, dir, a)
		err := txn.Commit()
		require.ErrorIs(t, err, actions.ErrChangedSince)
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, a)), "the other process's file stays in place")
		_, err = os.Lstat(filepath.Join(dir, restoreOf(a)))
		assert.True(t, os.IsNotExist(err), "nothing left aside")
		err = txn.Rollback()
		require.ErrorIs(t, err, actions.ErrNotRestored, "the original cannot go back over it")
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, a)))
		assert.Equal(t, "old", readOr(filepath.Join(dir, backupOf(a))), "the original is kept")
	})
	t.Run("a clean removal", func(t *testing.T) {
		_, dir, state, txn := setup(t)
		require.NoError(t, txn.Commit())
		_, err := os.Lstat(filepath.Join(dir, a))
		assert.True(t, os.IsNotExist(err))
		require.NoError(t, txn.MarkDone())
		require.NoError(t, txn.Finish())
		assertNoLeftovers(t, dir, state)
	})
	t.Run("a crash after the original was renamed aside", func(t *testing.T) {
		r, dir, state, _ := setup(t)
		require.NoError(t, os.Rename(filepath.Join(dir, a), filepath.Join(dir, restoreOf(a))))
		txn, err := actions.Recover(r, state, actions.Trust{})
		require.NoError(t, err)
		require.NoError(t, txn.Rollback())
		require.NoError(t, txn.Finish())
		assert.Equal(t, "old", readOr(filepath.Join(dir, a)), "the original is back")
		assertNoLeftovers(t, dir, state)
	})
	t.Run("a crash after another's file was renamed aside", func(t *testing.T) {
		r, dir, state, _ := setup(t)
		replace(t, dir, restoreOf(a))
		require.NoError(t, os.Remove(filepath.Join(dir, a))) // the original is in its backup
		txn, err := actions.Recover(r, state, actions.Trust{})
		require.NoError(t, err)
		require.ErrorIs(t, txn.Rollback(), actions.ErrNotRestored)
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, a)), "the other's file goes back to its place, never removed")
		assert.Equal(t, "old", readOr(filepath.Join(dir, backupOf(a))), "the original is kept")
	})
}

// A removal of a path that had no file at the plan writes nothing there: a file created since is
// another's, kept by the commit and by the rollback.
func TestARemovalOfNothingKeepsAFileCreatedSince(t *testing.T) {
	const a = "/etc/containers/policy.json"
	for _, rollback := range []bool{false, true} {
		_, dir := newRoot(t)
		r, err := actions.OpenRoot(dir)
		require.NoError(t, err)
		defer r.Close()
		state := filepath.Join(t.TempDir(), "state")
		txn, err := actions.Prepare(r, state, []actions.Op{{Path: a, Remove: true}, {Path: "/etc/containers/x.conf", Data: []byte("x"), Mode: 0o644}}, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, a), []byte("THIRD-PARTY"), 0o644))
		require.NoError(t, txn.Commit())
		if rollback {
			require.NoError(t, txn.Rollback())
		} else {
			require.NoError(t, txn.MarkDone())
		}
		require.NoError(t, txn.Finish())
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, a)))
		assertNoLeftovers(t, dir, state)
	}
}
