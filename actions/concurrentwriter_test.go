package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Adversary round 17 d/01: another process writes a target between the backup and the commit's
// rename (a config writer's rename, or a file created where the plan saw none). The commit never
// clobbers it: a new path is created only where nothing is, an existing one is swapped and what was
// in place dropped only when it is the original; the commit stops, the rollback leaves the other
// process's file in place and completes, and nothing it wrote is lost.
func TestACommitNeverClobbersAnotherProcesssWrite(t *testing.T) {
	const a, n = "/etc/containers/registries.conf", "/etc/containers/added.conf"
	setup := func(t *testing.T) (*actions.Root, string, string, *actions.Txn) {
		r, dir := newRoot(t)
		state := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.WriteFile(filepath.Join(dir, a), []byte("old"), 0o644))
		txn, err := actions.Prepare(r, state, []actions.Op{{Path: a, Data: []byte("new a"), Mode: 0o644}, {Path: n, Data: []byte("new n"), Mode: 0o644}}, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		return r, dir, state, txn
	}
	t.Run("a file created where the plan saw none", func(t *testing.T) {
		_, dir, state, txn := setup(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("THIRD-PARTY"), 0o644))
		err := txn.Commit()
		require.ErrorIs(t, err, actions.ErrChangedSince)
		assert.Contains(t, err.Error(), n)
		require.NoError(t, txn.Rollback(), "nothing of the agent's reached the new path")
		require.NoError(t, txn.Finish())
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, n)))
		assert.Equal(t, "old", readOr(filepath.Join(dir, a)))
		assertNoLeftovers(t, dir, state)
	})
	t.Run("a target replaced by rename", func(t *testing.T) {
		_, dir, state, txn := setup(t)
		tmp := filepath.Join(dir, "/etc/containers/.x")
		require.NoError(t, os.WriteFile(tmp, []byte("THIRD-PARTY"), 0o644))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, a)))
		err := txn.Commit()
		require.ErrorIs(t, err, actions.ErrChangedSince)
		assert.Contains(t, err.Error(), a)
		require.NoError(t, txn.Rollback())
		require.NoError(t, txn.Finish())
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, a)), "the other process's file stays in place")
		_, err = os.Lstat(filepath.Join(dir, n))
		assert.True(t, os.IsNotExist(err), "the commit stopped before the new path")
		assertNoLeftovers(t, dir, state)
	})
	t.Run("a crash between the swap and its check", func(t *testing.T) {
		// What the swap leaves when the other process's file was in place: the agent's new file at
		// the target, the other's at the temp's name. Recovery restores the original and keeps the
		// other's file where it is; nothing is lost.
		r, dir, state, _ := setup(t)
		other := filepath.Join(dir, "/etc/containers/.x")
		require.NoError(t, os.WriteFile(other, []byte("THIRD-PARTY"), 0o644))
		require.NoError(t, os.Rename(filepath.Join(dir, tempOf(a)), other+".new"))
		require.NoError(t, os.Rename(other, filepath.Join(dir, tempOf(a))))
		require.NoError(t, os.Rename(other+".new", filepath.Join(dir, a)))
		txn, err := actions.Recover(r, state, actions.Trust{})
		require.NoError(t, err)
		require.NoError(t, txn.Rollback())
		require.NoError(t, txn.Finish())
		assert.Equal(t, "old", readOr(filepath.Join(dir, a)), "the original is restored over the agent's new file")
		assert.Equal(t, "THIRD-PARTY", readOr(filepath.Join(dir, tempOf(a))), "the other's file is kept, never removed as a temp")
	})
	t.Run("a clean commit drops the swapped-out original", func(t *testing.T) {
		_, dir, state, txn := setup(t)
		require.NoError(t, txn.Commit())
		require.NoError(t, txn.MarkDone())
		require.NoError(t, txn.Finish())
		assert.Equal(t, "new a", readOr(filepath.Join(dir, a)))
		assert.Equal(t, "new n", readOr(filepath.Join(dir, n)))
		assertNoLeftovers(t, dir, state)
	})
}
