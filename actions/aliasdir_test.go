package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

// bindDir mounts the directory src over dst for the test (skipped, saying why, where it cannot).
func bindDir(t *testing.T, src, dst string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a bind mount needs root")
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("mount --bind %s %s: %v (no mount capability here)", src, dst, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
}

// Adversary round 9 core 06: two targets in one directory reached under two names (a bind mount)
// share their side files (named by the base name in that directory): the transaction removed the
// first one's temp and backup while preparing the second and failed at the commit. The dry run and
// Prepare refuse it alike, naming both paths, writing nothing; so are two missing directories that
// are one directory to create. Different names in the aliased directories are two files: applied.
func TestOneDirectoryUnderTwoNamesIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b    string
		refused bool
	}{
		{"one file under two names", "/etc/docker/certs.d/a/ca.crt", "/etc/docker/certs.d/b/ca.crt", true},
		{"one directory to create under two names", "/etc/docker/certs.d/a/new/ca.crt", "/etc/docker/certs.d/b/new/other.crt", true},
		{"a file under one name, a directory under the other", "/etc/docker/certs.d/a/x", "/etc/docker/certs.d/b/x/ca.crt", true},
		{"two files in one directory under two names", "/etc/docker/certs.d/a/ca.crt", "/etc/docker/certs.d/b/other.crt", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := newRoot(t)
			a, b := filepath.Join(dir, "etc/docker/certs.d/a"), filepath.Join(dir, "etc/docker/certs.d/b")
			require.NoError(t, os.MkdirAll(a, 0o755))
			require.NoError(t, os.MkdirAll(b, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(a, "ca.crt"), []byte("ORIG"), 0o644))
			bindDir(t, a, b)
			ops := []actions.Op{{Path: tc.a, Data: []byte("NEW-A"), Mode: 0o644}, {Path: tc.b, Data: []byte("NEW-B"), Mode: 0o644}}
			state := filepath.Join(t.TempDir(), "state")
			dryErr := actions.Check(r, state, ops, actions.Meta{Hash: "h"})
			txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
			if !tc.refused {
				require.NoError(t, dryErr)
				require.NoError(t, err)
				require.NoError(t, txn.Commit())
				require.NoError(t, txn.MarkDone())
				require.NoError(t, txn.Finish())
				return
			}
			require.ErrorIs(t, dryErr, actions.ErrName)
			require.ErrorIs(t, err, actions.ErrName)
			assert.True(t, actions.IsRefusal(err))
			assert.Equal(t, dryErr.Error(), err.Error(), "the same reason")
			assert.Contains(t, err.Error(), tc.a)
			assert.Contains(t, err.Error(), tc.b)
			got, rerr := os.ReadFile(filepath.Join(a, "ca.crt"))
			require.NoError(t, rerr)
			assert.Equal(t, "ORIG", string(got))
			names, _ := os.ReadDir(a)
			assert.Len(t, names, 1, "nothing written beside it")
			_, serr := os.Stat(state)
			assert.True(t, os.IsNotExist(serr), "no journal")
		})
	}
}

// Adversary round 9 core 03: a side file the clean-up cannot unlink (immutable or append-only: the
// agent never sets those flags, so it is not one the transaction made) must not keep the journal,
// and so every later refresh, pending: the clean-up leaves it and finishes; the next plan refuses
// its target, naming it, until it is removed by hand.
func TestAnImmutableSideFileDoesNotKeepTheJournal(t *testing.T) {
	for _, flag := range []string{"+i", "+a"} {
		t.Run(flag, func(t *testing.T) {
			r, dir := newRoot(t)
			p := "/etc/containers/registries.conf"
			require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("old"), 0o644))
			state := filepath.Join(t.TempDir(), "state")
			ops := []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}}
			txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
			require.NoError(t, err)
			require.NoError(t, txn.Commit())
			require.NoError(t, txn.MarkDone())
			// Put there after the plan checked it (a race): the restore name, the target's copy.
			_, _, restore := actions.SideFiles(p)
			require.NoError(t, os.WriteFile(filepath.Join(dir, restore), []byte("new"), 0o644))
			fixture.Chattr(t, flag, filepath.Join(dir, restore))
			require.NoError(t, txn.Finish())
			phase, err := actions.Pending(state)
			require.NoError(t, err)
			assert.Empty(t, phase, "no journal left pending")
			left, err := actions.Recover(r, state, actions.Trust{})
			require.NoError(t, err)
			assert.Nil(t, left)
			err = actions.Check(r, state, ops, actions.Meta{Hash: "h"})
			require.ErrorIs(t, err, actions.ErrUnwritable)
			assert.Contains(t, err.Error(), restore)
			kept, err := actions.SweepSides(r, []string{p})
			require.NoError(t, err, "kept, not an error")
			require.Len(t, kept, 1)
			assert.Contains(t, kept[0], restore)
		})
	}
}

