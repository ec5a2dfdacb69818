package actions_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Journal rule 17 (adversary round 4 F2): every restore proves its backup before using it, in every
// phase that rolls back. The journal is the agent's own, untouched; only the backup beside a target
// is swapped (for a symlink to a host secret, a foreign file, a hard link to another file, a
// directory, a FIFO) or removed, beside a target already replaced by the new file and beside one
// still the original. A backup that is not provably the original is never renamed over a target:
// the target stays as it is (an original in place stays the very inode it was), the tampered name
// stays as it is, the rollback does not complete (no rolled back, the journal and the other backups
// stay, Finish refuses), while every other entry is restored. Beside an original that never moved
// (its new file still at the temp's name) or one known in place by its recorded hash, no restore
// needs the backup: the rollback completes, and a tampered name stays.
func TestEveryRestoreProvesItsBackup(t *testing.T) {
	const (
		a     = "/etc/containers/registries.conf" // replaced before the crash
		b     = "/etc/containers/policy.json"     // still the original at the crash
		c     = "/etc/containers/storage.conf"    // replaced, its backup untouched: the control
		other = "/etc/containers/other.conf"
	)
	tampers := []string{"symlink", "foreign regular file", "hard link to another file", "directory", "fifo", "missing"}
	phases := []string{"preparing", "prepared", "committed rollback", "rollingback"}
	for _, phase := range phases {
		for _, tamper := range tampers {
			for _, which := range []string{a, b} {
				untouched := which == b
				if phase == "committed rollback" && untouched || phase == "preparing" && !untouched {
					continue // a commit replaces every target; nothing is replaced while preparing
				}
				name := phase + "/" + tamper + "/" + map[bool]string{true: "beside the original", false: "beside the new file"}[untouched]
				t.Run(name, func(t *testing.T) {
					r, dir := newRoot(t)
					state := filepath.Join(t.TempDir(), "state")
					host := func(p string) string { return filepath.Join(dir, p) }
					for _, p := range []string{a, b, c, other} {
						require.NoError(t, os.WriteFile(host(p), []byte("old "+p), 0o644))
					}
					secret := filepath.Join(t.TempDir(), "shadow")
					require.NoError(t, os.WriteFile(secret, []byte("root:hash"), 0o600))
					ops := []actions.Op{{Path: a, Data: []byte("new a"), Mode: 0o644}, {Path: b, Data: []byte("new b"), Mode: 0o644}, {Path: c, Data: []byte("new c"), Mode: 0o644}}
					txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
					require.NoError(t, err)
					origB := ino(t, host(b))

					switch phase {
					case "committed rollback":
						require.NoError(t, txn.Commit())
					case "preparing":
						// A crash before the prepared write: the journal on disk is Prepare's first.
						editJournal(t, state, func(j map[string]any) {
							j["phase"] = "preparing"
							for _, e := range j["entries"].([]any) {
								for _, k := range []string{"hadOriginal", "origMode", "origUID", "origGID", "newDev", "newIno", "origSHA256"} {
									delete(e.(map[string]any), k)
								}
							}
						})
					default:
						// Killed part way through the commit: a and c renamed, b not yet.
						require.NoError(t, os.Rename(host(tempOf(a)), host(a)))
						require.NoError(t, os.Rename(host(tempOf(c)), host(c)))
						if phase == "rollingback" {
							editJournal(t, state, func(j map[string]any) { j["phase"] = "rollingback" })
						}
					}
					bk := host(backupOf(which))
					require.NoError(t, os.Remove(bk))
					switch tamper {
					case "symlink":
						require.NoError(t, os.Symlink(secret, bk))
					case "foreign regular file":
						require.NoError(t, os.WriteFile(bk, []byte("FOREIGN"), 0o644))
					case "hard link to another file":
						require.NoError(t, os.Link(host(other), bk))
					case "directory":
						require.NoError(t, os.Mkdir(bk, 0o755))
					case "fifo":
						require.NoError(t, syscall.Mkfifo(bk, 0o644))
					}
					whichBefore := readOr(host(which))
					before := snapshot(t, dir)

					if phase == "committed rollback" {
						err = txn.Rollback()
					} else {
						var got *actions.Txn
						got, err = actions.Recover(r, state, actions.Trust{})
						if phase == "preparing" {
							if tamper == "missing" {
								require.NoError(t, err, "a missing backup while preparing: nothing to lose")
								assert.Nil(t, got)
							} else {
								require.ErrorIs(t, err, actions.ErrHostile, "rule 11")
								assert.Equal(t, before, snapshot(t, dir), "nothing touched")
							}
							assert.Equal(t, "old "+b, readOr(host(b)))
							assert.Equal(t, origB, ino(t, host(b)), "the original is the inode it was")
							return
						}
						require.NoError(t, err)
						require.NotNil(t, got)
						txn = got
						err = txn.Rollback()
					}
					t.Log(err)
					assert.Equal(t, "root:hash", readOr(secret), "the symlink's target is never touched")
					assert.Equal(t, "old "+other, readOr(host(other)))
					assert.Equal(t, "old "+c, readOr(host(c)), "the control entry is restored")
					if untouched {
						assert.Equal(t, "old "+a, readOr(host(a)), "the other replaced entry is restored")
						assert.Equal(t, "old "+b, readOr(host(b)), "the original in place stays")
						assert.Equal(t, origB, ino(t, host(b)), "as the very inode it was")
					} else {
						assert.Equal(t, "old "+b, readOr(host(b)))
						assert.Equal(t, whichBefore, readOr(host(a)), "the target is left as it is")
					}
					if tamper == "missing" && untouched {
						require.NoError(t, err, "the original is in place, known by its hash: nothing to restore")
						assert.Equal(t, actions.PhaseRolledBack, txn.Phase())
						require.NoError(t, txn.Finish())
						assertNoLeftovers(t, dir, state)
						return
					}
					if untouched {
						// b's new file is still at its temp's name: the original never moved, so no
						// restore needs its backup, and the rollback completes; the tampered name is
						// not the agent's and stays (the sweep reports it, the plan refuses b until
						// it is removed).
						require.NoError(t, err, "nothing of the agent's reached b")
						assert.Equal(t, actions.PhaseRolledBack, txn.Phase())
						require.NoError(t, txn.Finish())
						fi, err := os.Lstat(bk)
						require.NoError(t, err, "the tampered name stays")
						assert.Equal(t, map[string]os.FileMode{"symlink": os.ModeSymlink, "directory": os.ModeDir, "fifo": os.ModeNamedPipe}[tamper], fi.Mode().Type())
						assert.Equal(t, "old "+other, readOr(host(other)))
						return
					}
					require.Error(t, err, "the rollback does not complete")
					if tamper == "missing" {
						assert.ErrorIs(t, err, actions.ErrNotRestored)
					} else {
						assert.ErrorIs(t, err, actions.ErrHostileBackup)
						assert.Contains(t, err.Error(), backupOf(which))
						assert.Len(t, txn.KeptBackups(), 1)
					}
					assert.NotEqual(t, actions.PhaseRolledBack, txn.Phase())
					assert.Error(t, txn.Finish(), "nothing is cleaned up over it")
					_, err = os.Stat(filepath.Join(state, "journal.json"))
					require.NoError(t, err, "the journal stays")
					fi, err := os.Lstat(bk)
					if tamper == "missing" {
						assert.True(t, os.IsNotExist(err))
					} else {
						require.NoError(t, err, "the tampered name stays")
						assert.Equal(t, map[string]os.FileMode{"symlink": os.ModeSymlink, "directory": os.ModeDir, "fifo": os.ModeNamedPipe}[tamper], fi.Mode().Type())
					}
					// Again, after a restart: the same refusal, nothing changes.
					again, err := actions.Recover(r, state, actions.Trust{})
					require.NoError(t, err)
					mid := snapshot(t, dir)
					assert.Error(t, again.Rollback())
					assert.Equal(t, mid, snapshot(t, dir))
				})
			}
		}
	}
}

