package actions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openTestRoot(t *testing.T, dir string) *Root {
	t.Helper()
	r, err := OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// The root's lock is one per root whatever the state dir and whatever name the root is given: a
// writer excludes everyone, readers share, and a state dir that is the root itself does not wait on
// its own root lock.
func TestLockRootIsPerRoot(t *testing.T) {
	dir := t.TempDir()
	alias := filepath.Join(t.TempDir(), "host")
	require.NoError(t, os.Symlink(dir, alias))
	for _, tc := range []struct {
		name          string
		first, second bool // exclusive
		secondRoot    string
		secondState   string
		locked        bool
	}{
		{"writer, writer with another state dir", true, true, dir, "b", true},
		{"writer, reader", true, false, dir, "b", true},
		{"reader, writer", false, true, dir, "b", true},
		{"reader, reader", false, false, dir, "b", false},
		{"writer, writer given the root under another name", true, true, alias, "b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := LockRoot(context.Background(), openTestRoot(t, dir), filepath.Join(dir, "var/lib/a"), 0, tc.first)
			require.NoError(t, err)
			defer a.Unlock()
			b, err := LockRoot(context.Background(), openTestRoot(t, tc.secondRoot), filepath.Join(t.TempDir(), tc.secondState), 20*time.Millisecond, tc.second)
			if !tc.locked {
				require.NoError(t, err)
				require.NoError(t, b.Unlock())
				return
			}
			require.ErrorIs(t, err, ErrLocked)
			assert.Contains(t, err.Error(), fmt.Sprintf("held by pid %d on ", os.Getpid()), "the holder is named, by /proc/locks")
			assert.Contains(t, err.Error(), "whatever its --state-dir")
			require.NoError(t, a.Unlock())
			b, err = LockRoot(context.Background(), openTestRoot(t, tc.secondRoot), "b", 0, tc.second)
			require.NoError(t, err, "released: the next one gets it")
			require.NoError(t, b.Unlock())
		})
	}

	t.Run("state dir is the root", func(t *testing.T) {
		l, err := LockRoot(context.Background(), openTestRoot(t, dir), dir, 0, true)
		require.NoError(t, err)
		defer l.Unlock()
		s, err := LockState(context.Background(), dir, 0)
		require.NoError(t, err, "the state dir's lock covers the root: no wait on itself")
		require.NoError(t, s.Unlock())
	})

	t.Run("a waiter gets it on release", func(t *testing.T) {
		a, err := LockRoot(context.Background(), openTestRoot(t, dir), "a", 0, true)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() {
			b, err := LockRoot(context.Background(), openTestRoot(t, dir), "b", time.Minute, true)
			if err == nil {
				err = b.Unlock()
			}
			got <- err
		}()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		require.NoError(t, a.Unlock())
		require.NoError(t, <-got)
		assert.Less(t, time.Since(start), 900*time.Millisecond, "woken by the release, not by the poll")
	})
}

// The owner record is trusted only as the agent wrote it, in a dir only the agent can write:
// anything else refuses every state dir, naming the record, and nothing is written.
func TestRootOwnerRecordRefusedUnlessTheAgents(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, def string)
		want string
	}{
		{"not JSON", func(t *testing.T, def string) {
			require.NoError(t, os.WriteFile(filepath.Join(def, OwnerFile), []byte("x"), 0o600))
		}, "not one the agent wrote"},
		{"a relative path", func(t *testing.T, def string) {
			require.NoError(t, os.WriteFile(filepath.Join(def, OwnerFile), []byte(`{"stateDir":"var/lib/x","inRoot":true}`), 0o600))
		}, "not one the agent wrote"},
		{"a symlink", func(t *testing.T, def string) {
			require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(def, OwnerFile)))
		}, "symlink"},
		{"its dir writable by others", func(t *testing.T, def string) {
			require.NoError(t, os.Chmod(def, 0o777))
		}, "writable by group or others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			def := filepath.Join(dir, DefaultStateDir)
			require.NoError(t, os.MkdirAll(def, 0o700))
			tc.make(t, def)
			r := openTestRoot(t, dir)
			for _, state := range []string{def, filepath.Join(dir, "var/lib/b"), t.TempDir()} {
				err := CheckRootOwner(r, state)
				require.Error(t, err, state)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), dir)
				_, err = Prepare(r, state, []Op{{Path: "/etc/x", Data: []byte("new"), Mode: 0o644}}, Meta{Hash: "h"})
				require.Error(t, err)
				_, err = os.Lstat(filepath.Join(state, journalFile))
				assert.True(t, os.IsNotExist(err), "no journal begun")
				_, err = os.Lstat(filepath.Join(dir, "etc/x"))
				assert.True(t, os.IsNotExist(err))
			}
		})
	}
}

// The record names the last state dir that began a transaction, root-relative when it is inside
// the root (so /host in the pod and / on the host agree); the default state dir is the owner when
// there is none, and removes a stale one when it begins.
func TestRootOwnerRecordFollowsTheLastTransaction(t *testing.T) {
	dir := t.TempDir()
	r := openTestRoot(t, dir)
	def := filepath.Join(dir, DefaultStateDir)
	other := filepath.Join(dir, "var/lib/ra2")
	outside := filepath.Join(t.TempDir(), "state")
	op := func(s string) []Op { return []Op{{Path: "/etc/x", Data: []byte(s), Mode: 0o644}} }
	for _, tc := range []struct {
		state, record string // record "" means none
	}{
		{other, `{"stateDir":"/var/lib/ra2","inRoot":true}`},
		{outside, `{"stateDir":"` + outside + `","inRoot":false}`},
		{def, ""},
	} {
		txn, err := Prepare(r, tc.state, op(tc.state), Meta{Hash: "h"})
		require.NoError(t, err)
		data, err := os.ReadFile(filepath.Join(def, OwnerFile))
		if tc.record == "" {
			assert.True(t, os.IsNotExist(err), "no record: the default state dir")
		} else {
			require.NoError(t, err)
			assert.JSONEq(t, tc.record, string(data))
		}
		for _, s := range []string{def, other, outside} {
			err := CheckRootOwner(r, s)
			if s == tc.state {
				assert.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrRootOwned, "%s while %s's journal is there", s, tc.state)
			}
		}
		require.NoError(t, txn.Commit())
		require.NoError(t, txn.MarkDone())
		require.NoError(t, txn.Finish())
		for _, s := range []string{def, other, outside} {
			assert.NoError(t, CheckRootOwner(r, s), "settled: the root is anyone's")
		}
	}

	// An owner outside the root that this process cannot see (another mount namespace, or removed)
	// may still hold a journal there: refused, naming the record to remove if it is gone.
	txn, err := Prepare(r, outside, op("again"), Meta{Hash: "h"})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.MarkDone())
	require.NoError(t, txn.Finish())
	require.NoError(t, os.RemoveAll(outside))
	for _, s := range []string{def, other} {
		err := CheckRootOwner(r, s)
		require.ErrorIs(t, err, ErrRootOwned)
		assert.Contains(t, err.Error(), "cannot see it")
		assert.Contains(t, err.Error(), filepath.Join(def, OwnerFile))
	}
	require.NoError(t, os.Remove(filepath.Join(def, OwnerFile)))
	assert.NoError(t, CheckRootOwner(r, other))
}
