package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// The ceiling model as the binary shows it: the ConfigMap's no-reboot-paths only choose within the
// node policy's configMapCeiling; duplicate entries are invalid; the embedded MachineConfig must agree.
func TestDiffCeilingModel(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, data, 0o600))
		return f
	}
	base := func() *fixture.Config {
		return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File("/etc/containers/registries.conf", []byte("# m"), 0o644)
	}
	cur := write("cur.ign", base().JSON())
	des := write("des.ign", base().File("/etc/foo/a.conf", []byte("x"), 0o644).JSON())
	policy := write("policy.yaml", []byte("configMapCeiling: [{prefix: /etc/foo/, actions: [None, Reload], units: [crio]}]\n"))
	reload := write("reload.json", []byte(`[{"path": "/etc/foo/a.conf", "action": "Reload", "services": ["crio"]}]`))
	restart := write("restart.json", []byte(`[{"path": "/etc/foo/a.conf", "action": "Restart", "services": ["kubelet"]}]`))

	type result struct {
		Eligible bool
		Actions  []struct{ Unit, Action string }
		Refused  []struct{ Kind, Reason string }
		Warnings []string
	}
	diffJSON := func(args ...string) (int, result, string) {
		code, out, stderr := run(t, append([]string{"diff", "--output", "json"}, args...)...)
		var r result
		if code != exitInvalid {
			require.NoError(t, json.Unmarshal([]byte(out), &r), stderr)
		}
		return code, r, stderr
	}

	// Without a ceiling (the built-in policy) the entry is ignored and the path refused.
	code, r, _ := diffJSON("--current", cur, "--desired", des, "--no-reboot-paths", reload)
	assert.Equal(t, exitRefused, code)
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "entry 0 (/etc/foo/a.conf Reload crio)")
	assert.Contains(t, r.Refused[0].Reason, "not in the node allowlist")

	// Within the ceiling it is honoured.
	code, r, _ = diffJSON("--current", cur, "--desired", des, "--no-reboot-paths", reload, "--policy", policy)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, []struct{ Unit, Action string }{{"crio.service", "Reload"}}, r.Actions)

	// Above it, ignored with a warning naming the entry.
	code, r, _ = diffJSON("--current", cur, "--desired", des, "--no-reboot-paths", restart, "--policy", policy)
	assert.Equal(t, exitRefused, code)
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "entry 0 (/etc/foo/a.conf Restart kubelet): action Restart is not allowed under configMapCeiling prefix /etc/foo/")

	// Duplicate entries: invalid, naming both indices, whatever their order or actions.
	dup := write("dup.json", []byte(`[{"path": "/etc/foo/a.conf", "action": "None"}, {"path": "/etc/foo/a.conf", "action": "Reload", "services": ["crio"]}]`))
	code, _, stderr := diffJSON("--current", cur, "--desired", des, "--no-reboot-paths", dup, "--policy", policy)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, `entries 0 and 1 both name path "/etc/foo/a.conf"`)

	// A ceiling under a denied prefix is an error naming the entry.
	bad := write("bad.yaml", []byte("configMapCeiling: [{prefix: /etc/foo/, actions: [None]}, {prefix: /etc/cron.d/, actions: [None]}]\n"))
	code, _, stderr = diffJSON("--current", cur, "--desired", des, "--policy", bad)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "configMapCeiling[1]: prefix /etc/cron.d/ is under denied prefix /etc/cron")

	// A control character in a rule path is invalid; in a payload path, refused.
	ctl := write("ctl.json", []byte(`[{"path": "/etc/foo/a\u001b[2J", "action": "None"}]`))
	code, _, stderr = diffJSON("--current", cur, "--desired", des, "--no-reboot-paths", ctl, "--policy", policy)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "entry 0: path")
	assert.NotContains(t, stderr, "\x1b")

	// A unit smuggled into the embedded MachineConfig: refused, kind machineConfig.
	smuggled := base()
	inner := fixture.Ignition("3.5.0").Unit("evil.service", "[Service]\nExecStart=/bin/sh\n")
	smuggled.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), inner.JSON()), 0o644)
	code, r, _ = diffJSON("--current", cur, "--desired", write("smuggled.ign", smuggled.JSON()))
	assert.Equal(t, exitRefused, code)
	require.Len(t, r.Refused, 1)
	assert.Equal(t, "machineConfig", r.Refused[0].Kind)
	assert.Contains(t, r.Refused[0].Reason, "unit evil.service is not in the outer config")

	// A desired payload that drops the MachineConfig: refused.
	code, r, _ = diffJSON("--current", cur, "--desired", write("nomc.ign", fixture.Ignition("3.2.0").File("/etc/containers/registries.conf", []byte("# m"), 0o644).JSON()))
	assert.Equal(t, exitRefused, code)
	require.Len(t, r.Refused, 1)
	assert.True(t, strings.Contains(r.Refused[0].Reason, "cannot verify reboot-class fields"), r.Refused[0].Reason)
}
