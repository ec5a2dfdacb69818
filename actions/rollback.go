package actions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// Rollback puts every original back (and removes files that did not exist before), durably, then
// checks each one: the file in place must be the backup's very inode, or absent when there was none.
// Only when every check passes does the journal move to rolledback. On any failure it returns an error
// naming each path, and the journal stays in rollingback with every backup kept, so a later Rollback
// (after a restart: Recover) tries again. It is idempotent, and refused once the transaction is done.
// Rolled back already, it checks again, and restores again what went missing or back to the new file
// since (never over a file another wrote: restoreEntry).
func (t *Txn) Rollback() error {
	switch {
	case t.j.Phase == PhaseRolledBack && t.j.Finishing:
		// Settled, only its leftovers to remove: but a rollback's leftovers are the backups, so
		// every original must be in place first (by its backup or its recorded hash, the backup
		// gone), or nothing is removed (adversary r21 b2/02: a committed journal edited to say
		// rolled back and finishing had every backup, the only copies of the originals, deleted,
		// saying rolled back). Finish removes nothing else of a rollback's.
		if err := t.verify(); err != nil {
			return fmt.Errorf("%w: the journal says rolled back, yet %w; keeping the journal and every backup", ErrHostile, err)
		}
		return nil
	case t.j.Phase == PhaseRolledBack && t.verify() == nil:
		return nil
	case t.j.Phase == PhaseDone || t.j.Phase == PhasePreparing || t.j.Finishing:
		return fmt.Errorf("rollback in phase %s", t.j.Phase)
	}
	// The temp files go first: no rollback needs them, removing them needs no space and frees it
	// (on a full disk the journal writes below may then succeed).
	t.dropTemps()
	if t.j.Phase != PhaseRollingBack {
		prev := t.j.Phase
		t.j.Phase = PhaseRollingBack
		// Nothing is restored before the journal says so: a crash must never find old files under a
		// journal that says committed (recovery would record the new state over them). When the
		// journal on disk says prepared already (the commit's journal write failed: a full disk),
		// a recovery rolls back from it as from this one: nothing needs writing, so a rollback
		// needs no space.
		if !t.diskSays(PhasePrepared, PhaseRollingBack) {
			if err := writeJournal(t.stateDir, &t.j); err != nil {
				t.j.Phase = prev
				return fmt.Errorf("journal: %w", err)
			}
		}
	}
	if err := t.restore(); err != nil {
		return err
	}
	if err := t.verify(); err != nil {
		return err
	}
	t.j.Phase = PhaseRolledBack
	if err := writeJournal(t.stateDir, &t.j); err != nil && !t.diskSays(PhasePrepared, PhaseRollingBack) {
		t.j.Phase = PhaseRollingBack
		return fmt.Errorf("journal: %w", err)
	}
	// Written, or (a full disk) the journal on disk still says prepared or rolling back: a recovery
	// from it finds every original in place, restores nothing and finishes the same way. Finish
	// writes the journal next.
	return nil
}

// diskSays reports whether the journal on disk is in one of phases, committed as the transaction
// in memory says (what a recovery would start from).
func (t *Txn) diskSays(phases ...Phase) bool {
	j, err := readJournal(t.stateDir)
	return err == nil && j != nil && slices.Contains(phases, j.Phase) && j.Committed == t.j.Committed
}

