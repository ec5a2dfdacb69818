package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Issue 27, round 4 on the binary: under a unit rule a payload changes only the settings the judge
// models. diff (exit 3), apply --dry-run and apply refuse the adversary's inputs with the same
// reason, naming unit, section and key, and write nothing; an ordinary change still plans.
func TestUnitRuleChangesOnlyModeledSettings(t *testing.T) {
	policy := writeFile(t, "policy.yaml", []byte("nodeDisruptionPolicy:\n  files:\n  - path: /etc/myapp/app.conf\n"+
		"    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n  units:\n  - name: myapp.service\n"+
		"    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"+
		// the programs and scripts the cases run, granted to the unit's changed lines (issue 27 class 3)
		"unitPrograms: {myapp.service: [/usr/lib/myapp/x, /usr/sbin/x, /usr/libexec/x]}\n"))
	const base = "[Service]\nExecStart=/usr/bin/sleep infinity\n"
	cfg := func(contents string, dropins ...types.Dropin) *fixture.Config {
		c := fixture.Ignition("3.2.0").File("/etc/myapp/app.conf", []byte("systemctl reboot\n"), 0o644)
		c.Systemd.Units = []types.Unit{{Name: "myapp.service", Contents: &contents, Dropins: dropins}}
		return c
	}
	cur := writeFile(t, "cur.json", cfg(base).JSON())
	dropin := func(s string) types.Dropin { return types.Dropin{Name: "50-x.conf", Contents: &s} }
	cases := map[string]struct {
		des  *fixture.Config
		want string
	}{
		// Round 3, F3.
		"forking PIDFile kill":  {cfg("[Service]\nType=forking\nPIDFile=/run/openvswitch/ovs-vswitchd.pid\nExecStart=/usr/bin/true\nExecStartPost=/usr/bin/kill -9 $MAINPID\n"), "[Service] PIDFile=: a setting the judge does not model"},
		"forking RuntimeMaxSec": {cfg("[Service]\nType=forking\nExecStart=/usr/bin/true\nRuntimeMaxSec=1\n"), "[Service] RuntimeMaxSec=1: the unit is Type=forking"},
		"Conflicts pods' slice": {cfg("[Unit]\nConflicts=kubepods.slice\n" + base), "Conflicts=kubepods.slice"},
		"Conflicts openvswitch": {cfg("[Unit]\nConflicts=openvswitch.service\n" + base), "[Unit] Conflicts=openvswitch.service"},
		"Conflicts var.mount":   {cfg("[Unit]\nConflicts=var.mount\n" + base), "Conflicts=var.mount"},
		"Also debug-shell":      {cfg(base + "[Install]\nWantedBy=multi-user.target\nAlso=debug-shell.service\n"), "Also=debug-shell.service"},
		// Round 4, F4: a payload-written file mounted where the judge trusts code.
		// (the adversary's exact lines; their /usr/local program may be refused by the exec judge first)
		"BindReadOnlyPaths /usr/local": {cfg("[Service]\nBindReadOnlyPaths=/etc/myapp/app.conf:/usr/local/bin/x\nExecStart=/usr/bin/sh /usr/local/bin/x\n"), "unit myapp.service: "},
		"MountImages /usr/local":       {cfg("[Service]\nMountImages=/etc/myapp/app.conf:/usr/local\nExecStart=/usr/local/bin/x\n"), "unit myapp.service: "},
		"BindReadOnlyPaths":            {cfg("[Service]\nBindReadOnlyPaths=/etc/myapp/app.conf:/usr/libexec/x\nExecStart=/usr/bin/sh /usr/libexec/x\n"), "[Service] BindReadOnlyPaths=: a setting the judge does not model"},
		"TemporaryFileSystem":          {cfg("[Service]\nTemporaryFileSystem=/usr/sbin\nBindPaths=/etc/myapp/app.conf:/usr/sbin/x\nExecStart=/usr/bin/bash /usr/sbin/x\n"), "[Service] BindPaths=: a setting the judge does not model"},
		"RootImage":                    {cfg("[Service]\nRootImage=/etc/myapp/app.conf\nExecStart=/usr/bin/sleep 1\n"), "[Service] RootImage="},
		"ExtensionImages":              {cfg("[Service]\nExtensionImages=/etc/myapp/app.conf\nExecStart=/usr/bin/sleep 1\n"), "[Service] ExtensionImages="},
		"MountImages":                  {cfg("[Service]\nMountImages=/etc/myapp/app.conf:/usr/lib/myapp\nExecStart=/usr/lib/myapp/x\n"), "[Service] MountImages="},
		"dropin BindPaths":             {cfg(base, dropin("[Service]\nBindPaths=/etc/myapp/app.conf:/usr/bin/sleep\n")), "[Service] BindPaths="},
		"hidden by backslashes":        {cfg(base, dropin("[Service]\nEnvironment=A=\\\\\nBindPaths=/etc/myapp/app.conf:/usr/bin/sleep\n")), "dropin 50-x.conf reads differently to systemd than to the judge"},
		"X- section":                   {cfg(base + "[X-Foo]\nA=1\n"), "[X-Foo] A=: a section the judge does not model"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			des := writeFile(t, strings.NewReplacer(" ", "-", "/", "_").Replace(name)+".json", c.des.JSON())
			refusedAlike(t, []string{"--current", cur, "--desired", des, "--policy", policy}, "unit myapp.service", c.want)
		})
	}
	// An ordinary change of modeled settings plans.
	des := writeFile(t, "ok.json", cfg("[Unit]\nDescription=my app\nAfter=network-online.target\n[Service]\nType=notify\nRestart=always\n"+
		"ExecStart=/usr/bin/sleep infinity\nEnvironment=A=1\n[Install]\nWantedBy=multi-user.target\n").JSON())
	code, out, stderr := run(t, "diff", "--output", "json", "--current", cur, "--desired", des, "--policy", policy)
	assert.Equal(t, exitOK, code, "%s %s", out, stderr)
}

