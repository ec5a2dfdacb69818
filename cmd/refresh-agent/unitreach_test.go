package main

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Round-7a F1 and F4 on the binary, with the docs' example rules (a unit rule for myapp.service, a
// ceiling entry /var/lib/myapp/extra.json): diff (exit 3), apply --dry-run and apply refuse, naming
// unit, section and key and writing nothing, a unit the payload makes another unit follow
// (RequiredBy=sysinit.target, kubelet-dependencies.target), the removal of a unit
// kubelet-dependencies.target requires, and a unit handed to core with a world-writable directory
// over the managed file; WantedBy= the same targets, and the removal of a disabled unit, still plan.
func TestUnitRuleMakesNoUnrulyFollowerAndHandsNoManagedPath(t *testing.T) {
	policy := writeFile(t, "policy.yaml", []byte("nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n"+
		"    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"+
		"configMapCeiling:\n  - {prefix: /var/lib/myapp/extra.json, actions: [None]}\n"))
	nrp := writeFile(t, "nrp.json", []byte(`[{"path":"/var/lib/myapp/extra.json","action":"None"}]`))
	const base = "[Unit]\nDescription=my app\n[Service]\nType=simple\nExecStart=/usr/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n"
	cfg := func(enabled bool, contents string, files ...string) *fixture.Config {
		c := fixture.Ignition("3.2.0")
		for _, f := range files {
			c = c.File(f, []byte("{\"a\":1}\n"), 0o644)
		}
		if contents != "" {
			c.Systemd.Units = []types.Unit{{Name: "myapp.service", Contents: &contents, Enabled: &enabled}}
		}
		return c
	}
	requiredBy := func(target string) string {
		return strings.Replace(base, "WantedBy=multi-user.target", "WantedBy=multi-user.target\nRequiredBy="+target, 1)
	}
	statedir := strings.Replace(base, "[Install]", "User=core\nStateDirectory=myapp\nStateDirectoryMode=0777\n[Install]", 1)
	cases := map[string]struct {
		cur, des *fixture.Config
		want     string
	}{
		"RequiredBy=sysinit.target": {cfg(false, base), cfg(true, requiredBy("sysinit.target")), "unit myapp.service: [Install] RequiredBy=sysinit.target: "},
		"RequiredBy=kubelet-dependencies.target": {cfg(false, base), cfg(true, requiredBy("kubelet-dependencies.target")),
			"unit myapp.service: [Install] RequiredBy=kubelet-dependencies.target: "},
		"UpheldBy=network-online.target": {cfg(false, base), cfg(true, strings.Replace(base, "WantedBy=", "UpheldBy=network-online.target\nWantedBy=", 1)),
			"unit myapp.service: [Install] UpheldBy=network-online.target: "},
		"enabling the node's RequiredBy=": {cfg(false, requiredBy("kubelet-dependencies.target")), cfg(true, requiredBy("kubelet-dependencies.target")),
			"unit myapp.service: enabling it: [Install] RequiredBy=kubelet-dependencies.target: "},
		"removing a unit kubelet-dependencies.target requires": {cfg(true, requiredBy("kubelet-dependencies.target")), cfg(true, ""),
			"unit myapp.service: stopping it (it leaves the config): [Install] RequiredBy=kubelet-dependencies.target: "},
		"User=core StateDirectory=myapp 0777": {cfg(true, base), cfg(true, statedir, "/var/lib/myapp/extra.json"),
			"unit myapp.service: [Service] StateDirectory=myapp: the unit would run as User=core"},
		"StateDirectoryMode=0777": {cfg(true, base), cfg(true, strings.Replace(base, "[Install]", "StateDirectory=myapp\nStateDirectoryMode=0777\n[Install]", 1)),
			"unit myapp.service: [Service] StateDirectoryMode=0777: more than 0755"},
		"ConfigurationDirectoryMode=0777": {cfg(true, base), cfg(true, strings.Replace(base, "[Install]", "ConfigurationDirectoryMode=0777\n[Install]", 1)),
			"unit myapp.service: [Service] ConfigurationDirectoryMode=0777: "},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file := strings.NewReplacer(" ", "-", "/", "_", "=", "_").Replace(name)
			cur := writeFile(t, file+"-cur.json", c.cur.JSON())
			des := writeFile(t, file+"-des.json", c.des.JSON())
			refusedAlike(t, []string{"--current", cur, "--desired", des, "--policy", policy, "--no-reboot-paths", nrp}, c.want)
		})
	}
	for name, c := range map[string]struct{ cur, des *fixture.Config }{
		"WantedBy=kubelet-dependencies.target": {cfg(false, base), cfg(true, strings.Replace(base, "WantedBy=multi-user.target", "WantedBy=multi-user.target kubelet-dependencies.target", 1))},
		"removing a disabled unit":             {cfg(false, requiredBy("kubelet-dependencies.target")), cfg(false, "")},
		"StateDirectory=myapp as root, 0750":   {cfg(true, base), cfg(true, strings.Replace(base, "[Install]", "StateDirectory=myapp\nStateDirectoryMode=0750\n[Install]", 1), "/var/lib/myapp/extra.json")},
	} {
		t.Run("plans/"+name, func(t *testing.T) {
			file := strings.NewReplacer(" ", "-", "/", "_", "=", "_", ",", "").Replace(name)
			cur := writeFile(t, file+"-cur.json", c.cur.JSON())
			des := writeFile(t, file+"-des.json", c.des.JSON())
			code, out, stderr := run(t, "diff", "--output", "json", "--current", cur, "--desired", des, "--policy", policy, "--no-reboot-paths", nrp)
			assert.Equal(t, exitOK, code, "%s %s", out, stderr)
		})
	}
}
