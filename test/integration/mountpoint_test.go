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
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

// bindMount mounts src over dst (a file over a file, a directory over a directory) for the test.
func bindMount(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, unix.Mount(src, dst, "", unix.MS_BIND, ""), "mount --bind %s %s", src, dst)
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
}

// applyJSON runs `apply --output json` of desired over current on root with no systemd, CRI or
// verification window, returning the exit code, stdout and stderr.
func applyJSON(bin, root, current, desired string, extra ...string) (int, string, string) {
	args := append([]string{"apply", "--root", root, "--current", current, "--desired", desired, "--systemd", "none", "--cri-socket", "none",
		"--verify-window", "0", "--output", "json", "--lock-timeout", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	return cmd.ProcessState.ExitCode(), string(out), stderr.String()
}

// Issue 27, class 7 (round-4 adversary F4): a name the transaction renames over or unlinks that is a
// mount point (mount --bind OTHER TARGET) makes the rename fail with EBUSY half way. The plan checks
// it on the node: a target (written or removed), the daemon's record, a side file's name and a name
// in the state dir that is a mount point are refused, naming it, by the dry run and the real run
// alike (exit 3), and nothing is written; a target whose directory is a mount point applies.
func TestMountPointsAreRefused(t *testing.T) {
	requireMountNS(t)
	bin := agentBinary(t)
	const (
		policy = "/etc/containers/policy.json"
		regd   = "/etc/containers/registries.d/mirror.yaml"
		record = "/etc/mcd-currentconfig.json"
	)
	accept := []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`)
	reject := []byte(`{"default":[{"type":"reject"}]}`)
	current := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(policy, accept, 0o644).File(regd, []byte("docker: {}\n"), 0o644)
	desired := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File(policy, reject, 0o644)
	dir := t.TempDir()
	cur, des := filepath.Join(dir, "current.json"), filepath.Join(dir, "desired.json")
	require.NoError(t, os.WriteFile(cur, current.JSON(), 0o644))
	require.NoError(t, os.WriteFile(des, desired.JSON(), 0o644))
	newRoot := func(t *testing.T) string {
		root := t.TempDir()
		require.NoError(t, fixture.NodeRoot(root))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "etc/containers/registries.d"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, policy), accept, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, regd), []byte("docker: {}\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, record), fixture.MachineConfigJSON(fixture.DefaultMachine(), nil), 0o644))
		return root
	}
	// over mounts a file of the same contents (so the tree reads the same) over the node path p.
	over := func(t *testing.T, root, p string) string {
		data, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		src := filepath.Join(t.TempDir(), "other")
		require.NoError(t, os.WriteFile(src, data, 0o644))
		bindMount(t, src, filepath.Join(root, p))
		return src
	}
	apply := func(t *testing.T, root string, extra ...string) (int, string, string) {
		return applyJSON(bin, root, cur, des, extra...)
	}
	for _, tc := range []struct {
		name  string
		mount func(t *testing.T, root string) string // mounts, returns the name the refusal names
	}{
		{"the target", func(t *testing.T, root string) string { over(t, root, policy); return policy }},
		{"a target the refresh removes", func(t *testing.T, root string) string { over(t, root, regd); return regd }},
		{"the daemon's record", func(t *testing.T, root string) string { over(t, root, record); return record }},
		{"the target's temp file name", func(t *testing.T, root string) string {
			temp, _, _ := actions.SideFiles(policy)
			require.NoError(t, os.WriteFile(filepath.Join(root, temp), accept, 0o644))
			over(t, root, temp)
			return temp
		}},
		{"the target's backup name", func(t *testing.T, root string) string {
			_, backup, _ := actions.SideFiles(policy)
			require.NoError(t, os.Link(filepath.Join(root, policy), filepath.Join(root, backup)))
			over(t, root, backup)
			return backup
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			named := tc.mount(t, root)
			before, err := fixture.TreeHash(root)
			require.NoError(t, err)
			for _, mode := range [][]string{{"--dry-run"}, nil} {
				code, out, stderr := apply(t, root, mode...)
				require.Equal(t, 3, code, "%v: %s\n%s", mode, out, stderr)
				var res struct {
					Refused []struct{ Path, Reason string }
				}
				require.NoError(t, json.Unmarshal([]byte(out), &res), out)
				require.NotEmpty(t, res.Refused, out)
				assert.Contains(t, res.Refused[0].Reason, named, mode)
				assert.Contains(t, res.Refused[0].Reason, "is a mount point", mode)
				after, err := fixture.TreeHash(root)
				require.NoError(t, err)
				assert.Equal(t, before, after, "%v: nothing written", mode)
			}
		})
	}
	t.Run("the library: Check and Prepare refuse, writing no journal", func(t *testing.T) {
		root := newRoot(t)
		over(t, root, policy)
		r, err := actions.OpenRoot(root)
		require.NoError(t, err)
		defer r.Close()
		ops := []actions.Op{{Path: policy, Data: reject, Mode: 0o644}}
		for _, err := range []error{actions.Check(r, filepath.Join(root, "var/lib/refresh-agent"), ops, actions.Meta{}), func() error {
			_, err := actions.Prepare(r, filepath.Join(root, "var/lib/refresh-agent"), ops, actions.Meta{})
			return err
		}()} {
			require.ErrorIs(t, err, actions.ErrUnwritable)
			assert.True(t, actions.IsRefusal(err))
			assert.Contains(t, err.Error(), policy+": ")
		}
		_, err = os.Lstat(filepath.Join(root, "var/lib/refresh-agent/journal.json"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("a name in the state dir", func(t *testing.T) {
		root := newRoot(t)
		first := filepath.Join(t.TempDir(), "first.json")
		require.NoError(t, os.WriteFile(first, current.JSON(), 0o644))
		out, err := exec.Command(bin, "apply", "--root", root, "--desired", first, "--systemd", "none", "--cri-socket", "none", "--verify-window", "0").CombinedOutput()
		require.NoError(t, err, "%s", out)
		rec := "var/lib/refresh-agent/current.json"
		over(t, root, "/"+rec)
		before, err := fixture.TreeHash(root)
		require.NoError(t, err)
		for _, mode := range [][]string{{"--dry-run"}, nil} {
			code, out, stderr := apply(t, root, mode...)
			require.Equal(t, 3, code, "%v: %s\n%s", mode, out, stderr)
			assert.Contains(t, out, filepath.Join(root, rec)+" is a mount point", mode)
			after, err := fixture.TreeHash(root)
			require.NoError(t, err)
			assert.Equal(t, before, after, "%v: nothing written", mode)
		}
	})
	t.Run("a target whose directory is a mount point applies", func(t *testing.T) {
		root := newRoot(t)
		src := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(src, "registries.d"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, "policy.json"), accept, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(src, "registries.d/mirror.yaml"), []byte("docker: {}\n"), 0o644))
		bindMount(t, src, filepath.Join(root, "etc/containers"))
		code, out, stderr := apply(t, root, "--dry-run")
		require.Equal(t, 0, code, "%s\n%s", out, stderr)
		code, out, stderr = apply(t, root)
		require.Equal(t, 0, code, "%s\n%s", out, stderr)
		got, err := os.ReadFile(filepath.Join(src, "policy.json"))
		require.NoError(t, err)
		assert.Equal(t, string(reject), string(got), "written within the mount")
		_, err = os.Lstat(filepath.Join(src, "registries.d/mirror.yaml"))
		assert.ErrorIs(t, err, os.ErrNotExist, "removed within the mount")
	})
}
