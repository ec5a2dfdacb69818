package actions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/diff"
)

// nofollowRoot is os.Root without its one leniency: os.Root follows a symlink that stays inside
// the root. The transaction checks every component for a symlink before it acts (checkPath), but a
// user who owns a directory on the way (core's ~/.ssh, whose authorized_keys.d the agent writes)
// can swap in a symlink to /etc between that check and the write, and root would write through it.
// Every call here that opens, creates, links, renames or removes resolves the parent one component
// at a time from a descriptor of the root, each with O_NOFOLLOW, and acts relative to the last:
// a symlink anywhere on the way is refused at the moment of the call, and a directory swapped
// after it was opened is written as the directory it was. Lstat keeps os.Root's rules (beneath.go).
type nofollowRoot struct {
	*os.Root
	fd      int  // the root directory, O_PATH
	beneath bool // openat2 resolves beneath fd: the fast paths (beneath.go)
}

func openNofollowRoot(abs string) (*nofollowRoot, error) {
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		r.Close()
		return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	return &nofollowRoot{Root: r, fd: fd, beneath: probeBeneath(fd)}, nil
}

// Close releases both descriptors.
func (r *nofollowRoot) Close() error {
	unix.Close(r.fd)
	return r.Root.Close()
}

// parent opens the directory that holds rp (root-relative, clean), refusing a symlink or a
// non-directory on the way, and returns it with rp's last component. The caller closes dfd.
func (r *nofollowRoot) parent(op, rp string) (dfd int, base string, err error) {
	if r.beneath && cleanRel(rp) {
		dir, base := splitLast(rp)
		if dfd, err := r.openDirBeneath(dir, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS); err == nil {
			return dfd, base, nil
		}
		// Any failure: the walk below says which component, as it always did.
	}
	parts := strings.Split(rp, "/")
	if rp == "." || rp == "" {
		parts = []string{"."}
	}
	dfd, err = unix.Dup(r.fd)
	if err != nil {
		return -1, "", &fs.PathError{Op: op, Path: rp, Err: err}
	}
	for i, c := range parts[:len(parts)-1] {
		if c == "" || c == "." || c == ".." {
			unix.Close(dfd)
			return -1, "", &fs.PathError{Op: op, Path: rp, Err: errors.New("not a clean path inside the root")}
		}
		next, err := unix.Openat(dfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			err = r.symlinkErr(dfd, c, err)
			unix.Close(dfd)
			return -1, "", &fs.PathError{Op: op, Path: strings.Join(parts[:i+1], "/"), Err: err}
		}
		unix.Close(dfd)
		dfd = next
	}
	base = parts[len(parts)-1]
	if base == ".." {
		unix.Close(dfd)
		return -1, "", &fs.PathError{Op: op, Path: rp, Err: errors.New("not a clean path inside the root")}
	}
	return dfd, base, nil
}

// symlinkErr turns the ENOTDIR or ELOOP of a symlinked component into ErrSymlink.
func (r *nofollowRoot) symlinkErr(dfd int, name string, err error) error {
	if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	return err
}

// OpenFile opens rp with O_NOFOLLOW added: its last component is never followed either.
func (r *nofollowRoot) OpenFile(rp string, flag int, perm fs.FileMode) (*os.File, error) {
	dfd, base, err := r.parent("open", rp)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, base, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: rp, Err: r.symlinkErr(dfd, base, err)}
	}
	return os.NewFile(uintptr(fd), rp), nil
}

// Open opens rp for reading.
func (r *nofollowRoot) Open(rp string) (*os.File, error) { return r.OpenFile(rp, os.O_RDONLY, 0) }

// ReadFile reads rp whole, up to the payload budget: no file the agent reads is larger than what a
// payload may carry, and a node file may be anything (5 GB sparse: round 11, core 01).
func (r *nofollowRoot) ReadFile(rp string) ([]byte, error) {
	return r.readUpTo(rp, diff.MaxPayloadSize)
}

// readUpTo reads rp whole if it holds at most max bytes, and ErrTooLarge without holding more than
// max+1 of them if not: counted as read, not as stat says (a file that grows after its stat, a
// file whose size the filesystem does not report).
func (r *nofollowRoot) readUpTo(rp string, max int64) ([]byte, error) {
	f, err := r.Open(rp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, tooLarge(rp, max)
	}
	data, err := ReadBounded(f, max)
	if err == nil && int64(len(data)) > max {
		return nil, tooLarge(rp, max)
	}
	return data, err
}

