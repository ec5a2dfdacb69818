package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

const adversarial = "../testdata/adversarial/"

// TestAdversarialPayloads applies each hostile payload with the real binary to a node root with
// stand-in units: every one is refused (exit 3) or invalid (exit 2) with a reason, and nothing is
// written and no unit touched.
func TestAdversarialPayloads(t *testing.T) {
	mgr := systemdtestManager(t)
	bin := agentBinary(t)
	for _, u := range []string{crio, kubelet, updateCA} {
		mgr.StandIn(t, u, false)
	}
	cases := []struct {
		name, current, desired, rules string
		setup                         func(t *testing.T, root string)
		exit                          int
		reason                        string
	}{
		{name: "path traversal", desired: "traversal.ign", exit: 3, reason: "path is not absolute and clean"},
		{name: "traversal out of an allowlisted prefix", desired: "traversal-allowlisted-prefix.ign", exit: 3, reason: "not absolute and clean"},
		{name: "setuid", desired: "setuid.ign", exit: 3, reason: "setuid"},
		{name: "setgid and sticky", desired: "setgid-sticky.ign", exit: 3, reason: "sticky"},
		{name: "denied prefix", desired: "denied-prefix.ign", exit: 3, reason: "denied prefix /etc/systemd"},
		{name: "not allowlisted", desired: "not-allowlisted.ign", exit: 3, reason: "denied prefix /etc/cron"},
		{name: "no-reboot-paths for a denied prefix", desired: "ssh-dir-file.ign", rules: "rules-denied-prefix.json", exit: 3, reason: "denied prefix /etc/ssh"},
		{name: "injected service names", desired: "not-allowlisted.ign", rules: "rules-injected-service.json", exit: 3, reason: "denied prefix /etc/cron"},
		{name: "unknown unit", desired: "not-allowlisted.ign", rules: "rules-unknown-unit.json", exit: 3, reason: "denied prefix /etc/cron"},
		{name: "kernel arguments hidden in the MachineConfig", current: "current-mc.json", desired: "kargs-in-machineconfig.json", exit: 3, reason: "kernel arguments change requires a reboot"},
		{name: "gzip bomb", desired: "gzip-bomb.gz", exit: 2, reason: "exceeds"},
		{name: "duplicate paths", desired: "duplicate-paths.ign", exit: 2, reason: "duplicate"},
		{name: "non-UTF-8 path", desired: "non-utf8-path.ign", exit: 3, reason: "is not valid UTF-8"},
		{name: "deeply nested JSON", desired: "deeply-nested.ign", exit: 2, reason: "invalid JSON"},
		{name: "parent replaced by a symlink to /boot", desired: "eligible.ign", exit: 3, reason: "symlink",
			setup: func(t *testing.T, root string) {
				require.NoError(t, os.MkdirAll(filepath.Join(root, "boot"), 0o755))
				require.NoError(t, os.RemoveAll(filepath.Join(root, "etc/containers")))
				require.NoError(t, os.Symlink("/boot", filepath.Join(root, "etc/containers")))
			}},
		{name: "parent replaced by a symlink to /etc", desired: "eligible.ign", exit: 3, reason: "symlink",
			setup: func(t *testing.T, root string) {
				require.NoError(t, os.RemoveAll(filepath.Join(root, "etc/containers")))
				require.NoError(t, os.Symlink("../etc", filepath.Join(root, "etc/containers")))
			}},
		{name: "target file is a symlink", desired: "eligible.ign", exit: 3, reason: "symlink",
			setup: func(t *testing.T, root string) {
				require.NoError(t, os.Remove(filepath.Join(root, "etc/containers/registries.conf")))
				require.NoError(t, os.Symlink("/etc/shadow", filepath.Join(root, "etc/containers/registries.conf")))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, fixture.NodeRoot(root))
			require.NoError(t, os.WriteFile(filepath.Join(root, "etc/containers/registries.conf"), []byte("# v1 mirrors"), 0o644))
			if tc.setup != nil {
				tc.setup(t, root)
			}
			before, err := fixture.TreeHash(root)
			require.NoError(t, err)
			pids := map[string]int{}
			for _, u := range []string{crio, kubelet, updateCA} {
				pids[u] = mgr.MainPID(t, u)
			}
			mgr.ResetMarkers(t)
			current := tc.current
			if current == "" {
				current = "current.ign"
			}
			args := []string{"apply", "--root", root, "--current", adversarial + current, "--desired", adversarial + tc.desired,
				"--systemd", "user", "--output", "json"}
			if tc.rules != "" {
				args = append(args, "--no-reboot-paths", adversarial+tc.rules)
			}
			cmd := exec.Command(bin, args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, _ := cmd.Output()
			assert.Equal(t, tc.exit, cmd.ProcessState.ExitCode(), "stdout %s\nstderr %s", out, stderr.String())
			if tc.exit == 3 {
				var res struct {
					Refused []struct{ Reason string }
				}
				require.NoError(t, json.Unmarshal(out, &res))
				require.NotEmpty(t, res.Refused)
				var reasons []string
				for _, r := range res.Refused {
					reasons = append(reasons, r.Reason)
				}
				assert.Contains(t, strings.Join(reasons, "\n"), tc.reason)
			} else {
				assert.Contains(t, stderr.String(), tc.reason)
				assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line on stderr")
			}
			after, err := fixture.TreeHash(root)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing written")
			for u, pid := range pids {
				assert.Equal(t, pid, mgr.MainPID(t, u), u)
				assert.Zero(t, mgr.Reloads(u), u)
			}
			assert.Empty(t, mgr.Starts())
		})
	}
}
