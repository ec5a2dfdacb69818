package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Serialized by the root's lock, two state dirs on one root still must not act on each other's
// transaction: A crashes mid-transaction, then B runs; B's journal accounts for nothing of A's, and
// its sweep would remove A's temps and backups beside the files both manage. The contract: the root
// has one owner, the state dir that began its last transaction, recorded before that transaction's
// journal is first written. While the owner's journal is there, every process with another state
// dir (a refresh, a dry run, a recovery, the agent) refuses before it reads or sweeps anything,
// naming both dirs and the recover command that settles the owner's. With every process serialized
// and refused so, at most one state dir on a root has a journal, and it is the owner.

// DefaultStateDir is the agent's state dir on the node (root-relative) when --state-dir is not given.
const DefaultStateDir = "/var/lib/refresh-agent"

// OwnerFile is the root's owner record, in the default state dir (a fixed path inside the root,
// denied to every payload and policy rule as the state dir is): the state dir that began the root's
// last transaction, when not the default one. No record means the default state dir.
const OwnerFile = "root-owner"

// ErrRootOwned marks a run refused because another state dir's transaction on the same node root is
// not settled.
var ErrRootOwned = errors.New("another state dir's transaction on this node root is not settled")

type ownerRecord struct {
	StateDir string `json:"stateDir"` // root-relative when InRoot, else the path the owner was given
	InRoot   bool   `json:"inRoot"`
}

// rootOwner returns the root's owner as a path this process can look in, and its record (nil when
// there is none: the default state dir).
func rootOwner(root *Root) (string, *ownerRecord, error) {
	def := filepath.Join(root.Dir, DefaultStateDir)
	// The record is trusted as the journal is: a dir another user can write or swap is refused.
	if err := root.CheckStateDir(def); err != nil {
		return "", nil, fmt.Errorf("node root %s: its owner record's dir: %w", root.Dir, err)
	}
	p := filepath.Join(def, OwnerFile)
	data, err := ReadStateFile(def, OwnerFile)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		return def, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("node root %s: owner record %s: %w", root.Dir, p, err)
	}
	var rec ownerRecord
	if json.Unmarshal(data, &rec) != nil || !filepath.IsAbs(rec.StateDir) || filepath.Clean(rec.StateDir) != rec.StateDir {
		return "", nil, fmt.Errorf("node root %s: owner record %s is not one the agent wrote; refusing it (remove it by hand once no transaction of another state dir is pending on this root)", root.Dir, p)
	}
	if rec.InRoot {
		return filepath.Join(root.Dir, rec.StateDir), &rec, nil
	}
	return rec.StateDir, &rec, nil
}

// CheckRootOwner refuses (ErrRootOwned) a process with stateDir on root while the root's owner is
// another state dir whose journal is there. It reads no journal (only whether one exists), and must
// be called with the root's lock held.
func CheckRootOwner(root *Root, stateDir string) error {
	owner, rec, err := rootOwner(root)
	if err != nil {
		return err
	}
	if sameDir(owner, stateDir) {
		return nil
	}
	j := filepath.Join(owner, journalFile)
	switch _, err := os.Lstat(j); {
	case (errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)) && rec != nil && !rec.InRoot && !exists(owner):
		// A state dir outside the root that this process cannot see (another mount namespace,
		// or removed): its journal may be there all the same.
		return fmt.Errorf("%w: node root %s: state dir %s (outside the root) began its last transaction, and this process cannot see it: a refresh or recovery with state dir %s is refused, nothing was changed. Run refresh-agent recover --root %s --state-dir %s where that dir is visible; if it was removed, remove %s by hand",
			ErrRootOwned, root.Dir, owner, stateDir, root.Dir, owner, filepath.Join(root.Dir, DefaultStateDir, OwnerFile))
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTDIR):
		return nil // settled (or never begun): the root is anyone's
	case err != nil:
		return fmt.Errorf("%w: node root %s: state dir %s began its last transaction, and whether its journal %s is settled cannot be told (%v): a refresh or recovery with state dir %s is refused, nothing was changed",
			ErrRootOwned, root.Dir, owner, j, err, stateDir)
	}
	return fmt.Errorf("%w: node root %s: state dir %s began its last transaction, and its journal %s is not settled: a refresh or recovery with state dir %s would act beside it (and could remove its temp files and the backups of originals); nothing was changed. Settle it first: refresh-agent recover --root %s --state-dir %s",
		ErrRootOwned, root.Dir, owner, j, stateDir, root.Dir, owner)
}

