package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const examples = "../../test/testdata/examples/"

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := commands[args[0]](args[1:], &out, &errb)
	return code, out.String(), errb.String()
}

func TestDiffEligibleJSON(t *testing.T) {
	code, out, stderr := run(t, "diff", "--current", examples+"current.ign", "--desired", examples+"desired-eligible.ign.gz.b64",
		"--no-reboot-paths", examples+"no-reboot-paths.json", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, k := range []string{"eligible", "changes", "actions", "refused", "warnings"} {
		assert.Contains(t, got, k)
	}
	assert.Equal(t, true, got["eligible"])
	assert.Equal(t, []any{map[string]any{"unit": "crio.service", "action": "Reload"}}, got["actions"])
	assert.Empty(t, got["refused"])
	var sawKeys bool
	for _, c := range got["changes"].([]any) {
		c := c.(map[string]any)
		assert.Equal(t, true, c["eligible"])
		if c["kind"] == "sshKeys" {
			sawKeys = true
			assert.Equal(t, "core", c["user"])
		}
		if c["path"] == "/etc/containers/registries.conf" {
			assert.Equal(t, "Reload", c["action"])
			assert.Equal(t, []any{"crio.service"}, c["services"])
			assert.Equal(t, "modify", c["op"])
		}
	}
	assert.True(t, sawKeys)
}

func TestDiffRefusedExit3(t *testing.T) {
	code, out, _ := run(t, "diff", "--current", examples+"current.ign", "--desired", examples+"desired-refused.ign", "--output", "json")
	require.Equal(t, exitRefused, code)
	var got struct {
		Eligible bool
		Refused  []struct{ Kind, Reason, Path string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Eligible)
	require.Len(t, got.Refused, 2)
	assert.Equal(t, "fips", got.Refused[0].Kind)
	assert.Equal(t, "FIPS mode change requires a reboot (false -> true)", got.Refused[0].Reason)
	assert.Equal(t, "/etc/ssh/sshd_config.d/50-permit-root.conf", got.Refused[1].Path)

	code, out, _ = run(t, "diff", "--current", examples+"current.ign", "--desired", examples+"desired-refused.ign")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, out, "refused: FIPS")
	assert.NotContains(t, out, "PermitRootLogin", "text output never prints contents")
}

func TestDiffNoChange(t *testing.T) {
	code, out, _ := run(t, "diff", "--current", examples+"current.ign", "--desired", examples+"current.ign")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "result: no changes")
}

func TestDiffInvalidInputExit2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, []byte(s), 0o600))
		return f
	}
	badJSON := write("bad.json", "{\"ignition\": {\"version\": \"3.2.0\"}\n  \"storage\": {}}")
	badVersion := write("v.json", `{"ignition": {"version": "4.0.0"}}`)
	badRules := write("rules.json", `[{"path": "/etc/a", "action": "None"}, {"path": "/etc/b", "action": "Reboot"}]`)
	cases := map[string]struct {
		args []string
		want []string
	}{
		"bad json":     {[]string{"--current", examples + "current.ign", "--desired", badJSON}, []string{"bad.json", "invalid JSON at offset", "line 2"}},
		"bad version":  {[]string{"--current", badVersion, "--desired", examples + "current.ign"}, []string{"v.json", `unknown Ignition version "4.0.0"`}},
		"bad rules":    {[]string{"--current", examples + "current.ign", "--desired", examples + "current.ign", "--no-reboot-paths", badRules}, []string{"rules.json", "entry 1", "Reboot"}},
		"missing file": {[]string{"--current", filepath.Join(dir, "nope"), "--desired", examples + "current.ign"}, []string{"nope"}},
		"no flags":     {nil, []string{"--current and --desired are required"}},
		"bad output":   {[]string{"--current", examples + "current.ign", "--desired", examples + "current.ign", "--output", "yaml"}, []string{"--output"}},
		"bad policy":   {[]string{"--current", examples + "current.ign", "--desired", examples + "current.ign", "--policy", write("p.yaml", "paths: [{path: /boot/x, action: None}]")}, []string{"p.yaml", "/boot"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := run(t, append([]string{"diff"}, tc.args...)...)
			assert.Equal(t, exitInvalid, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
		})
	}
}
