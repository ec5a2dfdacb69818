package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/plan"
)

// Phase is how far a transaction got. Recovery reads it to decide: before Prepared nothing on the
// node changed; from Prepared until Committed some targets may be replaced, so every one is restored;
// from Committed on every target is new and only the unit actions and the record remain. A rollback
// goes RollingBack (originals being restored) → RolledBack (every original verified in place; the unit
// actions to run again when the transaction had committed) and stays there until both are done, across
// failures and restarts: the backups are never removed before.
type Phase string

const (
	PhasePreparing   Phase = "preparing"   // temp files and backups being written; targets untouched
	PhasePrepared    Phase = "prepared"    // renames may be in progress
	PhaseCommitted   Phase = "committed"   // every target is new; unit actions pending
	PhaseDone        Phase = "done"        // unit actions ran; the record and cleanup remain
	PhaseRollingBack Phase = "rollingback" // restoring the originals
	PhaseRolledBack  Phase = "rolledback"  // every original verified in place; unit actions to run again
)

// Entry is one managed path in the journal. It never holds file contents.
type Entry struct {
	Path   string `json:"path"`
	Remove bool   `json:"remove,omitempty"`
	Temp   string `json:"temp,omitempty"` // node path of the new contents' temp file
	// Backup is the node path of the original's backup: a hard link beside the target (journal
	// version 2). In version 1 journals it is a file name in the state dir's backup directory.
	Backup string `json:"backup,omitempty"`
	// BackupCopy says the backup is a copy (the filesystem refused a hard link): it is restored by
	// copy and checked by contents, mode and owner instead of by inode.
	BackupCopy  bool        `json:"backupCopy,omitempty"`
	HadOriginal bool        `json:"hadOriginal"`
	OrigMode    fs.FileMode `json:"origMode,omitempty"`
	OrigUID     int         `json:"origUID,omitempty"`
	OrigGID     int         `json:"origGID,omitempty"`
	// NewDev and NewIno are the new file's (the temp's) device and inode, recorded with the prepared
	// phase: a rollback removes a target that had no original only when it is this file (rule 13).
	NewDev uint64 `json:"newDev,omitempty"`
	NewIno uint64 `json:"newIno,omitempty"`
	// OrigSHA256 is the sha256 of the original's contents, taken when its backup was made (journal
	// version 4, set from the prepared phase on for every entry with an original): a restore uses a
	// backup only when it hashes to it (rule 17), or when it is the untouched target's second name.
	OrigSHA256 string `json:"origSHA256,omitempty"`
	// NewSHA256 is the sha256 of the new file's contents (journal version 5, set from the prepared
	// phase on for every write): what proves a file in place is the agent's new file (rules 13, 15,
	// 17). Its inode (NewDev/NewIno) anyone can stat; its contents' hash a forger must read the file
	// for (adversary round 7a F2: a forged "no original" naming the pull secret's own inode).
	NewSHA256 string `json:"newSHA256,omitempty"`
}

// Meta is what the caller needs to finish a transaction after a crash.
type Meta struct {
	Hash        string            `json:"hash,omitempty"`
	PayloadFile string            `json:"payloadFile,omitempty"` // in the state dir
	Actions     []plan.UnitAction `json:"actions"`
	// Verify keys the checks that answered healthy before the actions (verify.Baseline): what a
	// verified refresh, or its recovery, must find healthy after them.
	Verify []string `json:"verify,omitempty"`
	// PayloadBytes is the size of the payload's copy the refresh saves in the state dir while the
	// journal stands (payloads/<sha256>; 0 when it is saved already): charged on the state dir's
	// filesystem by the space check (checkSpace), never journaled.
	PayloadBytes int64 `json:"-"`
}