// claimRoot makes stateDir the root's owner before its transaction's journal is first written, with
// the root's lock held, refusing as CheckRootOwner does. The record is durable before the journal:
// a crash after the journal leaves a record that names it.
func claimRoot(root *Root, stateDir string) error {
	if err := CheckRootOwner(root, stateDir); err != nil {
		return err
	}
	owner, rec, err := rootOwner(root)
	if err != nil {
		return err
	}
	def := filepath.Join(root.Dir, DefaultStateDir)
	if sameDir(stateDir, def) {
		if rec == nil {
			return nil
		}
		if err := RemoveStateFile(def, OwnerFile, false); err != nil {
			return fmt.Errorf("node root %s: owner record: %w", root.Dir, err)
		}
		return syncPath(def)
	}
	if rec != nil && sameDir(owner, stateDir) {
		return nil // already the owner: nothing to write
	}
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return err
	}
	want := ownerRecord{StateDir: abs}
	if r, err := filepath.Rel(root.Dir, abs); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		want = ownerRecord{StateDir: filepath.Clean("/" + r), InRoot: true}
	}
	data, err := json.Marshal(want)
	if err != nil {
		return err
	}
	_, statErr := os.Lstat(def)
	if err := EnsureStateDir(def); err != nil {
		return fmt.Errorf("node root %s: owner record: %w", root.Dir, err)
	}
	if statErr != nil {
		if err := syncPath(filepath.Dir(def)); err != nil { // the new dir's entry, durable too
			return fmt.Errorf("node root %s: owner record: %w", root.Dir, err)
		}
	}
	if err := WriteFileAtomic(def, OwnerFile, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("node root %s: owner record: %w", root.Dir, err)
	}
	return nil
}

// checkClaim refuses, before anything is written, a transaction whose claimRoot would fail on the
// owner record's names: what holds them (a directory, an immutable or append-only file) or the
// default state dir it writes in (immutable, append-only, read-only, not a directory). The dry run
// and Prepare share it (planTxn): a dry run must not say planned where the real run fails at the
// claim (adversary r14 a/02). It reads what claimRoot reads, and writes nothing.
func checkClaim(root *Root, stateDir string) error {
	owner, rec, err := rootOwner(root)
	if err != nil {
		return err
	}
	def := filepath.Join(root.Dir, DefaultStateDir)
	names := []string{OwnerFile, "." + OwnerFile + stateTempSuffix} // renamed over: the record and its temp
	switch {
	case sameDir(stateDir, def) && rec == nil, rec != nil && sameDir(owner, stateDir):
		return nil // nothing to write
	case sameDir(stateDir, def):
		names = names[:1] // the record is removed
	}
	dir := nearestExisting(def) // created below its nearest existing ancestor
	if f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0); err == nil {
		why := writeBlocker(f)
		f.Close()
		if why != "" {
			return fmt.Errorf("node root %s: the owner record's dir: %w: %s %s: the refresh records its state dir %s there before its journal",
				root.Dir, ErrUnwritable, dir, why, stateDir)
		}
	}
	if dir != def {
		return nil
	}
	for _, n := range names {
		p := filepath.Join(def, n)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("node root %s: owner record: %w", root.Dir, err)
		case fi.IsDir():
			return fmt.Errorf("node root %s: owner record: %w: %s is a directory, not a file the agent writes; inspect it and remove it by hand", root.Dir, ErrStateTaken, p)
		case fi.Mode().IsRegular():
			if why := Blocked(p); why != "" {
				return fmt.Errorf("node root %s: owner record: %w: %s %s: the agent replaces it, which these flags refuse (it never sets them); inspect it, then chattr -i -a it and remove it by hand",
					root.Dir, ErrUnwritable, p, why)
			}
		}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// sameDir reports whether a and b name one directory: the same path, or the same inode.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}
