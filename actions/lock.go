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

// LockFile is the node lock's name in the state dir. One process at a time works on a node's state
// (apply, recover, the agent's start-up recovery, each of its refreshes and drift heals): it takes
// an exclusive flock(2) on this file before it reads the journal and holds it until the record and
// the clean-up are done. The kernel releases the lock when its holder exits, however it exits, so a
// lock left by a dead process never blocks. The holder writes its pid, host and command into the
// file for the message a waiter gives up with; the file itself is never removed (removing it would
// let a second process lock a new inode beside the holder's).
const LockFile = "lock"

// ErrLocked marks a node lock another process holds past the wait.
var ErrLocked = errors.New("the node's state is locked by another process")

// LockedError says who holds the node lock and how long the caller waited.
type LockedError struct {
	Path   string
	Holder string // "pid N on HOST (COMMAND)", or why it is unknown
	Waited time.Duration
	NoWait error // why the wait could not be watched (inotify), when it ended before its time
}

func (e *LockedError) Error() string {
	if e.NoWait != nil {
		return fmt.Sprintf("%s: held by %s; cannot wait for it (inotify: %v)", e.Path, e.Holder, e.NoWait)
	}
	return fmt.Sprintf("%s: held by %s; gave up after %s (another refresh-agent apply, recover or run is working on this node; --lock-timeout sets the wait)",
		e.Path, e.Holder, e.Waited.Round(time.Millisecond))
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a held node lock.
type Lock struct {
	f         *os.File
	dir       *os.File // the state dir, flocked too: see lockDir
	exclusive bool
}

// LockState takes the node lock in stateDir (created 0700 when missing), exclusive, waiting up to
// wait for the holder to release it (no wait when zero or negative): a *LockedError when it does
// not, naming the holder. ctx ends the wait early. A lock file that is a symlink or not a regular file
// is refused: it is not one the agent made, and following it could lock (or write the holder's pid
// into) any file.
func LockState(ctx context.Context, stateDir string, wait time.Duration) (*Lock, error) {
	if err := EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	return lockState(ctx, stateDir, wait, true)
}

// LockStateShared takes the node lock shared (readers such as a dry run: many at once, none beside
// an exclusive holder). It creates nothing: with no lock file (no refresh ever ran) it returns a nil
// Lock, which Unlock accepts.
func LockStateShared(ctx context.Context, stateDir string, wait time.Duration) (*Lock, error) {
	l, err := lockState(ctx, stateDir, wait, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return l, err
}

func lockState(ctx context.Context, stateDir string, wait time.Duration, exclusive bool) (*Lock, error) {
	p := filepath.Join(stateDir, LockFile)
	start := time.Now()
	deadline := start.Add(wait)
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		l, retry, err := lockOnce(ctx, p, how, start, deadline)
		if !retry {
			return l, err
		}
	}
}

// lockOnce opens the lock file and waits on it; retry says the file was replaced meanwhile (removed
// by hand: a lock on an inode no longer at the path locks out nobody) and must be opened again.
func lockOnce(ctx context.Context, p string, how int, start, deadline time.Time) (l *Lock, retry bool, err error) {
	exclusive := how == unix.LOCK_EX
	f, err := openLockFile(p, exclusive)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if l == nil {
			f.Close()
		}
	}()
	// The watch is set before the first attempt (a release in between is seen), and the file stays
	// open while waiting: a waiter's own close would wake the other waiters.
	w, werr := watchClose(p, filepath.Dir(p))
	defer w.Close()
	if werr != nil {
		// The file removed or replaced between the open and the watch (the watch then fails with
		// ENOENT, or watches another inode): open the file at the path again.
		if same, _ := samePath(f, p); !same {
			return nil, true, nil
		}
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			if same, serr := samePath(f, p); serr != nil {
				return nil, false, fmt.Errorf("node lock %s: %w", p, serr)
			} else if !same {
				return nil, true, nil
			}
			// The file's lock alone is defeated by removing or replacing the file while it is held
			// (a second process then locks a new inode beside the holder's): the state dir itself is
			// locked too, and it cannot be swapped under the holder as easily.
			d, retry, err := lockDir(ctx, filepath.Dir(p), f, w, how, start, deadline)
			if d == nil {
				return nil, retry, err
			}
			l := &Lock{f: f, dir: d, exclusive: exclusive}
			if exclusive {
				l.writeHolder()
			}
			return l, false, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, fmt.Errorf("node lock %s: %w", p, err)
		}
		if expired := !time.Now().Before(deadline); werr != nil || expired {
			e := &LockedError{Path: p, Holder: readHolder(f), Waited: time.Since(start)}
			if !expired {
				e.NoWait = werr // the wait ends before its time: it cannot be watched
			}
			return nil, false, e
		}
		if err := w.wait(ctx, deadline); err != nil && ctx.Err() != nil {
			return nil, false, fmt.Errorf("node lock %s: held by %s: %w", p, readHolder(f), ctx.Err())
		}
		if same, _ := samePath(f, p); !same {
			return nil, true, nil
		}
	}
}

