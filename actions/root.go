// Package actions performs a refresh's effects on a node: an all-or-nothing, crash-safe file
// transaction inside the node's root directory, and reloads or restarts of systemd units over D-Bus.
// What to do is decided beforehand by the plan package; nothing here judges a change.
package actions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/diff"
)

// Root is the node's filesystem root (/host in the DaemonSet). Every operation resolves inside it
// through os.Root, so no path can escape; on top of that, any symlink on the way to a managed path is
// refused, never followed: checked before the transaction starts (checkPath), and again by every
// call that writes, at the moment it writes (nofollowRoot).
type Root struct {
	Dir  string
	root *nofollowRoot
}

// OpenRoot opens dir as a node root.
func OpenRoot(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r, err := openNofollowRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("node root %s: %w", dir, err)
	}
	return &Root{Dir: abs, root: r}, nil
}

// Close releases the root.
func (r *Root) Close() error { return r.root.Close() }

// ErrSymlink marks a path that passes through a symlink.
var ErrSymlink = errors.New("a path component is a symlink")

// rel turns an absolute node path into a root-relative one, refusing unclean paths.
func rel(p string) (string, error) {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
		return "", fmt.Errorf("%s: not an absolute, clean file path", p)
	}
	return strings.TrimPrefix(p, "/"), nil
}

// checkPath refuses p when any existing component, the last one included, is a symlink, and when
// the last one exists but is not a regular file. It returns the parent directories that do not
// exist yet, outermost first.
func (r *Root) checkPath(p string) (missing []string, err error) {
	rp, err := rel(p)
	if err != nil {
		return nil, err
	}
	// Each component's path is a prefix of p (no path is built per component), lstat'ed from the
	// directory the one before opened: a walk costs p's length, and plan.CheckName bounds its
	// components.
	var out error
	werr := r.root.lstatPrefixes(rp, func(end int, mode fs.FileMode, err error) bool {
		cur := rp[:end]
		last := end == len(rp)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			for j := end; j < len(rp); j++ {
				if rp[j] == '/' {
					missing = append(missing, p[:j+1]) // "/" + rp[:j]: cur and each directory below it
				}
			}
		case err != nil:
			out = fmt.Errorf("%s: %w", p, err)
		case mode&fs.ModeSymlink != 0:
			out = fmt.Errorf("%s: %w (/%s)", p, ErrSymlink, cur)
		case !last && !mode.IsDir():
			// Refused before anything is written, by the dry run as by the real run (exit 3): the
			// write would fail on it (ENOTDIR), and a file is never turned into a directory.
			missing = []string{"/" + cur}
			out = &notDirError{fmt.Errorf("%s: %w: /%s is a %s, not a directory", p, ErrUnwritable, cur, kind(mode))}
		case last && !mode.IsRegular():
			out = fmt.Errorf("%s: %w: it exists and is not a regular file (%s)", p, ErrUnwritable, kind(mode))
		default:
			return true
		}
		return false
	})
	switch {
	case werr != nil:
		return nil, fmt.Errorf("%s: %w", p, werr)
	case out != nil:
		if _, notDir := out.(*notDirError); notDir {
			return missing, out
		}
		return nil, out
	}
	return missing, nil
}

// notDirError is checkPath's error for a path under a non-directory (the one named first in its
// missing list): a write there is refused; a removal there has nothing to remove.
type notDirError struct{ error }

func (e *notDirError) Unwrap() error { return e.error }

// CheckStateDir refuses a state directory inside the root that passes through a symlink: the
// agent writes its record, payloads and journal there with ordinary file calls, and a symlinked
// component would send them (a pull secret among them) outside the root. Any state dir, inside the
// root or out, must be one no other user can write, swap or have made (ownStateDir).
func (r *Root) CheckStateDir(dir string) error {
	rp, err := filepath.Rel(r.Dir, dir)
	if err != nil || rp == ".." || strings.HasPrefix(rp, "../") || filepath.IsAbs(rp) {
		return checkOutsideStateDir(dir)
	}
	parts := strings.Split(filepath.ToSlash(rp), "/")
	for i := range parts {
		cur := strings.Join(parts[:i+1], "/")
		fi, err := r.root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("state dir %s: %w", dir, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("state dir %s: %w (/%s)", dir, ErrSymlink, cur)
		}
		if !fi.IsDir() {
			return fmt.Errorf("state dir %s: /%s is not a directory", dir, cur)
		}
		if err := ownStateDir(fi, i == len(parts)-1); err != nil {
			return fmt.Errorf("state dir %s: /%s %w", dir, cur, err)
		}
	}
	return nil
}