// refusedAlike runs diff, then apply --dry-run and apply on a fresh node root, with the inputs in
// args: each exits 3 (refused), the first reason is the same in all three and contains every want,
// and nothing is written. It returns the reason.
func refusedAlike(t *testing.T, args []string, want ...string) string {
	t.Helper()
	type result struct {
		Outcome string
		Refused []struct{ Kind, Unit, Reason string }
	}
	decode := func(out string) result {
		var r result
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		return r
	}
	code, out, stderr := run(t, append([]string{"diff", "--output", "json"}, args...)...)
	require.Equal(t, exitRefused, code, "%s %s", out, stderr)
	d := decode(out)
	require.NotEmpty(t, d.Refused)
	reason := d.Refused[0].Reason
	for _, w := range want {
		assert.Contains(t, reason, w)
	}
	for _, dry := range []bool{true, false} {
		root := t.TempDir()
		require.NoError(t, fixture.NodeRoot(root))
		before, err := fixture.TreeHash(root)
		require.NoError(t, err)
		a := append([]string{"apply", "--root", root, "--systemd", "none", "--cri-socket", "none", "--output", "json"}, args...)
		if dry {
			a = append(a, "--dry-run")
		}
		code, out, stderr := run(t, a...)
		assert.Equal(t, exitRefused, code, "dry run %v: %s", dry, stderr)
		r := decode(out)
		assert.Equal(t, "refused", r.Outcome, "dry run %v", dry)
		if assert.NotEmpty(t, r.Refused) {
			assert.Equal(t, reason, r.Refused[0].Reason, "dry run %v: the same refusal as diff", dry)
		}
		after, err := fixture.TreeHash(root)
		require.NoError(t, err)
		assert.Equal(t, before, after, "dry run %v: nothing written", dry)
	}
	return reason
}
