package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

func nodeRoot(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	return dir
}

func TestApplyCommand(t *testing.T) {
	root := nodeRoot(t)
	args := []string{"apply", "--root", root, "--current", examples + "current.ign", "--desired", examples + "desired-eligible.ign.gz.b64",
		"--no-reboot-paths", examples + "no-reboot-paths.json", "--systemd", "none", "--output", "json"}
	code, out, stderr := run(t, args...)
	require.Equal(t, exitOK, code, stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, true, got["applied"])
	assert.Equal(t, false, got["rolledBack"])
	assert.Equal(t, true, got["eligible"])
	for _, k := range []string{"changes", "actions", "refused", "warnings"} {
		assert.Contains(t, got, k)
	}
	b, err := os.ReadFile(filepath.Join(root, "etc/containers/registries.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "mirror.example.com")
	b, err = os.ReadFile(filepath.Join(root, "var/home/core/.ssh/authorized_keys.d/ignition"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), "\n"))

	// Next time the recorded state is the current one: the same payload is a no-op.
	code, out, _ = run(t, "apply", "--root", root, "--desired", examples+"desired-eligible.ign.gz.b64", "--systemd", "none")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "nothing to do")
}

func TestApplyCommandRefused(t *testing.T) {
	root := nodeRoot(t)
	before, err := fixture.TreeHash(root)
	require.NoError(t, err)
	code, out, _ := run(t, "apply", "--root", root, "--current", examples+"current.ign", "--desired", examples+"desired-refused.ign",
		"--systemd", "none", "--output", "json")
	assert.Equal(t, exitRefused, code)
	var got struct {
		Applied, RolledBack, Eligible bool
		Refused                       []struct{ Kind string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Applied)
	assert.False(t, got.Eligible)
	assert.NotEmpty(t, got.Refused)
	after, err := fixture.TreeHash(root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written, not even the state dir")
}

func TestApplyCommandInvalid(t *testing.T) {
	root := nodeRoot(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"ignition":{"version":"3.2.0"`), 0o600))
	cases := map[string][]string{
		"no root":       {"apply", "--desired", examples + "current.ign"},
		"no desired":    {"apply", "--root", root},
		"bad payload":   {"apply", "--root", root, "--current", examples + "current.ign", "--desired", bad, "--systemd", "none"},
		"no current":    {"apply", "--root", root, "--desired", examples + "current.ign", "--systemd", "none"},
		"bad systemd":   {"apply", "--root", root, "--desired", examples + "current.ign", "--systemd", "session"},
		"missing root":  {"apply", "--root", filepath.Join(root, "nope"), "--desired", examples + "current.ign"},
		"bad rules":     {"apply", "--root", root, "--desired", examples + "current.ign", "--no-reboot-paths", bad},
		"bad output":    {"apply", "--root", root, "--desired", examples + "current.ign", "--output", "xml"},
		"unknown flag":  {"apply", "--rooot", root},
		"current wrong": {"apply", "--root", root, "--current", bad, "--desired", examples + "current.ign"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := run(t, args...)
			assert.Equal(t, exitInvalid, code, stderr)
			assert.Empty(t, out)
			assert.NotEmpty(t, stderr)
		})
	}
}

func TestApplyCommandFailsOnUnreachableSystemd(t *testing.T) {
	// A change that needs a unit action, with no manager at the user socket: the files are restored,
	// but the reload cannot run on them either, so the rollback is incomplete (exit 1) and kept for
	// recovery.
	root := nodeRoot(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	code, out, _ := run(t, "apply", "--root", root, "--current", examples+"current.ign", "--desired", examples+"desired-eligible.ign",
		"--systemd", "user", "--output", "json")
	assert.Equal(t, exitFailed, code)
	var got struct {
		Applied, RolledBack, RollbackIncomplete bool
		Reason                                  string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.RolledBack)
	assert.True(t, got.RollbackIncomplete)
	assert.Contains(t, got.Reason, "crio.service")
	assert.NotContains(t, out, "auths", "no contents in the output")
	// Files are restored; the state dir holds no record, and the journal waits for recovery.
	_, err := os.Stat(filepath.Join(root, "etc/containers/registries.conf"))
	assert.True(t, os.IsNotExist(err), "a file added by the failed refresh is gone")
	_, err = os.Stat(filepath.Join(root, "var/lib/refresh-agent/current.json"))
	assert.True(t, os.IsNotExist(err))
	_, err = os.Stat(filepath.Join(root, "var/lib/refresh-agent/journal.json"))
	require.NoError(t, err, "journal kept")

	// Recovery still cannot reach the manager: it says so and exits 1.
	code, out, stderr := run(t, "recover", "--root", root, "--systemd", "user")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, `"rollbackIncomplete": true`)
	assert.Contains(t, stderr, "crio.service")

	// The operator settles it without a manager (the actions are skipped): the rollback completes.
	code, out, stderr = run(t, "recover", "--root", root, "--systemd", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, `"rolledBack": true`)
	_, err = os.Stat(filepath.Join(root, "var/lib/refresh-agent/journal.json"))
	assert.True(t, os.IsNotExist(err))
}
