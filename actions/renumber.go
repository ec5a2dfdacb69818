package actions

import (
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
