package actions_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// shiftDevs renames every device the journal recorded (the root's, each new file's, each created
// directory's) as a reboot or a disk enumerated again does; only entries whose dir is in moved.
func shiftDevs(t *testing.T, state string, by float64, entryToo func(path string) bool) {
	editJournal(t, state, func(j map[string]any) {
		r := j["root"].(map[string]any)
		r["dev"] = r["dev"].(float64) + by
		for _, e := range j["entries"].([]any) {
			e := e.(map[string]any)
			if d, ok := e["newDev"].(float64); ok && entryToo(e["path"].(string)) {
				e["newDev"] = d + by
			}
		}
		ids, _ := j["createdDirIds"].([]any)
		for _, id := range ids {
			id := id.(map[string]any)
			id["dev"] = id["dev"].(float64) + by
		}
	})
}

// Adversary r18 d/01: the journal's root, new files and created directories are recorded by device
// and inode, and a power cut whose disk came back as another loop device (or any reboot that
// renumbers st_dev) had recovery refuse the journal forever, the node left mixed. The same root
// path with the same inode is the same root: recovery renames the devices and settles, rolling
// back a prepared journal and forward a committed one; devices that disagree with where their
// files are stay as recorded, so their proofs fail on the safe side.
func TestRecoveryAcrossRenumberedDevices(t *testing.T) {
	ops := []actions.Op{
		{Path: "/etc/a.conf", Data: []byte("new"), Mode: 0o644},
		{Path: "/etc/made/b.conf", Data: []byte("new b"), Mode: 0o644},
	}
	setup := func(t *testing.T) (string, string, *actions.Txn) {
		root, dir := newRoot(t)
		state := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/a.conf"), []byte("old"), 0o644))
		txn, err := actions.Prepare(root, state, ops, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		return dir, state, txn
	}
	all := func(string) bool { return true }

	t.Run("prepared rolls back", func(t *testing.T) {
		dir, state, _ := setup(t)
		shiftDevs(t, state, 7, all)
		back, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.NoError(t, err)
		require.NotNil(t, back)
		require.NoError(t, back.Rollback())
		require.NoError(t, back.Finish())
		got, _ := os.ReadFile(filepath.Join(dir, "etc/a.conf"))
		require.Equal(t, "old", string(got))
		_, err = os.Lstat(filepath.Join(dir, "etc/made"))
		require.True(t, os.IsNotExist(err), "the directory the transaction made stays: %v", err)
		_, err = os.Lstat(filepath.Join(state, "journal.json"))
		require.True(t, os.IsNotExist(err), "the journal stays")
	})

	t.Run("committed rolls forward", func(t *testing.T) {
		dir, state, txn := setup(t)
		require.NoError(t, txn.Commit())
		shiftDevs(t, state, 7, all)
		fwd, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.NoError(t, err)
		require.Equal(t, actions.PhaseCommitted, fwd.Phase())
		require.NoError(t, fwd.MarkDone())
		require.NoError(t, fwd.Finish())
		got, _ := os.ReadFile(filepath.Join(dir, "etc/made/b.conf"))
		require.Equal(t, "new b", string(got))
		left, _ := filepath.Glob(filepath.Join(dir, "etc/.refresh-agent-*"))
		require.Empty(t, left, "side files left")
	})

	t.Run("a renumbered recovery crashes and recovers again", func(t *testing.T) {
		dir, state, txn := setup(t)
		require.NoError(t, txn.Commit())
		shiftDevs(t, state, 7, all)
		_, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.NoError(t, err)
		// Recovery wrote nothing yet; a second one (the first killed) sees the same journal.
		again, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.NoError(t, err)
		require.NoError(t, again.Rollback())
		require.NoError(t, again.Finish())
		got, _ := os.ReadFile(filepath.Join(dir, "etc/a.conf"))
		require.Equal(t, "old", string(got))
	})

	t.Run("devices that disagree with their files are not renamed", func(t *testing.T) {
		dir, state, txn := setup(t)
		require.NoError(t, txn.Commit())
		// The root's files renamed by 7, b.conf's by 9: both now live on one device, so neither
		// recorded device can be said to be it, and the committed journal's proofs fail (rule 15).
		shiftDevs(t, state, 7, func(p string) bool { return p != "/etc/made/b.conf" })
		editJournal(t, state, func(j map[string]any) {
			for _, e := range j["entries"].([]any) {
				if e := e.(map[string]any); e["path"] == "/etc/made/b.conf" {
					e["newDev"] = e["newDev"].(float64) + 9
				}
			}
		})
		journal, _ := os.ReadFile(filepath.Join(state, "journal.json"))
		_, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.ErrorIs(t, err, actions.ErrHostile)
		now, _ := os.ReadFile(filepath.Join(state, "journal.json"))
		require.Equal(t, string(journal), string(now), "the refused journal changed")
	})

	t.Run("the same path with another inode is another root", func(t *testing.T) {
		dir, state, _ := setup(t)
		editJournal(t, state, func(j map[string]any) {
			r := j["root"].(map[string]any)
			r["ino"] = r["ino"].(float64) + 1
			r["dev"] = r["dev"].(float64) + 7
		})
		_, err := actions.Recover(reopen(t, dir), state, actions.Trust{})
		require.True(t, errors.Is(err, actions.ErrOtherRoot), "%v", err)
	})
}

// reopen opens dir as a node root again, as a recovery after the fault does.
func reopen(t *testing.T, dir string) *actions.Root {
	t.Helper()
	r, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}
