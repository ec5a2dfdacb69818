package actions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/openshift/refresh-agent/plan"
)

// Rollback puts every original back (and removes files that did not exist before), durably, then
// checks each one: the file in place must be the backup's very inode, or absent when there was none.
// Only when every check passes does the journal move to rolledback. On any failure it returns an error
// naming each path, and the journal stays in rollingback with every backup kept, so a later Rollback
// (after a restart: Recover) tries again. It is idempotent, and refused once the transaction is done.
// Rolled back already, it checks again, and restores again whatever changed since.
func (t *Txn) Rollback() error {
	switch {
	case t.j.Phase == PhaseRolledBack && (t.j.Finishing || t.verify() == nil):
		return nil
	case t.j.Phase == PhaseDone || t.j.Phase == PhasePreparing || t.j.Finishing:
		return fmt.Errorf("rollback in phase %s", t.j.Phase)
	}
	if t.j.Phase != PhaseRollingBack {
		prev := t.j.Phase
		t.j.Phase = PhaseRollingBack
		// Nothing is restored before the journal says so: a crash must never find old files under a
		// journal that says committed (recovery would record the new state over them).
		if err := writeJournal(t.stateDir, &t.j); err != nil {
			t.j.Phase = prev
			return fmt.Errorf("journal: %w", err)
		}
	}
	if err := t.restore(); err != nil {
		return err
	}
	if err := t.verify(); err != nil {
		return err
	}
	t.j.Phase = PhaseRolledBack
	if err := writeJournal(t.stateDir, &t.j); err != nil {
		t.j.Phase = PhaseRollingBack
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// Rerun returns the unit actions to run again after the originals are back: all of them when the
// transaction had committed (they may have run on the new content), none when it never got that far
// or when the rollback is already settled (finishing).
func (t *Txn) Rerun() []plan.UnitAction {
	if !t.j.Committed || t.j.Finishing {
		return nil
	}
	return t.j.Meta.Actions
}

func (t *Txn) restore() error {
	var errs []error
	dirs := map[string]bool{}
	for _, e := range t.j.Entries {
		CrashPoint("restore")
		if err := t.restoreEntry(e); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", e.Path, err))
		}
		dirs[path.Dir(e.Path)] = true
	}
	for d := range dirs {
		if err := t.root.syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: fsync: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// restoreEntry puts one original back. The backup gets a second name beside the target, which is
// renamed over the target: atomic, no byte copied, and the inode keeps its contents, owner, mode,
// extended attributes and SELinux label. The backup itself stays until Finish, so a restore
// interrupted at any point can be repeated.
func (t *Txn) restoreEntry(e Entry) error {
	rp, _ := rel(e.Path)
	if !e.HadOriginal {
		if err := t.root.removeRegular(rp); err != nil {
			return err
		}
		return nil
	}
	if t.isOriginal(e) == nil {
		return nil // already back (a rollback resumed after a crash or a failure)
	}
	tr, _ := rel(t.restoreName(e.Path))
	switch {
	case t.legacy():
		data, err := os.ReadFile(t.legacyBackup(e))
		if err != nil {
			return err
		}
		if err := t.root.writeTemp("/"+tr, data, e.OrigMode, e.OrigUID, e.OrigGID); err != nil {
			return err
		}
	case e.BackupCopy:
		// The filesystem refused the hard link for the backup: it would refuse one now too.
		br, _ := rel(e.Backup)
		if err := t.root.copyFile(br, tr, e.OrigMode, e.OrigUID, e.OrigGID); err != nil {
			return err
		}
	default:
		if err := t.root.removeRegular(tr); err != nil {
			return err
		}
		br, _ := rel(e.Backup)
		if err := t.root.root.Link(br, tr); err != nil {
			return err
		}
	}
	return t.root.root.Rename(tr, rp)
}

// verify checks that every target is its original again.
func (t *Txn) verify() error {
	var errs []error
	for _, e := range t.j.Entries {
		if err := t.isOriginal(e); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Path, err))
		}
	}
	return errors.Join(errs...)
}

// ErrNotRestored marks a target that is not its original after a restore.
var ErrNotRestored = errors.New("not restored")

// isOriginal checks one target: the backup's inode (the original's), or absent when there was none.
func (t *Txn) isOriginal(e Entry) error {
	rp, _ := rel(e.Path)
	fi, err := t.root.root.Lstat(rp)
	if !e.HadOriginal {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%w: present, though it did not exist before", ErrNotRestored)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: missing", ErrNotRestored)
	}
	if err != nil {
		return err
	}
	if t.legacy() {
		want, err := os.ReadFile(t.legacyBackup(e))
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		return t.matchesCopy(e, rp, fi, want)
	}
	br, _ := rel(e.Backup)
	if e.BackupCopy {
		want, err := t.root.root.ReadFile(br)
		if err != nil {
			return fmt.Errorf("backup %s: %w", e.Backup, err)
		}
		return t.matchesCopy(e, rp, fi, want)
	}
	bi, err := t.root.root.Lstat(br)
	if err != nil {
		return fmt.Errorf("backup %s: %w", e.Backup, err)
	}
	if !os.SameFile(fi, bi) {
		return fmt.Errorf("%w: the file in place is not the original", ErrNotRestored)
	}
	return nil
}

// A version 1 journal kept copies in the state dir's backup directory; they are restored by copy.
func (t *Txn) legacy() bool { return t.j.Version < 2 }

func (t *Txn) legacyBackup(e Entry) string {
	return filepath.Join(t.stateDir, backupDir, filepath.Base(e.Backup))
}

// matchesCopy checks a target restored from a copy: the backup's contents, the original's mode and
// owner.
func (t *Txn) matchesCopy(e Entry, rp string, fi fs.FileInfo, want []byte) error {
	got, err := t.root.root.ReadFile(rp)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !bytes.Equal(got, want) || fi.Mode().Perm() != e.OrigMode ||
		st == nil || int(st.Uid) != e.OrigUID || int(st.Gid) != e.OrigGID {
		return fmt.Errorf("%w: the file in place differs from the backup", ErrNotRestored)
	}
	return nil
}
