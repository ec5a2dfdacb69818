package actions_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// A forged "no original" naming the original's own inode (anyone can stat it) deletes nothing
// (adversary round 7a F2): from version 5 a file in place is the agent's new file only when its
// contents hash to the journal's newSHA256 too, which a forger must read the file to name. A version 5
// journal whose entry fails that proof is refused whole; one before version 5 (inode only) is
// settled as far as is safe: the file stays, and the rollback stays incomplete.
func TestForgedNewInodeNeverDeletes(t *testing.T) {
	secret := "/var/lib/kubelet/config.json"
	wrong := sha256.Sum256([]byte("a guess"))
	cases := []struct {
		name, phase string
		version     int
		hash        string // newSHA256: "" none, "wrong", "right" (the forger read the file)
		refused     bool   // refused whole by Recover, touching nothing
	}{
		{"v5 prepared wrong hash", "prepared", 5, "wrong", true},
		{"v5 rollingback wrong hash", "rollingback", 5, "wrong", true},
		{"v5 rolledback wrong hash", "rolledback", 5, "wrong", true},
		{"v5 committed wrong hash", "committed", 5, "wrong", true},
		{"v5 done wrong hash", "done", 5, "wrong", true},
		{"v5 prepared no hash", "prepared", 5, "", true},
		{"v4 prepared inode only", "prepared", 4, "", false},
		{"v4 rollingback inode only", "rollingback", 4, "", false},
		{"v3 prepared inode only", "prepared", 3, "", false},
		{"v4 with a v5 hash", "prepared", 4, "wrong", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, secret)
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
			require.NoError(t, os.WriteFile(target, []byte(`{"auths":{}}`), 0o600))
			fi, err := os.Stat(target)
			require.NoError(t, err)
			st := fi.Sys().(*syscall.Stat_t)
			temp, backup, _ := actions.SideFiles(secret)
			extra := ""
			switch c.hash {
			case "wrong":
				extra = fmt.Sprintf(`,"newSHA256":%q`, hex.EncodeToString(wrong[:]))
			}
			committed := ""
			if c.phase == "committed" || c.phase == "done" {
				committed = `"committed":true,`
			}
			j := fmt.Sprintf(`{"version":%d,"phase":%q,%s"meta":{"hash":"x","actions":[]},"entries":[{"path":%q,"temp":%q,"backup":%q,"hadOriginal":false,"newDev":%d,"newIno":%d%s}]}`,
				c.version, c.phase, committed, secret, temp, backup, uint64(st.Dev), st.Ino, extra)
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(state, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), []byte(j), 0o600))
			before := tree(t, dir)
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			txn, err := actions.Recover(root, state, actions.Trust{})
			if c.refused {
				require.Error(t, err)
				assert.Nil(t, txn)
				assert.Equal(t, before, tree(t, dir), "nothing touched")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, txn)
			err = txn.Rollback()
			require.ErrorIs(t, err, actions.ErrNotRestored)
			assert.ErrorContains(t, err, "before version 5")
			require.Error(t, txn.Finish(), "the journal stays: the rollback is incomplete")
			b, err := os.ReadFile(target)
			require.NoError(t, err, "the file is never deleted on an inode's word")
			assert.Equal(t, `{"auths":{}}`, string(b))
			_, err = os.Stat(filepath.Join(state, "journal.json"))
			assert.NoError(t, err)
		})
	}
}

// The agent's own crash between the commit's renames and its journal write leaves a prepared
// journal over new files: the rollback removes each new file that had no original (its inode and
// contents proven) and puts each original back. A new file changed in place since (the same inode,
// other contents) is not provably the agent's: the journal is refused and the file kept.
func TestPreparedJournalOverRenamedFilesRollsBack(t *testing.T) {
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed=%v", changed), func(t *testing.T) {
			r, dir := newRoot(t)
			state := filepath.Join(t.TempDir(), "state")
			added, kept := "/etc/containers/added.conf", "/etc/containers/registries.conf"
			require.NoError(t, os.WriteFile(filepath.Join(dir, kept), []byte("old"), 0o644))
			txn, err := actions.Prepare(r, state, []actions.Op{
				{Path: added, Data: []byte("new file"), Mode: 0o644},
				{Path: kept, Data: []byte("new contents"), Mode: 0o644},
			}, actions.Meta{Hash: "h"})
			require.NoError(t, err)
			prepared, err := os.ReadFile(filepath.Join(state, "journal.json"))
			require.NoError(t, err)
			require.NoError(t, txn.Commit())
			// The crash: every rename landed, the journal still says prepared.
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), prepared, 0o600))
			if changed {
				f, err := os.OpenFile(filepath.Join(dir, added), os.O_WRONLY|os.O_APPEND, 0)
				require.NoError(t, err)
				_, err = f.WriteString(" and someone's line")
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			rec, err := actions.Recover(r, state, actions.Trust{})
			if changed {
				require.ErrorIs(t, err, actions.ErrHostile)
				b, err := os.ReadFile(filepath.Join(dir, added))
				require.NoError(t, err)
				assert.Equal(t, "new file and someone's line", string(b))
				return
			}
			require.NoError(t, err)
			require.NoError(t, rec.Rollback())
			require.NoError(t, rec.Finish())
			_, err = os.Lstat(filepath.Join(dir, added))
			assert.True(t, errors.Is(err, os.ErrNotExist), "the agent's new file is removed")
			b, err := os.ReadFile(filepath.Join(dir, kept))
			require.NoError(t, err)
			assert.Equal(t, "old", string(b))
		})
	}
}

// Prepare records each new file's sha256 (journal version 5); a version 5 write without one, a
// malformed one, or one on a removal is not an entry the agent writes.
func TestJournalRecordsTheNewFilesHash(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	p, gone := "/etc/containers/registries.conf", "/etc/containers/gone.conf"
	require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, gone), []byte("old"), 0o644))
	_, err := actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}, {Path: gone, Remove: true}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(state, "journal.json"))
	require.NoError(t, err)
	sum := sha256.Sum256([]byte("new"))
	assert.Contains(t, string(data), `"newSHA256":"`+hex.EncodeToString(sum[:])+`"`)
	for name, edit := range map[string]func(e []any){
		"no hash":        func(e []any) { delete(e[0].(map[string]any), "newSHA256") },
		"malformed hash": func(e []any) { e[0].(map[string]any)["newSHA256"] = "ABC" },
		"removal's hash": func(e []any) { e[1].(map[string]any)["newSHA256"] = hex.EncodeToString(sum[:]) },
		"another's hash": func(e []any) {
			w := sha256.Sum256([]byte("x"))
			e[0].(map[string]any)["newSHA256"] = hex.EncodeToString(w[:])
		},
	} {
		editJournal(t, state, func(j map[string]any) { edit(j["entries"].([]any)) })
		before := tree(t, dir)
		_, err := actions.Recover(r, state, actions.Trust{})
		if name == "another's hash" {
			// Well formed: in the prepared phase nothing is in place yet, so nothing proves it
			// wrong; the rollback just never deletes on it.
			require.NoError(t, err, name)
		} else {
			assert.ErrorContains(t, err, "is not one this agent wrote", name)
			assert.Equal(t, before, tree(t, dir), name)
		}
		require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), data, 0o600))
	}
}
