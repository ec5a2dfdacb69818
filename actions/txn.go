package actions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Op is one file to write or remove, with owners already resolved to ids.
type Op struct {
	Path   string
	Remove bool
	Data   []byte
	// Contents, when set, produces the data at staging time instead of Data (one file decoded at a time).
	Contents func() ([]byte, error)
	Mode     fs.FileMode
	UID, GID int
	// Missing parent directories are created with DirMode (0755 when zero), owned by DirUID:DirGID.
	DirMode        fs.FileMode
	DirUID, DirGID int
}

// Txn is one all-or-nothing set of file changes, recorded in a journal in the state directory so that
// a crash at any point can be finished or undone by Recover.
type Txn struct {
	root     *Root
	stateDir string
	j        journal
}

// tempName is the temp file beside a target. Its suffix keeps it out of readers that pick files by
// extension (crio reads *.yaml and *.conf from its directories).
func tempName(p string) string {
	return path.Join(path.Dir(p), "."+path.Base(p)+".refresh-agent-tmp")
}

// Prepare stages ops: it checks every path, writes the journal, creates missing parent directories,
// writes each new file to a temp file beside its target (mode and owner set before any byte, then
// fsynced) and backs up every original. No target is touched. On error it cleans up and returns it.
func Prepare(root *Root, stateDir string, ops []Op, meta Meta) (*Txn, error) {
	if j, err := readJournal(stateDir); err != nil || j != nil {
		return nil, fmt.Errorf("state dir %s holds an unfinished transaction: recover first (%v)", stateDir, err)
	}
	t := &Txn{root: root, stateDir: stateDir, j: journal{Version: 1, Phase: PhasePreparing, Meta: meta}}
	dirs := map[string]Op{}
	for i, op := range ops {
		missing, err := root.checkPath(op.Path)
		if err != nil {
			return nil, err
		}
		for _, d := range missing {
			if _, ok := dirs[d]; !ok {
				dirs[d] = op
				t.j.CreatedDirs = append(t.j.CreatedDirs, d)
			}
		}
		e := Entry{Path: op.Path, Remove: op.Remove, Backup: strconv.Itoa(i)}
		if !op.Remove {
			e.Temp = tempName(op.Path)
		}
		t.j.Entries = append(t.j.Entries, e)
	}
	slices.SortFunc(t.j.CreatedDirs, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	// Only now, with every path checked, does anything get written (a refusal writes nothing).
	if err := EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	// The state dir may live inside the root (<root>/var/lib/refresh-agent): creating it may have
	// created parents the entries need. Those are not the transaction's to create or remove.
	t.j.CreatedDirs = slices.DeleteFunc(t.j.CreatedDirs, func(d string) bool {
		rp, _ := rel(d)
		fi, err := root.root.Lstat(rp)
		return err == nil && fi.IsDir()
	})
	if err := os.MkdirAll(filepath.Join(stateDir, backupDir), 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	if err := writeJournal(stateDir, &t.j); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := t.stage(ops, dirs); err != nil {
		return nil, errors.Join(err, t.discard())
	}
	t.j.Phase = PhasePrepared
	if err := writeJournal(stateDir, &t.j); err != nil {
		return nil, errors.Join(fmt.Errorf("journal: %w", err), t.discard())
	}
	return t, nil
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
	}
	for i, op := range ops {
		e := &t.j.Entries[i]
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
			CrashPoint("temp")
		}
		if err := t.backup(e); err != nil {
			return fmt.Errorf("%s: backup: %w", op.Path, err)
		}
		CrashPoint("backup")
	}
	return syncPath(filepath.Join(t.stateDir, backupDir))
}