// checkOutsideStateDir is CheckStateDir for a state dir outside the root: the operator may reach it
// through symlinks (their own: a symlink another user owns could be pointed elsewhere later), and
// the directory they lead to, and every directory above it, must pass ownStateDir, as inside the
// root. Without it a directory squatted under /tmp by another user held a journal root trusted
// (adversary r21 b2/01: it deleted a managed file as one the transaction "added").
func checkOutsideStateDir(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("state dir %s: %w", dir, err)
	}
	// The longest existing prefix, each symlink on the way owned by root or the agent.
	existing, whole := "/", true // whole: every component exists (else the agent makes the rest)
	for _, part := range strings.Split(strings.TrimPrefix(filepath.Clean(dir), "/"), "/") {
		if part == "" {
			continue
		}
		next := filepath.Join(existing, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			whole = false
			break
		}
		if err != nil {
			return fmt.Errorf("state dir %s: %w", dir, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && st.Uid != uint32(os.Geteuid()) {
				return fmt.Errorf("state dir %s: %s is a symlink owned by uid %d: refusing a state dir another user can redirect", dir, next, st.Uid)
			}
			if next, err = filepath.EvalSymlinks(next); err != nil {
				return fmt.Errorf("state dir %s: %w", dir, err)
			}
		}
		existing = next
	}
	if existing == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(existing, "/"), "/")
	for i := range parts {
		cur := "/" + strings.Join(parts[:i+1], "/")
		fi, err := os.Lstat(cur)
		if err != nil {
			return fmt.Errorf("state dir %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("state dir %s: %s is not a directory", dir, cur)
		}
		if err := ownStateDir(fi, whole && i == len(parts)-1); err != nil {
			return fmt.Errorf("state dir %s: %s %w", dir, cur, err)
		}
	}
	return nil
}

// ownStateDir refuses a state dir another user could write into or rename: the agent, as root,
// reads its record and journal back from there and trusts them to name what it wrote. The dir
// itself must be the agent's (owned by its uid, writable by no one else); a directory above it may
// be a sticky one such as /tmp, but must be owned by root or the agent.
func ownStateDir(fi fs.FileInfo, last bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	euid := uint32(os.Geteuid())
	perm := fi.Mode().Perm()
	switch {
	case last && st.Uid != euid:
		return fmt.Errorf("is owned by uid %d, not the agent's (%d): refusing a state dir another user made", st.Uid, euid)
	case st.Uid != euid && st.Uid != 0:
		return fmt.Errorf("is owned by uid %d: refusing a state dir below a directory another user owns", st.Uid)
	case perm&0o022 != 0 && (last || fi.Mode()&fs.ModeSticky == 0):
		return fmt.Errorf("is writable by group or others (mode %04o): refusing a state dir another user can change", perm)
	}
	return nil
}

// Stat returns a regular file's info inside the root, refusing symlinked components.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	if _, err := r.checkPath(p); err != nil {
		return nil, err
	}
	rp, _ := rel(p)
	return r.root.Lstat(rp)
}

// ErrTooLarge marks a file ReadFileUpTo would not read.
var ErrTooLarge = errors.New("file too large to read")

// ReadFileUpTo is ReadFile for files of at most max bytes: a larger one returns its info and
// ErrTooLarge without more than max+1 bytes read (a node file may be anything, sparse gigabytes
// included).
func (r *Root) ReadFileUpTo(p string, max int64) ([]byte, fs.FileInfo, error) {
	if _, err := r.checkPath(p); err != nil {
		return nil, nil, err
	}
	// One more walk, to the file it opens (no Lstat from the root besides: each is a walk too), and
	// the info is the opened file's own.
	rp, _ := rel(p)
	f, err := r.root.OpenFile(rp, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, nil, err
	case !fi.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%s: %w: it exists and is not a regular file (%s)", p, ErrUnwritable, kind(fi.Mode()))
	case fi.Size() > max:
		return nil, fi, tooLarge(rp, max)
	}
	data, err := ReadBounded(f, max)
	if err == nil && int64(len(data)) > max {
		return nil, fi, tooLarge(rp, max)
	}
	return data, fi, err
}

// ReadFile reads a file inside the root, refusing symlinked components, up to the payload budget
// (diff.MaxPayloadSize): a larger file is ErrTooLarge naming it, never read whole.
func (r *Root) ReadFile(p string) ([]byte, fs.FileInfo, error) {
	return r.ReadFileUpTo(p, diff.MaxPayloadSize) // bounded: see nofollowRoot.ReadFile
}

// syncDir fsyncs a directory inside the root so that renames and removals in it are durable.
func (r *Root) syncDir(dir string) error {
	name := "."
	if dir != "/" {
		name = strings.TrimPrefix(dir, "/")
	}
	d, err := r.root.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
