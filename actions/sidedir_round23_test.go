package actions_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

const anchors = "/etc/pki/ca-trust/source/anchors"

// loaded lists what p11-kit's loader would take from dir: every entry that is not a directory
// (trust/token.c loader_load_directory: dot files and any suffix included).
func loaded(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err == nil && !fi.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func anchorsRoot(t *testing.T, files ...string) (*actions.Root, string) {
	r, dir := newRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, anchors), 0o755))
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, anchors, f), []byte("-----BEGIN CERTIFICATE----- "+f), 0o644))
	}
	return r, dir
}

// Round 23 (d/02): while the actions run (update-ca-trust), the trust sources hold exactly the
// committed files: no backup of a removed or replaced CA, no temp, that p11-kit would load. After
// the finish, and after a rollback, nothing of the agent's is left there.
func TestTrustSourcesHoldOnlyTheCommittedFilesWhileActionsRun(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		r, dir := anchorsRoot(t, "old.crt", "kept.crt", "replaced.crt")
		state := t.TempDir()
		ops := []actions.Op{
			{Path: anchors + "/old.crt", Remove: true},
			{Path: anchors + "/replaced.crt", Data: []byte("new CA"), Mode: 0o644},
			{Path: anchors + "/added.crt", Data: []byte("added CA"), Mode: 0o644},
		}
		require.NoError(t, actions.Check(r, state, ops, actions.Meta{}))
		txn, err := actions.Prepare(r, state, ops, actions.Meta{})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"old.crt", "kept.crt", "replaced.crt"}, loaded(t, filepath.Join(dir, anchors)), "prepared: only the originals")
		require.NoError(t, txn.Commit())
		assert.ElementsMatch(t, []string{"kept.crt", "replaced.crt", "added.crt"}, loaded(t, filepath.Join(dir, anchors)),
			"committed, the actions to run: the removed CA's and the replaced one's backups are not where p11-kit loads")
		if rollback {
			require.NoError(t, txn.Rollback())
		} else {
			require.NoError(t, txn.MarkDone())
		}
		require.NoError(t, txn.Finish())
		want := []string{"kept.crt", "replaced.crt", "added.crt"}
		if rollback {
			want = []string{"old.crt", "kept.crt", "replaced.crt"}
			b, err := os.ReadFile(filepath.Join(dir, anchors, "replaced.crt"))
			require.NoError(t, err)
			assert.Contains(t, string(b), "replaced.crt", "the original is back")
		}
		assert.ElementsMatch(t, want, loaded(t, filepath.Join(dir, anchors)))
		assertNoLeftovers(t, dir, state)
		_, err = os.Lstat(filepath.Join(dir, anchors, ".refresh-agent-sides"))
		assert.True(t, os.IsNotExist(err), "the side directory is removed once empty")
	}
}

// The side directory's name taken by a symlink or a file is a refusal the dry run makes too, before
// anything is written; a payload file under it is a reserved name.
func TestATakenSideDirectoryIsRefusedFirst(t *testing.T) {
	for name, make := range map[string]func(p string) error{
		"symlink": func(p string) error { return os.Symlink("/etc", p) },
		"file":    func(p string) error { return os.WriteFile(p, nil, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			r, dir := anchorsRoot(t, "a.crt")
			require.NoError(t, make(filepath.Join(dir, anchors, ".refresh-agent-sides")))
			ops := []actions.Op{{Path: anchors + "/a.crt", Data: []byte("x"), Mode: 0o644}}
			err := actions.Check(r, t.TempDir(), ops, actions.Meta{})
			require.Error(t, err)
			assert.True(t, errors.Is(err, actions.ErrSideTaken) && actions.IsRefusal(err), "%v", err)
			_, err = actions.Prepare(r, t.TempDir(), ops, actions.Meta{})
			require.Error(t, err)
			b, _ := os.ReadFile(filepath.Join(dir, anchors, "a.crt"))
			assert.Contains(t, string(b), "BEGIN", "untouched")
		})
	}
	r, _ := anchorsRoot(t)
	err := actions.Check(r, t.TempDir(), []actions.Op{{Path: anchors + "/.refresh-agent-sides/x.crt", Data: []byte("x"), Mode: 0o644}}, actions.Meta{})
	assert.ErrorIs(t, err, actions.ErrReserved)
}