func tooLarge(rp string, max int64) error {
	return fmt.Errorf("/%s: %w: more than %d bytes (--max-payload-bytes bounds every file the agent reads)", rp, ErrTooLarge, max)
}

// Mkdir creates the directory rp.
func (r *nofollowRoot) Mkdir(rp string, perm fs.FileMode) error {
	dfd, base, err := r.parent("mkdir", rp)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Mkdirat(dfd, base, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: rp, Err: err}
	}
	return nil
}

// Remove removes the file or empty directory rp (never what a symlink names: unlink removes the
// link itself).
func (r *nofollowRoot) Remove(rp string) error {
	dfd, base, err := r.parent("remove", rp)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	err = unix.Unlinkat(dfd, base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: rp, Err: err}
	}
	return nil
}

// Rename renames oldp to newp.
func (r *nofollowRoot) Rename(oldp, newp string) error {
	return r.two("rename", oldp, newp, func(od int, ob string, nd int, nb string) error {
		return unix.Renameat(od, ob, nd, nb)
	})
}

// RenameExchange swaps oldp and newp atomically (renameat2 RENAME_EXCHANGE): both must exist.
func (r *nofollowRoot) RenameExchange(oldp, newp string) error {
	return r.two("rename", oldp, newp, func(od int, ob string, nd int, nb string) error {
		return unix.Renameat2(od, ob, nd, nb, unix.RENAME_EXCHANGE)
	})
}

// RenameNoReplace renames oldp to newp only where nothing is at newp (RENAME_NOREPLACE: EEXIST
// otherwise).
func (r *nofollowRoot) RenameNoReplace(oldp, newp string) error {
	return r.two("rename", oldp, newp, func(od int, ob string, nd int, nb string) error {
		return unix.Renameat2(od, ob, nd, nb, unix.RENAME_NOREPLACE)
	})
}

// Link makes newp a hard link to oldp (oldp's last component not followed).
func (r *nofollowRoot) Link(oldp, newp string) error {
	return r.two("link", oldp, newp, func(od int, ob string, nd int, nb string) error {
		return unix.Linkat(od, ob, nd, nb, 0)
	})
}

func (r *nofollowRoot) two(op, oldp, newp string, do func(int, string, int, string) error) error {
	od, ob, err := r.parent(op, oldp)
	if err != nil {
		return err
	}
	defer unix.Close(od)
	nd, nb, err := r.parent(op, newp)
	if err != nil {
		return err
	}
	defer unix.Close(nd)
	if err := do(od, ob, nd, nb); err != nil {
		return &os.LinkError{Op: op, Old: oldp, New: newp, Err: err}
	}
	return nil
}

// lstatPrefixes lstats each prefix of rp (root-relative and clean) in turn, each from the directory
// the one before it opened: linear in rp's length, where an Lstat of every prefix from the root
// costs its square (adversary r15 d/02: 700 files 120 directories deep took 38 s of CPU to plan on a
// node that had them). fn gets the prefix's end in rp and its lstat; it returns whether to go on,
// and the walk ends at a prefix that is no directory.
func (r *nofollowRoot) lstatPrefixes(rp string, fn func(end int, mode fs.FileMode, err error) bool) error {
	dfd, err := unix.Dup(r.fd)
	if err != nil {
		return &fs.PathError{Op: "lstat", Path: rp, Err: err}
	}
	defer func() { unix.Close(dfd) }()
	end := 0
	for i, c := range strings.Split(rp, "/") {
		if i > 0 {
			end++
		}
		end += len(c)
		var st unix.Stat_t
		err := unix.Fstatat(dfd, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			err = &fs.PathError{Op: "lstat", Path: rp[:end], Err: err}
		}
		mode := statMode(st.Mode)
		if !fn(end, mode, err) || err != nil || !mode.IsDir() || end == len(rp) {
			return nil
		}
		next, err := unix.Openat(dfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return &fs.PathError{Op: "open", Path: rp[:end], Err: r.symlinkErr(dfd, c, err)}
		}
		unix.Close(dfd)
		dfd = next
	}
	return nil
}

// statMode is the fs.FileMode of a stat's st_mode: its type and permission bits.
func statMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return mode
}
