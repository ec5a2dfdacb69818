package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Issue 27 class 3, as the binary sees it: a changed line's commands change the node's files only
// in the unit's own places or where the node's unit already changes them. diff exits 3 naming the
// path; apply --dry-run refuses the same, writing nothing. The harmless shapes stay eligible.
func TestCLIRefusesChangedLinesThatChangeOtherFiles(t *testing.T) {
	pol := writeFile(t, "ndp.yaml", []byte(machineConfiguration))
	cur := writeFile(t, "cur.ign", fixture.Ignition("3.2.0").Unit("myapp.service",
		"[Service]\nExecStartPre=/usr/bin/rm -f /var/lib/other/x\nExecStart=/usr/bin/sleep infinity\n").JSON())
	desired := func(t *testing.T, service string) string {
		des := fixture.Ignition("3.2.0").File("/etc/myapp/app.conf", []byte("#!/bin/sh\nsystemctl reboot\n"), 0o644).
			Unit("myapp.service", "[Service]\n"+service+"\nExecStart=/usr/bin/sleep infinity\n")
		return writeFile(t, "des.ign", des.JSON())
	}
	for service, why := range map[string]string{
		"ExecStartPre=/usr/bin/rm -rf /etc":                                    "rm changes /etc",
		"ExecStartPre=/usr/bin/rm /run/crio/crio.sock":                         "rm changes /run/crio/crio.sock",
		"ExecStartPre=/usr/bin/sed -i s/a/b/ /etc/hosts":                       "sed changes /etc/hosts",
		"ExecStartPre=/bin/sh -c 'cat /etc/myapp/app.conf > /etc/resolv.conf'": "the shell changes /etc/resolv.conf",
		"ExecStartPre=/usr/bin/truncate -s 0 /var/lib/mysql/x":                 "truncate changes /var/lib/mysql/x",
		"ExecStartPre=/usr/bin/rm -f /var/lib/other/y":                         "rm changes /var/lib/other/y",
	} {
		t.Run(service, func(t *testing.T) {
			out := refusedByDiffAndDryRun(t, pol, cur, desired(t, service))
			assert.Contains(t, out, why)
			assert.Contains(t, out, "the unit's own places")
		})
	}
	for _, service := range []string{
		"ExecStartPre=/usr/bin/rm -f /run/myapp/*.pid",
		"ExecStartPre=/usr/bin/mkdir -p /var/lib/myapp",
		"ExecStartPre=/bin/sh -c 'echo x > /run/myapp/state'",
		"ExecStartPre=-/usr/bin/rm -f /var/lib/other/x", // what the node's unit already removes
	} {
		code, out, stderr := run(t, "diff", "--policy", pol, "--current", cur, "--desired", desired(t, service))
		assert.Equal(t, exitOK, code, "%s: %s%s", service, out, stderr)
	}
}

// refusedByDiffAndDryRun runs diff, which must exit 3, and apply --dry-run, which must say refused
// and write nothing; it returns diff's output and the dry run's, for the reasons.
func refusedByDiffAndDryRun(t *testing.T, pol, cur, des string) string {
	t.Helper()
	code, out, stderr := run(t, "diff", "--policy", pol, "--current", cur, "--desired", des)
	require.Equal(t, exitRefused, code, "%s%s", out, stderr)
	root := nodeRoot(t)
	before, err := fixture.TreeHash(root)
	require.NoError(t, err)
	code, dry, _ := run(t, "apply", "--dry-run", "--root", root, "--policy", pol, "--current", cur, "--desired", des,
		"--systemd", "none", "--cri-socket", "none", "--output", "json")
	assert.Equal(t, exitRefused, code)
	var got struct{ Outcome string }
	require.NoError(t, json.Unmarshal([]byte(dry), &got), dry)
	assert.Equal(t, "refused", got.Outcome)
	after, err := fixture.TreeHash(root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")
	return out + dry
}