type journal struct {
	Version int   `json:"version"`
	Phase   Phase `json:"phase"`
	// Root is the node root the transaction runs on, by the device and inode of its directory (and
	// the path it was given, for the message), written with the first journal write (journal version
	// 7): recovery acts on a journal only on that root (rule 19). Two roots given one state dir (a
	// recover with another --root, a state dir outside both) would otherwise have one root's journal
	// "rolled back" on the other, exit 0, and the crashed root left half-new with no journal
	// (adversary round 13 c/01).
	Root        *DirID   `json:"root,omitempty"`
	Meta        Meta     `json:"meta"`
	Entries     []Entry  `json:"entries"`
	CreatedDirs []string `json:"createdDirs,omitempty"` // outermost first
	// CreatedDirIDs are the created directories' device and inode, each recorded once it is made
	// (journal version 6): a clean-up removes a created directory only when it is this one (rule 7),
	// never a directory a journal merely names (adversary round 11, core 03).
	CreatedDirIDs []DirID `json:"createdDirIds,omitempty"`
	// Committed is set with PhaseCommitted and kept through a rollback: the unit actions may have run
	// on the new content, so they run again once the originals are back.
	Committed bool `json:"committed,omitempty"`
	// Finishing is set once the outcome is settled (done, rolled back, or abandoned before any target
	// changed): only leftovers remain to be removed, so recovery removes them and does nothing else.
	Finishing bool `json:"finishing,omitempty"`
}

// DirID names a directory the transaction created by its device and inode.
type DirID struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

const (
	journalFile = "journal.json"
	// journalVersion 8 keeps the side files of a target in a directory whose reader takes every
	// entry in its hidden subdirectory (plan.SideDir); 7 records the node root's device and inode (journal.Root: rule 19; one before
	// version 7 records none, and is recovered on the root it is given, as before); 6 each created directory's device and inode (CreatedDirIDs); 5 each new file's sha256 (Entry.NewSHA256); 4 each original's
	// (Entry.OrigSHA256); 3 names side files .refresh-agent-<hash>-<kind> (names.go); 2 named them
	// .NAME.refresh-agent-<kind>; 1 kept backups in the state dir. Recovery reads all six (an older
	// agent refuses a newer journal whole, touching nothing: rule 1); one before version 5 proves a
	// new file by its inode alone, so its rollback never deletes or replaces a file on that proof
	// (rules 13 and 17): such a file is kept and the rollback stays incomplete.
	journalVersion = 8
	// backupDir held version 1 journals' backups in the state dir.
	backupDir = "backup"
)

// writeJournal replaces the journal atomically and durably.
func writeJournal(stateDir string, j *journal) error {
	CrashPoint("journal")
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return WriteFileAtomic(stateDir, journalFile, data, 0o600)
}

func readJournal(stateDir string) (*journal, error) {
	data, err := ReadStateFile(stateDir, journalFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, ErrStateTooLarge) {
		return nil, fmt.Errorf("journal %s: %w: %w (rule 0): refusing it and touching nothing (it is left as it is: inspect it, and remove it by hand once no refresh-agent runs)", filepath.Join(stateDir, journalFile), ErrHostile, err)
	}
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("journal %s is corrupt: %s", filepath.Join(stateDir, journalFile), JSONError(err))
	}
	if err := j.check(); err != nil {
		return nil, fmt.Errorf("journal %s is not one this agent wrote: %w; refusing it and touching nothing (it is left as it is: inspect it, and remove it by hand once no refresh-agent runs)", filepath.Join(stateDir, journalFile), err)
	}
	return &j, nil
}