// openLockFile opens the lock file without following a symlink and refuses anything but a regular file.
func openLockFile(p string, create bool) (*os.File, error) {
	// Read-only even for the exclusive holder (flock does not care): a descriptor open for writing
	// would keep the filesystem from being remounted read-only while the lock is held.
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	if create {
		flags |= unix.O_CREAT
	}
	// Lstat first: opening a FIFO or a device could block or have effects of its own.
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("node lock %s: is a %s, not a file the agent made; refusing it (remove it once no refresh-agent runs on the node)", p, kind(fi.Mode()))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("node lock %s: %w", p, err)
	}
	fd, err := unix.Open(p, flags, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("node lock %s: is a symlink, not a file the agent made; refusing it (remove it once no refresh-agent runs on the node)", p)
	}
	if err != nil {
		return nil, fmt.Errorf("node lock %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("node lock %s: not a regular file; refusing it", p)
	}
	// The holder's line is written into this file: a hard link to another file (/etc/shadow linked
	// into a user-writable state dir) would have root truncate and rewrite that file.
	if st.Nlink > 1 {
		f.Close()
		return nil, fmt.Errorf("node lock %s: has %d hard links, not a file the agent made; refusing it (remove it once no refresh-agent runs on the node)", p, st.Nlink)
	}
	return f, nil
}

func kind(m os.FileMode) string { return Kind(m) }

// Kind names a file's type for a message: regular file, directory, symlink, or the special file
// it is (a FIFO, a socket, a device).
func Kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	default:
		return "special file (" + m.Type().String() + ")"
	}
}

func samePath(f *os.File, p string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// writeHolder records who holds the lock (best effort: the lock holds without it).
func (l *Lock) writeHolder() {
	host, _ := os.Hostname()
	cmd := filepath.Base(os.Args[0])
	if len(os.Args) > 1 {
		cmd += " " + os.Args[1]
	}
	s := fmt.Sprintf("pid %d on %s (%s) since %s\n", os.Getpid(), host, cmd, time.Now().UTC().Format(time.RFC3339))
	_ = l.rewrite([]byte(s))
}

// rewrite replaces the lock file's contents through a descriptor of its own, closed at once, and
// only when it is still the file locked.
func (l *Lock) rewrite(data []byte) error {
	fd, err := unix.Open(l.f.Name(), unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	w := os.NewFile(uintptr(fd), l.f.Name())
	defer w.Close()
	wi, err := w.Stat()
	if err != nil {
		return err
	}
	if li, err := l.f.Stat(); err != nil || !os.SameFile(wi, li) {
		return err // replaced meanwhile: not the file locked
	}
	if err := w.Truncate(0); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func readHolder(f *os.File) string {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	s := strings.TrimSpace(string(buf[:n]))
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "another process (its pid not recorded yet, or a reader such as a dry run)"
	}
	return s
}

// Unlock releases the lock; the holder's line is cleared first, so that a waiter never names a
// process that no longer holds it. A nil Lock is fine.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.exclusive {
		_ = l.rewrite(nil)
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	if l.dir != nil {
		if derr := l.dir.Close(); err == nil {
			err = derr
		}
		l.dir = nil
	}
	return err
}

// closeWatch wakes a waiter when the lock file is closed by someone (a holder's release, its exit)
// or replaced: inotify, read through the runtime's poller, so a wait costs nothing until then.
type closeWatch struct{ f *os.File }

func watchClose(p, dir string) (*closeWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, p, unix.IN_CLOSE_WRITE|unix.IN_CLOSE_NOWRITE|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_ATTRIB|unix.IN_DONT_FOLLOW); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// The state dir's lock is released by closing the dir (IN_CLOSE_NOWRITE on the dir itself); its
	// children's events wake the waiter too, which then only tries again.
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_NOWRITE|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_DONT_FOLLOW|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &closeWatch{f: os.NewFile(uintptr(fd), "inotify")}, nil
}

