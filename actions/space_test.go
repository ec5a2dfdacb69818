package actions_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

func fsUsage(t *testing.T, dir string) (bytes, inodes uint64) {
	t.Helper()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	return (st.Blocks - st.Bfree) * uint64(st.Bsize), st.Files - st.Ffree
}

// spaceNode lays out a node root in dir: a file to replace, one to remove, and the ops that replace
// it, write a new file under a missing directory and remove the other.
func spaceNode(t *testing.T, dir string) []actions.Op {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/containers"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("root:x:0:\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/containers/big.conf"), []byte("orig"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/containers/old.conf"), []byte("old"), 0o644))
	big := []byte(strings.Repeat("b", 20000))
	return []actions.Op{
		{Path: "/etc/containers/big.conf", Size: func() (int64, error) { return int64(len(big)), nil },
			Contents: func() ([]byte, error) { return big, nil }, Mode: 0o644},
		{Path: "/etc/containers/new.d/sub/x.conf", Data: []byte(strings.Repeat("n", 3000)), Mode: 0o644},
		{Path: "/etc/containers/old.conf", Remove: true},
	}
}

const payloadSize = 30000

// sideFiles lists the transaction's side files left under dir.
func sideFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".refresh-agent-") {
			out = append(out, p)
		}
		return err
	}))
	return out
}

// spaceTrial runs the dry run's check and then the real transaction as apply runs it (Prepare, the
// payload saved, Commit, the record, Finish) on ops. The two give one verdict: when the dry run
// says it fits, every write fits; when it says no space, Prepare refuses with the very same reason
// and nothing is written. It reports whether it fitted.
func spaceTrial(t *testing.T, trial, dir, state string, ops []actions.Op) (bool, error) {
	t.Helper()
	r, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	meta := actions.Meta{Hash: "h", PayloadFile: "payloads/p", PayloadBytes: payloadSize}
	orig, err := os.ReadFile(filepath.Join(dir, "etc/containers/big.conf"))
	require.NoError(t, err)
	dryErr := actions.Check(r, state, ops, meta)
	txn, err := actions.Prepare(r, state, ops, meta)
	if dryErr != nil {
		require.ErrorIs(t, dryErr, actions.ErrNoSpace, trial)
		require.False(t, actions.IsRefusal(dryErr), "%s: a node condition, not a refusal of the payload", trial)
		require.Error(t, err, "%s: the dry run said %v", trial, dryErr)
		require.Equal(t, dryErr.Error(), err.Error(), trial)
		_, jerr := os.Stat(filepath.Join(state, "journal.json"))
		require.ErrorIs(t, jerr, fs.ErrNotExist, "%s: no journal", trial)
		require.Empty(t, sideFiles(t, dir), trial)
		got, _ := os.ReadFile(filepath.Join(dir, "etc/containers/big.conf"))
		require.True(t, bytes.Equal(orig, got), "%s: the original is untouched", trial)
		_, derr := os.Stat(filepath.Join(dir, "etc/containers/new.d"))
		require.ErrorIs(t, derr, fs.ErrNotExist, "%s: no directory made", trial)
		return false, dryErr
	}
	require.NoError(t, err, "%s: the dry run said it fits", trial)
	require.NoError(t, actions.MkdirState(state, "payloads", 0o700), trial)
	require.NoError(t, actions.WriteFileAtomic(state, "payloads/p", make([]byte, payloadSize), 0o600), trial)
	require.NoError(t, txn.Commit(), trial)
	require.NoError(t, txn.MarkDone(), trial)
	require.NoError(t, actions.WriteFileAtomic(state, "current.json", []byte(`{"hash":"h","payload":"payloads/p"}`), 0o600), trial)
	require.NoError(t, txn.Finish(), trial)
	got, _ := os.ReadFile(filepath.Join(dir, "etc/containers/big.conf"))
	require.Len(t, got, 20000, trial)
	return true, nil
}

// TestSpaceDryRunAndPrepareOneVerdict (adversary r13 a/02): on a real tmpfs sized one page (or one
// inode) more each trial, from what the node holds until the refresh fits, the dry run and Prepare
// give one verdict: no space (naming the filesystem, the bytes and inodes needed and free), nothing
// written, until it fits, and then every write of the transaction fits.
func TestSpaceDryRunAndPrepareOneVerdict(t *testing.T) {
	for _, by := range []string{"bytes", "inodes"} {
		t.Run(by, func(t *testing.T) {
			refused, fitted := 0, false
			for k := 0; k < 64 && !fitted; k++ {
				dir := t.TempDir()
				fixture.Tmpfs(t, dir, "size=4m,nr_inodes=1000")
				ops := spaceNode(t, dir)
				state := filepath.Join(dir, actions.DefaultStateDir) // the default: no owner record
				b, i := fsUsage(t, dir)
				opts := fmt.Sprintf("size=%d", b+uint64(k)*4096)
				if by == "inodes" {
					opts = fmt.Sprintf("nr_inodes=%d", i+uint64(k))
				}
				fixture.RemountTmpfs(t, dir, opts)
				trial := fmt.Sprintf("%s +%d", by, k)
				ok, err := spaceTrial(t, trial, dir, state, ops)
				if !ok {
					refused++
					assert.Contains(t, err.Error(), "the filesystem of /etc/containers (mounted at "+dir+", holding the files and the state dir)", trial)
				}
				fitted = ok
				_ = unix.Unmount(dir, unix.MNT_DETACH)
			}
			require.True(t, fitted, "never fitted")
			require.NotZero(t, refused, "never refused: the trials start too large")
			t.Logf("%s: refused %d trials, then fitted", by, refused)
		})
	}
}