// A journal written before version 4 records no hash of the originals: its backup is used only
// over the agent's own new file; beside a file it cannot tell from the original, a backup that is
// not its second name is never restored (the adversary's SB2, with the previous agent's journal).
func TestVersion3JournalRestoresOnlyOverTheNewFile(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	a, b := "/etc/containers/registries.conf", "/etc/containers/policy.json"
	for _, p := range []string{a, b} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("old "+p), 0o644))
	}
	_, err := actions.Prepare(r, state, []actions.Op{{Path: a, Data: []byte("new a"), Mode: 0o644}, {Path: b, Data: []byte("new b"), Mode: 0o644}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	editJournal(t, state, func(j map[string]any) {
		j["version"] = 3
		for _, e := range j["entries"].([]any) {
			delete(e.(map[string]any), "origSHA256")
		}
	})
	require.NoError(t, os.Rename(filepath.Join(dir, tempOf(a)), filepath.Join(dir, a)))
	require.NoError(t, os.Remove(filepath.Join(dir, backupOf(b))))
	require.NoError(t, os.WriteFile(filepath.Join(dir, backupOf(b)), []byte("FOREIGN"), 0o644))
	origB := ino(t, filepath.Join(dir, b))
	txn, err := actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	// b's new file is still at its temp's name: the original never moved and needs no backup.
	require.NoError(t, txn.Rollback())
	assert.Equal(t, "old "+a, readOr(filepath.Join(dir, a)), "the new file is restored from its backup")
	assert.Equal(t, "old "+b, readOr(filepath.Join(dir, b)), "the original stays")
	assert.Equal(t, origB, ino(t, filepath.Join(dir, b)))
	assert.Equal(t, "FOREIGN", readOr(filepath.Join(dir, backupOf(b))), "kept")
}

// Prepare records each original's sha256 with its backup (journal version 4); a journal of version
// 4 with an original and no hash, or a malformed one, is not one the agent wrote.
func TestJournalRecordsTheOriginalsHash(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	p := "/etc/containers/registries.conf"
	require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("old"), 0o644))
	_, err := actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	var j struct {
		Version int
		Entries []struct{ OrigSHA256 string }
	}
	data, err := os.ReadFile(filepath.Join(state, "journal.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &j))
	assert.Equal(t, 8, j.Version)
	sum := sha256.Sum256([]byte("old"))
	assert.Equal(t, hex.EncodeToString(sum[:]), j.Entries[0].OrigSHA256)
	for name, edit := range map[string]func(e map[string]any){
		"no hash":        func(e map[string]any) { delete(e, "origSHA256") },
		"malformed hash": func(e map[string]any) { e["origSHA256"] = "ABC" },
	} {
		editJournal(t, state, func(j map[string]any) { edit(j["entries"].([]any)[0].(map[string]any)) })
		_, err := actions.Recover(r, state, actions.Trust{})
		assert.ErrorContains(t, err, "is not one this agent wrote", name)
		require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), data, 0o600))
	}
}

func editJournal(t *testing.T, state string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(state, "journal.json")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	var j map[string]any
	require.NoError(t, json.Unmarshal(data, &j))
	edit(j)
	data, err = json.Marshal(j)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, data, 0o600))
}

func readOr(p string) string {
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return "<" + fi.Mode().Type().String() + ">" // never read: a FIFO would block
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// snapshot is tree without reading anything but regular files (a FIFO would block): every path,
// with its type, inode, size and a small regular file's contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().Type().String() + " " + strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10) + " " + strconv.FormatInt(fi.Size(), 10)
		if fi.Mode().IsRegular() && fi.Size() < 1<<20 {
			v += " " + readOr(p)
		}
		out[p] = v
		return nil
	}))
	return out
}