// wait returns at the next event, at the deadline, or when ctx ends.
func (w *closeWatch) wait(ctx context.Context, deadline time.Time) error {
	if err := w.f.SetReadDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, 4096)
	_, err := w.f.Read(buf)
	return err
}

func (w *closeWatch) Close() {
	if w != nil {
		w.f.Close()
	}
}

// lockDir flocks the state dir (how as for the lock file, f already locked): a second process that
// locked a new lock file (the holder's removed or replaced) still waits here, up to the same
// deadline, and gives up naming the holder as /proc/locks shows it. retry says the lock file was
// replaced while waiting.
func lockDir(ctx context.Context, dir string, f *os.File, w *closeWatch, how int, start, deadline time.Time) (d *os.File, retry bool, err error) {
	// The state dir is the operator's path, followed as given (a symlink to where the state lives,
	// as the lock file's own open follows it); the directory opened must be the one holding the
	// lock file already locked, or the path changed in between and the caller opens both again.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("node lock %s: %w", dir, err)
	}
	d = os.NewFile(uintptr(fd), dir)
	var in, held unix.Stat_t
	if unix.Fstatat(fd, filepath.Base(f.Name()), &in, unix.AT_SYMLINK_NOFOLLOW) != nil || unix.Fstat(int(f.Fd()), &held) != nil ||
		in.Dev != held.Dev || in.Ino != held.Ino {
		d.Close()
		return nil, true, nil
	}
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return d, false, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			d.Close()
			return nil, false, fmt.Errorf("node lock %s: %w", dir, err)
		}
		p := f.Name()
		if w == nil || !time.Now().Before(deadline) {
			h := dirHolder(d, f)
			d.Close()
			return nil, false, &LockedError{Path: p, Holder: h, Waited: time.Since(start)}
		}
		if err := w.wait(ctx, deadline); err != nil && ctx.Err() != nil {
			h := dirHolder(d, f)
			d.Close()
			return nil, false, fmt.Errorf("node lock %s: held by %s: %w", p, h, ctx.Err())
		}
	}
}

// dirHolder names the holder of the state dir's lock: the lock file's line when it has one (a
// replaced file may carry the holder's), else the pid /proc/locks gives for the dir's inode.
func dirHolder(d, f *os.File) string {
	if h, ok := flockHolder(d); ok {
		return h[:len(h)-1] + "; the lock file was removed or replaced while it held the lock)"
	}
	return readHolder(f)
}

// flockHolder names the process /proc/locks shows holding a flock on d's inode: "pid N (COMMAND)".
func flockHolder(d *os.File) (string, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return "", false
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return "", false
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	for _, line := range strings.Split(string(data), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 6 || fs[1] == "->" || fs[1] != "FLOCK" || !strings.EqualFold(fs[5], want) {
			continue
		}
		pid := fs[4]
		cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		c := strings.Join(strings.Fields(strings.ReplaceAll(string(cmd), "\x00", " ")), " ")
		if len(c) > 160 {
			c = c[:160]
		}
		if c == "" {
			c = "command unknown"
		}
		return fmt.Sprintf("pid %s (%s)", pid, c), true
	}
	return "", false
}
