package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/plan"
)

// Op is one file to write or remove, with owners already resolved to ids.
type Op struct {
	Path   string
	Remove bool
	Data   []byte
	// Contents, when set, produces the data at staging time instead of Data (one file decoded at a time).
	Contents func() ([]byte, error)
	// Size, when set, is the size Contents produces, without keeping the contents: what the space
	// check charges (without it, Contents is called and its data dropped).
	Size     func() (int64, error)
	Mode     fs.FileMode
	UID, GID int
	// Missing parent directories are created with DirMode (0755 when zero), owned by DirUID:DirGID.
	DirMode        fs.FileMode
	DirUID, DirGID int
	// Within is the directory prefix (ending in /) the node policy named, below which the name is
	// the payload's: no directory below it may be a mount point (opChecker.mounts). "" or the
	// path itself: the whole path is the node's.
	Within string
}

// Txn is one all-or-nothing set of file changes, recorded in a journal in the state directory so that
// a crash at any point can be finished or undone by Recover.
type Txn struct {
	root     *Root
	stateDir string
	j        journal
}

// ErrUnfinished marks a state dir whose last transaction is not finished: it must be recovered (rolled
// forward or back, and cleaned up) before another can start.
var ErrUnfinished = errors.New("an unfinished transaction is pending")

// Pending returns the phase of the unfinished transaction in stateDir, "" when there is none.
func Pending(stateDir string) (string, error) {
	j, err := readJournal(stateDir)
	if err != nil || j == nil {
		return "", err
	}
	return "phase " + string(j.Phase), nil
}

// Peek returns the phase and meta of the unfinished transaction in stateDir (phase "" when there is
// none), acting on nothing.
func Peek(stateDir string) (Phase, Meta, error) {
	j, err := readJournal(stateDir)
	if err != nil || j == nil {
		return "", Meta{}, err
	}
	return j.Phase, j.Meta, nil
}

// Check runs Prepare's checks on ops without writing anything: the dry run makes every node check
// the real run makes, through the same code (planTxn: every path, its side files, the directories
// its writes share under two names, the journal's bound with meta, and the free space and inodes
// of every filesystem the transaction writes on, stateDir's included). Prepare checks again (the
// node may change in between). meta is the journal's as far as the dry run knows it: a unit action's
// undo and the verify baseline come later, and journalBound charges them at their widest.
func Check(root *Root, stateDir string, ops []Op, meta Meta) error {
	_, _, _, err := planTxn(root, stateDir, ops, meta)
	return err
}

// Prepare stages ops: it checks every path, writes the journal, creates missing parent directories,
// writes each new file to a temp file beside its target (mode and owner set before any byte, then
// fsynced) and backs up every original beside it. No target is touched. On error it cleans up and
// returns it. Removing a file whose parent directory does not exist is nothing to do: such an op is
// dropped, and its parent is not created.
func Prepare(root *Root, stateDir string, ops []Op, meta Meta) (*Txn, error) {
	if j, err := readJournal(stateDir); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", stateDir, err)
	} else if j != nil {
		return nil, fmt.Errorf("state dir %s: %w (phase %s): recover first", stateDir, ErrUnfinished, j.Phase)
	}
	j, kept, dirs, err := planTxn(root, stateDir, ops, meta)
	if err != nil {
		return nil, err
	}
	t := &Txn{root: root, stateDir: stateDir, j: j}
	// Only now, with every path checked, does anything get written (a refusal writes nothing).
	if err := EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	// Before the first journal write: from here until this journal is settled, a process with
	// another state dir on this root refuses (rootowner.go).
	if err := claimRoot(root, stateDir); err != nil {
		return nil, err
	}
	// The state dir may live inside the root (<root>/var/lib/refresh-agent): creating it may have
	// created parents the entries need. Those are not the transaction's to create or remove.
	t.j.CreatedDirs = slices.DeleteFunc(t.j.CreatedDirs, func(d string) bool {
		rp, _ := rel(d)
		fi, err := root.root.Lstat(rp)
		return err == nil && fi.IsDir()
	})
	if err := writeJournal(stateDir, &t.j); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := t.stage(kept, dirs); err != nil {
		return nil, errors.Join(err, leftovers(t.discard()))
	}
	t.j.Phase = PhasePrepared
	if err := writeJournal(stateDir, &t.j); err != nil {
		return nil, errors.Join(fmt.Errorf("journal: %w", err), leftovers(t.discard()))
	}
	return t, nil
}

