package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"golang.org/x/sys/unix"
)

// A restore trusts nothing but what the agent saved (journal rule 17; adversary round 4 F2: a
// backup beside a still-original target, swapped for a symlink to /etc/shadow, was renamed over the
// original and recover said rolled back). Before a backup is used it must be provably the
// original: a regular file, opened without following a symlink, with the original's mode and owner,
// and either the untouched target under a second name or contents that hash to the sha256 the
// journal recorded when the backup was made.

// ErrHostileBackup marks a backup a restore would use that is not provably the original the agent
// saved: it is never renamed over a target; the target and the backup are left as they are.
var ErrHostileBackup = errors.New("a hostile side file: the backup is not provably the original the agent saved, so it is never restored; the file in place and the backup are left as they are (compare them, then remove the backup by hand once no refresh-agent runs)")

// openRegular opens rp (a file in a directory inside the root) for reading without following a
// symlink at its last component (os.Root follows one), refusing anything but a regular file; want,
// when set, is the lstat the open must match (the same inode).
func (r *Root) openRegular(rp string, want fs.FileInfo) (*os.File, fs.FileInfo, error) {
	dir := path.Dir(rp)
	d, err := r.root.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	// O_NONBLOCK: a FIFO put there must not hang the agent (and is refused below).
	fd, err := unix.Openat(int(d.Fd()), path.Base(rp), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, nil, fmt.Errorf("/%s is a symlink", rp)
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: "/" + rp, Err: err}
	}
	f := os.NewFile(uintptr(fd), "/"+rp)
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("/%s is a %s, not a regular file", rp, kind(fi.Mode()))
	case want != nil && !os.SameFile(fi, want):
		err = fmt.Errorf("/%s changed while it was opened", rp)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// hashRegular returns the sha256 of the regular file rp (lstat want, when set) and its info.
func (r *Root) hashRegular(rp string, want fs.FileInfo) (string, fs.FileInfo, error) {
	f, fi, err := r.openRegular(rp, want)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), fi, nil
}

// sameOwnerMode reports whether fi has the original's recorded mode and owner.
func (e Entry) sameOwnerMode(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().Perm() == e.OrigMode && int(st.Uid) == e.OrigUID && int(st.Gid) == e.OrigGID
}

// provenBackup returns the lstat of e's backup when it is provably the original the agent saved
// (rule 17): regular, opened O_NOFOLLOW, and the target's second name (same inode: a target not
// yet replaced) or, with the original's mode and owner, hashing to the recorded OrigSHA256. A
// journal that records no hash (before version 4) proves a backup by type, mode and owner only, and
// such a backup is used only over the agent's own new file (restorable). A missing backup gives an
// error that Is fs.ErrNotExist; any other failure wraps ErrHostileBackup, naming the backup.
func (t *Txn) provenBackup(e Entry) (fs.FileInfo, error) {
	br, _ := rel(e.Backup)
	bi, err := t.root.root.Lstat(br)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("its backup %s is gone: %w", e.Backup, err)
	}
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w", e.Backup, err)
	}
	hostile := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrHostileBackup, e.Backup, why) }
	if bi.Mode()&fs.ModeSymlink != 0 {
		return nil, hostile("it is a symlink")
	}
	if !bi.Mode().IsRegular() {
		return nil, hostile("it is a " + kind(bi.Mode()) + ", not a regular file")
	}
	tr, _ := rel(e.Path)
	if ti, err := t.root.root.Lstat(tr); err == nil && ti.Mode().IsRegular() && os.SameFile(ti, bi) && !e.isNew(ti) && !e.BackupCopy {
		return bi, nil // the untouched target under its second name
	}
	if !e.sameOwnerMode(bi) {
		return nil, hostile("its mode or owner is not the original's")
	}
	if e.OrigSHA256 == "" {
		if e.isNew(bi) {
			return nil, hostile("it is the agent's new file, not the original")
		}
		f, _, err := t.root.openRegular(br, bi)
		if Transient(err) {
			return nil, fmt.Errorf("backup %s: %w", e.Backup, err)
		}
		if err != nil {
			return nil, hostile(err.Error())
		}
		f.Close()
		return bi, nil
	}
	sum, _, err := t.root.hashRegular(br, bi)
	if Transient(err) {
		return nil, fmt.Errorf("backup %s: %w", e.Backup, err)
	}
	if err != nil {
		return nil, hostile(err.Error())
	}
	if sum != e.OrigSHA256 {
		return nil, hostile("its contents are not the original's (they do not hash to the sha256 the journal recorded)")
	}
	return bi, nil
}

// byHash reports whether the target is its original by contents, mode and owner (the recorded
// hash): what is left to know it by when its backup is gone or not the agent's.
func (t *Txn) byHash(e Entry) bool {
	if e.OrigSHA256 == "" {
		return false
	}
	tr, _ := rel(e.Path)
	ti, err := t.root.root.Lstat(tr)
	if err != nil || !ti.Mode().IsRegular() || e.isNew(ti) || !e.sameOwnerMode(ti) {
		return false
	}
	sum, _, err := t.root.hashRegular(tr, ti)
	return err == nil && sum == e.OrigSHA256
}

// HashFile returns the sha256 of the regular file p inside the root (no symlinked component, none
// at its last either: a symlink or any other type is an error).
func (r *Root) HashFile(p string) (string, error) {
	if _, err := r.checkPath(p); err != nil {
		return "", err
	}
	rp, err := rel(p)
	if err != nil {
		return "", err
	}
	sum, _, err := r.hashRegular(rp, nil)
	return sum, err
}

// KeptBackups lists, after a rollback that did not complete, every backup still on the node, each
// saying why it stays: one the rollback refused as a source (rule 17, ErrHostileBackup's reason), or one it
// did not restore over a file in place that is neither the original nor provably the agent's new
// file (an administrator's edit after a crash: adversary r20 b/01). The operator compares each with
// the file beside it.
func (t *Txn) KeptBackups() []string {
	var out []string
	for _, e := range t.j.Entries {
		if !e.HadOriginal || e.Backup == "" {
			continue
		}
		rp, err := rel(e.Backup)
		if err != nil {
			continue
		}
		if _, err := t.root.root.Lstat(rp); err != nil {
			continue // restored (renamed back) or never made
		}
		if t.isOriginal(e) == nil {
			continue // the original is in place: the backup is only a side file the clean-up removes
		}
		why := "not restored: the file in place is not provably the original nor the agent's new file, so both are left as they are"
		if !t.legacy() {
			if _, err := t.provenBackup(e); errors.Is(err, ErrHostileBackup) {
				why = err.Error() // refused as a source (rule 17)
			}
		}
		out = append(out, fmt.Sprintf("%s (beside %s): %s", e.Backup, e.Path, why))
	}
	return out
}

// Transient reports whether err says nothing of the file but of the moment (no descriptor or memory
// left, an I/O error, an interrupted call): a check that failed so proves nothing either way, and
// what depends on it is retried, never settled (adversary r21 b2/06: an EMFILE while proving a
// backup read as "not the agent's", and the clean-up kept it, removed the journal and said applied).
func Transient(err error) bool {
	for _, e := range []error{unix.EMFILE, unix.ENFILE, unix.ENOMEM, unix.ENOBUFS, unix.EIO, unix.EINTR, unix.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
