package integration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// The environment variables with which a -tags refreshtest build kills (crashEnv) or stops
// (stopEnv) itself at the Nth passage through a step of a refresh: "STEP:N"
// (actions/crash_refreshtest.go; a release build has neither).
const (
	crashEnv = "REFRESH_AGENT_CRASH_AT"
	stopEnv  = "REFRESH_AGENT_STOP_AT"
)

// agentBinary builds refresh-agent once per test run, with -tags refreshtest (its crash points).
func agentBinary(t *testing.T) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "refresh-agent-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "refresh-agent")
		out, err := exec.Command("go", "build", "-tags", "refreshtest", "-trimpath", "-o", binPath, "../../cmd/refresh-agent").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// crashPayloads returns v1 and v2 for n managed files: v2 modifies n-1 of them, removes one and adds
// one, and changes the pull secret; crio is reloaded.
func crashPayloads(n int) (v1, v2 *fixture.Config, managed []string) {
	v1 = fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File(pullSecret, []byte("v1"), 0o600)
	v2 = fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File(pullSecret, []byte("v2"), 0o600)
	managed = []string{pullSecret}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/etc/containers/registries.d/f%03d.yaml", i)
		managed = append(managed, p)
		data := []byte(fmt.Sprintf("v1 %d %s", i, strings.Repeat("x", i*97)))
		if i < n-1 || n == 1 {
			v1.File(p, data, 0o644)
		}
		if i > 0 || n == 1 {
			v2.File(p, []byte(fmt.Sprintf("v2 %d %s", i, strings.Repeat("y", i*89))), 0o644)
		}
	}
	return v1, v2, managed
}

// version tells which payload the node's managed files match: "v1", "v2", or "mixed".
func version(t *testing.T, dir string, v1, v2 *fixture.Config, managed []string) string {
	match := func(c *fixture.Config) bool {
		want := map[string][]byte{}
		p, err := diffDecodePayload(c)
		require.NoError(t, err)
		for path, data := range p {
			want[path] = data
		}
		for _, m := range managed {
			got, err := os.ReadFile(filepath.Join(dir, m))
			w, ok := want[m]
			if errors.Is(err, fs.ErrNotExist) != !ok || ok && string(got) != string(w) {
				return false
			}
		}
		return true
	}
	switch {
	case match(v1):
		return "v1"
	case match(v2):
		return "v2"
	}
	return "mixed"
}

