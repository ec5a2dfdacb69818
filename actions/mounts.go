package actions

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A name the transaction renames over, links or unlinks (a target, the daemon's record, a side file)
// that is a mount point (mount --bind FILE TARGET, a volume mounted over it) cannot take it: the
// kernel refuses rename and unlink of a mount point (EBUSY), and a link out of it (EXDEV). Such a
// name is a refusal, made by the plan on the node (so the dry run too), before anything is written.
// A target's directory being a mount point is fine: the temp file, the backup and the rename all
// stay within that one mount (RHCOS's /var is one, /var/lib/kubelet may be another disk's).

// mountError refuses op path p because name (p itself or one of its side files) is a mount point.
func mountError(p, name string, remove bool) error {
	what := "it"
	if name != p {
		what = "its side file " + name
	}
	how := "the write replaces it by rename"
	switch {
	case name != p:
		how = "the transaction renames or removes it"
	case remove:
		how = "the removal unlinks it"
	}
	return fmt.Errorf("%s: %w: %s is a mount point (something is mounted over it; findmnt shows it): %s, which a mount refuses", p, ErrUnwritable, what, how)
}

// isMountRoot reports whether the existing name p (root-relative, its components checked) is the
// root of a mount. statx's STATX_ATTR_MOUNT_ROOT says so directly; where the kernel or filesystem
// does not report it, the mount id (or the device) is compared with its directory's: a bind mount
// of a file on the same filesystem has the same device, so the device is the last resort.
func (r *Root) isMountRoot(rp string) bool {
	dr := path.Dir(rp)
	d, err := r.root.Open(dr)
	if err != nil {
		return false
	}
	defer d.Close()
	return mountRootAt(d, path.Base(rp))
}

func mountRootAt(d *os.File, name string) bool {
	const flags = unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT
	var st unix.Statx_t
	err := unix.Statx(int(d.Fd()), name, flags, unix.STATX_TYPE|unix.STATX_MNT_ID, &st)
	if errors.Is(err, unix.ENOSYS) {
		var fs, ds unix.Stat_t
		if unix.Fstatat(int(d.Fd()), name, &fs, unix.AT_SYMLINK_NOFOLLOW) != nil || unix.Fstat(int(d.Fd()), &ds) != nil {
			return false
		}
		return fs.Dev != ds.Dev
	}
	if err != nil {
		return false
	}
	if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 {
		return st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
	}
	var ds unix.Statx_t
	if unix.Statx(int(d.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &ds) != nil {
		return false
	}
	if st.Mask&ds.Mask&unix.STATX_MNT_ID != 0 {
		return st.Mnt_id != ds.Mnt_id
	}
	return st.Dev_major != ds.Dev_major || st.Dev_minor != ds.Dev_minor
}

// IsMountRoot reports whether the existing file p (an absolute path on this machine, such as a
// name in the state dir) is the root of a mount: renaming over it or unlinking it fails.
func IsMountRoot(p string) bool {
	d, err := os.Open(filepath.Dir(p))
	if err != nil {
		return false
	}
	defer d.Close()
	return mountRootAt(d, filepath.Base(p))
}

// exists reports whether the root-relative name rp is there (not following a last symlink).
func (r *Root) exists(rp string) bool {
	_, err := r.root.Lstat(rp)
	return err == nil
}

// mountBelow refuses op when a directory of its path below what the node policy named (op.Within)
// is a mount point: below it the name is the payload's, and a bind mount or an overlay there
// reaches another place than the name says: a denied directory (a bind of /etc/cron.d), the
// state dir (an overlay whose upper layer it is), one directory under two names (adversary r22
// d/01-03, d/06-07). The mount at op.Within itself, or above it, is the node's own (RHCOS's /var).
// The dry run and the real run check it alike, before anything is written.
func (r *Root) mountBelow(op Op) error {
	w := op.Within
	if w == "" || !strings.HasSuffix(w, "/") || !strings.HasPrefix(op.Path, w) {
		return nil
	}
	dir := strings.TrimSuffix(w, "/")
	for _, name := range strings.Split(strings.TrimPrefix(path.Dir(op.Path), w), "/") {
		if name == "" {
			continue
		}
		dir = path.Join(dir, name)
		rp, _ := rel(dir)
		if !r.exists(rp) {
			return nil // created by the transaction: no mount below
		}
		if r.isMountRoot(rp) {
			return fmt.Errorf("%s: %w: its directory %s is a mount point below %s, what the node policy names (findmnt shows it): a mount there reaches another place than the path says; write below it only where nothing is mounted", op.Path, ErrUnwritable, dir, w)
		}
	}
	return nil
}