// planTxn makes every node check of ops (opChecker) and builds the journal Prepare writes first,
// refusing one that could grow over MaxJournalBytes, and one the filesystems it writes on (the
// targets', stateDir's) have no room or inodes for (checkSpace): what Prepare and Check (the dry
// run) share. It writes nothing. It returns the ops kept (a removal under a missing parent is
// dropped) and, for each directory the transaction creates, the op it is created for.
func planTxn(root *Root, stateDir string, ops []Op, meta Meta) (journal, []Op, map[string]Op, error) {
	j := journal{Version: journalVersion, Phase: PhasePreparing, Meta: meta}
	id, err := root.id()
	if err != nil {
		return journal{}, nil, nil, fmt.Errorf("node root %s: %w", root.Dir, err)
	}
	j.Root = &id // rule 19: with the first journal write
	if err := checkClaim(root, stateDir); err != nil {
		return journal{}, nil, nil, err
	}
	dirs := map[string]Op{}
	var kept []Op
	var writes []spaceWrite
	var run int64 // journalBound's share of the entries and created directories so far
	c := newOpChecker(root, stateDir)
	for _, op := range ops {
		missing, err := c.check(op)
		if err != nil {
			return journal{}, nil, nil, err
		}
		if op.Remove && len(missing) > 0 {
			continue
		}
		w := spaceWrite{op: op}
		w.dir, _ = writeDir(op.Path, missing)
		for _, d := range missing {
			if _, ok := dirs[d]; !ok {
				if len(j.CreatedDirs) == plan.MaxDirs {
					return journal{}, nil, nil, fmt.Errorf("%s: %w: the transaction would create more than %d directories: split the change", op.Path, ErrJournalTooLarge, plan.MaxDirs)
				}
				dirs[d] = op
				j.CreatedDirs = append(j.CreatedDirs, d)
				w.newDirs++
				run += dirBound(d)
			}
		}
		writes = append(writes, w)
		e := Entry{Path: op.Path, Remove: op.Remove, Backup: sideName(op.Path, sideBackup)}
		if !op.Remove {
			e.Temp = sideName(op.Path, sideTemp)
		}
		j.Entries = append(j.Entries, e)
		kept = append(kept, op)
		// The bound's entries and directories, summed as they are added: a plan over it is refused
		// at the op that passes it, before the rest of its journal is built (adversary r13 c/05).
		if run += entryBound(&e); run > MaxJournalBytes {
			return journal{}, nil, nil, fmt.Errorf("%w: %d files would make a journal of more than %d bytes (passed at %s), over the %d a recovery reads: split the change", ErrJournalTooLarge, len(ops), run, op.Path, MaxJournalBytes)
		}
	}
	slices.SortFunc(j.CreatedDirs, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	if n := journalBound(&j); n > MaxJournalBytes {
		return journal{}, nil, nil, fmt.Errorf("%w: %d files would make a journal of up to %d bytes, over the %d a recovery reads: split the change", ErrJournalTooLarge, len(j.Entries), n, MaxJournalBytes)
	} else if err := checkSpace(root, stateDir, writes, n, meta); err != nil {
		return journal{}, nil, nil, err
	}
	return j, kept, dirs, nil
}

// ErrJournalTooLarge marks a plan whose journal could grow over MaxJournalBytes: refused before
// anything is written (recovery refuses a journal over it as not the agent's).
var ErrJournalTooLarge = errors.New("the transaction's journal would be larger than recovery reads")

// entrySlack is what an entry can gain in the journal after Prepare's first write, at its widest:
// "hadOriginal":true, "backupCopy":true, origMode, origUID and origGID, newDev and newIno at their
// widest numbers, origSHA256 and newSHA256 (about 310 bytes); plus the phase, committed and
// finishing fields; dirSlack is what a created directory's id adds besides its path.
const entrySlack, journalSlack, dirSlack = 352, 128, 80

// undoSlack is what a unit action's undo (set after the dry run, from the unit's state) can add:
// ,"undo":"Unmask" at its widest, rounded up.
const undoSlack = 32

// journalBound is the most j's journal can take on disk in any phase. It is the same whether the
// unit actions' undos are set or not (the dry run's meta has none yet): each action is charged its
// widest undo. The verify keys are charged as meta has them (the dry run passes every key a
// baseline could keep: at least what the real run's baseline keeps).
func journalBound(j *journal) int64 {
	c := *j
	c.Meta.Actions = slices.Clone(j.Meta.Actions)
	for i := range c.Meta.Actions {
		c.Meta.Actions[i].Undo = ""
	}
	data, err := json.Marshal(&c)
	if err != nil {
		return math.MaxInt64
	}
	n := int64(len(data)) + int64(len(j.Entries))*entrySlack + int64(len(j.Meta.Actions))*undoSlack + journalSlack
	for _, d := range j.CreatedDirs {
		q, _ := json.Marshal(d)
		n += int64(len(q)) + dirSlack // its id: the path again, as JSON writes it, and two numbers
	}
	return n
}

// entryBound and dirBound are what one entry and one created directory add to journalBound (at
// most: a comma each): planTxn sums them as it builds the journal, so that a journal over the bound
// is refused before it is built whole.
func entryBound(e *Entry) int64 {
	data, err := json.Marshal(e)
	if err != nil {
		return math.MaxInt32
	}
	return int64(len(data)) + 1 + entrySlack
}

func dirBound(d string) int64 {
	q, _ := json.Marshal(d)
	return 2*int64(len(q)+1) + dirSlack // in createdDirs, and its id's path
}

func (t *Txn) stage(ops []Op, dirs map[string]Op) error {
	for _, d := range t.j.CreatedDirs {
		op := dirs[d]
		mode := op.DirMode
		if mode == 0 {
			mode = 0o755
		}
		if err := t.root.mkdir(d, mode, op.DirUID, op.DirGID); err != nil {
			return fmt.Errorf("%s: creating parent %s: %w", op.Path, d, err)
		}
		rp, _ := rel(d)
		fi, err := t.root.root.Lstat(rp)
		if err != nil {
			return fmt.Errorf("%s: creating parent %s: %w", op.Path, d, err)
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st == nil || !fi.IsDir() {
			return fmt.Errorf("%s: creating parent %s: not the directory just made", op.Path, d)
		}
		t.j.CreatedDirIDs = append(t.j.CreatedDirIDs, DirID{Path: d, Dev: uint64(st.Dev), Ino: st.Ino})
	}
	if len(t.j.CreatedDirs) > 0 {
		// Recorded before any file is staged in them: what proves them the transaction's to remove.
		if err := writeJournal(t.stateDir, &t.j); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	parents := map[string]bool{}
	for i, op := range ops {
		e := &t.j.Entries[i]
		if sd := sideDirOf(e.Path); sd != "" {
			if err := t.root.ensureSideDir(e.Path, sd); err != nil {
				return fmt.Errorf("%s: %w", op.Path, err)
			}
			parents[sd] = true // the backup's link and the temp lie there
		}
		if !op.Remove {
			data := op.Data
			if op.Contents != nil {
				var err error
				if data, err = op.Contents(); err != nil {
					return err
				}
			}
			if err := t.root.writeTemp(e.Temp, data, op.Mode, op.UID, op.GID); err != nil {
				return fmt.Errorf("%s: %w", op.Path, err)
			}
			// What proves the file in place is this new file (rules 13, 15, 17): its inode alone
			// anyone can stat and forge.
			sum := sha256.Sum256(data)
			e.NewSHA256 = hex.EncodeToString(sum[:])
			tr, _ := rel(e.Temp)
			if fi, err := t.root.root.Lstat(tr); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					e.NewDev, e.NewIno = uint64(st.Dev), st.Ino
				}
			}
			CrashPoint("temp")
		}
		if err := t.backup(e); err != nil {
			return fmt.Errorf("%s: backup: %w", op.Path, err)
		}
		CrashPoint("backup")
		parents[path.Dir(e.Path)] = true
	}
	// The backups' links must be durable before any rename can replace a target.
	for d := range parents {
		if err := t.root.syncDir(d); err != nil {
			return fmt.Errorf("%s: fsync: %w", d, err)
		}
	}
	return nil
}

// backup records the original's mode and owner and gives it a second name beside the target: a
// hard link, so the commit's rename leaves the original inode (contents, owner, mode, extended
// attributes, SELinux label) to the backup, and a restore renames that very inode back. Only on a
// filesystem that refuses hard links is it a copy (owner and mode kept, extended attributes not).
func (t *Txn) backup(e *Entry) error {
	rp, _ := rel(e.Path)
	fi, err := t.root.root.Lstat(rp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// Checked at this very moment too (the target may have changed since the plan checked it): a
	// hard link of a symlink would be a backup pointing anywhere, restored over the target.
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w (it became one after it was checked)", e.Path, ErrSymlink)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: exists and is not a regular file (%s)", e.Path, fi.Mode().Type())
	}
	e.HadOriginal, e.OrigMode = true, fi.Mode().Perm()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.OrigUID, e.OrigGID = int(st.Uid), int(st.Gid)
	}
	br, _ := rel(e.Backup)
	if err := t.root.removeRegular(br); err != nil {
		return err
	}
	lerr := linkBackup(t.root.root, rp, br)
	if lerr == nil {
		// linkat does not follow a symlink: if the target was swapped between the Lstat and the
		// link, the backup is that symlink (or another file). It is the transaction's own name:
		// unlinked (the link, never what it points at), and the transaction fails.
		bi, err := t.root.root.Lstat(br)
		if err == nil && bi.Mode().IsRegular() && os.SameFile(bi, fi) {
			// The original's hash, read through the backup's own name (the inode just checked):
			// what a restore proves a backup by (rule 17).
			e.OrigSHA256, _, err = t.root.hashRegular(br, bi)
			return err
		}
		if err == nil {
			_ = t.root.root.Remove(br)
		}
		// On an overlayfs whose layers are on different filesystems, the link copies the original
		// up and its new name reports the upper layer's device and inode, the old name the lower's:
		// a link there cannot be proved the original's, so the backup is a copy, checked by its
		// contents (adversary r21 d/02: refused as a symlink every time). Anywhere else a regular
		// file of another inode is the target swapped in the meantime.
		if err != nil || !bi.Mode().IsRegular() || !t.root.onOverlay(path.Dir(rp)) {
			return fmt.Errorf("%s: %w (it changed while its backup was made)", e.Path, ErrSymlink)
		}
		lerr = errors.New("an overlayfs link reports another inode")
	}
	if err := t.root.copyFile(rp, br, e.OrigMode, e.OrigUID, e.OrigGID); err != nil {
		return fmt.Errorf("link: %w; copy: %w", lerr, err)
	}
	e.BackupCopy = true
	e.OrigSHA256, _, err = t.root.hashRegular(br, nil)
	return err
}