// The journal's validity rules, all in one place. Recovery renames, links and removes what a
// journal names, so it acts on one only when every rule holds; any other is refused whole, touching
// nothing (readJournal: "not one this agent wrote"; Recover: ErrHostile). The form (check):
//
//  1. the version is one this agent reads (1 to journalVersion), the phase one it knows;
//  2. every entry's path is absolute, clean, not the root, and no component of it is named like a
//     side file (plan.ReservedName);
//  3. no two entries name the same path (one target is one entry: two, one saying it had an original
//     and one not, would have recovery delete the file and then its backup);
//  4. an entry's temp, when set, is its own path's temp side file, and a removal has none;
//  5. an entry's backup, when set, is its own path's backup side file (version 1: a plain name in the
//     state dir's backup directory), and no two entries share one;
//  6. an entry that says it had no original carries no original's mode, owner or hash and no copied
//     backup; an original's mode is permission bits only; an original's hash is 64 lowercase hex
//     digits, and from version 4 on it is there for every entry with an original from the prepared
//     phase on (Prepare records it with the backup); a new file's hash likewise, a removal carrying
//     none, and from version 5 on it is there for every write from the prepared phase on;
//  7. a created directory is clean, absolute, named once, and a parent of some entry's path; its
//     recorded device and inode (version 6, recorded as it is made: from the prepared phase on there
//     is one for every created directory) name a created directory, once. A clean-up removes a
//     created directory only when it is empty and the directory in place is the recorded one: a
//     journal that names a directory the agent did not make (an empty /etc/kubernetes/manifests)
//     never has it removed, and one before version 6, or a crash between the mkdir and its record,
//     leaves an empty directory behind rather than remove one it cannot prove its own;
//  8. the payload file is payloads/<sha256>; the hash is printable ASCII of at most 253 bytes;
//  9. finishing is set only once the outcome was settled (done, rolled back, or abandoned while
//     preparing), and committed is set in the committed and done phases;
//  18. the unit actions are of the form a plan journals (plan.JournaledForm): daemon-reloads, reloads
//     and restarts of units, restarts of static pods, and Enable, Disable, Mask, Unmask or Stop of a
//     unit with no undo or its inverse (never Start, never an unknown kind, never ifLoaded), each
//     once. Which units and pods the node's policy lets them name is Trust's (plan.Journaled).
//
// Against the node, before anything is touched (consistent, from Recover):
//
//  10. an entry that says it had no original has no backup on disk, from the prepared phase on: a
//     rollback would remove the target as new, and the clean-up the backup, which may be its only copy;
//
//  11. while preparing no target has been touched, so an entry's backup on disk must be its target
//     under a second name (the same inode, or the same bytes, mode and owner); one without its target,
//     or another file, may be the only copy of an original: the journal is refused rather than the
//     backup removed.
//
//  12. from the prepared phase on, every entry names its backup and every write its temp (any
//     version: a version 1 journal of bare entries is refused like today's);
//
//  13. from the prepared phase on, an entry that says it had no original deletes its target on a
//     rollback only when the file in place is provably the agent's own new file: the inode of the
//     temp it wrote (newDev/newIno) AND contents that hash to the new file's recorded sha256
//     (newSHA256, version 5; both recorded with the prepared phase). An inode anyone can stat; the
//     hash a forger must read the file for. A file in place that is not (the pull secret under a
//     forged "no original" naming its own inode) has the journal refused; a removal that had no
//     original finds nothing in place. A journal before version 5 records no such hash: its
//     rollback keeps the file in place (ErrNotRestored: the rollback stays incomplete, exit 1);
//
//  14. the payload file, when it is there, is a regular file (no symlink on the way) whose bytes
//     hash to its name: recovery records it as the node's state;
//
//  15. from the committed phase on (done included, until finishing), every write's file in place is
//     the agent's new file (regular, the newDev/newIno recorded with the prepared phase, and from
//     version 5 its contents hashing to newSHA256), and its temp
//     is gone (the commit renamed every one): recovery rolls such a journal forward, deleting the
//     backups, so one that does not match the node (a prepared journal edited to committed) is refused;
//
//  16. from the committed phase on (done included, until finishing), the payload file named is there
//     (it is saved before the commit): recovery records it, but only once the node's files show it
//     applied (apply: every file the payload defines under the node's policy holds the payload's
//     contents): the entries alone prove only what they name, and an empty list proves nothing
//     (adversary round 7a F6).
//
//  17. every restore from a backup, in every phase that rolls back (prepared, rollingback,
//     rolledback, a committed one rolled back), uses it only when it is provably the original the
//     agent saved (Txn.provenBackup): a regular file (lstat, then opened O_NOFOLLOW in its directory,
//     the same inode) with the original's recorded mode and owner, and either the untouched target
//     under a second name (the same inode) or contents that hash to the recorded OrigSHA256
//     (journals before version 4 record none: there the target must be the agent's new file, or
//     missing, for the backup to be used). A target that is still its original (the same inode as
//     the backup, or by its recorded hash, mode and owner) is never restored. A backup that fails is
//     never renamed over a target: that target is left as it is, the backup kept and named
//     (ErrHostileBackup), the rollback does not complete and the journal stays. A proven backup
//     proves only what it holds (whoever planted a file beside the target knows its hash), never
//     what it would replace: it is put back only where the target is missing or provably the
//     agent's new file (its inode and, from version 5, its contents' newSHA256), or the mask the
//     journal's own Mask made where the refresh removed the unit file (agentsMask); over anything else
//     (a file changed since, the node's real pull secret under a forged journal) both stay and the
//     rollback does not complete (ErrNotRestored; adversary round 13 core 02).
//
//  19. from version 7 on, the journal records the node root it was made on (root: the root
//     directory's device and inode, written with the first journal write, in every phase), and
//     recovery acts on it only on that root: under any other --root (two roots given one state dir)
//     it is refused, touching nothing, naming both roots and the recover command of its own
//     (ErrOtherRoot, checked before anything else against the node: Recover). A journal before
//     version 7 records no root and is recovered on the root given, as before. The same path with
//     the same inode under another device number is the same root renumbered (a reboot, a disk
//     enumerated again): recovery renames the journal's recorded devices to the node's (renumber)
//     and goes on under every other rule.
//
// Beyond these, Recover checks the paths and unit actions against the node's policy (Trust): only
// what a plan under that policy could have journaled (plan.Journaled: a state action only on a unit
// a unit rule names, a reload or restart only of a unit a rule asks it of, a pod restart only of a
// pod a rule names).
func (j *journal) check() error {
	if j.Version < 1 || j.Version > journalVersion {
		return fmt.Errorf("version %d", j.Version)
	}
	switch j.Phase {
	case PhasePreparing, PhasePrepared, PhaseCommitted, PhaseDone, PhaseRollingBack, PhaseRolledBack:
	default:
		return fmt.Errorf("unknown phase %q", j.Phase)
	}
	paths, backups := map[string]int{}, map[string]int{}
	for i, e := range j.Entries {
		if _, err := rel(e.Path); err != nil || reservedName(e.Path) {
			return fmt.Errorf("entry %d: path %q", i, e.Path)
		}
		if k, ok := paths[e.Path]; ok {
			return fmt.Errorf("entries %d and %d both name %s", k, i, e.Path)
		}
		paths[e.Path] = i
		if e.Temp != "" && (e.Remove || e.Temp != sideNameOf(j.Version, e.Path, sideTemp)) {
			return fmt.Errorf("entry %d: temp %q is not %s's", i, e.Temp, e.Path)
		}
		switch {
		case j.Version >= 2 && e.Backup != "" && e.Backup != sideNameOf(j.Version, e.Path, sideBackup):
			return fmt.Errorf("entry %d: backup %q is not %s's", i, e.Backup, e.Path)
		case j.Version < 2 && strings.ContainsAny(e.Backup, "/\\") || e.Backup == ".." || e.Backup == ".":
			return fmt.Errorf("entry %d: backup %q is not a name in the backup directory", i, e.Backup)
		}
		if k, ok := backups[e.Backup]; ok && e.Backup != "" {
			return fmt.Errorf("entries %d and %d share the backup %s", k, i, e.Backup)
		}
		backups[e.Backup] = i
		if !e.HadOriginal && (e.OrigMode != 0 || e.OrigUID != 0 || e.OrigGID != 0 || e.BackupCopy || e.OrigSHA256 != "") {
			return fmt.Errorf("entry %d: %s says it had no original, yet carries an original's mode, owner, hash or backup", i, e.Path)
		}
		if e.NewSHA256 != "" && (e.Remove || !sha256RE.MatchString(e.NewSHA256)) {
			return fmt.Errorf("entry %d: %s: new file's hash %q is not a sha256, or is a removal's", i, e.Path, e.NewSHA256)
		}
		if j.Version >= 5 && j.Phase != PhasePreparing && !e.Remove && e.NewSHA256 == "" {
			return fmt.Errorf("entry %d: %s writes a new file, yet carries no hash of it: not an entry this agent writes", i, e.Path)
		}
		if e.OrigSHA256 != "" && !sha256RE.MatchString(e.OrigSHA256) {
			return fmt.Errorf("entry %d: %s: original's hash %q is not a sha256", i, e.Path, e.OrigSHA256)
		}
		if j.Version >= 4 && j.Phase != PhasePreparing && e.HadOriginal && e.OrigSHA256 == "" {
			return fmt.Errorf("entry %d: %s had an original, yet carries no hash of it: not an entry this agent writes", i, e.Path)
		}
		if j.Phase != PhasePreparing && (e.Backup == "" || !e.Remove && e.Temp == "") {
			return fmt.Errorf("entry %d: %s names no backup or no temp file: not an entry this agent writes", i, e.Path)
		}
		if e.OrigMode&^fs.ModePerm != 0 {
			return fmt.Errorf("entry %d: %s: original mode %#o is more than permission bits", i, e.Path, uint32(e.OrigMode))
		}
	}
	// Every entry's ancestors, once each: what a created directory must be one of. Built in the
	// journal's bytes (each entry adds its path's depth), so that checking a created directory costs
	// a map look-up, never a pass over the entries (adversary r13 c/06: entries × dirs under the lock).
	parents := map[string]bool{}
	for _, e := range j.Entries {
		for d := path.Dir(e.Path); d != "/" && d != "." && !parents[d]; d = path.Dir(d) {
			parents[d] = true
		}
	}
	dirs := map[string]bool{}
	for _, d := range j.CreatedDirs {
		if _, err := rel(d); err != nil || dirs[d] || !parents[d] {
			return fmt.Errorf("created dir %q is no entry's parent, or named twice", d)
		}
		dirs[d] = true
	}
	ids := map[string]bool{}
	for _, id := range j.CreatedDirIDs {
		if !dirs[id.Path] || ids[id.Path] || id.Ino == 0 {
			return fmt.Errorf("created dir id %q is no created dir's, or named twice", id.Path)
		}
		ids[id.Path] = true
	}
	if j.Version >= 6 && j.Phase != PhasePreparing && len(ids) != len(dirs) {
		return fmt.Errorf("a created dir carries no device and inode: not a journal this agent writes")
	}
	if j.Version >= 7 && (j.Root == nil || j.Root.Ino == 0 || !filepath.IsAbs(j.Root.Path) || filepath.Clean(j.Root.Path) != j.Root.Path) {
		return fmt.Errorf("version %d records no node root (rule 19): not a journal this agent writes", j.Version)
	}
	if f := j.Meta.PayloadFile; f != "" && !payloadFileRE.MatchString(f) {
		return fmt.Errorf("payload file %q is not payloads/<sha256>", f)
	}
	if len(j.Meta.Hash) > 253 || strings.ContainsFunc(j.Meta.Hash, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return fmt.Errorf("hash %q", j.Meta.Hash)
	}
	if j.Finishing && j.Phase != PhaseDone && j.Phase != PhaseRolledBack && j.Phase != PhasePreparing {
		return fmt.Errorf("finishing in phase %s", j.Phase)
	}
	if j.Version >= 3 && (j.Phase == PhaseCommitted || j.Phase == PhaseDone) && !j.Committed {
		return fmt.Errorf("phase %s without committed", j.Phase)
	}
	return plan.JournaledForm(j.Meta.Actions) // rule 18
}

