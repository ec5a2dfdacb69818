package actions_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/plan"
)

func newRoot(t *testing.T) (*actions.Root, string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/containers"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"),
		[]byte("root:x:0:0:root:/root:/bin/bash\n# comment\ncore:x:1000:1001:CoreOS:/var/home/core:/bin/bash\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("root:x:0:\ncore:x:1001:\n"), 0o644))
	r, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r, dir
}

func stat(t *testing.T, p string) (fs.FileMode, int, int) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return fi.Mode(), int(st.Uid), int(st.Gid)
}

func TestCommitWritesModesOwnersAndParents(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/containers/registries.conf"), []byte("old"), 0o644))
	ops := []actions.Op{
		{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o640, UID: 0, GID: 1001},
		{Path: "/var/lib/kubelet/config.json", Data: []byte("secret"), Mode: 0o600},
		{Path: "/var/home/core/.ssh/authorized_keys.d/ignition", Data: []byte("k\n"), Mode: 0o600, UID: 1000, GID: 1001,
			DirMode: 0o700, DirUID: 1000, DirGID: 1001},
	}
	txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	assert.Equal(t, actions.PhasePrepared, txn.Phase())
	// Prepared: nothing replaced yet.
	b, _ := os.ReadFile(filepath.Join(dir, "etc/containers/registries.conf"))
	assert.Equal(t, "old", string(b))
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.MarkDone())
	require.NoError(t, txn.Finish())

	b, _ = os.ReadFile(filepath.Join(dir, "etc/containers/registries.conf"))
	assert.Equal(t, "new", string(b))
	mode, uid, gid := stat(t, filepath.Join(dir, "etc/containers/registries.conf"))
	assert.Equal(t, fs.FileMode(0o640), mode.Perm())
	assert.Equal(t, []int{0, 1001}, []int{uid, gid})
	mode, _, _ = stat(t, filepath.Join(dir, "var/lib/kubelet"))
	assert.Equal(t, fs.FileMode(0o755), mode.Perm(), "missing parents default to 0755")
	mode, uid, gid = stat(t, filepath.Join(dir, "var/home/core/.ssh"))
	assert.Equal(t, fs.FileMode(0o700), mode.Perm())
	assert.Equal(t, []int{1000, 1001}, []int{uid, gid})
	mode, uid, _ = stat(t, filepath.Join(dir, "var/home/core/.ssh/authorized_keys.d/ignition"))
	assert.Equal(t, fs.FileMode(0o600), mode.Perm())
	assert.Equal(t, 1000, uid)

	// Nothing left behind: no temp files, no journal, no backups.
	assertNoLeftovers(t, dir, state)
}

func assertNoLeftovers(t *testing.T, dir, state string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		assert.NotContains(t, p, ".refresh-agent-", "no temp, backup or restore file left")
		return nil
	})
	_, err := os.Stat(filepath.Join(state, "journal.json"))
	assert.True(t, os.IsNotExist(err), "journal removed")
	_, err = os.Stat(filepath.Join(state, "backup"))
	assert.True(t, os.IsNotExist(err), "backups removed")
}

func TestRollbackRestoresEverything(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o600))
	require.NoError(t, os.Chown(reg, 1000, 1001))
	ops := []actions.Op{
		{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644},
		{Path: "/etc/containers/registries.d/new.yaml", Data: []byte("x"), Mode: 0o644},
	}
	txn, err := actions.Prepare(r, state, ops, actions.Meta{})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())

	b, _ := os.ReadFile(reg)
	assert.Equal(t, "old", string(b))
	mode, uid, gid := stat(t, reg)
	assert.Equal(t, fs.FileMode(0o600), mode.Perm(), "original mode restored")
	assert.Equal(t, []int{1000, 1001}, []int{uid, gid}, "original owner restored")
	_, err = os.Stat(filepath.Join(dir, "etc/containers/registries.d"))
	assert.True(t, os.IsNotExist(err), "a file that did not exist is removed, and the directory created for it too")
	assertNoLeftovers(t, dir, state)
}

func TestRemoveOp(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	p := filepath.Join(dir, "etc/containers/policy.json")
	require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
	txn, err := actions.Prepare(r, state, []actions.Op{{Path: "/etc/containers/policy.json", Remove: true}}, actions.Meta{})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	_, err = os.Stat(p)
	assert.True(t, os.IsNotExist(err))
	require.NoError(t, txn.Rollback())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(b), "a removed file comes back on rollback")
	require.NoError(t, txn.Finish())
}

func TestSymlinkedComponentsAreRefused(t *testing.T) {
	r, dir := newRoot(t)
	outside := t.TempDir()
	// /etc/containers/registries.d -> a directory outside the root; /etc/kubernetes -> /etc (inside).
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "etc/containers/registries.d")))
	require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "etc/kubernetes")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "etc/containers/policy.json")))
	for _, p := range []string{"/etc/containers/registries.d/a.yaml", "/etc/kubernetes/kubelet-ca.crt", "/etc/containers/policy.json"} {
		state := t.TempDir()
		_, err := actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("x"), Mode: 0o644}}, actions.Meta{})
		require.Error(t, err, p)
		assert.ErrorIs(t, err, actions.ErrSymlink, p)
		_, jerr := os.Stat(filepath.Join(state, "journal.json"))
		assert.True(t, os.IsNotExist(jerr), "nothing staged")
	}
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries, "nothing written outside the root")
}