// linkBackup makes the backup's hard link; a variable so that a test can stand in for a filesystem
// that refuses hard links.
var linkBackup = (*nofollowRoot).Link

// Commit moves every new file into place (and removes the removed ones), makes the renames durable,
// and records the transaction as committed. If a step fails it returns the error and the caller rolls
// back (Rollback), which also undoes the renames already made.
func (t *Txn) Commit() error {
	if t.j.Phase != PhasePrepared {
		return fmt.Errorf("commit in phase %s", t.j.Phase)
	}
	dirs := map[string]bool{}
	for _, e := range t.j.Entries {
		var err error
		rp, _ := rel(e.Path)
		if e.Remove {
			err = t.removeTarget(e, rp)
		} else {
			err = t.place(e, rp)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.Path, err)
		}
		dirs[path.Dir(e.Path)] = true
		if e.Temp != "" {
			dirs[path.Dir(e.Temp)] = true // a side directory's temp, renamed out of it
		}
		CrashPoint("rename")
	}
	for d := range dirs {
		if err := t.root.syncDir(d); err != nil {
			return fmt.Errorf("%s: fsync: %w", d, err)
		}
	}
	t.j.Phase, t.j.Committed = PhaseCommitted, true
	if err := writeJournal(t.stateDir, &t.j); err != nil {
		t.j.Phase, t.j.Committed = PhasePrepared, false // the journal on disk still says so
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// ErrChangedSince marks a target another process wrote between the backup and the commit's rename:
// the commit stops, and what that process wrote stays in place.
var ErrChangedSince = errors.New("changed since the plan read it (another process wrote it)")

// place moves e's temp file over its target without losing what another process may have put there
// since the backup: a target that had no original is created only where nothing is (a file that
// appeared since stays, and the commit stops); one that had an original is swapped with the temp
// (RENAME_EXCHANGE), so what was in place lands at the temp's name, and is dropped only when it is
// the original the backup holds. Anything else is swapped back and stays in place (adversary r17
// d/01: a config writer's rename between the backup and the commit was clobbered by the rename and
// lost with the rollback). A filesystem without renameat2's flags gets the plain rename.
func (t *Txn) place(e Entry, rp string) error {
	tr, _ := rel(e.Temp)
	if !e.HadOriginal {
		err := t.root.renameIfFree(tr, rp)
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%w: it had no file when the plan was made, and has one now; left as it is", ErrChangedSince)
		}
		return err
	}
	err := t.root.root.RenameExchange(tr, rp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The original was removed since its backup (which still holds it): nothing to swap.
		return t.root.root.RenameNoReplace(tr, rp)
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return t.root.root.Rename(tr, rp)
	case err != nil:
		return err
	}
	fi, err := t.root.root.Lstat(tr)
	if err == nil && fi.Mode().IsRegular() && t.ownSide(e, e.Temp, fi) {
		return t.root.removeRegular(tr)
	}
	// Not the original: put it back, the new file back at the temp's name.
	if err := t.root.root.RenameExchange(tr, rp); err != nil {
		return fmt.Errorf("%w; swapping it back: %w (what was in place is at %s)", ErrChangedSince, err, e.Temp)
	}
	return fmt.Errorf("%w: the file in place is not the original its backup holds; left as it is", ErrChangedSince)
}