// ErrOtherRoot marks a journal made on another node root than the one recovery is given (rule 19):
// refused, touching nothing, for a recover with the root it was made on.
var ErrOtherRoot = errors.New("the journal is another node root's")

// onRoot is rule 19: a journal that records its root is acted on only on that root.
func (j *journal) onRoot(root *Root, stateDir string) error {
	if j.Root == nil {
		return nil // before version 7 (check): no record, recovered on the root given as before
	}
	id, err := root.id()
	if err != nil {
		return fmt.Errorf("node root %s: %w", root.Dir, err)
	}
	if id.Dev == j.Root.Dev && id.Ino == j.Root.Ino {
		return nil
	}
	if id.Ino == j.Root.Ino && root.Dir == j.Root.Path {
		// The same root under a new device number (adversary r18 d/01): a reboot, or a disk or
		// loop device enumerated again after the power cut, renumbers st_dev while the path and
		// the inode stay. Recovery goes on with the devices renamed (renumber); what it touches
		// is still proven by inode and recorded hashes (rules 13, 15, 17).
		return nil
	}
	return fmt.Errorf("%w: it was made on node root %s (device %d, inode %d), not on %s (device %d, inode %d), which this recovery was given with the same state dir %s: acting on it here would roll that root's transaction back on this one; recover it with refresh-agent recover --root %s --state-dir %s",
		ErrOtherRoot, j.Root.Path, j.Root.Dev, j.Root.Ino, root.Dir, id.Dev, id.Ino, stateDir, j.Root.Path, stateDir)
}

