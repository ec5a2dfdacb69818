package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Adversary r15 a/03: past the prepare, the clean-up removed any regular file at a journaled
// backup's or restore's name, proven or not: a foreign file planted there after the commit (or
// after a rollback) was deleted on the roll-forward and the recovery said nothing. A file there that
// is not provably the agent's (the proven backup, its restore's second name, a copy of the
// original by its recorded hash) is kept now, and the sweep names it for the operator. (Rolled back
// and not yet finishing, Finish's check of the originals refuses such a backup already.)
func TestFinishKeepsWhatIsNotProvablyItsOwnSideFile(t *testing.T) {
	const conf = "/etc/containers/registries.conf"
	for _, tc := range []struct {
		name     string
		rollback bool
		side     func(string) string
	}{
		{name: "committed, foreign backup", side: backupOf},
		{name: "committed, foreign restore", side: restoreOf},
		{name: "rolled back, foreign backup", rollback: true, side: backupOf},
		{name: "rolled back, foreign restore", rollback: true, side: restoreOf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := newRoot(t)
			state := filepath.Join(t.TempDir(), "state")
			host := func(p string) string { return filepath.Join(dir, p) }
			require.NoError(t, os.WriteFile(host(conf), []byte("old"), 0o644))
			txn, err := actions.Prepare(r, state, []actions.Op{{Path: conf, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "h"})
			require.NoError(t, err)
			require.NoError(t, txn.Commit())
			if tc.rollback {
				require.NoError(t, txn.Rollback())
			} else {
				require.NoError(t, txn.MarkDone())
			}
			foreign := host(tc.side(conf))
			_ = os.Remove(foreign)
			require.NoError(t, os.WriteFile(foreign, []byte("SOMEONE ELSE'S"), 0o600))

			if tc.rollback {
				// Rolled back, its clean-up begun (a crash in Finish): the recovery only finishes.
				editJournal(t, state, func(j map[string]any) { j["finishing"] = true })
				txn, err = actions.Recover(r, state, actions.Trust{})
				require.NoError(t, err)
				require.NotNil(t, txn)
			}
			require.NoError(t, txn.Finish())
			assert.Equal(t, "SOMEONE ELSE'S", readOr(foreign), "a file the agent cannot prove its own stays")
			kept, err := actions.SweepSides(r, []string{conf})
			require.NoError(t, err)
			if assert.Len(t, kept, 1) {
				assert.Contains(t, kept[0], tc.side(conf))
			}
			want := "new"
			if tc.rollback {
				want = "old"
			}
			assert.Equal(t, want, readOr(host(conf)))
		})
	}
	// The agent's own are still removed: the proven backup after a commit, and after a rollback.
	for _, rollback := range []bool{false, true} {
		r, dir := newRoot(t)
		state := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.WriteFile(filepath.Join(dir, conf), []byte("old"), 0o644))
		txn, err := actions.Prepare(r, state, []actions.Op{{Path: conf, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		require.NoError(t, txn.Commit())
		if rollback {
			require.NoError(t, txn.Rollback())
		} else {
			require.NoError(t, txn.MarkDone())
		}
		require.NoError(t, txn.Finish())
		for _, side := range []string{backupOf(conf), restoreOf(conf), tempOf(conf)} {
			assert.Equal(t, "<missing>", readOr(filepath.Join(dir, side)), "rollback %v: %s removed", rollback, side)
		}
	}
}
