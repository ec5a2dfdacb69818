package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

const ndpPolicy = `nodeDisruptionPolicy:
  files:
  - path: /etc/myapp/drain.conf
    actions: [{type: Drain}, {type: Reload, reload: {serviceName: myapp.service}}]
  - path: /etc/myapp/none.conf
    actions: [{type: None}]
  - path: /etc/myapp/reboot.conf
    actions: [{type: Reboot}]
  - path: /etc/myapp/restart.conf
    actions: [{type: Restart, restart: {serviceName: myapp.service}}, {type: Reload, reload: {serviceName: crio.service}}]
  - path: /etc/myapp/dr.conf
    actions: [{type: DaemonReload}]
  units:
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
  - name: other.service
    actions: [{type: Reboot}]
  sshkey:
    actions: [{type: Drain}]
# The program the tests' myapp.service runs, granted to its changed Exec lines (issue 27 class 3:
# a changed line runs only modeled, own or granted programs).
unitPrograms:
  myapp.service: [/usr/bin/myapp, /bin/a, /bin/b, /sbin/auditd, /usr/libexec/myapp/start.sh, /usr/lib/myapp/check.py,
    /usr/local/sbin/dynamic-system-reserved-calc.sh, /usr/local/bin/myapp.py]
`

func ndpBuild(t *testing.T, pol string, cur, des *fixture.Config) *plan.Plan {
	t.Helper()
	return rootBuild(t, pol, "", cur, des)
}

func plain() *fixture.Config { return fixture.Ignition("3.2.0") }

func TestNDPFileRuleActions(t *testing.T) {
	reload := plan.UnitAction{Unit: "myapp.service", Action: allowlist.ActionReload}
	restart := plan.UnitAction{Unit: "myapp.service", Action: allowlist.ActionRestart}
	crio := plan.UnitAction{Unit: "crio.service", Action: allowlist.ActionReload}
	dr := plan.UnitAction{Action: allowlist.ActionDaemonReload}
	cases := map[string]struct {
		path    string
		actions []plan.UnitAction
		drain   bool
	}{
		"None":         {"/etc/myapp/none.conf", []plan.UnitAction{}, false},
		"Drain Reload": {"/etc/myapp/drain.conf", []plan.UnitAction{reload}, true},
		"Restart":      {"/etc/myapp/restart.conf", []plan.UnitAction{crio, restart}, false},
		"DaemonReload": {"/etc/myapp/dr.conf", []plan.UnitAction{dr}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, plain(), plain().File(tc.path, []byte("x"), 0o644))
			require.True(t, p.Eligible, "%+v", p.Refused)
			assert.Equal(t, tc.actions, p.Actions)
			assert.Equal(t, tc.drain, p.Drain)
			require.Len(t, p.Changes, 1)
			assert.Contains(t, p.Changes[0].Rule, "("+tc.path+")")
			if tc.drain {
				require.Len(t, p.DrainReasons, 1)
				assert.Contains(t, p.DrainReasons[0], "says Drain")
			}
		})
	}
	t.Run("Reboot", func(t *testing.T) {
		p := ndpBuild(t, ndpPolicy, plain(), plain().File("/etc/myapp/reboot.conf", []byte("x"), 0o644).File("/etc/myapp/none.conf", []byte("x"), 0o644))
		require.False(t, p.Eligible)
		require.Len(t, p.Refused, 1)
		assert.Contains(t, p.Refused[0].Reason, "nodeDisruptionPolicy.files[2] (/etc/myapp/reboot.conf) says Reboot")
		assert.Empty(t, p.Files)
		assert.False(t, p.Drain)
	})
	t.Run("deduplicated and ordered", func(t *testing.T) {
		des := plain().File("/etc/myapp/drain.conf", []byte("x"), 0o644).File("/etc/myapp/restart.conf", []byte("x"), 0o644).
			File("/etc/myapp/dr.conf", []byte("x"), 0o644).Unit("myapp.service", "[Service]\n")
		des.Systemd.Units[0].Enabled = nil
		p := ndpBuild(t, ndpPolicy, plain(), des)
		require.True(t, p.Eligible, "%+v", p.Refused)
		assert.Equal(t, []plan.UnitAction{dr, crio, restart}, p.Actions, "daemon-reload once and first; reload and restart of one unit: restart once")
		assert.True(t, p.Drain)
	})
	t.Run("sshkey", func(t *testing.T) {
		p := ndpBuild(t, ndpPolicy, plain().SSHKeys("a"), plain().SSHKeys("b"))
		require.True(t, p.Eligible)
		assert.True(t, p.Drain)
		p = ndpBuild(t, "sshkey: {actions: [{type: Reboot}]}\n", plain().SSHKeys("a"), plain().SSHKeys("b"))
		require.False(t, p.Eligible)
		assert.Contains(t, p.Refused[0].Reason, "sshkey says Reboot")
	})
}