// id returns the root directory's device and inode (the descriptor every path resolves from), and
// the path it was opened as.
func (r *Root) id() (DirID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(r.root.fd, &st); err != nil {
		return DirID{}, err
	}
	return DirID{Path: r.Dir, Dev: uint64(st.Dev), Ino: st.Ino}, nil
}

// consistent checks the journal against the node before recovery touches anything (rules 10 and 11
// above); a journal that fails is refused as hostile, naming the path.
func (j *journal) consistent(root *Root, stateDir string) error {
	if err := j.payloadIsItsName(stateDir); err != nil {
		return err
	}
	for i, e := range j.Entries {
		if err := j.noOriginalIsOurs(root, i, e); err != nil {
			return err
		}
		if err := j.committedIsInPlace(root, i, e); err != nil {
			return err
		}
		if e.Backup == "" {
			continue
		}
		backup := e.Backup
		var err error
		if j.Version < 2 {
			backup = filepath.Join(stateDir, backupDir, e.Backup)
			_, err = os.Lstat(backup)
		} else {
			br, _ := rel(e.Backup)
			_, err = root.root.Lstat(br)
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("entry %d, %s: backup %s: %w", i, e.Path, backup, err)
		}
		if j.Phase == PhasePreparing {
			if j.Version >= 2 {
				br, _ := rel(e.Backup)
				fi, err := root.root.Lstat(br)
				if err == nil && fi.Mode().IsRegular() && root.secondName(e.Path, br, fi) {
					continue
				}
			} else if tr, _ := rel(e.Path); func() bool { _, err := root.root.Lstat(tr); return err == nil }() {
				continue // a version 1 backup is a copy in the state dir; its file is there
			}
			return fmt.Errorf("%w: entry %d, %s: its backup %s is there but is not the file under a second name, while preparing (when no file is touched yet): the backup may be the only copy of an original",
				ErrHostile, i, e.Path, backup)
		}
		if !e.HadOriginal {
			return fmt.Errorf("%w: entry %d, %s says it had no original, yet its backup %s is there: a rollback would remove the file and then the backup, which may be its only copy",
				ErrHostile, i, e.Path, backup)
		}
	}
	return nil
}

