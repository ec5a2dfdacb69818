package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Adversary r21 b2/02-04: "finishing" says only leftovers remain, and it let a journal skip the
// checks of what its phase claims. A journal past its commit edited to say rolled back and
// finishing had every backup deleted (the only copies of the originals: a removed file's, a changed
// file's), saying rolled back; one never committed edited to say done and finishing had its
// backups and the new files' temps deleted under targets never renamed; a committed removal whose
// file is still in place, no backup beside it, was recorded as applied. Each is refused now,
// touching nothing: the originals and their backups stay.
func TestFinishingNeverSkipsWhatItsPhaseClaims(t *testing.T) {
	const (
		changed = "/etc/containers/policy.json"
		removed = "/etc/containers/registries.d/old.yaml"
		added   = "/etc/containers/registries.d/new.yaml"
	)
	ops := []actions.Op{
		{Path: changed, Data: []byte("NEW POLICY"), Mode: 0o644},
		{Path: removed, Remove: true},
		{Path: added, Data: []byte("NEW"), Mode: 0o644},
	}
	setup := func(t *testing.T) (*actions.Root, string, string) {
		r, dir := newRoot(t)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/containers/registries.d"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, changed), []byte("OLD POLICY"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, removed), []byte("OLD"), 0o644))
		return r, dir, filepath.Join(dir, "var/lib/refresh-agent")
	}
	recoverAll := func(t *testing.T, dir, state string) error {
		txn, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		if err != nil {
			return err
		}
		if err := txn.Rollback(); err != nil {
			return err
		}
		return txn.Finish()
	}
	t.Run("committed, edited to rolled back and finishing", func(t *testing.T) {
		r, dir, state := setup(t)
		txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		require.NoError(t, txn.Commit())
		editJournal(t, state, func(j map[string]any) { j["phase"], j["finishing"] = "rolledback", true })
		before := tree(t, dir)
		err = recoverAll(t, dir, state)
		require.ErrorIs(t, err, actions.ErrHostile)
		assert.Contains(t, err.Error(), changed)
		assert.Equal(t, before, tree(t, dir), "nothing removed: every backup stays")
		_, backup, _ := actions.SideFiles(removed)
		got, err := os.ReadFile(filepath.Join(dir, backup))
		require.NoError(t, err)
		assert.Equal(t, "OLD", string(got), "the removed file's only copy")
	})
	t.Run("prepared, edited to done and finishing", func(t *testing.T) {
		r, dir, state := setup(t)
		_, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		editJournal(t, state, func(j map[string]any) { j["phase"], j["committed"], j["finishing"] = "done", true, true })
		before := tree(t, dir)
		_, err = actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.ErrorIs(t, err, actions.ErrHostile)
		assert.Equal(t, before, tree(t, dir), "nothing touched")
	})
	t.Run("a committed removal whose file is in place, no backup beside it", func(t *testing.T) {
		r, dir, state := setup(t)
		txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		require.NoError(t, txn.Commit())
		_, backup, _ := actions.SideFiles(removed)
		require.NoError(t, os.Rename(filepath.Join(dir, backup), filepath.Join(dir, removed))) // as if never removed
		before := tree(t, dir)
		_, err = actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.ErrorIs(t, err, actions.ErrHostile)
		assert.Contains(t, err.Error(), removed)
		assert.Equal(t, before, tree(t, dir), "nothing touched")
	})
	t.Run("honest: a rollback's clean-up and a roll-forward's, each interrupted, still finish", func(t *testing.T) {
		for _, forward := range []bool{false, true} {
			r, dir, state := setup(t)
			txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
			require.NoError(t, err)
			require.NoError(t, txn.Commit())
			if forward {
				require.NoError(t, txn.MarkDone())
			} else {
				require.NoError(t, txn.Rollback())
			}
			// Finishing written, one backup removed, then the crash.
			editJournal(t, state, func(j map[string]any) { j["finishing"] = true })
			_, backup, _ := actions.SideFiles(changed)
			require.NoError(t, os.Remove(filepath.Join(dir, backup)))
			txn, err = actions.Recover(reopen(t, dir), state, actions.Trust{})
			require.NoError(t, err, "forward=%v", forward)
			if !forward {
				require.NoError(t, txn.Rollback())
			}
			require.NoError(t, txn.Finish(), "forward=%v", forward)
			want := map[bool]string{false: "OLD POLICY", true: "NEW POLICY"}[forward]
			got, err := os.ReadFile(filepath.Join(dir, changed))
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
			_, err = os.Stat(filepath.Join(state, "journal.json"))
			assert.ErrorIs(t, err, os.ErrNotExist, "settled")
		}
	})
}