// removeTarget removes the original at rp, and only it: the target is renamed aside first (to its
// restore name, a side file of its own), and what was moved is checked there, as place checks what
// its swap took out. Another's file written since the backup (a daemon's rewrite, a hand edit) is
// renamed back and the commit fails with ErrChangedSince (adversary r23 b/01: the removal unlinked
// whatever was in place). Before version 8 the target is unlinked where it is. A target that had
// no file when the plan was made and has one now is left as it is (a file the agent never wrote).
func (t *Txn) removeTarget(e Entry, rp string) error {
	switch {
	case t.writesNothing(e):
		return nil // nothing to remove at the plan: a file there now is another's, and stays
	case t.j.Version < 8:
		return ignoreMissing(t.root.root.Remove(rp))
	}
	aside := t.restoreName(e.Path)
	ar, _ := rel(aside)
	if err := t.root.removeRegular(ar); err != nil {
		return err
	}
	err := t.root.renameIfFree(rp, ar)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since its backup (which still holds it)
	}
	if err != nil {
		return err
	}
	CrashPoint("aside")
	fi, err := t.root.root.Lstat(ar)
	if err == nil && fi.Mode().IsRegular() && t.ownSide(e, aside, fi) {
		return t.root.removeRegular(ar)
	}
	// Not the original: back where it was.
	if err := t.root.root.RenameNoReplace(ar, rp); err != nil {
		return fmt.Errorf("%w; moving it back: %w (what was in place is at %s)", ErrChangedSince, err, aside)
	}
	return fmt.Errorf("%w: the file in place is not the original its backup holds; left as it is", ErrChangedSince)
}