// JSONError says why bytes are not the JSON expected without quoting any of them (a state file may
// be anything, a host file's contents among them): the offset of a syntax error, the field of a
// type error.
func JSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (at byte %d)", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q is not a %s", te.Field, te.Type)
	}
	return "not the JSON expected"
}

// noOriginalIsOurs is rule 13.
func (j *journal) noOriginalIsOurs(root *Root, i int, e Entry) error {
	if j.Phase == PhasePreparing || e.HadOriginal || root.unplaced(e) {
		return nil
	}
	rp, _ := rel(e.Path)
	fi, err := root.root.Lstat(rp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("entry %d, %s: %w", i, e.Path, err)
	}
	if e.Remove || !e.isNew(fi) || e.NewSHA256 != "" && !root.newContents(e, rp, fi) {
		return fmt.Errorf("%w: entry %d, %s says it had no original, yet the file in place is not the one the agent wrote: a rollback would delete it",
			ErrHostile, i, e.Path)
	}
	return nil
}

// newContents reports whether the regular file rp (lstat fi) holds e's new contents: it hashes to
// the recorded newSHA256 (version 5). False when none is recorded.
func (r *Root) newContents(e Entry, rp string, fi fs.FileInfo) bool {
	if e.NewSHA256 == "" {
		return false
	}
	sum, _, err := r.hashRegular(rp, fi)
	return err == nil && sum == e.NewSHA256
}

