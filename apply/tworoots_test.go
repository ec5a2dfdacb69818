package apply_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Two processes on one node root with different --state-dir (adversary r12 core/03): process A, the
// default state dir, is a real process (this test binary run again as TestTwoStateDirsHelper), and
// B runs here with another state dir.

const helperEnv = "REFRESH_AGENT_TWO_STATE_DIRS_HELPER"

// TestTwoStateDirsHelper is process A: it refreshes the node at ROOT (state dir STATE) to v2 and,
// by mode, stops in the unit action until its stdin closes ("hold"), is killed there, after the
// commit ("committed"), or is killed right after staging, temps and backups beside the targets
// ("staged").
func TestTwoStateDirsHelper(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("process A of the two-state-dir tests")
	}
	root, err := actions.OpenRoot(os.Getenv("ROOT"))
	require.NoError(t, err)
	state := os.Getenv("STATE")
	if mode == "staged" {
		_, err := actions.Prepare(root, state, []actions.Op{
			{Path: registries, Data: []byte("# v2 mirrors"), Mode: 0o644},
			{Path: pullSecret, Data: []byte(`{"auths":{"v2":{}}}`), Mode: 0o600},
		}, actions.Meta{Hash: "v2"})
		require.NoError(t, err)
		fmt.Println("paused")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	units := &fakeUnits{fail: map[string]int{}, hook: func(context.Context, plan.UnitAction) error {
		fmt.Println("paused")
		if mode == "committed" {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		return nil
	}}
	res, err := apply.Run(context.Background(), apply.Host{Root: root, StateDir: state, Units: units}, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
}

// startA runs process A on n in mode and returns once it says it paused (or was killed there).
func startA(t *testing.T, n *node, mode string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoStateDirsHelper$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "ROOT="+n.dir, "STATE="+n.StateDir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.Equal(t, "paused\n", line, "process A paused in its transaction")
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd, stdin
}

// hostB is process B: the same root, its own state dir (inside the root, or outside it).
func hostB(t *testing.T, n *node, inRoot bool, wait time.Duration) apply.Host {
	dir := filepath.Join(t.TempDir(), "ra2")
	if inRoot {
		dir = filepath.Join(n.dir, "var/lib/ra2")
	}
	require.NoError(t, os.Mkdir(dir, 0o700))
	return apply.Host{Root: n.Root, StateDir: dir, Units: &fakeUnits{fail: map[string]int{}}, LockWait: wait}
}

// requestB is B's refresh to v3 from whatever the node holds (B has no record of its own).
func requestB(t *testing.T, from []byte, dry bool) apply.Request {
	cur, err := decode(from)
	require.NoError(t, err)
	v3 := v1().File(registries, []byte("# v3 mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"v3":{}}}`), 0o600)
	return apply.Request{Desired: v3.JSON(), Hash: "v3", Current: cur, DryRun: dry}
}

func sideFiles(t *testing.T, dir string) []string {
	var got []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".refresh-agent-") {
			got = append(got, p)
		}
		return err
	}))
	return got
}

// crashA runs A's refresh on n in a child process that SIGKILLs itself at mode (staged: its temps
// and backups made; committed: its files renamed), leaving its journal and side files.
func crashA(t *testing.T, n *node, mode string) {
	t.Helper()
	a, _ := startA(t, n, mode)
	_ = a.Wait()
}

// settleA is A's own recovery on its own root: it finds the journal, settles it with outcome,
// leaves registries.conf holding want and no side file behind.
func settleA(t *testing.T, n *node, outcome api.Outcome, want string) {
	t.Helper()
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err, "A's recovery, on A's root, settles it")
	assert.True(t, rec.Found)
	assert.Equal(t, outcome, rec.Outcome, rec.Reason)
	assert.Equal(t, want, n.read(t, registries))
	assert.Empty(t, sideFiles(t, n.dir))
}