// renameIfFree renames oldp to newp only where nothing is at newp (EEXIST otherwise); a filesystem
// without renameat2's RENAME_NOREPLACE gets the plain rename.
func (r *Root) renameIfFree(oldp, newp string) error {
	err := r.root.RenameNoReplace(oldp, newp)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return r.root.Rename(oldp, newp)
	}
	return err
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// MarkDone records that the unit actions ran, so recovery does not run them again.
func (t *Txn) MarkDone() error {
	if t.j.Phase != PhaseCommitted && t.j.Phase != PhaseDone {
		return fmt.Errorf("mark done in phase %s", t.j.Phase)
	}
	t.j.Phase = PhaseDone
	return writeJournal(t.stateDir, &t.j)
}

// Finish removes what a settled transaction left: temp files, backups, directories it created that
// stayed empty (after a rollback), and last the journal. It finishes only a transaction that is done,
// rolled back with every original verified in place, or abandoned before any target changed; any other
// is refused with ErrUnfinished, so the backups outlive every failed or interrupted rollback. Once it
// starts removing, the journal says so (finishing), and recovery after a crash only completes the
// removal.
func (t *Txn) Finish() error {
	if !t.j.Finishing {
		switch t.j.Phase {
		case PhaseDone, PhasePreparing:
		case PhaseRolledBack:
			if err := t.verify(); err != nil {
				return fmt.Errorf("keeping the backups: %w", err)
			}
		default:
			return fmt.Errorf("phase %s: %w", t.j.Phase, ErrUnfinished)
		}
		t.dropTemps() // needs no space and frees it, before the journal write (a full disk)
		// A transaction abandoned while preparing changed no target: its backups are the targets'
		// second names (rule 11), so removing them, its temps and then the journal needs no journal
		// write (on a full disk there is no room for one: adv txn-attack3 #2), and a crash part way
		// leaves a preparing journal that a recovery settles the same way.
		if t.j.Phase != PhasePreparing {
			t.j.Finishing = true
			if err := writeJournal(t.stateDir, &t.j); err != nil {
				t.j.Finishing = false
				return fmt.Errorf("journal: %w", err)
			}
		}
	}
	var errs []error
	for _, e := range t.j.Entries {
		side := []string{e.Temp, t.restoreName(e.Path)}
		if !t.legacy() {
			side = append(side, e.Backup)
		}
		for _, p := range side {
			if p == "" {
				continue
			}
			rp, _ := rel(p)
			fi, err := t.root.root.Lstat(rp)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("checking %s: %w", p, err)) // proves nothing: the journal stays
				continue
			}
			if err == nil && !fi.Mode().IsRegular() {
				continue // not one the transaction made: left alone
			}
			own := true
			if err == nil && t.j.Phase != PhasePreparing && (p != e.Temp || !e.ownTemp(fi)) {
				var cerr error
				if own, cerr = t.ownSideErr(e, p, fi); cerr != nil {
					errs = append(errs, fmt.Errorf("checking %s: %w", p, cerr))
					continue
				}
			}
			if !own {
				// Past the prepare, a backup or a restore's copy is removed only when it is provably
				// the agent's: anything else at the name is another's, kept for the operator (the
				// sweep reports it in keptSideFiles and the plan refuses its target until it is
				// gone; adversary r15 a/03: a foreign file there was deleted on roll-forward).
				continue
			}
			if t.root.blocked(rp) != "" {
				// Immutable or append-only: the agent never sets these flags, so it is not one the
				// transaction made (a stale file it failed to remove first), and no unlink can
				// take it. Left alone, it must not keep the journal (and every later refresh)
				// pending: the plan refuses its target, naming it, until it is removed by hand.
				continue
			}
			if err := t.root.removeRegular(rp); err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
			}
		}
	}
	for _, e := range t.j.Entries {
		if sd := sideDirOf(e.Path); sd != "" {
			t.root.dropSideDir(sd) // before the created directories: it would keep one
		}
	}
	if t.j.Phase != PhaseDone {
		errs = append(errs, t.removeCreatedDirs()...)
	}
	CrashPoint("finish")
	if err := errors.Join(errs...); err != nil {
		return err // the journal stays: the next recovery removes the rest
	}
	// The removals durable before the journal goes: after a power cut the backups must not come
	// back without the journal that proves them the agent's (the sweep would keep them as possible
	// originals, and refuse their targets: adversary r24 b/02). A directory gone is nothing to sync.
	synced := map[string]bool{}
	for _, e := range t.j.Entries {
		for _, d := range []string{path.Dir(e.Path), path.Dir(e.Backup)} {
			if d == "." || synced[d] {
				continue
			}
			synced[d] = true
			if err := t.root.syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrSymlink) {
				return fmt.Errorf("%s: fsync: %w", d, err) // the journal stays: the next recovery syncs again
			}
		}
	}
	// The state dir's backup/ held a version 1 journal's backups: that journal's own, to remove. A
	// later transaction never writes there and never removes anything there: what is there without
	// a version 1 journal is no proof of being a copy of anything (an old agent's backup whose
	// journal was removed by hand may be the only copy of an original: adversary r22 b/01), and it
	// never keeps a journal pending (adversary round 9 core, a variant of 04).
	if t.legacy() {
		if err := dropOldBackups(t.stateDir); err != nil {
			return err
		}
	}
	if err := RemoveStateFile(t.stateDir, journalFile, true); err != nil {
		return err
	}
	if err := syncPath(t.stateDir); err != nil {
		// Everything is removed; only the removal's durability is in doubt (after a power cut the
		// journal may be back, settled, and recovery finishes it again).
		return fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	return nil
}