// TestCrashAtEveryStep kills `refresh-agent apply` with SIGKILL at every step of the transaction
// (each journal write, temp file, backup, rename, unit action, the record and the cleanup), for
// payloads of several sizes, then runs recovery and checks all-or-nothing every time. In a second
// round crio's reload fails on the new content (and works on the old), so every refresh rolls back,
// and the kills land in the rollback too (each restore, the action run again, the cleanup): recovery
// must bring back every original, as the very inode it was, and nothing else.
func TestCrashAtEveryStep(t *testing.T) {
	mgr := systemdtest.Require(t)
	bin := agentBinary(t)
	// The stand-in's reload reads the current trial's node root through this link.
	link := filepath.Join(t.TempDir(), "node")
	rounds := []struct {
		name   string
		reload string
		steps  []string
		sizes  []int
	}{
		{"forward", mgr.MarkerReload(crio), []string{"journal", "temp", "backup", "rename", "action", "record", "finish"}, []int{1, 5, 20, 60}},
		{"rollback", reloadFailingOn(mgr, link, pullSecret, "v2"), []string{"journal", "rename", "restore", "action", "finish"}, []int{1, 5, 20}},
	}
	trials, outcomes := 0, map[string]int{}
	for _, r := range rounds {
		mgr.StandInReload(t, crio, r.reload)
		sizes := r.sizes
		if testing.Short() {
			sizes = []int{1, 5}
		}
		for _, n := range sizes {
			v1, v2, managed := crashPayloads(n)
			tmpl := t.TempDir()
			require.NoError(t, fixture.NodeRoot(tmpl))
			prepareV1(t, bin, tmpl, v1)
			v2File := filepath.Join(t.TempDir(), "v2.ign")
			require.NoError(t, os.WriteFile(v2File, v2.JSON(), 0o644))
			for _, step := range r.steps {
				for i := 1; ; i++ {
					dir := filepath.Join(t.TempDir(), "root")
					require.NoError(t, exec.Command("cp", "-a", tmpl, dir).Run())
					_ = os.Remove(link)
					require.NoError(t, os.Symlink(dir, link))
					originals := inodes(dir, managed)
					mgr.ResetMarkers(t)
					cmd := exec.Command(bin, "apply", "--root", dir, "--desired", v2File, "--hash", "v2", "--systemd", "user", "--output", "json")
					cmd.Env = append(os.Environ(), crashEnv+fmt.Sprintf("=%s:%d", step, i))
					out, err := cmd.CombinedOutput()
					crashed := killed(err)
					trial := fmt.Sprintf("%s n=%d crash at %s:%d", r.name, n, step, i)
					switch {
					case crashed:
					case r.name == "forward":
						require.NoError(t, err, "%s: %s", trial, out)
					default:
						require.Error(t, err, "%s: %s", trial, out)
						require.Contains(t, string(out), `"rolledBack": true`, "%s: uninterrupted, the rollback completes", trial)
					}
					rec, err := exec.Command(bin, "recover", "--root", dir, "--systemd", "user").CombinedOutput()
					require.NoError(t, err, "recover after %s: %s", trial, rec)

					state := filepath.Join(dir, "var/lib/refresh-agent")
					got := version(t, dir, v1, v2, managed)
					require.NotEqual(t, "mixed", got, trial)
					require.Equal(t, got, apply.CurrentHash(state), "%s: record matches the files", trial)
					_, jerr := os.Stat(filepath.Join(state, "journal.json"))
					require.True(t, os.IsNotExist(jerr), "journal clean after %s", trial)
					requireNoTemps(t, dir)
					if got == "v1" {
						require.Equal(t, originals, inodes(dir, managed), "%s: every original back as the inode it was", trial)
					}
					reloads := mgr.Reloads(crio)
					switch {
					case r.name == "rollback":
						require.Equal(t, "v1", got, "%s: crio never takes v2, so it always rolls back", trial)
						require.LessOrEqual(t, reloads, 2, trial)
					case got == "v2":
						require.GreaterOrEqual(t, reloads, 1, "%s: committed v2 but crio never reloaded", trial)
						require.LessOrEqual(t, reloads, 2, trial)
					default:
						require.Zero(t, reloads, "%s: rolled back before any action, yet crio reloaded", trial)
					}
					trials++
					outcomes[r.name+" "+got]++
					if !crashed {
						break // the step occurs fewer than i times
					}
				}
			}
		}
	}
	mgr.StandIn(t, crio, false)
	t.Logf("crash trials: %d (forward round: rolled back to v1 %d, rolled forward to v2 %d; rollback round: rolled back %d), none mixed",
		trials, outcomes["forward v1"], outcomes["forward v2"], outcomes["rollback v1"])
	if !testing.Short() {
		require.GreaterOrEqual(t, trials, 300)
	}
}

// inodes maps each managed file that exists under dir to its inode.
func inodes(dir string, managed []string) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range managed {
		if fi, err := os.Lstat(filepath.Join(dir, m)); err == nil {
			out[m] = fi.Sys().(*syscall.Stat_t).Ino
		}
	}
	return out
}

func killed(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	return false
}

func prepareV1(t *testing.T, bin, dir string, v1 *fixture.Config) {
	empty := filepath.Join(t.TempDir(), "empty.ign")
	require.NoError(t, os.WriteFile(empty, fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON(), 0o644))
	f := filepath.Join(t.TempDir(), "v1.ign")
	require.NoError(t, os.WriteFile(f, v1.JSON(), 0o644))
	out, err := exec.Command(bin, "apply", "--root", dir, "--current", empty, "--desired", f, "--hash", "v1", "--systemd", "none").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func requireNoTemps(t *testing.T, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NotContains(t, p, ".refresh-agent-", "no temp, backup or restore file left")
		require.NotContains(t, p, "/backup/")
		return nil
	})
}