func unit(name string, contents *string, dropins ...types.Dropin) types.Unit {
	return types.Unit{Name: name, Contents: contents, Dropins: dropins}
}

func str(s string) *string { return &s }

func withUnits(us ...types.Unit) *fixture.Config {
	c := plain()
	c.Systemd.Units = us
	return c
}

func TestNDPUnitRule(t *testing.T) {
	cur := withUnits(unit("myapp.service", str("[Service]\nExecStart=/bin/a\n"), types.Dropin{Name: "10-a.conf", Contents: str("[Service]\nEnvironment=A=1\n")}))
	t.Run("dropin changed", func(t *testing.T) {
		des := withUnits(unit("myapp.service", str("[Service]\nExecStart=/bin/a\n"),
			types.Dropin{Name: "10-a.conf", Contents: str("[Service]\nEnvironment=A=2\n")}, types.Dropin{Name: "20-b.conf", Contents: str("x")}))
		p := ndpBuild(t, ndpPolicy, cur, des)
		require.True(t, p.Eligible, "%+v", p.Refused)
		require.Len(t, p.Files, 2)
		assert.Equal(t, "/etc/systemd/system/myapp.service.d/10-a.conf", p.Files[0].Path)
		assert.Equal(t, "/etc/systemd/system/myapp.service.d/20-b.conf", p.Files[1].Path)
		assert.Equal(t, "myapp.service", p.Files[0].Unit)
		data, err := p.Files[0].Contents()
		require.NoError(t, err)
		assert.Equal(t, "[Service]\nEnvironment=A=2\n", string(data))
		assert.Equal(t, []plan.UnitAction{{Action: allowlist.ActionDaemonReload}, {Unit: "myapp.service", Action: allowlist.ActionRestart}}, p.Actions)
	})
	t.Run("contents changed and dropin removed", func(t *testing.T) {
		des := withUnits(unit("myapp.service", str("[Service]\nExecStart=/bin/b\n")))
		p := ndpBuild(t, ndpPolicy, cur, des)
		require.True(t, p.Eligible, "%+v", p.Refused)
		require.Len(t, p.Files, 2)
		assert.Equal(t, "/etc/systemd/system/myapp.service", p.Files[0].Path)
		assert.True(t, p.Files[1].Remove)
	})
	refused := map[string]struct {
		cur, des *fixture.Config
		want     string
	}{
		"not listed":   {withUnits(unit("x.service", str("a"))), withUnits(unit("x.service", str("b"))), "systemd units and dropins are not changed"},
		"reboot rule":  {withUnits(unit("other.service", str("a"))), withUnits(unit("other.service", str("b"))), "units[1] (other.service) says Reboot"},
		"dropin slash": {cur, withUnits(unit("myapp.service", str("[Service]\nExecStart=/bin/a\n"), types.Dropin{Name: "../../x.conf", Contents: str("x")})), ""},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			c, err := diff.Decode(tc.cur.JSON())
			require.NoError(t, err)
			d, err := diff.Decode(tc.des.JSON())
			if err != nil {
				return // Ignition itself rejects it
			}
			pol, err := allowlist.ParsePolicy([]byte(ndpPolicy))
			require.NoError(t, err)
			p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol})
			require.NoError(t, err)
			require.False(t, p.Eligible)
			assert.Empty(t, p.Files)
			assert.Contains(t, p.Refused[0].Reason, tc.want)
		})
	}
}

