package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// fill takes every free byte of the filesystem at dir with one file (as an adversary would: a log
// that grew) and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	defer f.Close()
	for _, size := range []int{1 << 20, 4096, 1} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				require.True(t, errors.Is(err, syscall.ENOSPC), "filling: %v", err)
				break
			}
		}
	}
	return p
}

// TestFaultDiskFilledAtAStep stops apply at a step (after a temp file, after a backup, after the
// last commit rename: every file new, the next journal write due), fills the tmpfs root with a file,
// and lets it go on (the adversary's repro-fullcommit and enospc cases). The output says what is on
// disk (the independent checker), and says cleanupPending or rollbackIncomplete whenever it keeps
// anything; a recover with the disk still full settles the node (renaming backups back and removing
// temp files need no space, and are done before anything that allocates), exit 0, nothing left.
func TestFaultDiskFilledAtAStep(t *testing.T) {
	requireMountNS(t)
	n := 1
	f := newFaultNode(t, n)
	last := steps(n)["rename"] - 1 // the last passage: every rename made, the committed journal due
	for _, at := range []string{"temp:1", "backup:1", "backup:" + strconv.Itoa(n+1), "rename:1", "rename:" + strconv.Itoa(last)} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			mountTmpfs(t, dir, "size=16m,nr_inodes=4096")
			f.copyTo(t, dir)
			trial := "disk filled at " + at
			p := startProc(t, []string{stopEnv + "=" + at}, applyArgs(dir, f.v2File, "v2")...)
			require.True(t, p.waitStop(t), trial)
			filler := fill(t, dir)
			p.wait(t)
			claimed := checkHonest(t, trial, f.m, dir, stateOf(dir), p.code, p.out(), p.errOut())
			if left := leftovers(dir, stateOf(dir), false); len(left) > 0 {
				require.True(t, claimed.CleanupPending || claimed.RollbackIncomplete,
					"%s: it keeps %v and says neither cleanupPending nor rollbackIncomplete: %s", trial, left, p.out())
			}
			r := runProc(t, nil, recoverArgs(dir)...)
			require.Equal(t, 0, r.code, "%s: recover on the still full disk: %s %s", trial, r.out(), r.errOut())
			got := checkSettled(t, trial+" (recover on the full disk)", f.m, dir, stateOf(dir), claimed)
			require.NoError(t, os.Remove(filler))
			require.Equal(t, got, f.settle(t, trial, dir, claimed), trial)
			t.Logf("%s: apply exit %d %s; settled %s; %s", trial, p.code, fmt.Sprintf("rolledBack=%v cleanupPending=%v rollbackIncomplete=%v",
				claimed.RolledBack, claimed.CleanupPending, claimed.RollbackIncomplete), got, claimed.Reason)
		})
	}
}

// killedOnTmpfs copies f's node onto a tmpfs and kills apply at step at (its crash point).
func killedOnTmpfs(t *testing.T, f *faultNode, at string) (dir, trial string) {
	t.Helper()
	dir = t.TempDir()
	mountTmpfs(t, dir, "size=16m,nr_inodes=4096")
	f.copyTo(t, dir)
	trial = "killed at " + at + ", then no inode free"
	p := runProc(t, []string{crashEnv + "=" + at}, applyArgs(dir, f.v2File, "v2")...)
	require.NotEqual(t, 0, p.code, trial)
	return dir, trial
}

// Inodes run out while preparing (adv txn-attack3 #2): recover of a preparing journal (nothing on
// the node changed) on a disk with no inode free used to write a journal before cleaning up, fail
// with ENOSPC, and hold every later refresh up. It unlinks the temps and backups and removes the
// journal, writing none, and exits 0; apply failing for want of inodes likewise leaves no journal.
func TestFaultInodesFullWhilePreparing(t *testing.T) {
	requireMountNS(t)
	f := newFaultNode(t, 1)
	for _, at := range []string{"temp:1", "backup:1", "temp:2"} {
		dir, trial := killedOnTmpfs(t, f, at)
		data, err := os.ReadFile(filepath.Join(stateOf(dir), "journal.json"))
		require.NoError(t, err, trial)
		var j struct{ Phase string }
		require.NoError(t, json.Unmarshal(data, &j), trial)
		require.Equal(t, "preparing", j.Phase, trial)
		if at == "temp:1" {
			// As if killed while creating its first temp: none there to free an inode.
			removed := 0
			for _, l := range leftovers(dir, stateOf(dir), true) {
				if strings.HasSuffix(l, "-tmp") {
					require.NoError(t, os.Remove(l), trial)
					removed++
				}
			}
			require.Equal(t, 1, removed, trial)
		}
		_, used := usage(t, dir)
		mount(t, "-o", fmt.Sprintf("remount,nr_inodes=%d", used), dir)
		r := runProc(t, nil, recoverArgs(dir)...)
		require.Equal(t, 0, r.code, "%s: recover on the full disk: %s %s", trial, r.out(), r.errOut())
		_, err = os.Stat(filepath.Join(stateOf(dir), "journal.json"))
		require.ErrorIs(t, err, os.ErrNotExist, "%s: the journal is removed", trial)
		require.Empty(t, leftovers(dir, stateOf(dir), false), trial)
		require.Equal(t, "old", f.m.files(dir), trial)
	}
	for k := 0; k <= 8; k++ {
		dir := t.TempDir()
		mountTmpfs(t, dir, "size=16m,nr_inodes=4096")
		f.copyTo(t, dir)
		_, used := usage(t, dir)
		mount(t, "-o", fmt.Sprintf("remount,nr_inodes=%d", used+uint64(k)), dir)
		trial := fmt.Sprintf("inodes +%d", k)
		p := runProc(t, nil, applyArgs(dir, f.v2File, "v2")...)
		claimed := checkHonest(t, trial, f.m, dir, stateOf(dir), p.code, p.out(), p.errOut())
		if p.code == 0 || claimed.Applied {
			continue
		}
		r := runProc(t, nil, recoverArgs(dir)...)
		require.Equal(t, 0, r.code, "%s: recover on the still full disk: %s %s", trial, r.out(), r.errOut())
		_, err := os.Stat(filepath.Join(stateOf(dir), "journal.json"))
		require.ErrorIs(t, err, os.ErrNotExist, "%s: no journal holds the next refresh up", trial)
		checkSettled(t, trial+" (recover on the full disk)", f.m, dir, stateOf(dir), claimed)
	}
}

// Adversary r18 d/02: killed mid-commit (some targets new), then no inode free: recover rolls back,
// and a restore that links the backup to a second name needs an inode (tmpfs counts links). It
// failed there, before anything else, and the node stayed mixed while the disk stayed full. A
// restore that cannot link renames the proven backup over the target (no inode needed, and the
// replaced new file frees one): recover on the full disk settles the node, every original back.
func TestFaultInodesFullMidCommit(t *testing.T) {
	requireMountNS(t)
	n := 2
	f := newFaultNode(t, n)
	for _, at := range []string{"rename:2", "rename:3"} {
		dir, trial := killedOnTmpfs(t, f, at)
		_, used := usage(t, dir)
		mount(t, "-o", fmt.Sprintf("remount,nr_inodes=%d", used), dir)
		r := runProc(t, nil, recoverArgs(dir)...)
		require.Equal(t, 0, r.code, "%s: recover on the full disk: %s %s", trial, r.out(), r.errOut())
		checkSettled(t, trial+" (recover on the full disk)", f.m, dir, stateOf(dir), outcome{})
		require.Equal(t, "old", f.m.files(dir), trial)
	}
}
