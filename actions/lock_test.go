package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockOneHolderNamesItsPid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the state dir is created 0700")

	_, err = LockState(context.Background(), dir, 0)
	require.ErrorIs(t, err, ErrLocked)
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d on ", os.Getpid()))
	var le *LockedError
	require.ErrorAs(t, err, &le)

	_, err = LockStateShared(context.Background(), dir, 0)
	require.ErrorIs(t, err, ErrLocked, "no reader beside the holder")

	require.NoError(t, l.Unlock())
	data, err := os.ReadFile(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	assert.Empty(t, data, "a released lock names nobody")
	l2, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err)
	require.NoError(t, l2.Unlock())
}

func TestLockWaiterGetsItOnRelease(t *testing.T) {
	dir := t.TempDir()
	l, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		l2, err := LockState(context.Background(), dir, time.Minute)
		if err == nil {
			err = l2.Unlock()
		}
		got <- err
	}()
	require.NoError(t, l.Unlock())
	require.NoError(t, <-got)
}

func TestLockWaitEndsWithContext(t *testing.T) {
	dir := t.TempDir()
	l, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err)
	defer l.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { _, err := LockState(ctx, dir, time.Hour); got <- err }()
	cancel()
	err = <-got
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()))
}

// A holder in another process: the waiter wakes when it dies (SIGKILL), without polling, and a dead
// holder never blocks.
func TestLockDeadHolderNeverBlocks(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, LockFile)
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	// -o: flock(1) itself holds the lock, its child does not inherit it.
	holder := exec.Command("flock", "-o", p, "sh", "-c", "echo locked; exec sleep 600")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	buf := make([]byte, 7)
	_, err = out.Read(buf)
	require.NoError(t, err)
	_, err = LockState(context.Background(), dir, 0)
	require.ErrorIs(t, err, ErrLocked)

	got := make(chan error, 1)
	go func() {
		l, err := LockState(context.Background(), dir, 10*time.Minute)
		if err == nil {
			err = l.Unlock()
		}
		got <- err
	}()
	require.NoError(t, syscall.Kill(-holder.Process.Pid, syscall.SIGKILL))
	_ = holder.Wait()
	require.NoError(t, <-got, "the waiter takes the lock once its holder is dead")
	l, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err, "the dead holder leaves nothing behind that blocks")
	require.NoError(t, l.Unlock())
}

// A lock file replaced by a symlink (or a directory, a FIFO) is refused, and what it points at is
// neither locked nor written.
func TestLockRefusesWhatTheAgentDidNotMake(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(p, target string) error
	}{
		{"symlink", func(p, target string) error { return os.Symlink(target, p) }},
		{"directory", func(p, _ string) error { return os.Mkdir(p, 0o700) }},
		{"fifo", func(p, _ string) error { return exec.Command("mkfifo", p).Run() }},
		{"hard link", func(p, target string) error { return os.Link(target, p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(t.TempDir(), "passwd")
			require.NoError(t, os.WriteFile(target, []byte("root:x:0:0\n"), 0o644))
			require.NoError(t, tc.make(filepath.Join(dir, LockFile), target))
			_, err := LockState(context.Background(), dir, time.Second)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "refusing")
			assert.False(t, errors.Is(err, ErrLocked))
			data, _ := os.ReadFile(target)
			assert.Equal(t, "root:x:0:0\n", string(data))
			_, err = LockStateShared(context.Background(), dir, time.Second)
			require.Error(t, err)
		})
	}
}

// A lock file removed under a waiter: the waiter locks the new file, never a stale inode beside a
// holder of the new one.
func TestLockFileReplacedWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	l, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err)
	got := make(chan *Lock, 1)
	go func() {
		l2, err := LockState(context.Background(), dir, time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- l2
	}()
	require.NoError(t, os.Remove(filepath.Join(dir, LockFile)))
	select {
	case <-got:
		t.Fatal("the waiter got the lock beside its holder (the lock file was removed while held)")
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, l.Unlock())
	l2 := <-got
	require.NotNil(t, l2)
	fi, err := l2.f.Stat()
	require.NoError(t, err)
	pi, err := os.Lstat(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	assert.True(t, os.SameFile(fi, pi), "the lock held is the file at the path")
	_, err = LockState(context.Background(), dir, 0)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l2.Unlock())
}

func TestLockSharedCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l, err := LockStateShared(context.Background(), dir, 0)
	require.NoError(t, err)
	assert.Nil(t, l)
	require.NoError(t, l.Unlock())
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err))
	require.NoError(t, os.Mkdir(dir, 0o700))
	x, err := LockState(context.Background(), dir, 0)
	require.NoError(t, err)
	require.NoError(t, x.Unlock())
	r1, err := LockStateShared(context.Background(), dir, 0)
	require.NoError(t, err)
	r2, err := LockStateShared(context.Background(), dir, 0)
	require.NoError(t, err, "readers share")
	_, err = LockState(context.Background(), dir, 0)
	require.ErrorIs(t, err, ErrLocked)
	assert.True(t, strings.Contains(err.Error(), "reader"), err.Error())
	require.NoError(t, r1.Unlock())
	require.NoError(t, r2.Unlock())
}

func TestLockFileRemovedOrReplacedWhileHeld(t *testing.T) {
	for _, how := range []string{"deleted", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			l, err := LockState(context.Background(), dir, 0)
			require.NoError(t, err)
			p := filepath.Join(dir, LockFile)
			require.NoError(t, os.Remove(p))
			if how == "replaced" {
				require.NoError(t, os.WriteFile(p, nil, 0o600))
			}
			_, err = LockState(context.Background(), dir, 50*time.Millisecond)
			require.ErrorIs(t, err, ErrLocked, "a second locker must not get a lock beside the holder's")
			assert.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()), "the holder is named")
			_, err = LockStateShared(context.Background(), dir, 0)
			require.ErrorIs(t, err, ErrLocked, "no reader beside the holder")

			got := make(chan error, 1)
			go func() {
				l2, err := LockState(context.Background(), dir, time.Minute)
				if err == nil {
					err = l2.Unlock()
				}
				got <- err
			}()
			require.NoError(t, l.Unlock())
			require.NoError(t, <-got, "the waiter gets the lock once the holder releases it")
		})
	}
}

// Adversary round 17 d/02: a state dir given as a symlink (the operator's path, followed as
// given) locks the directory it names, as the dry run's checks read it: the same lock as the real
// path's.
func TestLockThroughASymlinkedStateDir(t *testing.T) {
	real := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(real, 0o700))
	link := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Symlink(real, link))
	l, err := LockState(context.Background(), link, 0)
	require.NoError(t, err, "the symlinked state dir is followed")
	_, err = LockState(context.Background(), real, 0)
	require.ErrorIs(t, err, ErrLocked, "the real path's lock is the same lock")
	_, err = LockStateShared(context.Background(), link, 0)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Unlock())
	s, err := LockStateShared(context.Background(), link, 0)
	require.NoError(t, err)
	require.NotNil(t, s)
	require.NoError(t, s.Unlock())
}