func boolp(b bool) *bool { return &b }

// Unit state changes under a unit rule are applied as the machine-config daemon applies them
// (issue 25; they were refused before): state actions first, each with its undo, then
// daemon-reload, then the rule's actions on what still runs.
func TestNDPUnitStates(t *testing.T) {
	const svc = "[Service]\nExecStart=/bin/a\n[Install]\nWantedBy=multi-user.target\n"
	u := func(enabled, mask *bool, contents *string) types.Unit {
		return types.Unit{Name: "myapp.service", Contents: contents, Enabled: enabled, Mask: mask}
	}
	dr := plan.UnitAction{Action: allowlist.ActionDaemonReload}
	restart := plan.UnitAction{Unit: "myapp.service", Action: allowlist.ActionRestart}
	state := func(a, undo allowlist.Action) plan.UnitAction {
		return plan.UnitAction{Unit: "myapp.service", Action: a, Undo: undo}
	}
	cases := map[string]struct {
		cur, des *fixture.Config
		actions  []plan.UnitAction
		files    []string // written (+) or removed (-)
	}{
		"enabled": {withUnits(u(boolp(false), nil, str(svc))), withUnits(u(boolp(true), nil, str(svc))),
			[]plan.UnitAction{state(allowlist.ActionEnable, allowlist.ActionDisable), dr, restart}, nil},
		"disabled": {withUnits(u(boolp(true), nil, str(svc))), withUnits(u(boolp(false), nil, str(svc))),
			[]plan.UnitAction{state(allowlist.ActionDisable, allowlist.ActionEnable), dr, restart}, nil},
		"added enabled": {plain(), withUnits(u(boolp(true), nil, str(svc))),
			[]plan.UnitAction{state(allowlist.ActionEnable, allowlist.ActionDisable), dr, restart}, []string{"+/etc/systemd/system/myapp.service"}},
		"masked": {withUnits(u(nil, nil, str(svc))), withUnits(u(nil, boolp(true), nil)),
			[]plan.UnitAction{state(allowlist.ActionMask, allowlist.ActionUnmask), dr}, []string{"-/etc/systemd/system/myapp.service"}},
		"unmasked": {withUnits(u(nil, boolp(true), nil)), withUnits(u(nil, boolp(false), nil)),
			[]plan.UnitAction{state(allowlist.ActionUnmask, allowlist.ActionMask), dr, restart}, nil},
		"removed": {withUnits(u(boolp(true), nil, str(svc))), plain(),
			[]plan.UnitAction{state(allowlist.ActionStop, allowlist.ActionStart), state(allowlist.ActionDisable, allowlist.ActionEnable), dr},
			[]string{"-/etc/systemd/system/myapp.service"}},
		"removed masked": {withUnits(u(nil, boolp(true), nil)), plain(),
			[]plan.UnitAction{state(allowlist.ActionUnmask, allowlist.ActionMask), dr}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, tc.cur, tc.des)
			require.True(t, p.Eligible, "%+v", p.Refused)
			assert.Equal(t, tc.actions, p.Actions)
			var files []string
			for _, f := range p.Files {
				files = append(files, map[bool]string{true: "-", false: "+"}[f.Remove]+f.Path)
			}
			assert.Equal(t, tc.files, files)
		})
	}
	refused := map[string]struct {
		cur, des *fixture.Config
		want     string
	}{
		"unmask with contents": {withUnits(u(nil, boolp(true), nil)), withUnits(u(nil, nil, str(svc))), "unmasking a unit and writing its file in one refresh"},
		"enabled unset":        {withUnits(u(boolp(true), nil, str(svc))), withUnits(u(nil, nil, str(svc))), "a refresh does not apply presets"},
		"enable with Also=": {withUnits(u(boolp(false), nil, str(svc))), withUnits(u(boolp(true), nil, str(svc+"Also=other.service\n"))),
			"[Install] Also=other.service: to enable it would enable other.service too"},
		"mask and enable": {withUnits(u(nil, nil, str(svc))), withUnits(u(boolp(true), boolp(true), nil)), "a masked unit cannot be enabled"},
		"no rule":         {withUnits(types.Unit{Name: "x.service", Enabled: boolp(false)}), withUnits(types.Unit{Name: "x.service", Enabled: boolp(true)}), "systemd units and dropins are not changed"},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, tc.cur, tc.des)
			require.False(t, p.Eligible)
			assert.Empty(t, p.Files)
			assert.Contains(t, p.Refused[0].Reason, tc.want)
		})
	}
	assert.Equal(t, []plan.UnitAction{{Unit: "a.service", Action: allowlist.ActionMask}, dr, {Unit: "b.service", Action: allowlist.ActionStart},
		{Unit: "c.service", Action: allowlist.ActionRestart, IfLoaded: true}},
		plan.Rollback([]plan.UnitAction{{Unit: "b.service", Action: allowlist.ActionStop, Undo: allowlist.ActionStart},
			{Unit: "a.service", Action: allowlist.ActionUnmask, Undo: allowlist.ActionMask}, {Unit: "d.service", Action: allowlist.ActionEnable},
			dr, {Unit: "c.service", Action: allowlist.ActionRestart}}), "undos, daemon-reload, starts, then the rest")
}