// dropTemps removes the temp files of the entries (regular files only). Nothing recovers forward
// from a temp file, so it may go before the journal says anything; the clean-up reports what stays.
func (t *Txn) dropTemps() {
	for _, e := range t.j.Entries {
		if e.Temp == "" {
			continue
		}
		tr, _ := rel(e.Temp)
		fi, err := t.root.root.Lstat(tr)
		if err != nil || !fi.Mode().IsRegular() || e.unplacedAt(fi) {
			continue // an unplaced entry's temp is the proof that its target is not the agent's: kept until Finish
		}
		// Only the agent's temp, or the original a commit's swap left at its name (a crash between
		// the swap and its check): another's file swapped out there stays (place).
		if e.ownTemp(fi) || t.ownSide(e, e.Temp, fi) {
			_ = t.root.removeRegular(tr)
		}
	}
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
	if t.root.unplaced(e) {
		return nil // the new file never reached the target: nothing of the agent's to undo there
	}
	if t.writesNothing(e) {
		return nil // whatever is there is another's
	}
	if !e.HadOriginal {
		// Only the agent's own new file is removed (rule 13), known by its inode and its contents'
		// recorded hash: anything else in place stays (an inode anyone can stat and forge).
		fi, err := t.root.root.Lstat(rp)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case e.Remove || !t.root.provenNew(e, rp, fi, false):
			return fmt.Errorf("%w: it had no original and the file in place is not provably the one the agent wrote (%s): left as it is", ErrNotRestored, t.newProof(e))
		}
		return t.root.removeRegular(rp)
	}
	if t.legacy() {
		if t.isOriginal(e) == nil {
			return nil // already back (a rollback resumed after a crash or a failure)
		}
		tr, _ := rel(t.restoreName(e.Path))
		data, err := ReadStateFile(t.stateDir, filepath.Join(backupDir, filepath.Base(e.Backup)))
		if err != nil {
			return err
		}
		if err := t.root.writeTemp("/"+tr, data, e.OrigMode, e.OrigUID, e.OrigGID); err != nil {
			return err
		}
		return t.root.root.Rename(tr, rp)
	}
	// Decided from what is there (rule 17): the backup is used only when it is provably the
	// original, and only where the target is not its original still.
	bi, berr := t.provenBackup(e)
	switch {
	case berr == nil && t.inPlace(e, bi) == nil:
		return nil // never replaced, or already back (a rollback resumed after a crash or a failure)
	case berr != nil && t.byHash(e):
		if errors.Is(berr, fs.ErrNotExist) {
			return nil // the original is in place, known by its recorded hash; its backup is gone
		}
		return fmt.Errorf("the original is in place and stays: %w", berr)
	case berr != nil:
		return fmt.Errorf("%w: %w; the file in place is left as it is", ErrNotRestored, berr)
	}
	// The backup goes back only where nothing is lost by it: the target is missing, or is provably
	// the agent's own new file (its inode and, from version 5, its contents' hash). A proven backup
	// proves only what it holds, never what it would replace: anyone who can plant a file beside
	// the target knows its hash, so a forged journal could otherwise rename it over a file the
	// agent never wrote, the node's real pull secret (adversary round 13 core 02). Whatever else is
	// in place (a file changed since, by hand or by its daemon) stays with its backup, for the
	// operator.
	if ti, err := t.root.root.Lstat(rp); err == nil && !t.root.provenNew(e, rp, ti, false) && !t.agentsMask(e, rp, ti) {
		return fmt.Errorf("%w: the file in place is neither the original nor provably the agent's new file (%s): restoring the backup %s over it could lose a file the agent never wrote; both are left as they are", ErrNotRestored, t.newProof(e), e.Backup)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tr, _ := rel(t.restoreName(e.Path))
	br, _ := rel(e.Backup)
	if err := t.asideBack(e, tr, rp, bi); err != nil {
		return err
	}
	if e.BackupCopy {
		// The filesystem refused the hard link for the backup: it would refuse one now too.
		if err := t.root.copyFile(br, tr, e.OrigMode, e.OrigUID, e.OrigGID); noRoom(err) && e.OrigSHA256 != "" {
			_ = t.root.removeRegular(tr)
			return t.renameBackup(e, br, rp, bi)
		} else if err != nil {
			return err
		}
		if sum, _, err := t.root.hashRegular(tr, nil); err != nil || e.OrigSHA256 != "" && sum != e.OrigSHA256 {
			_ = t.root.removeRegular(tr)
			return fmt.Errorf("%w: %s changed while it was copied", ErrHostileBackup, e.Backup)
		}
	} else {
		if err := t.root.removeRegular(tr); err != nil {
			return err
		}
		if err := t.root.root.Link(br, tr); noRoom(err) && e.OrigSHA256 != "" {
			return t.renameBackup(e, br, rp, bi)
		} else if err != nil {
			return err
		}
		// linkat does not follow a symlink: the name linked must be the inode proven above.
		if li, err := t.root.root.Lstat(tr); err != nil || !os.SameFile(li, bi) {
			_ = t.root.removeRegular(tr)
			return fmt.Errorf("%w: %s changed while it was restored", ErrHostileBackup, e.Backup)
		}
	}
	return t.root.root.Rename(tr, rp)
}

// asideBack puts back a file a removal's commit renamed aside to the restore name tr and a crash
// left there before its check (removeTarget): one that is not the original (bi) is another's,
// never removed. With the target free it goes back there and the rollback stops for the operator
// (the target holds a file written since); with the target taken both stay.
func (t *Txn) asideBack(e Entry, tr, rp string, bi fs.FileInfo) error {
	ai, err := t.root.root.Lstat(tr)
	if err != nil || !e.Remove || os.SameFile(ai, bi) || ai.Mode().IsRegular() && t.ownSide(e, "/"+tr, ai) {
		return nil
	}
	if err := t.root.root.RenameNoReplace(tr, rp); err != nil {
		return fmt.Errorf("%w: %s holds a file that is not the original, and it cannot go back to the target: %w; both are left as they are", ErrNotRestored, "/"+tr, err)
	}
	return fmt.Errorf("%w: the file written at the target since the plan was made is back in place; the original stays in its backup %s", ErrNotRestored, e.Backup)
}