// The sweep removes a crash's temp in the side directory, and the directory once empty.
func TestSweepClearsTheSideDirectory(t *testing.T) {
	r, dir := anchorsRoot(t, "a.crt")
	tmp := tempOf(anchors + "/a.crt")
	require.Equal(t, anchors+"/.refresh-agent-sides", filepath.Dir(tmp))
	require.NoError(t, os.Mkdir(filepath.Join(dir, filepath.Dir(tmp)), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, tmp), []byte("new"), 0o600))
	kept, err := actions.SweepSides(r, []string{anchors + "/a.crt"})
	require.NoError(t, err)
	assert.Empty(t, kept)
	_, err = os.Lstat(filepath.Join(dir, filepath.Dir(tmp)))
	assert.True(t, os.IsNotExist(err))
}

// A process killed after the commit leaves the side directory to its recovery, which settles the
// journal and clears it; a rollback of a trust source directory the transaction made removes the
// side directory first, then the directory.
func TestSideDirectoryAfterACrashAndInACreatedDirectory(t *testing.T) {
	r, dir := anchorsRoot(t, "old.crt")
	state := filepath.Join(t.TempDir(), "state")
	txn, err := actions.Prepare(r, state, []actions.Op{{Path: anchors + "/old.crt", Remove: true}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	// Killed here: the backup is in the side directory, the journal committed; the recovery
	// (settle: a rollback) restores the original from it.
	settle(t, r, state)
	assert.Equal(t, []string{"old.crt"}, loaded(t, filepath.Join(dir, anchors)))
	assertNoLeftovers(t, dir, state)

	r, dir = newRoot(t)
	state = t.TempDir()
	txn, err = actions.Prepare(r, state, []actions.Op{{Path: anchors + "/new.crt", Data: []byte("x"), Mode: 0o644}}, actions.Meta{})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
	_, err = os.Stat(filepath.Join(dir, "etc/pki"))
	assert.True(t, os.IsNotExist(err), "the directories it made are removed, the side directory first: %v", err)
	assertNoLeftovers(t, dir, state)
}

// Round 24 (b/04): an immutable or append-only side directory is refused by the dry run as by the
// real run, before anything is written.
func TestABlockedSideDirectoryIsRefusedFirst(t *testing.T) {
	for _, flag := range []string{"+i", "+a"} {
		r, dir := anchorsRoot(t, "a.crt")
		sd := filepath.Join(dir, anchors, ".refresh-agent-sides")
		require.NoError(t, os.Mkdir(sd, 0o700))
		if out, err := exec.Command("chattr", flag, sd).CombinedOutput(); err != nil {
			t.Skipf("chattr %s: %v: %s", flag, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", "-a", sd).Run() })
		ops := []actions.Op{{Path: anchors + "/a.crt", Data: []byte("x"), Mode: 0o644}}
		err := actions.Check(r, t.TempDir(), ops, actions.Meta{})
		require.ErrorIs(t, err, actions.ErrUnwritable, flag)
		assert.True(t, actions.IsRefusal(err))
	}
}

// Round 25 (b/01): an earlier version's backup beside a trust source target (journal versions 3
// to 7 kept side files there) that is not the target under a second name refuses its refresh, as
// one in the side directory does.
func TestAnEarlierVersionsBackupInATrustSourceRefusesItsTarget(t *testing.T) {
	r, dir := anchorsRoot(t, "a.crt")
	_, b, _ := actions.SideFiles(anchors + "/a.crt")
	flat := filepath.Join(dir, anchors, filepath.Base(b))
	require.NoError(t, os.WriteFile(flat, []byte("another CA"), 0o644))
	err := actions.Check(r, t.TempDir(), []actions.Op{{Path: anchors + "/a.crt", Remove: true}}, actions.Meta{})
	require.ErrorIs(t, err, actions.ErrSideTaken)
	assert.Contains(t, err.Error(), flat[len(dir):])
}