func TestRefusesNonRegularTargetsAndUncleanPaths(t *testing.T) {
	r, dir := newRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/containers/registries.conf"), 0o755))
	for _, p := range []string{"/etc/containers/registries.conf", "etc/x", "/etc/../x", "/"} {
		_, err := actions.Prepare(r, t.TempDir(), []actions.Op{{Path: p, Data: []byte("x"), Mode: 0o644}}, actions.Meta{})
		assert.Error(t, err, p)
	}
}

func TestPrepareFailureTouchesNothing(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o644))
	// The second op's temp file cannot be created (a directory is in the way): staging fails after
	// the first temp file, a new parent directory and the first backup were written.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, tempOf("/etc/containers/policy.json")), 0o755))
	_, err := actions.Prepare(r, state, []actions.Op{
		{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644},
		{Path: "/etc/containers/new.d/x.conf", Data: []byte("x"), Mode: 0o644},
		{Path: "/etc/containers/policy.json", Data: []byte("x"), Mode: 0o644},
	}, actions.Meta{})
	require.ErrorContains(t, err, "/etc/containers/policy.json")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, tempOf("/etc/containers/policy.json"))))
	_, err = os.Stat(filepath.Join(dir, "etc/containers/new.d"))
	assert.True(t, os.IsNotExist(err), "created parent removed")
	b, _ := os.ReadFile(reg)
	assert.Equal(t, "old", string(b))
	assertNoLeftovers(t, dir, state)
}

func TestLookups(t *testing.T) {
	r, _ := newRoot(t)
	u, err := r.LookupUser("core")
	require.NoError(t, err)
	assert.Equal(t, actions.User{Name: "core", UID: 1000, GID: 1001, Home: "/var/home/core"}, u)
	gid, err := r.LookupGroup("core")
	require.NoError(t, err)
	assert.Equal(t, 1001, gid)
	_, err = r.LookupUser("nobody-here")
	assert.ErrorContains(t, err, "not in the node's /etc/passwd")
	_, err = r.LookupGroup("wheel")
	assert.ErrorContains(t, err, "not in the node's /etc/group")
}

func TestRecoverPhases(t *testing.T) {
	r, dir := newRoot(t)
	reg := filepath.Join(dir, "etc/containers/registries.conf")
	ops := []actions.Op{{Path: "/etc/containers/registries.conf", Data: []byte("new"), Mode: 0o644}}

	// Prepared but not committed: recovery hands it back to roll back, with no unit action to rerun.
	require.NoError(t, os.WriteFile(reg, []byte("old"), 0o644))
	state := t.TempDir()
	_, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h1", Actions: crio})
	require.NoError(t, err)
	got, err := actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, actions.PhasePrepared, got.Phase())
	assert.ErrorIs(t, got.Finish(), actions.ErrUnfinished, "a prepared transaction is never just cleaned up")
	require.NoError(t, got.Rollback())
	assert.Empty(t, got.Rerun(), "no action ran before the commit")
	require.NoError(t, got.Finish())
	b, _ := os.ReadFile(reg)
	assert.Equal(t, "old", string(b))
	assertNoLeftovers(t, dir, state)

	// Committed: recovery hands the transaction back to finish forward.
	txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h2", Actions: crio})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	got, err = actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, actions.PhaseCommitted, got.Phase())
	assert.Equal(t, "h2", got.Meta().Hash)
	b, _ = os.ReadFile(reg)
	assert.Equal(t, "new", string(b))
	assert.ErrorIs(t, got.Finish(), actions.ErrUnfinished, "a committed transaction is finished only once done")
	require.NoError(t, got.MarkDone())
	require.NoError(t, got.Finish())
	assertNoLeftovers(t, dir, state)

	// Preparing: nothing changed; recovery cleans up and returns nothing.
	require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"),
		[]byte(`{"version":2,"phase":"preparing","entries":[{"path":"/etc/containers/registries.conf","temp":"/etc/containers/.registries.conf.refresh-agent-tmp","backup":"/etc/containers/.registries.conf.refresh-agent-backup"}]}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/containers/.registries.conf.refresh-agent-tmp"), []byte("half"), 0o600))
	got, err = actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	assert.Nil(t, got)
	assertNoLeftovers(t, dir, state)
	b, _ = os.ReadFile(reg)
	assert.Equal(t, "new", string(b))

	// A second transaction cannot start over an unfinished one.
	_, err = actions.Prepare(r, state, ops, actions.Meta{})
	require.NoError(t, err)
	_, err = actions.Prepare(r, state, ops, actions.Meta{})
	assert.ErrorIs(t, err, actions.ErrUnfinished)
}

var crio = []plan.UnitAction{{Unit: "crio.service", Action: "Reload"}}