// noRoom reports whether err is the filesystem out of space or inodes (a link takes an inode on
// tmpfs, a directory block anywhere).
func noRoom(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// renameBackup puts the proven backup bi back by renaming it over the target: no inode or block
// needed, and the replaced new file frees its own (adversary r18 d/02: on a full disk the restore's
// link failed, before anything else, and the node stayed mixed). The backup's second name is gone
// with it: the original in place is then known by its recorded hash, mode and owner (rule 17, and
// isOriginal), so a crash after the rename, or a later check, finds it back. Only with a recorded
// hash (version 4 on); the caller has proven what is at the target may be replaced.
func (t *Txn) renameBackup(e Entry, br, rp string, bi fs.FileInfo) error {
	if li, err := t.root.root.Lstat(br); err != nil || !os.SameFile(li, bi) {
		return fmt.Errorf("%w: %s changed while it was restored", ErrHostileBackup, e.Backup)
	}
	return t.root.root.Rename(br, rp)
}

// agentsMask reports whether what is in place at e's path (lstat fi) is the mask the refresh's own
// Mask action made where it removed the unit file: a symlink to /dev/null, which holds nothing a
// restore could lose, at /etc/systemd/system/<unit> for a unit the journal masks. The rollback
// restores files before it undoes unit actions (the unmask runs on the restored file), so the
// unit file's backup goes back over the mask link.
func (t *Txn) agentsMask(e Entry, rp string, fi fs.FileInfo) bool {
	if !e.Remove || fi.Mode()&fs.ModeSymlink == 0 || path.Dir(e.Path) != "/etc/systemd/system" {
		return false
	}
	if target, err := t.root.root.Readlink(rp); err != nil || target != "/dev/null" {
		return false
	}
	unit := path.Base(e.Path)
	return slices.ContainsFunc(t.j.Meta.Actions, func(a plan.UnitAction) bool {
		return a.Action == allowlist.ActionMask && a.Unit == unit
	})
}

// newProof says what proves e's new file: its inode and contents, or (before version 5) its inode.
func (t *Txn) newProof(e Entry) string {
	if e.Remove {
		return "the refresh removed this file: anything in place is another's"
	}
	if e.NewSHA256 == "" {
		return "a journal before version 5 records only its inode, which proves nothing a rollback may delete on"
	}
	return "its inode and the sha256 of its contents"
}

// inPlace checks that e's target is its original, given its proven backup bi: the backup's very
// inode, or (a copied backup) its contents with the original's mode and owner.
func (t *Txn) inPlace(e Entry, bi fs.FileInfo) error {
	rp, _ := rel(e.Path)
	fi, err := t.root.root.Lstat(rp)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: missing", ErrNotRestored)
	}
	if err != nil {
		return err
	}
	if e.BackupCopy {
		br, _ := rel(e.Backup)
		f, _, err := t.root.openRegular(br, bi)
		if err != nil {
			return fmt.Errorf("backup %s: %w", e.Backup, err)
		}
		defer f.Close()
		want, err := io.ReadAll(f)
		if err != nil {
			return fmt.Errorf("backup %s: %w", e.Backup, err)
		}
		return t.matchesCopy(e, rp, fi, want)
	}
	if !os.SameFile(fi, bi) {
		return fmt.Errorf("%w: the file in place is not the original", ErrNotRestored)
	}
	return nil
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

// writesNothing says the entry is a removal of a path that had no file at the plan: from version 8
// its commit does nothing there (removeTarget), so nothing there is the agent's to undo or check.
func (t *Txn) writesNothing(e Entry) bool { return e.Remove && !e.HadOriginal && t.j.Version >= 8 }

// ErrNotRestored marks a target that is not its original after a restore.
var ErrNotRestored = errors.New("not restored")

// isOriginal checks one target: the backup's inode (the original's), or absent when there was none.
func (t *Txn) isOriginal(e Entry) error {
	rp, _ := rel(e.Path)
	if t.root.unplaced(e) || t.writesNothing(e) {
		return nil // what is there is not the agent's doing (restoreEntry)
	}
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
		want, err := ReadStateFile(t.stateDir, filepath.Join(backupDir, filepath.Base(e.Backup)))
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		return t.matchesCopy(e, rp, fi, want)
	}
	bi, berr := t.provenBackup(e)
	switch {
	case berr == nil:
		return t.inPlace(e, bi)
	case t.byHash(e) && errors.Is(berr, fs.ErrNotExist):
		return nil // in place by its recorded hash, its backup gone
	}
	return berr // a hostile backup keeps the rollback from completing: it is kept and named
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