// While A holds the node lock mid-transaction, B (another state dir) waits for it, and gives up
// after its wait naming A's pid: its refresh, its dry run and its recovery touch nothing. Once A is
// done, a waiting B goes through.
func TestTwoStateDirsWaitForEachOther(t *testing.T) {
	for _, inRoot := range []bool{true, false} {
		t.Run(fmt.Sprintf("inRoot=%v", inRoot), func(t *testing.T) {
			n := newNode(t)
			a, stdin := startA(t, n, "hold")
			b := hostB(t, n, inRoot, 100*time.Millisecond)
			before, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			for _, dry := range []bool{false, true} {
				_, err := apply.Run(context.Background(), b, requestB(t, v1().JSON(), dry))
				require.ErrorIs(t, err, actions.ErrLocked, "dry run %v", dry)
				assert.Contains(t, err.Error(), fmt.Sprintf("held by pid %d on ", a.Process.Pid))
				assert.Contains(t, err.Error(), "whatever its --state-dir")
				assert.Contains(t, err.Error(), "TestTwoStateDirsHelper", "its command line")
			}
			_, err = apply.Recover(context.Background(), b)
			require.ErrorIs(t, err, actions.ErrLocked)
			after, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			assert.Equal(t, before, after, "B touched nothing while A held the root")
			assert.NotEmpty(t, sideFiles(t, n.dir), "A's backups are still beside its targets")

			b.LockWait = time.Minute
			got := make(chan error, 1)
			go func() {
				res, err := apply.Run(context.Background(), b, requestB(t, v2().JSON(), false))
				if err == nil && res.Outcome != api.OutcomeApplied {
					err = fmt.Errorf("B: %s: %s", res.Outcome, res.Reason)
				}
				got <- err
			}()
			select {
			case err := <-got:
				t.Fatalf("B went ahead beside A: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			require.NoError(t, stdin.Close()) // A's action returns: A commits and releases
			require.NoError(t, a.Wait(), "A applied")
			require.NoError(t, <-got)
			assert.Equal(t, "# v3 mirrors", n.read(t, registries))
			assert.Equal(t, "v2", apply.CurrentHash(n.StateDir), "A's record")
			assert.Equal(t, "v3", apply.CurrentHash(b.StateDir), "B's record")
			assert.Empty(t, sideFiles(t, n.dir))
		})
	}
}

// A killed mid-transaction leaves its journal: B (another state dir) refuses its refresh, its dry
// run and its recovery, naming both state dirs and the recover that settles A's, and changes no byte
// of the root (its own lock file included). Recovering A settles it; then B goes through, and A
// again after B.
func TestTwoStateDirsCrashedOwnerRefusesOthers(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		inRoot bool
		// what A's recovery leaves: rolled back to v1 (staged) or forward to v2 (committed)
		registries string
		outcome    api.Outcome
	}{
		{"staged", true, "# v1 mirrors", api.OutcomeFailed},
		{"staged", false, "# v1 mirrors", api.OutcomeFailed},
		{"committed", true, "# v2 mirrors", api.OutcomeApplied},
		{"committed", false, "# v2 mirrors", api.OutcomeApplied},
	} {
		t.Run(fmt.Sprintf("%s/inRoot=%v", tc.mode, tc.inRoot), func(t *testing.T) {
			n := newNode(t)
			crashA(t, n, tc.mode)
			b := hostB(t, n, tc.inRoot, time.Second)
			sides := sideFiles(t, n.dir)
			require.NotEmpty(t, sides, "A left its backups")
			before, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			outBefore, err := fixture.TreeHash(b.StateDir)
			require.NoError(t, err)

			want := []string{"state dir " + n.StateDir + " began its last transaction", "state dir " + b.StateDir + " would act beside it",
				"refresh-agent recover --root " + n.dir + " --state-dir " + n.StateDir}
			for _, dry := range []bool{false, true} {
				_, err := apply.Run(context.Background(), b, requestB(t, v1().JSON(), dry))
				require.ErrorIs(t, err, actions.ErrRootOwned, "dry run %v", dry)
				for _, w := range want {
					assert.Contains(t, err.Error(), w)
				}
			}
			_, err = apply.Recover(context.Background(), b)
			require.ErrorIs(t, err, actions.ErrRootOwned)
			after, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			assert.Equal(t, before, after, "B changed nothing in the root")
			outAfter, err := fixture.TreeHash(b.StateDir)
			require.NoError(t, err)
			assert.Equal(t, outBefore, outAfter, "nor in its own state dir")
			assert.Equal(t, sides, sideFiles(t, n.dir), "A's temps and backups are all still there")

			settleA(t, n, tc.outcome, tc.registries)

			cur := []byte(v1().JSON())
			if tc.outcome == api.OutcomeApplied {
				cur = v2().JSON()
			}
			res, err := apply.Run(context.Background(), b, requestB(t, cur, false))
			require.NoError(t, err)
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			assert.Equal(t, "# v3 mirrors", n.read(t, registries))
			owner, err := os.ReadFile(filepath.Join(n.StateDir, actions.OwnerFile))
			require.NoError(t, err, "B's transaction made it the root's owner")
			assert.Contains(t, string(owner), filepath.Base(b.StateDir))

			// B settled, A (the default state dir) goes through, and is the owner again.
			n.LockWait = time.Second
			v4 := v1().File(registries, []byte("# v4 mirrors"), 0o644)
			res, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: v4.JSON(), Hash: "v4"})
			require.NoError(t, err)
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			assert.Equal(t, "# v4 mirrors", n.read(t, registries))
			_, err = os.Lstat(filepath.Join(n.StateDir, actions.OwnerFile))
			assert.ErrorIs(t, err, fs.ErrNotExist, "no record: the default state dir owns the root")
		})
	}
}