const regBase = `unqualified-search-registries = ["registry.access.redhat.com"]
[[registry]]
location = "quay.io/openshift"
[[registry.mirror]]
location = "mirror1.example.com/openshift"
pull-from-mirror = "digest-only"
`

func TestRegistriesConfAsTheMCDJudgesIt(t *testing.T) {
	added := regBase + "[[registry.mirror]]\nlocation = \"mirror2.example.com/openshift\"\npull-from-mirror = \"digest-only\"\n"
	cases := map[string]struct {
		old, new string
		drain    bool
		why      string
	}{
		"mirror added":            {regBase, added, false, ""},
		"mirror removed":          {added, regBase, true, "mirror mirror2.example.com/openshift of registry quay.io/openshift was removed"},
		"mirror added by tag":     {regBase, regBase + "[[registry.mirror]]\nlocation = \"m3.example.com\"\n", true, "without pulling by digest only"},
		"registry added digest":   {regBase, regBase + "[[registry]]\nlocation = \"r.example.com\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.example.com\"\n", false, ""},
		"registry removed":        {regBase, `unqualified-search-registries = ["registry.access.redhat.com"]`, true, "registry quay.io/openshift was removed"},
		"search registry removed": {regBase, strings.Replace(regBase, `["registry.access.redhat.com"]`, `[]`, 1), true, "unqualified search registry"},
		"blocked":                 {regBase, strings.Replace(regBase, "location = \"quay.io/openshift\"\n", "location = \"quay.io/openshift\"\nblocked = true\n", 1), true, "changed blocked"},
		"other setting":           {regBase, "short-name-mode = \"permissive\"\n" + regBase, true, "settings other than"},
		"not TOML desired":        {regBase, "mirrors = [", true, "not valid TOML"},
		"not TOML current":        {"mirrors = [", regBase, true, "the current file is not valid TOML, so the change cannot be judged"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, "{}", plain().File(allowlist.Registries, []byte(tc.old), 0o644), plain().File(allowlist.Registries, []byte(tc.new), 0o644))
			if tc.why == "not valid TOML" {
				require.False(t, p.Eligible)
				assert.Contains(t, p.Refused[0].Reason, tc.why)
				return
			}
			require.True(t, p.Eligible, "%+v", p.Refused)
			assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload}}, p.Actions)
			assert.Equal(t, tc.drain, p.Drain)
			if tc.drain {
				require.Len(t, p.DrainReasons, 1)
				assert.Contains(t, p.DrainReasons[0], tc.why)
			}
		})
	}
}
