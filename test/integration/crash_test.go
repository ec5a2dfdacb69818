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

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// agentBinary builds refresh-agent once per test run.
func agentBinary(t *testing.T) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "refresh-agent-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "refresh-agent")
		out, err := exec.Command("go", "build", "-trimpath", "-o", binPath, "../../cmd/refresh-agent").CombinedOutput()
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
// payloads of several sizes, then runs recovery and checks all-or-nothing every time.
func TestCrashAtEveryStep(t *testing.T) {
	mgr := systemdtest.Require(t)
	mgr.StandIn(t, crio, false)
	bin := agentBinary(t)
	steps := []string{"journal", "temp", "backup", "rename", "action", "record", "finish"}
	sizes := []int{1, 5, 20, 60}
	if testing.Short() {
		sizes = []int{1, 5}
	}
	trials, outcomes := 0, map[string]int{}
	for _, n := range sizes {
		v1, v2, managed := crashPayloads(n)
		tmpl := t.TempDir()
		require.NoError(t, fixture.NodeRoot(tmpl))
		prepareV1(t, bin, tmpl, v1)
		v2File := filepath.Join(t.TempDir(), "v2.ign")
		require.NoError(t, os.WriteFile(v2File, v2.JSON(), 0o644))
		for _, step := range steps {
			for i := 1; ; i++ {
				dir := filepath.Join(t.TempDir(), "root")
				require.NoError(t, exec.Command("cp", "-a", tmpl, dir).Run())
				mgr.ResetMarkers(t)
				cmd := exec.Command(bin, "apply", "--root", dir, "--desired", v2File, "--hash", "v2", "--systemd", "user", "--output", "json")
				cmd.Env = append(os.Environ(), actions.CrashEnv+fmt.Sprintf("=%s:%d", step, i))
				out, err := cmd.CombinedOutput()
				crashed := killed(err)
				if !crashed {
					require.NoError(t, err, "step %s:%d: %s", step, i, out)
				}
				rec, err := exec.Command(bin, "recover", "--root", dir, "--systemd", "user").CombinedOutput()
				require.NoError(t, err, "recover after %s:%d: %s", step, i, rec)

				state := filepath.Join(dir, "var/lib/refresh-agent")
				got := version(t, dir, v1, v2, managed)
				require.NotEqual(t, "mixed", got, "n=%d crash at %s:%d", n, step, i)
				require.Equal(t, got, apply.CurrentHash(state), "n=%d crash at %s:%d: record matches the files", n, step, i)
				_, jerr := os.Stat(filepath.Join(state, "journal.json"))
				require.True(t, os.IsNotExist(jerr), "journal clean after %s:%d", step, i)
				requireNoTemps(t, dir)
				reloads := mgr.Reloads(crio)
				if got == "v2" {
					require.GreaterOrEqual(t, reloads, 1, "n=%d %s:%d: committed v2 but crio never reloaded", n, step, i)
					require.LessOrEqual(t, reloads, 2, "n=%d %s:%d", n, step, i)
				} else {
					require.Zero(t, reloads, "n=%d %s:%d: rolled back before any action, yet crio reloaded", n, step, i)
				}
				trials++
				outcomes[got]++
				if !crashed {
					break // the step occurs fewer than i times
				}
			}
		}
	}
	t.Logf("crash trials: %d (rolled back to v1: %d, rolled forward to v2: %d), none mixed", trials, outcomes["v1"], outcomes["v2"])
	if !testing.Short() {
		require.GreaterOrEqual(t, trials, 200)
	}
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
		require.NotContains(t, p, "refresh-agent-tmp")
		require.NotContains(t, p, "/backup/")
		return nil
	})
}