// dropOldBackups removes what a version 1 journal kept in the state dir's backup/, once it is
// settled: the regular files of the names it gave them (0, 1, …), never through a symlink, never
// below another directory there or of another name (adversary r21 b2/05: the sweep removed
// backup/** whatever it was), then backup/ itself when that leaves it empty.
func dropOldBackups(stateDir string) error {
	entries, err := ReadStateDir(stateDir, backupDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if _, nerr := strconv.ParseUint(e.Name(), 10, 32); nerr == nil && e.Type().IsRegular() {
			errs = append(errs, RemoveStateFile(stateDir, filepath.Join(backupDir, e.Name()), false))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := unix.Rmdir(filepath.Join(stateDir, backupDir)); err != nil && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: filepath.Join(stateDir, backupDir), Err: err}
	}
	return nil
}

// ownSide reports whether the regular file at e's backup or restore name p (lstat fi) is provably
// the agent's: the proven backup (rule 17), or the restore's second name of it, or a copy of the
// original (its mode, owner and recorded hash).
func (t *Txn) ownSide(e Entry, p string, fi fs.FileInfo) bool {
	own, _ := t.ownSideErr(e, p, fi)
	return own
}

// ownSideErr is ownSide that also returns a check that failed for the moment (Transient): its
// answer, false, proves nothing.
func (t *Txn) ownSideErr(e Entry, p string, fi fs.FileInfo) (bool, error) {
	if !e.HadOriginal {
		return false, nil // no original, no backup: nothing of the agent's is at these names
	}
	bi, err := t.provenBackup(e)
	if Transient(err) {
		return false, err
	}
	if p == e.Backup || err == nil && os.SameFile(fi, bi) {
		return err == nil, nil
	}
	if e.OrigSHA256 == "" || !e.sameOwnerMode(fi) {
		return false, nil
	}
	rp, _ := rel(p)
	sum, _, err := t.root.hashRegular(rp, fi)
	if Transient(err) {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	return err == nil && sum == e.OrigSHA256, nil
}

// ErrNotDurable marks a Finish that removed everything, the journal included, but whose last fsync
// failed: the transaction is settled as far as the files show.
var ErrNotDurable = errors.New("the clean-up is done but may not be durable")

// removeCreatedDirs removes the parent directories the transaction created, innermost first. One
// that is gone already is fine, and so is one that holds something now (not the transaction's: it
// stays, with what it holds); any other failure (a read-only or failing filesystem) is returned, so
// that the journal stays until a later recovery has removed it.
func (t *Txn) removeCreatedDirs() []error {
	var errs []error
	ids := make(map[string]DirID, len(t.j.CreatedDirIDs)) // rule 7 names each once
	for _, id := range t.j.CreatedDirIDs {
		ids[id.Path] = id
	}
	for i := len(t.j.CreatedDirs) - 1; i >= 0; i-- {
		dr, _ := rel(t.j.CreatedDirs[i])
		fi, err := t.root.root.Lstat(dr)
		if err == nil && !madeDir(ids, t.j.CreatedDirs[i], fi) {
			continue // not the directory it made (or not one it can prove): someone else's, left alone
		}
		if err == nil {
			err = t.root.root.Remove(dr)
		}
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		default:
			errs = append(errs, fmt.Errorf("removing the directory %s it created: %w", t.j.CreatedDirs[i], err))
		}
	}
	return errs
}

