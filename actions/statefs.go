package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// Every state-file read is bounded (adversary round 4 F6: a 400 MB journal cost 3.3 GB and 30 s
// before it was refused). The bounds are the most the agent itself writes:
//
//   - journal.json: MaxJournalBytes. Prepare refuses, before writing anything, a plan whose
//     journal could grow over it (journalBound: every entry at its widest, in the widest phase), so
//     a larger journal is not the agent's. An entry is its path and two side-file paths in that
//     directory plus about 250 bytes of fields: a real payload's files (paths under 100 bytes) cost
//     under 600 bytes each, so 16 MiB holds some 28,000 of them, more than the default payload
//     budget (64 MiB at 3 KiB a file entry: diff's objectCost and elementCost) can carry, and 1,300
//     files of the longest paths the filesystem holds (4,095 bytes).
//   - payloads/<sha256> and a version 1 journal's backup/<n>: diff.MaxPayloadSize, the budget a
//     payload is read with (--max-payload-bytes).
//   - current.json and anything else: maxRecordBytes (a record is a hash and a file name).
const (
	MaxJournalBytes = plan.MaxJournalBytes
	maxRecordBytes  = 64 << 10
)

// ErrStateTooLarge marks a state file larger than any the agent writes: not read, refused.
var ErrStateTooLarge = errors.New("larger than any the agent writes")

// stateLimit is the bound ReadStateFile reads name with.
func stateLimit(name string) int64 {
	switch {
	case name == journalFile:
		return MaxJournalBytes
	case strings.HasPrefix(name, "payloads/"), strings.HasPrefix(name, backupDir+"/"):
		return diff.MaxPayloadSize
	}
	return maxRecordBytes
}

// The state dir's own files (journal.json, current.json, payloads/<sha256>, their temp files, the
// version 1 backups) are opened relative to the state dir, one component at a time, never through
// a symlink (O_NOFOLLOW): a symlinked payloads/ would send a payload (a pull secret) out of the
// root, a symlinked journal.json or current.json would have the agent read a host file. The state
// dir itself is the operator's path (CheckStateDir refuses a symlinked one inside the root); below
// it the agent makes only directories and regular files, so anything else is not the agent's.

// ErrStateSymlink marks a symlink where the agent keeps a file of its own in the state dir.
var ErrStateSymlink = errors.New("is a symlink, not a file the agent made: refusing it as hostile and never following it (remove it by hand once no refresh-agent runs)")

// stateErr names the state-dir path of a failed call; a symlink in the way (ELOOP, or ENOTDIR from
// O_DIRECTORY|O_NOFOLLOW) says so.
func stateErr(stateDir, name string, err error) error {
	p := filepath.Join(stateDir, name)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		// Which component: the first one that is a symlink.
		parts := strings.Split(name, "/")
		for i := range parts {
			q := filepath.Join(stateDir, filepath.Join(parts[:i+1]...))
			if fi, lerr := os.Lstat(q); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("state dir: %s %w", q, ErrStateSymlink)
			} else if lerr == nil && !fi.IsDir() && i < len(parts)-1 {
				return fmt.Errorf("state dir: %s is a %s, not the directory the agent made", q, kind(fi.Mode()))
			}
		}
	}
	return &fs.PathError{Op: "state dir", Path: p, Err: err}
}

// openStateParent opens the directory holding name (relative to stateDir, at most a few clean
// components) without following a symlink below the state dir; it returns the fd and the base name.
func openStateParent(stateDir, name string) (int, string, error) {
	if name == "" || filepath.IsAbs(name) || filepath.Clean(name) != name || strings.HasPrefix(name, "..") {
		return -1, "", fmt.Errorf("state dir: %q is not a name in it", name)
	}
	fd, err := unix.Open(stateDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &fs.PathError{Op: "state dir", Path: stateDir, Err: err}
	}
	parts := strings.Split(name, "/")
	for _, c := range parts[:len(parts)-1] {
		nfd, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, "", stateErr(stateDir, name, err)
		}
		fd = nfd
	}
	return fd, parts[len(parts)-1], nil
}

// ReadStateFile reads name (relative to stateDir: "journal.json", "payloads/<sha256>") without
// following a symlink, refusing anything but a regular file and one over its bound (stateLimit:
// ErrStateTooLarge, with no byte read when its size says so); a missing one gives an error that
// Is fs.ErrNotExist.
func ReadStateFile(stateDir, name string) ([]byte, error) {
	f, fi, err := openStateRegular(stateDir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := stateLimit(name)
	tooLarge := func(size string) error {
		return fmt.Errorf("state dir: %s is %s bytes, %w (at most %d): not read", f.Name(), size, ErrStateTooLarge, limit)
	}
	if fi.Size() > limit {
		return nil, tooLarge(fmt.Sprint(fi.Size()))
	}
	// The size is checked again while reading: the file may grow after the fstat.
	data, err := ReadBounded(f, limit)
	if err == nil && int64(len(data)) > limit {
		return nil, tooLarge(fmt.Sprintf("over %d", limit))
	}
	return data, err
}

// openStateRegular opens name below stateDir as ReadStateFile reads it: never through a symlink,
// only a regular file.
func openStateRegular(stateDir, name string) (*os.File, fs.FileInfo, error) {
	dfd, base, err := openStateParent(stateDir, name)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(dfd)
	// O_NONBLOCK: a FIFO put there must not hang the agent.
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, stateErr(stateDir, name, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(stateDir, name))
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("state dir: %s is a %s, not a file the agent made", f.Name(), kind(fi.Mode()))
	}
	return f, fi, nil
}

