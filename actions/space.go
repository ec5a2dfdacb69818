package actions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A transaction that cannot fit on the node fails half way (ENOSPC writing a temp file, a backup's
// directory entry, the journal) and rolls back: the node is safe, but the dry run said planned
// (adversary r13 a/02). So the plan charges, per filesystem the transaction writes on, the most it
// writes there and compares it with what is free (statfs), before anything is written, in the dry
// run (Check) and in the real run (Prepare) through the one function (checkSpace, from planTxn).
//
// What is charged, per filesystem (one st_dev):
//
//   - each file written: its new size rounded up to whole blocks, and one inode (its temp file,
//     which stands beside the original until the rename; after it the backup keeps the original's
//     blocks until the clean-up, so the new contents never replace the old blocks in place);
//   - each entry, written or removed, one more block: the directory entries of its temp and its
//     backup (a hard link: no inode, no data) and a large file's extent or indirect blocks;
//   - each directory the transaction creates: one inode and one block;
//   - in the state dir: the journal twice at its bound in any phase (journalBound: the old one and
//     the temp it is replaced through, two inodes), the payload's saved copy (Meta.PayloadBytes),
//     the record and its temp, the lock file and the state dir's own missing directories; and the
//     root's owner record (rootowner.go) in the root's default state dir when the state dir is
//     another.
//
// Free bytes are f_bavail blocks of f_frsize, except on ext2/3/4 for root: the agent runs as root,
// and ext4 lets a process whose fsuid is the reserved blocks' owner (root by default) or that holds
// CAP_SYS_RESOURCE write into the reserved blocks, so f_bfree is what its writes can take (other
// filesystems report f_bavail as what can be written: XFS and tmpfs keep no such reserve, btrfs's
// f_bfree counts space its allocator will not hand out). Free inodes are f_ffree (Linux has no
// f_favail: statvfs reports f_ffree for it); a filesystem reporting no inodes at all (f_files 0:
// btrfs, a tmpfs with nr_inodes=0) allocates them as it goes and is charged bytes only.
//
//   - a backup that costs more than its entry (fsSpace.backup): its link's inode on a tmpfs, the
//     copy-up and the copy on an overlayfs, a copy where the original has linkMaxFloor links
//     already (ext4 refuses one more).
//
// What is not charged: a backup made as a copy on a filesystem that refuses hard links altogether
// (linkBackup falls back to one: no target filesystem of a node does); btrfs subvolumes, which have their own
// st_dev but share one pool, are counted apart.

// ErrNoSpace marks a transaction the free space or inodes of a filesystem it writes on cannot
// hold: nothing is written, and it is a failure (the node's condition, not the payload's), so the
// agent retries it once space is freed.
var ErrNoSpace = errors.New("not enough free space for the transaction")

// recordBlocks is what the record (current.json) and the temp it is replaced through take.
const recordBlocks = 2

// fsSpace is what the transaction writes on one filesystem and what that filesystem has free.
type fsSpace struct {
	dev         uint64
	at          string   // the first directory charged on it, for the message
	host        string   // that directory's path on the host, to find its mount point
	what        []string // what is charged on it: "files", "the state dir", "the root's owner record"
	block       uint64
	freeBytes   uint64
	inodesKnown bool // f_files > 0
	linkInode   bool // tmpfs: a hard link takes an inode of the filesystem's count, as a file does
	overlay     bool // overlayfs: a link or write copies the lower file and directories up
	freeInodes  uint64
	bytes       uint64 // needed
	inodes      uint64
}

// space adds up what a transaction writes, per filesystem, in the order first met.
type space struct {
	fss []*fsSpace
}

// on finds (or adds) the filesystem of the open directory d, at (its name in the message) and host
// (its host path), charging what there.
func (s *space) on(d *os.File, at, host, what string) (*fsSpace, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	for _, f := range s.fss {
		if f.dev == st.Dev {
			if !slices.Contains(f.what, what) {
				f.what = append(f.what, what)
			}
			return f, nil
		}
	}
	var sf unix.Statfs_t
	if err := unix.Fstatfs(int(d.Fd()), &sf); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", at, err)
	}
	f := &fsSpace{dev: st.Dev, at: at, host: host, what: []string{what}}
	f.block = uint64(sf.Frsize)
	if f.block == 0 {
		f.block = uint64(sf.Bsize)
	}
	if f.block == 0 {
		f.block = 4096
	}
	f.freeBytes = freeBlocks(&sf, st.Dev) * f.block
	f.inodesKnown, f.freeInodes = sf.Files > 0, sf.Ffree
	f.linkInode, f.overlay = sf.Type == unix.TMPFS_MAGIC, sf.Type == unix.OVERLAYFS_SUPER_MAGIC
	s.fss = append(s.fss, f)
	return f, nil
}

