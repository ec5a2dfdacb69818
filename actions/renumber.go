package actions

import (
	"fmt"
	"path"
	"syscall"
)

// renumber renames the device numbers the journal recorded to the ones the node has now (rule 19),
// so that the inode proofs (rules 7, 13, 15, 17) hold across a reboot or a device enumerated again,
// which change st_dev and keep inodes (adversary r18 d/01). Each recorded device is mapped by where
// its files live: the root's to the root's, an entry's to its directory's now (the transaction made
// each temp in its target's directory), a created directory's to its parent's. A device whose
// places now disagree, or two that would become one, is left as recorded: its proofs then fail and
// recovery keeps those files, the safe side. With nothing renumbered it changes nothing.
func (j *journal) renumber(root *Root) error {
	if j.Root == nil {
		return nil
	}
	id, err := root.id()
	if err != nil {
		return err
	}
	to := map[uint64]uint64{}
	bad := map[uint64]bool{}
	see := func(from uint64, dir string) {
		if from == 0 || bad[from] {
			return
		}
		now, ok := root.devOf(dir)
		switch {
		case !ok:
		case to[from] == 0:
			to[from] = now
		case to[from] != now:
			bad[from] = true
		}
	}
	see(j.Root.Dev, "/")
	for _, e := range j.Entries {
		see(e.NewDev, path.Dir(e.Path))
	}
	for _, d := range j.CreatedDirIDs {
		see(d.Dev, path.Dir(d.Path))
	}
	// A device renamed must show the agent's own files at its paths (adversary r19 d/01): a root
	// inode is the same on every filesystem of a type (2 on ext4), so another disk mounted at the
	// same path (a second node's image, an A/B partition sharing /var) passes the path and inode;
	// it holds none of the journal's side files or new files, which this one does.
	// Only renamed devices are proven (hashing files), so a recovery with nothing renumbered, the
	// common one, reads nothing more than before.
	if !j.Finishing {
		renamed, seen := map[uint64]bool{}, map[uint64]bool{}
		for from, now := range to {
			renamed[from] = from != now && !bad[from]
		}
		for _, e := range j.Entries {
			if renamed[e.NewDev] && !seen[e.NewDev] && root.showsOwn(e) {
				seen[e.NewDev] = true
			}
		}
		for _, e := range j.Entries {
			// A device no entry records (the root's, with every file on /var) has nothing of the
			// agent's to show, and nothing on it is acted on but the empty directories it made.
			if renamed[e.NewDev] && !seen[e.NewDev] {
				return fmt.Errorf("%w: it records device %d, which is device %d under %s now, and no file the journal names there is the agent's (no temp, backup or new file of its at its path): another filesystem at the same path", ErrOtherRoot, e.NewDev, to[e.NewDev], root.Dir)
			}
		}
	}
	onto := map[uint64]int{}
	for from, now := range to {
		if !bad[from] {
			onto[now]++
		}
	}
	rename := func(d uint64) uint64 {
		if now, ok := to[d]; ok && !bad[d] && onto[now] == 1 {
			return now
		}
		return d
	}
	if rename(j.Root.Dev) == id.Dev {
		j.Root.Dev = id.Dev
	}
	for i := range j.Entries {
		j.Entries[i].NewDev = rename(j.Entries[i].NewDev)
	}
	for i := range j.CreatedDirIDs {
		j.CreatedDirIDs[i].Dev = rename(j.CreatedDirIDs[i].Dev)
	}
	return nil
}

// devOf returns the device of directory p inside the root (no link followed), and whether it is one.
func (r *Root) devOf(p string) (uint64, bool) {
	rp := "."
	if p != "/" {
		var err error
		if rp, err = rel(p); err != nil {
			return 0, false
		}
	}
	fi, err := r.root.Lstat(rp)
	if err != nil || !fi.IsDir() {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

// showsOwn reports whether one of e's files is in place as the agent made it: its temp or target
// the new file (the recorded inode and contents), or its backup the original (recorded contents).
// Device numbers are not compared: they are what is being renamed.
func (r *Root) showsOwn(e Entry) bool {
	is := func(p, sum string, ino uint64) bool {
		rp, err := rel(p)
		if p == "" || sum == "" || err != nil {
			return false
		}
		fi, err := r.root.Lstat(rp)
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || ino != 0 && st.Ino != ino {
			return false
		}
		got, _, err := r.hashRegular(rp, fi)
		return err == nil && got == sum
	}
	return !e.Remove && (is(e.Temp, e.NewSHA256, e.NewIno) || is(e.Path, e.NewSHA256, e.NewIno)) ||
		e.HadOriginal && is(e.Backup, e.OrigSHA256, 0)
}