// madeDir says whether fi, found at the created directory d, is the directory the transaction made
// there: the device and inode recorded as it was made (rule 7), looked up in ids (CreatedDirIDs by
// path: one look-up per directory, never a pass over them all).
func madeDir(ids map[string]DirID, d string, fi fs.FileInfo) bool {
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil || !fi.IsDir() {
		return false
	}
	id, ok := ids[d]
	return ok && id.Dev == uint64(st.Dev) && id.Ino == st.Ino
}

// EnsureStateDir creates the state dir 0700 (it holds backups of secrets); parents it creates get
// the usual 0755.
func EnsureStateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("state dir: %w", err)
	}
	return nil
}

// ErrLeftovers marks a Prepare that failed and could not remove all it had written (temp files,
// backups, the journal): no target changed, and the next recovery removes the rest.
var ErrLeftovers = errors.New("nothing on the node changed, but the clean-up failed: the journal and what it names are kept for the next recover")

func leftovers(err error) error {
	if err == nil || errors.Is(err, ErrNotDurable) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrLeftovers, err)
}

// discard abandons a transaction that never touched a target.
func (t *Txn) discard() error {
	t.j.Phase = PhasePreparing
	return t.Finish()
}

// Phase reports how far the transaction got.
func (t *Txn) Phase() Phase { return t.j.Phase }

// Finishing reports that the outcome is settled and only leftovers remain (see Finish).
func (t *Txn) Finishing() bool { return t.j.Finishing }

// Meta returns what the transaction was started with.
func (t *Txn) Meta() Meta { return t.j.Meta }

// Len counts the files the transaction writes or removes (ops with nothing to do dropped).
func (t *Txn) Len() int { return len(t.j.Entries) }

// Paths lists the managed paths.
func (t *Txn) Paths() []string {
	out := make([]string, len(t.j.Entries))
	for i, e := range t.j.Entries {
		out[i] = e.Path
	}
	return out
}