// A variant of adversary round 9 core 04: the state dir's backup/ (a version 1 journal's, never
// written since) holding an immutable entry, or immutable itself: the clean-up of a later
// transaction removes what it can there and finishes, never keeping its journal (and every later
// refresh) pending on what is not its own.
func TestAnImmutableOldBackupDirDoesNotKeepTheJournal(t *testing.T) {
	for _, inside := range []bool{false, true} {
		r, dir := newRoot(t)
		p := "/etc/containers/registries.conf"
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("old"), 0o644))
		state := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.MkdirAll(filepath.Join(state, "backup"), 0o700))
		target := filepath.Join(state, "backup")
		if inside {
			target = filepath.Join(state, "backup", "0")
			require.NoError(t, os.WriteFile(target, []byte("x"), 0o600))
		}
		fixture.Chattr(t, "+i", target)
		txn, err := actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "h"})
		require.NoError(t, err)
		require.NoError(t, txn.Commit())
		require.NoError(t, txn.MarkDone())
		require.NoError(t, txn.Finish())
		phase, err := actions.Pending(state)
		require.NoError(t, err)
		assert.Empty(t, phase, "no journal left pending (inside: %v)", inside)
	}
}

// Adversary r21 d/05: the state dir is never a target by its path, but a bind mount of it (or of
// its parent, or of its payloads dir) below a directory the policy allows let a payload replace the
// lock, the record or the root's owner record, and the dry run planned a write of the journal that
// the real run failed. Refused by identity, by the dry run and Prepare alike, writing nothing.
func TestTheStateDirUnderAnotherNameIsNeverATarget(t *testing.T) {
	for _, tc := range []struct {
		name, src, target string
	}{
		{"the state dir", "var/lib/refresh-agent", "/etc/myapp/sub/lock"},
		{"the state dir, a file it does not hold yet", "var/lib/refresh-agent", "/etc/myapp/sub/new.json"},
		{"the state dir, a directory to create in it", "var/lib/refresh-agent", "/etc/myapp/sub/new/x.json"},
		{"its parent", "var/lib", "/etc/myapp/sub/refresh-agent/current.json"},
		{"its payloads dir", "var/lib/refresh-agent/payloads", "/etc/myapp/sub/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := newRoot(t)
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(filepath.Join(state, "payloads"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(state, "lock"), nil, 0o600))
			sub := filepath.Join(dir, "etc/myapp/sub")
			require.NoError(t, os.MkdirAll(sub, 0o755))
			bindDir(t, filepath.Join(dir, tc.src), sub)
			before, err := fixture.TreeHash(state)
			require.NoError(t, err)
			ops := []actions.Op{{Path: tc.target, Data: []byte("PAYLOAD"), Mode: 0o644}}
			dryErr := actions.Check(r, state, ops, actions.Meta{Hash: "h"})
			_, err = actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
			require.ErrorIs(t, dryErr, actions.ErrUnwritable)
			require.ErrorIs(t, err, actions.ErrUnwritable)
			assert.True(t, actions.IsRefusal(err))
			assert.Equal(t, dryErr.Error(), err.Error(), "the same reason")
			assert.Contains(t, err.Error(), "the agent's state dir")
			after, err := fixture.TreeHash(state)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing written in the state dir")
		})
	}
	t.Run("another state dir: the root's default one, with its owner record", func(t *testing.T) {
		r, dir := newRoot(t)
		def := filepath.Join(dir, "var/lib/refresh-agent")
		require.NoError(t, os.MkdirAll(def, 0o700))
		sub := filepath.Join(dir, "etc/myapp/sub")
		require.NoError(t, os.MkdirAll(sub, 0o755))
		bindDir(t, def, sub)
		ops := []actions.Op{{Path: "/etc/myapp/sub/root-owner", Data: []byte("{}"), Mode: 0o644}}
		err := actions.Check(r, filepath.Join(t.TempDir(), "state"), ops, actions.Meta{Hash: "h"})
		require.ErrorIs(t, err, actions.ErrUnwritable)
	})
}