// backup records the original's mode and owner and keeps its contents in the backup dir: a hard link
// when the state dir shares the filesystem (free, and the rename leaves the old inode to the link),
// else a copy.
func (t *Txn) backup(e *Entry) error {
	rp, _ := rel(e.Path)
	fi, err := t.root.root.Lstat(rp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	e.HadOriginal, e.OrigMode = true, fi.Mode().Perm()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.OrigUID, e.OrigGID = int(st.Uid), int(st.Gid)
	}
	dst := filepath.Join(t.stateDir, backupDir, e.Backup)
	_ = os.Remove(dst)
	if err := os.Link(filepath.Join(t.root.Dir, rp), dst); err == nil {
		return nil
	}
	src, err := t.root.root.Open(rp)
	if err != nil {
		return err
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Commit moves every new file into place (and removes the removed ones), makes the renames durable,
// and records the transaction as committed. If a step fails, it restores every original and returns
// the error; the caller then runs the unit actions again and calls Finish.
func (t *Txn) Commit() error {
	dirs := map[string]bool{}
	for _, e := range t.j.Entries {
		var err error
		rp, _ := rel(e.Path)
		if e.Remove {
			err = t.root.root.Remove(rp)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else {
			tr, _ := rel(e.Temp)
			err = t.root.root.Rename(tr, rp)
		}
		if err != nil {
			return errors.Join(fmt.Errorf("%s: %w", e.Path, err), t.Rollback())
		}
		dirs[path.Dir(e.Path)] = true
		CrashPoint("rename")
	}
	for d := range dirs {
		if err := t.root.syncDir(d); err != nil {
			return errors.Join(fmt.Errorf("%s: fsync: %w", d, err), t.Rollback())
		}
	}
	t.j.Phase = PhaseCommitted
	if err := writeJournal(t.stateDir, &t.j); err != nil {
		return errors.Join(fmt.Errorf("journal: %w", err), t.Rollback())
	}
	return nil
}

// MarkDone records that the unit actions ran, so recovery does not run them again.
func (t *Txn) MarkDone() error {
	t.j.Phase = PhaseDone
	return writeJournal(t.stateDir, &t.j)
}

// Rollback restores every original (and removes files that did not exist before), durably. The
// journal says rollingback until Finish, so a crash during it is resumed by Recover.
func (t *Txn) Rollback() error {
	t.j.Phase = PhaseRollingBack
	if err := writeJournal(t.stateDir, &t.j); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return t.restore()
}

func (t *Txn) restore() error {
	var errs []error
	dirs := map[string]bool{}
	for _, e := range t.j.Entries {
		rp, _ := rel(e.Path)
		if e.HadOriginal {
			data, err := os.ReadFile(filepath.Join(t.stateDir, backupDir, e.Backup))
			if err == nil {
				tmp := tempName(e.Path)
				err = t.root.writeTemp(tmp, data, e.OrigMode, e.OrigUID, e.OrigGID)
				if err == nil {
					tr, _ := rel(tmp)
					err = t.root.root.Rename(tr, rp)
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("restoring %s: %w", e.Path, err))
			}
		} else if err := t.root.root.Remove(rp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s: %w", e.Path, err))
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

// Finish removes what the transaction left: temp files, directories it created that stayed empty
// (after a rollback), backups, and last the journal.
func (t *Txn) Finish() error {
	for _, e := range t.j.Entries {
		if e.Temp != "" {
			tr, _ := rel(e.Temp)
			_ = t.root.root.Remove(tr)
		}
	}
	if t.j.Phase == PhaseRollingBack || t.j.Phase == PhasePreparing {
		for i := len(t.j.CreatedDirs) - 1; i >= 0; i-- {
			dr, _ := rel(t.j.CreatedDirs[i])
			_ = t.root.root.Remove(dr) // only succeeds when empty
		}
	}
	CrashPoint("finish")
	if err := os.RemoveAll(filepath.Join(t.stateDir, backupDir)); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(t.stateDir, journalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncPath(t.stateDir)
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

// discard abandons a transaction that never touched a target.
func (t *Txn) discard() error {
	t.j.Phase = PhasePreparing
	return t.Finish()
}

// Phase reports how far the transaction got.
func (t *Txn) Phase() Phase { return t.j.Phase }

// Meta returns what the transaction was started with.
func (t *Txn) Meta() Meta { return t.j.Meta }

// Paths lists the managed paths.
func (t *Txn) Paths() []string {
	out := make([]string, len(t.j.Entries))
	for i, e := range t.j.Entries {
		out[i] = e.Path
	}
	return out
}

// Recover finishes or undoes an interrupted transaction found in stateDir. Before the prepared phase
// nothing changed and it only cleans up; from prepared until committed it restores every original.
// Either way it returns nil. A committed, done or rolling-back transaction is returned for the caller
// to finish (run the unit actions, record, Finish): every target is then new, or, rolling back, old.
func Recover(root *Root, stateDir string) (*Txn, error) {
	j, err := readJournal(stateDir)
	if err != nil || j == nil {
		return nil, err
	}
	t := &Txn{root: root, stateDir: stateDir, j: *j}
	switch j.Phase {
	case PhasePreparing:
		return nil, t.discard()
	case PhasePrepared:
		if err := t.restore(); err != nil {
			return nil, err
		}
		t.j.Phase = PhasePreparing // nothing left to undo: clean up like an abandoned prepare
		return nil, t.Finish()
	case PhaseRollingBack:
		return t, t.restore()
	case PhaseCommitted, PhaseDone:
		return t, nil
	default:
		return nil, fmt.Errorf("journal in %s has unknown phase %q", stateDir, j.Phase)
	}
}

// writeTemp creates p (which must not be a symlink) with mode and owner set before any byte is
// written, writes data and fsyncs it.
func (r *Root) writeTemp(p string, data []byte, mode fs.FileMode, uid, gid int) error {
	rp, err := rel(p)
	if err != nil {
		return err
	}
	if fi, err := r.root.Lstat(rp); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: exists and is not a regular file", p)
		}
		if err := r.root.Remove(rp); err != nil {
			return err
		}
	}
	f, err := r.root.OpenFile(rp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := setOwnerMode(f, mode, uid, gid); err != nil {
		f.Close()
		return err
	}
	return writeAndClose(f, data)
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