// Recover reads the transaction an interrupted refresh left in stateDir (nil when there is none). One
// abandoned while preparing changed no target: it is cleaned up here and nil is returned. Any other is
// returned for the caller to settle: committed or done ones roll forward (unit actions, record, Finish);
// prepared, rolling-back and rolled-back ones roll back (Rollback, unit actions again, Finish); a
// finishing one only needs Finish.
//
// Before anything is touched the journal is checked against trust: one naming a path or an action
// that no refresh could have planned is refused with ErrHostile and left as it is.
func Recover(root *Root, stateDir string, trust Trust) (*Txn, error) {
	j, err := readJournal(stateDir)
	if err != nil || j == nil {
		return nil, err
	}
	err = j.onRoot(root, stateDir)
	if err == nil {
		err = j.renumber(root)
	}
	if err == nil {
		err = j.trusted(trust)
	}
	if err == nil {
		err = j.consistent(root, stateDir)
	}
	if errors.Is(err, ErrOtherRoot) {
		return nil, fmt.Errorf("journal %s: %w; refusing it and touching nothing (it stays, for that root's recovery)", filepath.Join(stateDir, journalFile), err)
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w; refusing it and touching nothing: inspect it, and remove it by hand once no refresh-agent runs", filepath.Join(stateDir, journalFile), err)
	}
	t := &Txn{root: root, stateDir: stateDir, j: *j}
	if j.Phase == PhasePreparing {
		// Removed, journal included, with only the last fsync failed: settled as far as the files
		// show (ErrNotDurable), as a rollback's clean-up is; a power cut may bring the journal back,
		// and the next recovery removes it again.
		if err := t.discard(); err != nil && !errors.Is(err, ErrNotDurable) {
			return nil, err
		}
		return nil, nil
	}
	return t, nil
}

// writeTemp creates p (replacing a regular file left there, never anything else) with mode and owner
// set before any byte is written, writes data and fsyncs it.
func (r *Root) writeTemp(p string, data []byte, mode fs.FileMode, uid, gid int) error {
	rp, err := rel(p)
	if err != nil {
		return err
	}
	f, err := r.create(rp, mode, uid, gid)
	if err != nil {
		return err
	}
	return writeAndClose(f, data)
}

// create makes a new file rp inside the root, replacing a regular file left there, with its owner and
// mode set before any byte is written.
func (r *Root) create(rp string, mode fs.FileMode, uid, gid int) (*os.File, error) {
	if err := r.removeRegular(rp); err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(rp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	// A new file inherits its directory's default ACL, whose named entries the mode does not reach
	// (chmod sets only the mask): a 0640 secret readable by another user (adversary r17 b/02). The
	// file gets exactly its mode, as the plan shows it.
	if err := unix.Fremovexattr(int(f.Fd()), "system.posix_acl_access"); err != nil &&
		!errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.EOPNOTSUPP) {
		f.Close()
		return nil, fmt.Errorf("/%s: removing the ACL inherited from its directory: %w", rp, err)
	}
	if err := setOwnerMode(f, mode, uid, gid); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// copyFile copies src to a new file dst inside the root, durably, with the given mode and owner.
func (r *Root) copyFile(src, dst string, mode fs.FileMode, uid, gid int) error {
	in, err := r.root.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := r.create(dst, mode, uid, gid)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// After the data: a write clears security.capability.
	if err := copyXattrs(in, out); err != nil {
		out.Close()
		return fmt.Errorf("/%s: extended attributes: %w", dst, err)
	}
	return writeAndClose(out, nil)
}

// removeRegular removes rp when it is a regular file; absent is fine, anything else is an error (a
// directory or symlink in the way of a side file is never removed).
func (r *Root) removeRegular(rp string) error {
	fi, err := r.root.Lstat(rp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("/%s: exists and is not a regular file", rp)
	}
	if err := r.root.Remove(rp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// setOwnerMode sets owner first (chown clears set-id bits) and then the exact mode (fchmod ignores
// the umask). A chown to the file's current owner is skipped so tests can run unprivileged.
func setOwnerMode(f *os.File, mode fs.FileMode, uid, gid int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid || int(st.Gid) != gid {
		if err := f.Chown(uid, gid); err != nil {
			return err
		}
	}
	return f.Chmod(mode)
}

// mkdir creates one directory inside the root with an exact mode and owner.
func (r *Root) mkdir(p string, mode fs.FileMode, uid, gid int) error {
	rp, err := rel(p)
	if err != nil {
		return err
	}
	if err := r.root.Mkdir(rp, 0o700); err != nil {
		return err
	}
	d, err := r.root.Open(rp)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := setOwnerMode(d, mode, uid, gid); err != nil {
		return err
	}
	return r.syncDir(path.Dir(p))
}