// provenNew reports whether the file in place at e's path (lstat fi) is provably the agent's new
// file: its temp's inode and, from version 5 on, its recorded contents. Before version 5 (no hash)
// the inode alone says so; only callers that never delete or replace on it may accept that (old).
func (r *Root) provenNew(e Entry, rp string, fi fs.FileInfo, old bool) bool {
	if !e.isNew(fi) {
		return false
	}
	if e.NewSHA256 == "" {
		return old
	}
	return r.newContents(e, rp, fi)
}

// isNew reports whether fi is the new file the transaction wrote for e (its temp's inode).
func (e Entry) isNew(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && e.NewIno != 0 && fi.Mode().IsRegular() && st.Ino == e.NewIno && uint64(st.Dev) == e.NewDev
}

// unplaced reports whether e's new file never reached its target: the temp the transaction wrote
// (its recorded inode) is still at the temp's name, so whatever is at the target is not the agent's
// and a rollback leaves it as it is: a commit stopped before this entry, or one that found the
// target written by another process since the plan (place). It only ever spares a file.
func (r *Root) unplaced(e Entry) bool {
	if e.Remove || e.Temp == "" || e.NewIno == 0 {
		return false
	}
	tr, _ := rel(e.Temp)
	fi, err := r.root.Lstat(tr)
	return err == nil && e.unplacedAt(fi)
}

// unplacedAt is unplaced for fi, the lstat of e's temp name.
func (e Entry) unplacedAt(fi fs.FileInfo) bool { return !e.Remove && e.Temp != "" && e.isNew(fi) }

// ownTemp reports whether fi, at e's temp name, is the temp the transaction wrote: its inode, or
// any regular file for a journal that recorded none (before version 5).
func (e Entry) ownTemp(fi fs.FileInfo) bool { return e.NewIno == 0 || e.isNew(fi) }

// rollsForward reports whether recovery rolls the journal forward, deleting the backups (rules 15, 16).
func (j *journal) rollsForward() bool {
	return (j.Phase == PhaseCommitted || j.Phase == PhaseDone) && !j.Finishing
}