// HashStateFile is the sha256 (hex) of name below stateDir, opened as ReadStateFile opens it and
// read in a stream: proving a saved payload by its name reads it, never holds it (a 15.6 MiB
// payload read whole beside the one being applied took the agent's peak from 1.9x the payload to
// 3.7x: make bench).
func HashStateFile(stateDir, name string) (string, error) {
	f, _, err := openStateRegular(stateDir, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h, limit := sha256.New(), stateLimit(name)
	if n, err := io.CopyN(h, f, limit+1); err != nil && err != io.EOF {
		return "", err
	} else if n > limit {
		return "", fmt.Errorf("state dir: %s is over %d bytes, %w: not read", f.Name(), limit, ErrStateTooLarge)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RemoveStateFile removes name below stateDir when it is a regular file, or a symlink when
// symlinkToo (unlinkat removes the link, never its target); absent is fine, anything else is an
// error.
func RemoveStateFile(stateDir, name string, symlinkToo bool) error {
	dfd, base, err := openStateParent(stateDir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return nil
	} else if err != nil {
		return stateErr(stateDir, name, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK:
		if !symlinkToo {
			return fmt.Errorf("state dir: %s %w", filepath.Join(stateDir, name), ErrStateSymlink)
		}
	default:
		return fmt.Errorf("state dir: %s is not a file the agent made; left alone", filepath.Join(stateDir, name))
	}
	if err := unix.Unlinkat(dfd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: filepath.Join(stateDir, name), Err: err}
	}
	return nil
}

// ReadStateDir lists the directory sub of stateDir ("" for the state dir itself) without following
// a symlink to it; a symlinked or missing one lists nothing and says why.
func ReadStateDir(stateDir, sub string) ([]fs.DirEntry, error) {
	var fd int
	if sub == "" {
		var err error
		if fd, err = unix.Open(stateDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return nil, &fs.PathError{Op: "state dir", Path: stateDir, Err: err}
		}
	} else {
		dfd, base, err := openStateParent(stateDir, sub)
		if err != nil {
			return nil, err
		}
		fd, err = unix.Openat(dfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dfd)
		if err != nil {
			return nil, stateErr(stateDir, sub, err)
		}
	}
	d := os.NewFile(uintptr(fd), filepath.Join(stateDir, sub))
	defer d.Close()
	return d.ReadDir(-1)
}

// MkdirState makes the directory sub of stateDir (mode, when missing) and refuses one that is a
// symlink or not a directory.
func MkdirState(stateDir, sub string, mode fs.FileMode) error {
	dfd, base, err := openStateParent(stateDir, sub)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Mkdirat(dfd, base, uint32(mode.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "mkdir", Path: filepath.Join(stateDir, sub), Err: err}
	}
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return stateErr(stateDir, sub, err)
	}
	unix.Close(fd)
	return nil
}

// WriteFileAtomic writes name (relative to dir, the state dir: "current.json", "payloads/<sha>")
// through a temp file beside it (.NAME.tmp), fsync and rename, then fsyncs the directory; no
// symlink below dir is followed. It is for the agent's own state directory, not for managed paths
// inside the node root.
//
// The temp name is the agent's own: a regular file or a symlink left there (by a crash, or put
// there) is unlinked first (the link, never its target); a directory is refused, left alone. The
// temp file is removed on every failure (a full disk leaves no 0-byte file behind); one a crash or
// a power cut leaves is named so that recovery sweeps it (IsStateTemp), under the node lock.
func WriteFileAtomic(dir, name string, data []byte, mode fs.FileMode) error {
	dfd, base, err := openStateParent(dir, name)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	tmp := "." + base + stateTempSuffix
	tmpRel := filepath.Join(filepath.Dir(name), tmp)
	if err := RemoveStateFile(dir, tmpRel, true); err != nil {
		return err
	}
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return stateErr(dir, tmpRel, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmpRel))
	err = f.Chmod(mode.Perm()) // exact, whatever the umask
	if err == nil {
		err = writeAndClose(f, data)
	} else {
		f.Close()
	}
	if err == nil {
		if err = unix.Renameat(dfd, tmp, dfd, base); err != nil {
			err = &fs.PathError{Op: "rename", Path: filepath.Join(dir, name), Err: err}
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return err
	}
	if err := unix.Fsync(dfd); err != nil {
		return &fs.PathError{Op: "fsync", Path: filepath.Join(dir, filepath.Dir(name)), Err: err}
	}
	return nil
}
