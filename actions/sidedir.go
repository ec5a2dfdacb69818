package actions

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// A target in a directory whose reader takes every entry (plan.SideDir: p11-kit's trust sources)
// keeps its side files in a hidden subdirectory of that directory, on the same filesystem (the
// backup stays a hard link, the commit a rename), where the reader skips them.

// sideDirOf is the side directory of the target p, or "" when its side files lie beside it.
func sideDirOf(p string) string {
	if d := path.Dir(sideName(p, sideTemp)); d != path.Dir(p) {
		return d
	}
	return ""
}

// checkSideDir says why the side directory d of target cannot be used: taken by something that is
// not a directory (a symlink, a file), or a mount point. Absent is fine: the transaction makes it.
func (r *Root) checkSideDir(target, d string) error {
	rp, _ := rel(d)
	fi, err := r.root.Lstat(rp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Made in the target's directory: one more link to it (adversary r24 b/06).
		if n, full := r.atLinkLimit(path.Dir(rp)); full {
			return fmt.Errorf("%s: %w: the directory %s has %d links, its filesystem's most: its side directory %s cannot be made (EMLINK)", target, ErrUnwritable, path.Dir(d), n, d)
		}
		return nil
	case err != nil:
		return fmt.Errorf("%s: side directory %s: %w", target, d, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %w: the side directory %s is a %s", target, ErrSideTaken, d, kind(fi.Mode()))
	case r.isMountRoot(rp):
		return fmt.Errorf("%s: %w: the side directory %s is a mount point", target, ErrSideTaken, d)
	}
	if why := r.dirBlocker(rp); why != "" { // its side files could not be made or removed (r24 b/04)
		return fmt.Errorf("%s: %w: the side directory %s %s", target, ErrUnwritable, d, why)
	}
	return nil
}

// ensureSideDir makes the side directory d (mode 0700, the agent's owner) unless it is there, and
// checks what is there is a directory: its entry is made durable with the parents' fsync that
// precedes any commit.
func (r *Root) ensureSideDir(target, d string) error {
	rp, _ := rel(d)
	if err := r.root.Mkdir(rp, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("side directory %s: %w", d, err)
	}
	return r.checkSideDir(target, d)
}

// dropSideDir removes the side directory d when it is empty (best effort: another target's side
// files, or a crash's, keep it; a later finish or sweep removes it).
func (r *Root) dropSideDir(d string) {
	rp, _ := rel(d)
	if fi, err := r.root.Lstat(rp); err == nil && fi.IsDir() {
		_ = r.root.Remove(rp) // fails on a non-empty directory, which stays
	}
}