// committedIsInPlace is rule 15, for a journal past its commit, finishing or not (adversary r21
// b2/03: a finishing one skipped it, and its backups were deleted under targets never renamed): a
// write's file in place is the agent's new file, and a removed file is gone unless its backup, the
// original moved aside, is there (b2/04: a forged removal recorded a payload without a file still
// in place).
func (j *journal) committedIsInPlace(root *Root, i int, e Entry) error {
	if j.Phase != PhaseCommitted && j.Phase != PhaseDone {
		return nil
	}
	rp, _ := rel(e.Path)
	fi, err := root.root.Lstat(rp)
	if e.Remove {
		br, _ := rel(e.Backup)
		if err == nil && e.HadOriginal && e.Backup != "" {
			if _, berr := root.root.Lstat(br); errors.Is(berr, fs.ErrNotExist) {
				return fmt.Errorf("%w: entry %d, %s: the journal says committed, yet the file it removed is in place and no backup of it is there: recovery would record a payload without it", ErrHostile, i, e.Path)
			}
		}
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: entry %d, %s: the journal says committed, yet the file is missing: recovery would delete its backup", ErrHostile, i, e.Path)
	case err != nil:
		return fmt.Errorf("%w: entry %d, %s: %v", ErrHostile, i, e.Path, err)
	case !root.provenNew(e, rp, fi, true):
		return fmt.Errorf("%w: entry %d, %s: the journal says committed, yet the file in place is not the one the agent wrote: recovery would delete its backup", ErrHostile, i, e.Path)
	}
	tr, _ := rel(e.Temp)
	if _, err := root.root.Lstat(tr); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: entry %d, %s: the journal says committed, yet its temp %s is still there (the commit renames every one): recovery would delete it and the backup", ErrHostile, i, e.Path, e.Temp)
	}
	return nil
}

// payloadIsItsName is rules 14 and 16.
func (j *journal) payloadIsItsName(stateDir string) error {
	f := j.Meta.PayloadFile
	if f == "" {
		return nil
	}
	sum, err := HashStateFile(stateDir, f)
	if errors.Is(err, fs.ErrNotExist) {
		if j.rollsForward() {
			return fmt.Errorf("%w: the journal says committed, yet its payload file %s is missing (it is saved before the commit): recovery would record a payload that does not exist", ErrHostile, filepath.Join(stateDir, f))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: payload file %s: %v", ErrHostile, f, err)
	}
	if sum != filepath.Base(f) {
		return fmt.Errorf("%w: payload file %s does not hash to its name: recovery would record it as the node's state", ErrHostile, filepath.Join(stateDir, f))
	}
	return nil
}

var (
	payloadFileRE = regexp.MustCompile(`^payloads/[0-9a-f]{64}$`)
	sha256RE      = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// IsSHA256 says whether s is a sha256 as the agent writes one (64 lower-case hex digits): a
// journal's hashes, a saved payload's name.
func IsSHA256(s string) bool { return sha256RE.MatchString(s) }

// Trust says what recovery may act on beyond the journal's own form: the managed paths a refresh
// could have planned under the node's policy, and the unit actions it could have run. A journal
// naming anything else (an entry for /etc/passwd with "no original" would have recovery delete it)
// is refused whole, touching nothing.
type Trust struct {
	Path func(p string) error
	// Actions says why no refresh could have journaled the unit actions (plan.Journaled under the
	// node's policy), naming the one: recovery runs them again, and their undos on a rollback.
	Actions func(list []plan.UnitAction) error
}

// ErrHostile marks a journal recovery refuses: it names what no refresh could have planned, or
// what the node holds contradicts it (rules 10 and 11).
var ErrHostile = errors.New("a hostile journal: not one a refresh of this node could have left")

func (j *journal) trusted(tr Trust) error {
	for i, e := range j.Entries {
		if tr.Path == nil {
			break
		}
		if err := tr.Path(e.Path); err != nil {
			return fmt.Errorf("%w: entry %d, %s: %v", ErrHostile, i, e.Path, err)
		}
	}
	if tr.Actions != nil {
		if err := tr.Actions(j.Meta.Actions); err != nil {
			return fmt.Errorf("%w: %v", ErrHostile, err)
		}
	}
	return nil
}

const stateTempSuffix = ".tmp"

// IsStateTemp reports whether name (in the state dir or its payloads directory) is a temp file
// WriteFileAtomic makes: only ever a leftover once the node lock is held.
func IsStateTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, stateTempSuffix) && len(name) > len("."+stateTempSuffix)
}

// writeAndClose writes data to f, fsyncs it and closes it; f is closed on every path.
func writeAndClose(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
