package actions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/plan"
)

// Files the transaction keeps beside a target, in the target's own directory (so on its
// filesystem): the new contents (tmp), the original's backup (a hard link), and the original's new
// name while a restore renames it into place. Their names are short and of a fixed length whatever
// the target's (which may be up to the 255 bytes a name can have): ".refresh-agent-" and 24 hex
// digits of the sha256 of the target's name, then the kind. They end in no extension a reader picks
// files by (crio reads *.yaml and *.conf from its directories), and they are dot files.
const (
	sideTemp    = "tmp"
	sideBackup  = "backup"
	sideRestore = "restore"
	sidePrefix  = plan.SidePrefix
)

var sideKinds = []string{sideTemp, sideBackup, sideRestore}

func sideName(p, kind string) string {
	return path.Join(plan.SideDir(path.Dir(p)), sideBase(p, kind))
}

// sideBase is a side file's name: the same in the target's directory or in its side directory.
func sideBase(p, kind string) string {
	h := sha256.Sum256([]byte(path.Base(p)))
	return sidePrefix + hex.EncodeToString(h[:12]) + "-" + kind
}

// flatSideName is a version 3 to 7 journal's side file: always in the target's directory.
func flatSideName(p, kind string) string { return path.Join(path.Dir(p), sideBase(p, kind)) }

// legacySideName is a version 2 journal's side file: the target's name with a suffix.
func legacySideName(p, kind string) string {
	return path.Join(path.Dir(p), "."+path.Base(p)+".refresh-agent-"+kind)
}

// sideNameOf is the side file name a journal of that version uses.
func sideNameOf(version int, p, kind string) string {
	switch {
	case version <= 2:
		return legacySideName(p, kind)
	case version <= 7:
		return flatSideName(p, kind)
	}
	return sideName(p, kind)
}

func (t *Txn) restoreName(p string) string { return sideNameOf(t.j.Version, p, sideRestore) }

// ErrReserved marks a managed path named like the agent's own side files; ErrName a managed path
// the transaction cannot handle on this node (plan.CheckName, which the plan applies too), or side
// files it would share with another target.
var (
	ErrReserved = plan.ErrReserved
	ErrName     = plan.ErrName
)

// reservedName reports whether p could be a side file of some other target.
func reservedName(p string) bool { return plan.ReservedName(p) }

// ErrSideTaken marks a side file name already taken by something that is not a regular file (a
// directory, a symlink): the transaction would fail on it, so the plan refuses it first.
var ErrSideTaken = errors.New("the agent's side file name is taken")

// ErrStateTaken marks a name the agent writes in its state dir (its journal, record, payload, their
// temp files) taken by something it would fail on: a refusal, made by the dry run too.
var ErrStateTaken = errors.New("a name the agent writes in its state dir is taken")

// IsRefusal reports whether err from Check or Prepare refuses the plan for what the node holds (a
// symlinked component, a reserved or unhandleable name, a side file name taken): retrying cannot
// help, and nothing is written.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrSymlink) || errors.Is(err, ErrReserved) || errors.Is(err, ErrName) || errors.Is(err, ErrSideTaken) ||
		errors.Is(err, ErrStateTaken) || errors.Is(err, ErrUnwritable) || errors.Is(err, ErrJournalTooLarge)
}

// opChecker makes the node checks Check and Prepare share, op by op.
type opChecker struct {
	root  *Root
	seen  map[string]bool
	sides map[string]string // side file → the target it is beside
	dirs  map[string]string // a parent directory of a write's path → that path
	files map[string]bool   // the paths written or removed
	// ids names each path a write reaches by the directory it is in on the node (device and inode
	// of its nearest existing ancestor) and the rest of the path below it: two paths with one id are
	// one file (or one directory to create) under two names, a directory bind-mounted at two places.
	ids map[string][2]string // → the path and the op's path it is for
	// state holds the device and inode of the agent's state dirs (this process's and the root's
	// default one, with the root's owner record) and of the directories directly in them: a write
	// whose directory is one of them is a write into the agent's state under another name.
	state map[[2]uint64]string
}

func newOpChecker(root *Root, stateDir string) *opChecker {
	c := &opChecker{root: root, seen: map[string]bool{}, sides: map[string]string{}, dirs: map[string]string{}, files: map[string]bool{}, ids: map[string][2]string{},
		state: map[[2]uint64]string{}}
	for _, d := range []string{stateDir, filepath.Join(root.Dir, DefaultStateDir)} {
		c.addState(d)
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.IsDir() {
				c.addState(filepath.Join(d, e.Name()))
			}
		}
	}
	return c
}