// A journal is recovered only on the root it was made on (adversary r13 c/01): A is killed mid-
// transaction on its root; a recovery or a refresh given another root with A's state dir (inside
// A's root, or outside both) refused it as hostile only if it failed a rule; it "rolled back" A's
// journal on the other root, exit 0, and removed it, leaving A half-new with no journal. It is
// refused now, touching nothing on either root or in the state dir, naming both roots and A's
// recover; A's own recovery then settles it.
func TestJournalOfAnotherRootIsRefused(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		outside    bool
		registries string
		outcome    api.Outcome
	}{
		{"staged", false, "# v1 mirrors", api.OutcomeFailed},
		{"staged", true, "# v1 mirrors", api.OutcomeFailed},
		{"committed", false, "# v2 mirrors", api.OutcomeApplied},
	} {
		t.Run(fmt.Sprintf("%s/outside=%v", tc.mode, tc.outside), func(t *testing.T) {
			n, other := newNode(t), newNode(t)
			if tc.outside {
				n.StateDir = filepath.Join(t.TempDir(), "sd")
			}
			crashA(t, n, tc.mode)
			require.FileExists(t, filepath.Join(n.StateDir, "journal.json"))
			hashes := func() []string {
				var hs []string
				for _, d := range []string{n.dir, other.dir} {
					h, err := fixture.TreeHash(d)
					require.NoError(t, err)
					hs = append(hs, h)
				}
				// The state dir's files but its lock (whose holder line each process writes).
				require.NoError(t, filepath.WalkDir(n.StateDir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() && d.Name() != "lock" {
						data, rerr := os.ReadFile(p)
						require.NoError(t, rerr)
						hs = append(hs, fmt.Sprintf("%s %x", p, sha256.Sum256(data)))
					}
					return err
				}))
				return hs
			}
			before := hashes()
			b := apply.Host{Root: other.Root, StateDir: n.StateDir, Units: &fakeUnits{fail: map[string]int{}}}
			want := []string{"made on node root " + n.dir, "not on " + other.dir, "refresh-agent recover --root " + n.dir + " --state-dir " + n.StateDir, "touching nothing"}
			rec, err := apply.Recover(context.Background(), b)
			require.ErrorIs(t, err, actions.ErrOtherRoot)
			for _, w := range want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotEqual(t, api.OutcomeApplied, rec.Outcome)
			assert.False(t, rec.RolledBack, "nothing rolled back on the other root")
			_, err = apply.Run(context.Background(), b, apply.Request{Desired: v1().JSON(), Hash: "v1"})
			require.ErrorIs(t, err, actions.ErrOtherRoot, "a refresh's start-up recovery refuses it too")
			assert.Equal(t, before, hashes(), "neither root nor the state dir changed")
			assert.Empty(t, b.Units.(*fakeUnits).ran, "no unit action run")

			settleA(t, n, tc.outcome, tc.registries)
		})
	}
}