// freeBlocks is how many blocks a write by this process can take (see above): on ext2/3/4 for
// root, f_bfree less the filesystem's reserved pool; else f_bavail.
func freeBlocks(sf *unix.Statfs_t, dev uint64) uint64 {
	if sf.Type == unix.EXT4_SUPER_MAGIC && os.Geteuid() == 0 {
		if resv, ok := ext4Reserved(dev); ok {
			return sf.Bfree - min(resv, sf.Bfree)
		}
	}
	return sf.Bavail
}

// ext4Reserved is the pool of clusters ext4 keeps from every writer, root too (s_resv_clusters:
// 2% of the blocks or 4096, whichever is fewer, for a punch hole or an extent's conversion), which
// f_bfree counts free (adversary r14 a/01: a full ext4 showed 656 blocks free to root, one of them
// writable). The kernel reports it per device in /sys/fs/ext4/<name>/reserved_clusters; where that
// cannot be read, ok is false and the caller falls back to f_bavail, which leaves out the
// root-reserved blocks too. Residual: on a bigalloc ext4 the count is of clusters, taken as blocks.
func ext4Reserved(dev uint64) (uint64, bool) {
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(dev), unix.Minor(dev)))
	if err != nil {
		return 0, false
	}
	name := filepath.Base(link)
	b, err := os.ReadFile("/sys/fs/ext4/" + name + "/reserved_clusters")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// file charges a file of size bytes (and its inode), plus the entry's block.
func (f *fsSpace) file(size int64) {
	f.bytes += (uint64(size)+f.block-1)/f.block*f.block + f.block
	f.inodes++
}

// linkMaxFloor is the lowest hard-link limit of a node's filesystems: ext4's EXT4_LINK_MAX (XFS
// and btrfs allow more, tmpfs has none). An original with this many links already cannot get its
// backup's link there (EMLINK), and linkBackup copies it instead (adversary r14 a/01).
const linkMaxFloor = 65000

// backup charges the backup of the original at p beyond its directory entry (charged with the
// entry), when there is an original:
//   - on a tmpfs, the hard link's inode: tmpfs counts every link against nr_inodes (shmem_link;
//     adversary r21 d/01: a dry run planned what the real run's link then failed with ENOSPC);
//   - on an overlayfs, the copy-up the link makes of a lower-layer original and the copy its backup
//     then is (the link cannot be proved the original's where the layers are on different
//     filesystems: Txn.backup): twice the original, and an inode for a removal's whiteout
//     (adversary r21 d/03), an upper bound where it is in the upper layer already;
//   - a copy when its hard link would be refused for the link count (ext4's linkMaxFloor); an upper
//     bound: a filesystem with a higher limit links it anyway.
func (f *fsSpace) backup(root *Root, p string) {
	rp, _ := rel(p)
	fi, err := root.root.Lstat(rp)
	if err != nil || !fi.Mode().IsRegular() {
		return // none (or not a file: Prepare refuses that by its own check)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case f.overlay:
		f.file(fi.Size())
		f.file(fi.Size())
		f.inodes++ // a removal's whiteout
	case st != nil && st.Nlink >= linkMaxFloor:
		f.file(fi.Size())
	case f.linkInode:
		f.inodes++
	}
}

// entry charges an entry that writes no file (a removal): its backup's directory entry.
func (f *fsSpace) entry() { f.bytes += f.block }

// dirs charges n directories the transaction creates.
func (f *fsSpace) dirs(n int) {
	f.bytes += uint64(n) * f.block
	f.inodes += uint64(n)
}

// verdict refuses the first filesystem that cannot hold what is charged on it.
func (s *space) verdict() error {
	for _, f := range s.fss {
		short := f.bytes > f.freeBytes
		if f.inodesKnown && f.inodes > f.freeInodes {
			short = true
		}
		if !short {
			continue
		}
		inodes := fmt.Sprintf("%d inodes free", f.freeInodes)
		if !f.inodesKnown {
			inodes = "inodes allocated as needed"
		}
		return fmt.Errorf("%w: the filesystem of %s (mounted at %s, holding %s) has %d bytes and %s; the transaction writes up to %d bytes and %d inodes there: nothing was written; free space there and retry",
			ErrNoSpace, f.at, mountPointOf(f.host), strings.Join(f.what, " and "), f.freeBytes, inodes, f.bytes, f.inodes)
	}
	return nil
}

// mountPointOf is the topmost directory above host (a directory's host path) on its device: the
// mount point, as far as the devices show (a bind mount within one filesystem is not seen), or
// host itself when it cannot be stat'ed.
func mountPointOf(host string) string {
	host = filepath.Clean(host)
	fi, err := os.Stat(host)
	if err != nil {
		return host
	}
	dev := devOf(fi)
	for host != "/" {
		up := filepath.Dir(host)
		ui, err := os.Stat(up)
		if err != nil || devOf(ui) != dev {
			break
		}
		host = up
	}
	return host
}

func devOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// spaceWrite is one kept op as the space check charges it: the existing directory its write
// happens in (its parent, or where its missing parents are created) and the directories it is the
// first to create.
type spaceWrite struct {
	op      Op
	dir     string
	newDirs int
}

// opSize is the size of op's new contents, decoded (and dropped) one file at a time when it has no
// Size.
func opSize(op Op) (int64, error) {
	switch {
	case op.Remove:
		return 0, nil
	case op.Size != nil:
		return op.Size()
	case op.Contents != nil:
		data, err := op.Contents()
		return int64(len(data)), err
	}
	return int64(len(op.Data)), nil
}

// checkSpace charges the transaction's writes (its files in root, and in stateDir its journal of up
// to bound bytes, the saved payload of meta.PayloadBytes and the record) on the filesystems they
// land on, and refuses (ErrNoSpace) when one cannot hold them. It writes nothing.
func checkSpace(root *Root, stateDir string, writes []spaceWrite, bound int64, meta Meta) error {
	var s space
	sides := map[string]bool{} // the side directories to make, each charged once
	for _, w := range writes {
		rp := "."
		if w.dir != "/" {
			rp, _ = rel(w.dir)
		}
		d, err := root.root.Open(rp)
		if err != nil {
			return fmt.Errorf("%s: %w", w.op.Path, err)
		}
		f, err := s.on(d, w.dir, filepath.Join(root.Dir, rp), "the files")
		d.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", w.op.Path, err)
		}
		f.dirs(w.newDirs)
		if sd := sideDirOf(w.op.Path); sd != "" && !sides[sd] {
			sides[sd] = true
			if sr, _ := rel(sd); w.newDirs > 0 || !existsIn(root, sr) {
				f.dirs(1) // made before the backup and the temp that lie in it (adversary r24 b/01)
			}
		}
		if f.overlay && w.dir != "/" {
			// A write in a lower-layer directory copies it and every one above it up first.
			f.dirs(strings.Count(strings.Trim(w.dir, "/"), "/") + 1)
		}
		f.backup(root, w.op.Path)
		if w.op.Remove {
			f.entry()
			continue
		}
		size, err := opSize(w.op)
		if err != nil {
			return fmt.Errorf("%s: %w", w.op.Path, err)
		}
		f.file(size)
	}
	if stateDir != "" {
		f, err := s.stateDir(stateDir, "the state dir")
		if err != nil {
			return err
		}
		f.file(bound) // the journal
		f.file(bound) // and the temp it is replaced through
		if meta.PayloadBytes > 0 {
			// On the filesystem payloads/ is on: a mount of its own is charged for it, not the
			// state dir's (adversary r15 a/01: a full one passed the dry run).
			pf := f
			if exists(stateDir) {
				if pf, err = s.stateDir(filepath.Join(stateDir, "payloads"), "the saved payloads"); err != nil {
					return err
				}
			} else {
				f.dirs(1) // payloads/, in the state dir made with it
			}
			pf.file(meta.PayloadBytes)
		}
		f.bytes += recordBlocks * f.block
		f.inodes++ // the record's temp
		// The lock file: the real run holds it (made before this check), a dry run may find none
		// yet. It is charged in both (an inode and a block: its holder's line), and what one there
		// already takes is counted free, so that both runs report the same numbers.
		f.bytes += f.block
		f.inodes++
		if fi, err := os.Lstat(filepath.Join(stateDir, LockFile)); err == nil && fi.Mode().IsRegular() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				f.freeBytes += uint64(st.Blocks) * 512
				f.freeInodes++
			}
		}
		if def := filepath.Join(root.Dir, DefaultStateDir); !sameDir(stateDir, def) {
			f, err := s.stateDir(def, "the root's owner record")
			if err != nil {
				return err
			}
			f.bytes += 2 * f.block
			f.inodes += 2
		}
	}
	return s.verdict()
}

// stateDir charges the missing directories of dir (a host path) on the filesystem of its nearest
// existing ancestor and returns that filesystem.
func (s *space) stateDir(dir, what string) (*fsSpace, error) {
	dir = filepath.Clean(dir)
	missing := 0
	at := dir
	for !exists(at) && at != filepath.Dir(at) {
		at = filepath.Dir(at)
		missing++
	}
	d, err := os.Open(at)
	if err != nil {
		return nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	defer d.Close()
	f, err := s.on(d, dir, at, what)
	if err != nil {
		return nil, err
	}
	f.dirs(missing)
	return f, nil
}

// existsIn says whether the root holds something at rp (not followed).
func existsIn(root *Root, rp string) bool {
	_, err := root.root.Lstat(rp)
	return err == nil
}