// addState records the identity of the state directory d (the host's path), when it exists.
func (c *opChecker) addState(d string) {
	if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			c.state[[2]uint64{uint64(st.Dev), st.Ino}] = d
		}
	}
}

// check refuses an op whose path leaves the root, passes through a symlink, names something other
// than a regular file, is named like a side file, cannot be held by the filesystem, shares a side
// file name with another op's, or whose side file names are taken by something the transaction
// would fail on; it returns the parent directories that are missing, outermost first.
func (c *opChecker) check(op Op) ([]string, error) {
	if err := plan.CheckName(op.Path); err != nil {
		return nil, err // the plan refused it first; a caller building ops by hand meets it here
	}
	missing, err := c.root.checkPath(op.Path)
	var nd *notDirError
	if errors.As(err, &nd) && op.Remove {
		return missing, nil // nothing there to remove (Prepare drops it, as under a missing parent)
	}
	if err != nil {
		return nil, err
	}
	if !op.Remove || len(missing) == 0 {
		if err := c.root.checkWritable(op.Path, missing); err != nil {
			return nil, err
		}
	}
	if len(missing) == 0 {
		if tr, _ := rel(op.Path); c.root.exists(tr) && c.root.isMountRoot(tr) {
			return nil, mountError(op.Path, op.Path, op.Remove)
		}
	}
	if err := c.root.mountBelow(op); err != nil {
		return nil, err
	}
	if c.seen[op.Path] {
		return nil, fmt.Errorf("%s: more than one operation on the path", op.Path)
	}
	// A path one op writes or removes as a file and another needs as a directory (the payload
	// turns a file into a directory, or writes a file where it adds one under it): the transaction
	// would fail on it half way (or remove the directory it just made), so it is refused first,
	// naming both. (Of a file the node holds, the write under it is refused above already.)
	if !op.Remove {
		var parent string
		plan.Ancestors(op.Path, func(d string) bool {
			if c.files[d] {
				parent = d
				return false
			}
			c.dirs[d] = op.Path
			return true
		})
		if parent != "" {
			return nil, fmt.Errorf("%s: %w: its parent %s is a file another operation writes or removes, not a directory", op.Path, ErrUnwritable, parent)
		}
	}
	if other, ok := c.dirs[op.Path]; ok {
		return nil, fmt.Errorf("%s: %w: it is a parent directory of %s, which another operation writes", op.Path, ErrUnwritable, other)
	}
	if !op.Remove || len(missing) == 0 {
		if err := c.alias(op.Path, missing); err != nil {
			return nil, err
		}
	}
	c.files[op.Path] = true
	c.seen[op.Path] = true
	if sd := sideDirOf(op.Path); sd != "" && len(missing) == 0 {
		if err := c.root.checkSideDir(op.Path, sd); err != nil {
			return nil, err
		}
	}
	for _, k := range sideKinds {
		s := sideName(op.Path, k)
		if other, ok := c.sides[s]; ok {
			return nil, fmt.Errorf("%s: %w: its %s file %s would also be %s's", op.Path, ErrName, k, path.Base(s), other)
		}
		c.sides[s] = op.Path
		if len(missing) > 0 {
			continue // its directory does not exist yet
		}
		rp, _ := rel(s)
		fi, err := c.root.root.Lstat(rp)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("%s: %s file %s: %w", op.Path, k, s, err)
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("%s: %w: %s is a %s", op.Path, ErrSideTaken, s, kind(fi.Mode()))
		case c.root.blocked(rp) != "":
			// The transaction unlinks a stale side file before it makes its own (and a restore's
			// name after): an immutable or append-only one fails that unlink (EPERM) half way.
			return nil, fmt.Errorf("%s: %w: its %s file %s %s: left from an earlier transaction (the agent never sets these flags), it cannot be removed; inspect it, then chattr -i -a it and remove it by hand",
				op.Path, ErrUnwritable, k, s, c.root.blocked(rp))
		case c.root.isMountRoot(rp):
			return nil, mountError(op.Path, s, op.Remove)
		case k != sideTemp && !c.root.secondName(op.Path, rp, fi):
			// A backup (or a restore's copy) no journal accounts for, which is not the file itself
			// under a second name: it may be an original. The transaction would replace it.
			return nil, fmt.Errorf("%s: %w: %s", op.Path, ErrSideTaken, staleReason(s, op.Path))
		}
	}
	if len(missing) == 0 {
		if err := c.legacySides(op.Path); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// legacySides refuses p while a version 2 journal's side file beside it (.NAME.refresh-agent-KIND)
// is one the sweep keeps for the operator: a backup or a restore's copy that is not p under a
// second name (it may be an original), or any of them immutable or append-only. The sweep's
// message says the plan refuses its target until it is removed by hand, as for this version's side
// names (adversary r14 a/03: it was kept, and the refresh went on over its target).
func (c *opChecker) legacySides(p string) error {
	type side struct{ name, kind string }
	var sides []side
	for _, k := range sideKinds {
		sides = append(sides, side{legacySideName(p, k), k})
		if sideDirOf(p) != "" {
			// A version 3 to 7 journal's side file beside a target whose side files now lie in its
			// side directory (adversary r25 b/01: kept by the sweep, yet the refresh went on).
			sides = append(sides, side{flatSideName(p, k), k})
		}
	}
	for _, sd := range sides {
		s, k := sd.name, sd.kind
		rp, _ := rel(s)
		fi, err := c.root.root.Lstat(rp)
		if err != nil || !fi.Mode().IsRegular() {
			continue // absent, or not a file the sweep would weigh
		}
		if why := c.root.blocked(rp); why != "" {
			return fmt.Errorf("%s: %w: %s is left from an earlier transaction and %s: it cannot be removed; inspect it, then chattr -i -a it and remove it by hand", p, ErrSideTaken, s, why)
		}
		if k != sideTemp && !c.root.secondName(p, rp, fi) {
			return fmt.Errorf("%s: %w: %s", p, ErrSideTaken, staleReason(s, p))
		}
	}
	return nil
}

// alias refuses p when it, or a directory its write creates (missing), is a path another op of the
// transaction reaches under another name: the same directory on the node (device and inode) reached
// through two paths, as a bind mount makes. Their side files, named by the base name in that
// directory, would be one file for both, and the transaction would fail half way (or create one
// directory twice).
func (c *opChecker) alias(p string, missing []string) error {
	anchor, ar := writeDir(p, missing)
	fi, err := c.root.root.Lstat(ar)
	if err != nil {
		return nil // refused elsewhere, or nothing to alias
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if d, ok := c.state[[2]uint64{uint64(st.Dev), st.Ino}]; ok {
		// The state dir is never a target by its path (plan) nor by another name: a bind mount of
		// it below an allowed prefix let a payload replace the lock or the record (adversary r21 d/05).
		return fmt.Errorf("%s: %w: the directory %s is the agent's state dir %s under another name (the same device and inode: a bind mount?)", p, ErrUnwritable, anchor, d)
	}
	for _, q := range append(slices.Clone(missing), p) {
		below := strings.TrimPrefix(q, strings.TrimSuffix(anchor, "/")+"/")
		id := fmt.Sprintf("%d:%d/%s", st.Dev, st.Ino, below)
		if other, ok := c.ids[id]; ok && other[0] != q {
			what := other[0]
			if other[0] != other[1] {
				what += " (a directory " + other[1] + " needs)"
			}
			return fmt.Errorf("%s: %w: %s is %s under another name: the directories %s and %s are one on the node (the same device and inode: a bind mount?), so the two writes would share their side files and fail half way; write it under one name",
				p, ErrName, q, what, anchor, aliasOf(other[0], below))
		}
		c.ids[id] = [2]string{q, p}
	}
	return nil
}

// aliasOf is the directory of other that below is below.
func aliasOf(other, below string) string {
	d := other
	for range strings.Count(below, "/") + 1 {
		d = path.Dir(d)
	}
	return d
}

// blocked says why the regular file rp cannot be unlinked or replaced (immutable, append-only), or "".
func (r *Root) blocked(rp string) string {
	f, err := r.root.OpenFile(rp, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	return flagBlocker(f)
}

// SideFiles returns the temp, backup and restore file names the transaction uses beside p.
func SideFiles(p string) (temp, backup, restore string) {
	return sideName(p, sideTemp), sideName(p, sideBackup), sideName(p, sideRestore)
}

func staleReason(side, target string) string {
	return fmt.Sprintf("%s is left from an earlier transaction that no journal accounts for and is not %s's own copy: it may be an original, so it is kept; compare it with %s and remove it by hand",
		side, target, target)
}

// secondName reports whether the regular file rp (fi) is the target p under a second name: the
// same inode, or the same bytes, mode and owner. Removing it loses nothing.
func (r *Root) secondName(p, rp string, fi fs.FileInfo) bool {
	tr, _ := rel(p)
	ti, err := r.root.Lstat(tr)
	if err != nil || !ti.Mode().IsRegular() {
		return false
	}
	if os.SameFile(ti, fi) {
		return true
	}
	a, _ := ti.Sys().(*syscall.Stat_t)
	b, _ := fi.Sys().(*syscall.Stat_t)
	if a == nil || b == nil || a.Uid != b.Uid || a.Gid != b.Gid || ti.Mode() != fi.Mode() || ti.Size() != fi.Size() || ti.Size() > maxCompare {
		return false
	}
	x, err1 := r.root.ReadFile(tr)
	y, err2 := r.root.ReadFile(rp)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// maxCompare bounds the files secondName reads to compare.
const maxCompare = 16 << 20

// sideRE matches a side file of this version (plan.ReservedName's rule); legacySideRE a version 2
// journal's: .NAME.refresh-agent-KIND.
var sideRE = regexp.MustCompile(`^\.refresh-agent-[0-9a-f]{24}-(tmp|backup|restore)$`)

// legacySideRE matches a version 2 journal's side file: .NAME.refresh-agent-KIND.
var legacySideRE = regexp.MustCompile(`^\.(.+)\.refresh-agent-(tmp|backup|restore)$`)

// SweepSides removes, in the directories of paths (the files a refresh manages on the node), the
// side files no journal accounts for: it must only be called with the node lock held (the root's
// and the state dir's) and no journal pending, in this state dir nor in the root's owner's
// (CheckRootOwner). A temp file holds new contents (a pull secret, keys): it is removed. A backup or a
// restore's copy may be an original: it is removed only when it is its target under a second name
// (same inode, or same bytes, mode and owner); any other is kept, untouched, and returned with the
// reason, for the operator to compare and remove by hand (the plan refuses a refresh of its target
// until then). Only regular files are ever removed.
func SweepSides(root *Root, paths []string) (kept []string, err error) {
	dirs := map[string]map[string]string{} // dir → side file base name → target
	for _, p := range paths {
		if _, err := rel(p); err != nil {
			continue
		}
		for _, k := range sideKinds {
			// This version's names, and a version 3 to 7 journal's beside a target whose side
			// files now lie in its side directory.
			for _, n := range []string{sideName(p, k), flatSideName(p, k)} {
				d := path.Dir(n)
				if dirs[d] == nil {
					dirs[d] = map[string]string{}
				}
				dirs[d][path.Base(n)] = p
			}
		}
	}
	defer func() {
		for d := range dirs {
			if path.Base(d) == plan.SideDirName {
				root.dropSideDir(d)
			}
		}
	}()
	var errs []error
	for d, targets := range dirs {
		if _, err := root.checkPath(d + "/x"); err != nil {
			continue // a symlinked or missing directory: nothing of the agent's is there
		}
		dr, _ := rel(d)
		if d == "/" {
			dr = "."
		}
		f, err := root.root.Open(dr)
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, name := range names {
			target, kind, ok := "", "", false
			if m := sideRE.FindStringSubmatch(name); m != nil {
				target, kind, ok = targets[name], m[1], true
			} else if m := legacySideRE.FindStringSubmatch(name); m != nil && path.Base(d) != plan.SideDirName {
				target, kind, ok = path.Join(d, m[1]), m[2], true
			}
			if !ok {
				continue
			}
			p := path.Join(d, name)
			rp, _ := rel(p)
			fi, err := root.root.Lstat(rp)
			if err != nil {
				continue
			}
			if !fi.Mode().IsRegular() {
				// Never the agent's (it makes only regular files there), and never removed; the
				// plan refuses its target while it is there, so it is named (adversary r15 a/03).
				if target != "" && sideRE.MatchString(name) {
					kept = append(kept, fmt.Sprintf("%s is a %s at the agent's side file name of %s: not one the agent made; the plan refuses %s's refresh until it is removed by hand", p, Kind(fi.Mode()), target, target))
				}
				continue
			}
			if why := root.blocked(rp); why != "" {
				kept = append(kept, p+" is left from an earlier transaction and "+why+": it cannot be removed (the plan refuses its target until it is); inspect it, then chattr -i -a it and remove it by hand")
				continue
			}
			if kind != sideTemp && (target == "" || !root.secondName(target, rp, fi)) {
				if target == "" {
					kept = append(kept, p+" is left from an earlier transaction that no journal accounts for, beside no file the agent manages: it may be an original, so it is kept; remove it by hand once you know it is not")
				} else {
					kept = append(kept, staleReason(p, target))
				}
				continue
			}
			if err := root.removeRegular(rp); err != nil {
				errs = append(errs, fmt.Errorf("removing the leftover %s: %w", p, err))
			}
		}
	}
	slices.Sort(kept)
	return kept, errors.Join(errs...)
}
