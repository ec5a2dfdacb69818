package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The state dir's lock (LockFile) serializes the processes that share a state dir; two processes on
// one node root with different --state-dir would not see each other, and one's sweep of side files
// "no journal accounts for" deletes the other's live temps and backups (adversary r12 core/03).
// RootLock serializes every refresh-agent process on a root whatever its state dir: it is a flock
// of the root directory itself, taken before the state dir's lock (always in that order, so two
// processes never wait on each other crosswise) and held for the same span, shared for a dry run.
//
// Why the root directory and not a lock file at a fixed path inside it: the directory is the inode
// every path of the transaction resolves from (the Root's descriptor), so two processes given the
// root under two names (/host in the pod, / on the host) lock the same object; it cannot be removed
// or replaced while it is in use, as a lock file can; and taking it writes nothing, so a dry run or
// a refused request still writes nothing on the node.
type RootLock struct{ d *os.File }

// LockRoot takes the root's lock, exclusive or shared, waiting up to wait (no wait when zero or
// negative) as LockState does: a *LockedError naming the holder's pid and command when it does not
// get it; ctx ends the wait early. A state dir that is the root directory itself is locked by
// LockState alone (a second flock of the same inode by this process would wait on itself): the
// returned lock then holds nothing.
func LockRoot(ctx context.Context, root *Root, stateDir string, wait time.Duration, exclusive bool) (*RootLock, error) {
	fd, err := unix.Openat(root.root.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("node root %s: %w", root.Dir, err)
	}
	d := os.NewFile(uintptr(fd), root.Dir)
	if si, err := os.Stat(stateDir); err == nil {
		if ri, err := d.Stat(); err == nil && os.SameFile(ri, si) {
			d.Close()
			return &RootLock{}, nil
		}
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	start := time.Now()
	deadline := start.Add(wait)
	w, _ := watchDir(root.Dir) // nil when inotify is unavailable: the wait below polls
	defer w.Close()
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return &RootLock{d: d}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			d.Close()
			return nil, fmt.Errorf("node root %s: lock: %w", root.Dir, err)
		}
		if !time.Now().Before(deadline) {
			h := rootHolder(d, stateDir)
			d.Close()
			return nil, &LockedError{Path: root.Dir + " (the node root, locked by every refresh-agent process on it whatever its --state-dir)", Holder: h, Waited: time.Since(start)}
		}
		// A release closes the holder's descriptor of the root (IN_CLOSE_NOWRITE); the root's
		// children's events wake the waiter too, which only tries again. Each wait is capped at a
		// second: a missed event costs at most that.
		next := time.Now().Add(time.Second)
		if deadline.Before(next) {
			next = deadline
		}
		if w != nil {
			_ = w.wait(ctx, next)
		} else {
			_ = sleepCtx(ctx, next)
		}
		if ctx.Err() != nil {
			h := rootHolder(d, stateDir)
			d.Close()
			return nil, fmt.Errorf("node root %s: held by %s: %w", root.Dir, h, ctx.Err())
		}
	}
}

// Unlock releases the root's lock; a nil or empty RootLock is fine.
func (l *RootLock) Unlock() error {
	if l == nil || l.d == nil {
		return nil
	}
	err := l.d.Close() // closing the descriptor releases the flock
	l.d = nil
	return err
}

func watchDir(dir string) (*closeWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_NOWRITE|unix.IN_DONT_FOLLOW|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &closeWatch{f: os.NewFile(uintptr(fd), "inotify")}, nil
}

func sleepCtx(ctx context.Context, until time.Time) error {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// rootHolder names the holder of the root's lock by the pid /proc/locks gives for its inode: the
// line it wrote in stateDir's lock file when it holds that one too (a process with this state dir),
// else its command line (which names its --state-dir), on this host (a flock is this kernel's).
func rootHolder(d *os.File, stateDir string) string {
	h, ok := flockHolder(d)
	if !ok {
		return "another process (not found in /proc/locks: in another pid namespace, or gone meanwhile)"
	}
	pid, _, _ := strings.Cut(strings.TrimPrefix(h, "pid "), " ")
	if f, err := openLockFile(filepath.Join(stateDir, LockFile), false); err == nil {
		line := readHolder(f)
		f.Close()
		if strings.HasPrefix(line, "pid "+pid+" on ") {
			return line
		}
	}
	host, _ := os.Hostname()
	return "pid " + pid + " on " + host + " " + strings.TrimPrefix(h, "pid "+pid+" ")
}
