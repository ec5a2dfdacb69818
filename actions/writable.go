package actions

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnwritable marks a path the node cannot take a write at, whatever is retried: a target that is
// a directory or a FIFO, a file or directory marked immutable or append-only (chattr +i, +a), a
// directory on a read-only mount. The plan checks each on the node (Check, so the dry run too) and
// refuses, naming the path, with the same reason the write would fail with half way.
var ErrUnwritable = errors.New("the node cannot take this write")

// The inode flags of FS_IOC_GETFLAGS that make a rename, link or unlink fail with EPERM.
const (
	fsImmutableFL = 0x10
	fsAppendFL    = 0x20
)

// writeBlocker says why f (what: "the file", "its directory") cannot be written, or "".
func writeBlocker(f *os.File) string {
	if why := flagBlocker(f); why != "" {
		return why
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err == nil && st.Flags&unix.ST_RDONLY != 0 {
		return "is on a read-only mount"
	}
	return ""
}

// flagBlocker says why f cannot be unlinked, renamed over or written by its inode flags
// (immutable, append-only), or "".
func flagBlocker(f *os.File) string {
	if flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS); err == nil {
		switch {
		case flags&fsImmutableFL != 0:
			return "is immutable (chattr +i; lsattr shows it)"
		case flags&fsAppendFL != 0:
			return "is append-only (chattr +a; lsattr shows it)"
		}
	}
	return ""
}

// Blocked says why the regular file p (a state-dir file; never followed through a symlink at its
// last component) cannot be unlinked or replaced (immutable, append-only), or "" (absent too).
func Blocked(p string) string {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return flagBlocker(f)
}

// writeDir is the directory p's write happens in (its parent, or the nearest existing ancestor when
// parents are missing: where they are created), and its path relative to the root.
func writeDir(p string, missing []string) (dir, rp string) {
	dir = path.Dir(p)
	if len(missing) > 0 {
		dir = path.Dir(missing[0])
	}
	rp = "."
	if dir != "/" {
		rp, _ = rel(dir)
	}
	return dir, rp
}

// checkWritable refuses op's write when the directory it writes in (its parent, or the nearest
// existing ancestor when parents are missing: where they are created) or the target itself cannot
// take it.
func (r *Root) checkWritable(p string, missing []string) error {
	dir, dr := writeDir(p, missing)
	if why := r.dirBlocker(dr); why != "" {
		return fmt.Errorf("%s: %w: the directory %s %s", p, ErrUnwritable, dir, why)
	}
	if len(missing) > 0 {
		if n, full := r.atLinkLimit(dr); full {
			return fmt.Errorf("%s: %w: the directory %s has %d links, its filesystem's most: a directory made in it would fail (EMLINK)", p, ErrUnwritable, dir, n)
		}
		return nil
	}
	tr, _ := rel(p)
	fi, err := r.root.Lstat(tr)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // absent; anything else checkPath refused
	}
	f, err := r.root.OpenFile(tr, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if why := writeBlocker(f); why != "" {
		return fmt.Errorf("%s: %w: it %s", p, ErrUnwritable, why)
	}
	return nil
}

// CheckStateWritable refuses a refresh whose state-dir writes would fail: the state dir (or, when it
// does not exist yet, the nearest existing directory above it, where it is created) immutable,
// append-only or on a read-only mount, or its record or journal immutable. The dry run makes this
// check as the real run does.
func CheckStateWritable(stateDir string) error {
	dir := nearestExisting(stateDir)
	names := []string{dir}
	if dir == stateDir {
		names = append(names, filepath.Join(stateDir, "current.json"), filepath.Join(stateDir, "journal.json"), filepath.Join(stateDir, "payloads"))
	}
	for _, p := range names {
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			continue // absent, or refused elsewhere (a symlink)
		}
		why := writeBlocker(f)
		f.Close()
		if why != "" {
			what := p
			switch {
			case p == stateDir:
				what = "the state dir " + p
			case dir != stateDir:
				what = p + ", where the state dir " + stateDir + " would be created,"
			}
			return fmt.Errorf("state dir: %w: %s %s", ErrUnwritable, what, why)
		}
	}
	return nil
}

// nearestExisting is dir, or when it does not exist the nearest ancestor that does: where it
// would be created.
func nearestExisting(dir string) string {
	for {
		if _, err := os.Lstat(dir); err == nil || filepath.Dir(dir) == dir {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}

// onOverlay says whether the directory dir (root-relative) is on an overlayfs.
func (r *Root) onOverlay(dir string) bool {
	d, err := r.root.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	var st unix.Statfs_t
	return unix.Fstatfs(int(d.Fd()), &st) == nil && st.Type == unix.OVERLAYFS_SUPER_MAGIC
}

// dirBlocker says why the directory rp cannot take the transaction's entries (immutable,
// append-only), or "".
func (r *Root) dirBlocker(rp string) string {
	d, err := r.root.Open(rp)
	if err != nil {
		return ""
	}
	defer d.Close()
	return writeBlocker(d)
}

// atLinkLimit says whether a directory made in rp would fail: a new directory is one more link to
// the one it is made in, and at ext4's EXT4_LINK_MAX (without dir_nlink, which keeps a large
// directory's count at 1) mkdir fails EMLINK half way (adversary r15 a/02); n is rp's count.
func (r *Root) atLinkLimit(rp string) (n uint64, full bool) {
	fi, err := r.root.Lstat(rp)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return uint64(st.Nlink), ok && st.Nlink >= linkMaxFloor
}