// TestSpaceRefusals: the table of what the check refuses, each on a real tmpfs: enough space
// plans; a full root, too few inodes, and a state dir on another, full, filesystem are refused by
// the dry run and by Prepare alike, naming the filesystem, the bytes needed and free, nothing written.
func TestSpaceRefusals(t *testing.T) {
	for _, c := range []struct {
		name      string
		rootOpts  string
		fillRoot  bool
		stateOpts string // its own tmpfs, when set
		fillState bool
		// payloadsOpts mounts the default state dir's payloads/ as a tmpfs of its own.
		payloadsOpts string
		fillPayloads bool
		want         []string // in the reason; "" when it fits
	}{
		{name: "enough space", rootOpts: "size=1m"},
		{name: "too few bytes", rootOpts: "size=64k", fillRoot: true,
			want: []string{"the filesystem of /etc/containers", "holding the files", "has 0 bytes and", "the transaction writes up to"}},
		{name: "too few inodes", rootOpts: "size=1m,nr_inodes=12",
			want: []string{"the filesystem of /etc/containers", "inodes free"}},
		{name: "the state dir on another filesystem, full", rootOpts: "size=1m", stateOpts: "size=64k", fillState: true,
			want: []string{"/state (mounted at ", "holding the state dir and the saved payloads)", "has 0 bytes and"}},
		// Its one inode is its lock file's, which the check charges and so counts free.
		{name: "the state dir on another filesystem, no inode free", rootOpts: "size=1m", stateOpts: "size=1m,nr_inodes=2",
			want: []string{"/state (mounted at ", "holding the state dir and the saved payloads)", "and 1 inodes free"}},
		// Adversary r15 a/01: payloads/ a mount of its own, full: the dry run charged the saved
		// payload to the state dir's filesystem and said planned; the real run failed ENOSPC.
		{name: "the saved payloads on their own filesystem, full", rootOpts: "size=1m", payloadsOpts: "size=64k", fillPayloads: true,
			want: []string{"/payloads (mounted at ", "holding the saved payloads)", "has 0 bytes and"}},
		{name: "the saved payloads on their own filesystem, no inode free", rootOpts: "size=1m", payloadsOpts: "size=1m,nr_inodes=1",
			want: []string{"/payloads (mounted at ", "holding the saved payloads)", "inodes free"}},
		{name: "the saved payloads on their own filesystem, room", rootOpts: "size=1m", payloadsOpts: "size=1m"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fixture.Tmpfs(t, dir, "size=4m")
			ops := spaceNode(t, dir)
			fixture.RemountTmpfs(t, dir, c.rootOpts)
			if c.fillRoot {
				fixture.Fill(t, dir)
			}
			state := filepath.Join(dir, actions.DefaultStateDir)
			if c.stateOpts != "" {
				state = filepath.Join(t.TempDir(), "state")
				require.NoError(t, os.Mkdir(state, 0o700))
				fixture.Tmpfs(t, state, c.stateOpts)
				require.NoError(t, os.WriteFile(filepath.Join(state, actions.LockFile), nil, 0o600))
				if c.fillState {
					fixture.Fill(t, state)
				}
			}
			if c.payloadsOpts != "" {
				payloads := filepath.Join(state, "payloads")
				require.NoError(t, os.MkdirAll(payloads, 0o700))
				fixture.Tmpfs(t, payloads, c.payloadsOpts)
				require.NoError(t, os.Chmod(payloads, 0o700))
				if c.fillPayloads {
					fixture.Fill(t, payloads)
				}
			}
			ok, err := spaceTrial(t, c.name, dir, state, ops)
			if len(c.want) == 0 {
				require.True(t, ok)
				return
			}
			require.False(t, ok, "planned")
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.True(t, errors.Is(err, actions.ErrNoSpace))
			t.Log(err)
		})
	}
}

// TestSpaceChargesTheBackupCopyPastTheLinkLimit (adversary r14 a/01): an original with ext4's
// 65000 links already gets no backup link (EMLINK): linkBackup copies it, which the check charged
// as a link, so the dry run said planned and the real run failed on ENOSPC half way. On a real ext4
// with the free space grown a block each trial from none, the dry run and Prepare give one verdict
// until the refresh fits, copy included.
func TestSpaceChargesTheBackupCopyPastTheLinkLimit(t *testing.T) {
	dir := t.TempDir()
	fixture.Ext4(t, dir, 32<<20)
	ops := spaceNode(t, dir)
	big := filepath.Join(dir, "etc/containers/big.conf")
	require.NoError(t, os.WriteFile(big, []byte("orig"+strings.Repeat("o", 400<<10-4)), 0o644))
	links := filepath.Join(dir, "links")
	require.NoError(t, os.Mkdir(links, 0o755))
	for i := 1; i < 65000; i++ {
		require.NoError(t, os.Link(big, filepath.Join(links, strconv.Itoa(i))))
	}
	require.ErrorIs(t, os.Link(big, filepath.Join(links, "one-more")), syscall.EMLINK, "ext4's limit")
	fixture.Fill(t, dir)
	filler := filepath.Join(dir, "filler")
	fi, err := os.Stat(filler)
	require.NoError(t, err)
	state := filepath.Join(dir, actions.DefaultStateDir)
	refused, fitted := 0, false
	for k := int64(0); k < 400 && !fitted; k += 8 {
		require.NoError(t, os.Truncate(filler, max(fi.Size()-k*4096, 0)))
		unix.Sync()
		ok, _ := spaceTrial(t, fmt.Sprintf("+%d blocks", k), dir, state, ops)
		if !ok {
			refused++
		}
		fitted = ok
	}
	require.True(t, fitted, "never fitted")
	require.NotZero(t, refused, "never refused")
}
