package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// reachPolicy: the docs' example rules (a unit rule for myapp.service, a ceiling entry under
// /var/lib/myapp), a second ruled service, a rule that says Reboot, and a ceiling prefix in /etc.
const reachPolicy = `nodeDisruptionPolicy:
  units:
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
  - name: myapp-helper.service
    actions: [{type: Restart, restart: {serviceName: myapp-helper.service}}]
  - name: other.service
    actions: [{type: Reboot}]
configMapCeiling:
  - {prefix: /var/lib/myapp/extra.json, actions: [None]}
  - {prefix: /etc/myapp/, actions: [None]}
unitPrograms:
  myapp.service: [/usr/bin/myapp]
`

func refusedWith(t *testing.T, p *plan.Plan, want ...string) {
	t.Helper()
	assert.False(t, p.Eligible)
	if assert.NotEmpty(t, p.Refused) {
		for _, w := range want {
			assert.Contains(t, p.Refused[0].Reason, w)
		}
	}
	assert.Empty(t, p.Actions)
	assert.Empty(t, p.Files)
}

// Round-7a F1: a setting a payload adds that makes another unit follow the unit's stop or restart
// ([Install] RequiredBy=: once enabled, the named unit Requires= this one; [Install] UpheldBy=;
// [Unit] PropagatesStopTo=) names only services a unit rule names (not one saying Reboot), never a
// target: RequiredBy=sysinit.target made the rule's "restart myapp" restart every service. WantedBy=
// (Wants=, which propagates no stop or restart) stays any ordinary target, and the dependencies that
// make the unit follow another (Requires=, BindsTo=, PartOf=, StopPropagatedFrom=) stay as before.
func TestPayloadMakesNoUnrulyUnitFollowTheUnit(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := unit("myapp.service", str(base))
	cur.Enabled = boolp(true)
	withInstall := func(lines string) string { return base + "[Install]\nWantedBy=multi-user.target\n" + lines + "\n" }
	refused := map[string]struct{ contents, want string }{}
	for _, target := range []string{"sysinit.target", "kubelet-dependencies.target", "network-online.target", "basic.target",
		"multi-user.target", "default.target", "kubelet.service", "crio.service", "NetworkManager.service", "sshd.service",
		"other.service", "myapp-helperx.service"} {
		refused["RequiredBy="+target] = struct{ contents, want string }{withInstall("RequiredBy=" + target), "[Install] RequiredBy=" + target + ": "}
		refused["UpheldBy="+target] = struct{ contents, want string }{withInstall("UpheldBy=" + target), "[Install] UpheldBy=" + target + ": "}
		refused["PropagatesStopTo="+target] = struct{ contents, want string }{"[Unit]\nPropagatesStopTo=" + target + "\n" + base[len("[Unit]\n"):], "PropagatesStopTo=" + target + ": "}
	}
	refused["PropagatesStopTo=shutdown.target"] = struct{ contents, want string }{"[Unit]\nPropagatesStopTo=shutdown.target\n" + base[len("[Unit]\n"):], "PropagatesStopTo=shutdown.target: "}
	refused["RequiredBy, two targets"] = struct{ contents, want string }{withInstall("RequiredBy=multi-user.target kubelet-dependencies.target"), "[Install] RequiredBy=multi-user.target: "}
	// JudgeUnit takes only ordinary targets in [Install] and PropagatesStopTo=, so even a ruled
	// service cannot be added there (refused as before, by JudgeUnit).
	for _, l := range []string{"[Install]\nRequiredBy=myapp-helper.service", "[Install]\nUpheldBy=myapp-helper.service", "[Unit]\nPropagatesStopTo=myapp-helper.service"} {
		k, _, _ := strings.Cut(strings.SplitN(l, "\n", 2)[1], "=")
		refused["ruled service, "+k] = struct{ contents, want string }{base + l + "\n", k + "=myapp-helper.service: "}
	}
	refused["RequiredBy, specifier"] = struct{ contents, want string }{withInstall("RequiredBy=kubelet%i.service"), "[Install] RequiredBy=kubelet.service: "}
	for name, c := range refused {
		for _, shape := range []struct {
			name     string
			cur, des *fixture.Config
		}{
			{"unit", withUnits(cur), withUnits(types.Unit{Name: "myapp.service", Contents: str(c.contents), Enabled: boolp(true)})},
			{"new unit", plain(), withUnits(types.Unit{Name: "myapp.service", Contents: str(c.contents), Enabled: boolp(true)})},
			{"dropin", withUnits(cur), withUnits(types.Unit{Name: "myapp.service", Contents: str(base), Enabled: boolp(true),
				Dropins: []types.Dropin{{Name: "50-x.conf", Contents: str(c.contents)}}})},
		} {
			t.Run(shape.name+"/"+name, func(t *testing.T) {
				p := ndpBuild(t, reachPolicy, shape.cur, shape.des)
				refusedWith(t, p, "unit myapp.service: ", c.want, "")
				for _, r := range p.Refused {
					assert.NotContains(t, r.Reason, "\n", "a reason is one line")
				}
			})
		}
	}
	accepted := map[string]string{
		"WantedBy=multi-user.target":           withInstall(""),
		"WantedBy=kubelet-dependencies.target": withInstall("WantedBy=kubelet-dependencies.target"),
		"WantedBy=network-online.target":       withInstall("WantedBy=network-online.target sysinit.target"),
		"the unit follows: Requires, BindsTo…": "[Unit]\nRequires=crio.service\nBindsTo=myapp-helper.service\nPartOf=myapp.target\nStopPropagatedFrom=network-online.target\n" + base[len("[Unit]\n"):],
	}
	for name, contents := range accepted {
		t.Run("accepted/"+name, func(t *testing.T) {
			p := ndpBuild(t, reachPolicy, withUnits(cur), withUnits(types.Unit{Name: "myapp.service", Contents: str(contents), Enabled: boolp(true)}))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}

	// Enabling links every [Install] RequiredBy=/UpheldBy= entry, the node's own unchanged ones too.
	node := withInstall("RequiredBy=kubelet-dependencies.target")
	disabled := types.Unit{Name: "myapp.service", Contents: str(node), Enabled: boolp(false)}
	enabled := types.Unit{Name: "myapp.service", Contents: str(node), Enabled: boolp(true)}
	refusedWith(t, ndpBuild(t, reachPolicy, withUnits(disabled), withUnits(enabled)),
		"unit myapp.service: enabling it: [Install] RequiredBy=kubelet-dependencies.target: ")
	enabledDropin := enabled
	enabledDropin.Contents = str(withInstall(""))
	enabledDropin.Dropins = []types.Dropin{{Name: "50-x.conf", Contents: str("[Install]\nUpheldBy=kubelet-dependencies.target\n")}}
	disabledDropin := enabledDropin
	disabledDropin.Enabled = boolp(false)
	refusedWith(t, ndpBuild(t, reachPolicy, withUnits(disabledDropin), withUnits(enabledDropin)),
		"unit myapp.service: enabling it: [Install] UpheldBy=kubelet-dependencies.target: ")
	// The node's own entry, the unit neither enabled nor removed: another setting changes.
	changed := enabled
	changed.Contents = str(strings.Replace(node, "Description=my app", "Description=my app 2", 1))
	p := ndpBuild(t, reachPolicy, withUnits(enabled), withUnits(changed))
	assert.True(t, p.Eligible, "%+v", p.Refused)
	wanted := types.Unit{Name: "myapp.service", Contents: str(withInstall("")), Enabled: boolp(false)}
	wantedOn := wanted
	wantedOn.Enabled = boolp(true)
	p = ndpBuild(t, reachPolicy, withUnits(wanted), withUnits(wantedOn))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}

// Round-7a F1, the stop path: a payload that removes a unit stops it (and disables it); the stop
// reaches every unit that follows it in the node's current definition, as the current payload
// shows it. A unit no rule names that follows it (the unit's own RequiredBy= while enabled, its
// PropagatesStopTo=, another unit's Requires=, Requisite=, BindsTo=, PartOf=, StopPropagatedFrom=
// naming it or its alias) makes the removal refused; a ruled follower, a disabled unit's
// RequiredBy= and a Wants= do not.
func TestRemovingAUnitStopsNoUnrulyFollower(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n[Install]\nWantedBy=multi-user.target\n"
	myapp := func(extra string, enabled bool) types.Unit {
		return types.Unit{Name: "myapp.service", Contents: str(base + extra), Enabled: boolp(enabled)}
	}
	kubelet := func(dropin string) types.Unit {
		return unit("kubelet.service", nil, types.Dropin{Name: "20-x.conf", Contents: str(dropin)})
	}
	helper := unit("myapp-helper.service", str("[Unit]\nRequires=myapp.service\n[Service]\nExecStart=/usr/bin/myapp\n"))
	other := unit("other.service", str("[Unit]\nRequires=myapp.service\n[Service]\nExecStart=/usr/bin/myapp\n"))
	refused := map[string]struct {
		cur  []types.Unit
		want string
	}{
		"own RequiredBy=kubelet-dependencies.target": {[]types.Unit{myapp("RequiredBy=kubelet-dependencies.target\n", true)}, "[Install] RequiredBy=kubelet-dependencies.target: "},
		"own RequiredBy=sysinit.target":              {[]types.Unit{myapp("RequiredBy=sysinit.target\n", true)}, "[Install] RequiredBy=sysinit.target: "},
		"own RequiredBy, enabled unset":              {[]types.Unit{{Name: "myapp.service", Contents: str(base + "RequiredBy=kubelet.service\n")}}, "[Install] RequiredBy=kubelet.service: "},
		"own PropagatesStopTo=kubelet":               {[]types.Unit{myapp("[Unit]\nPropagatesStopTo=kubelet.service\n", false)}, "[Unit] PropagatesStopTo=kubelet.service: "},
		"kubelet Requires=":                          {[]types.Unit{myapp("", true), kubelet("[Unit]\nRequires=myapp.service\n")}, "kubelet.service has [Unit] Requires=myapp.service"},
		"kubelet Requisite=":                         {[]types.Unit{myapp("", true), kubelet("[Unit]\nRequisite=myapp.service\n")}, "kubelet.service has [Unit] Requisite=myapp.service"},
		"kubelet BindsTo=":                           {[]types.Unit{myapp("", true), kubelet("[Unit]\nBindsTo=crio.service myapp.service\n")}, "kubelet.service has [Unit] BindsTo=myapp.service"},
		"kubelet PartOf=":                            {[]types.Unit{myapp("", true), kubelet("[Unit]\nPartOf=myapp.service\n")}, "kubelet.service has [Unit] PartOf=myapp.service"},
		"kubelet StopPropagatedFrom=":                {[]types.Unit{myapp("", true), kubelet("[Unit]\nStopPropagatedFrom=myapp.service\n")}, "kubelet.service has [Unit] StopPropagatedFrom=myapp.service"},
		"an alias required":                          {[]types.Unit{myapp("Alias=myapp-alias.service\n", true), kubelet("[Unit]\nRequires=myapp-alias.service\n")}, "Requires=myapp-alias.service"},
		"a rule saying Reboot":                       {[]types.Unit{myapp("", true), other}, "other.service has [Unit] Requires=myapp.service"},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			var rest []types.Unit
			for _, u := range c.cur {
				if u.Name != "myapp.service" {
					rest = append(rest, u)
				}
			}
			p := ndpBuild(t, reachPolicy, withUnits(c.cur...), withUnits(rest...))
			refusedWith(t, p, "unit myapp.service: stopping it (it leaves the config): ", c.want)
			for _, ch := range p.Changes {
				if ch.Unit == "myapp.service" {
					assert.False(t, ch.Eligible)
				}
			}
		})
	}
	accepted := map[string][]types.Unit{
		"plain":                           {myapp("", true)},
		"a disabled unit's RequiredBy=":   {myapp("RequiredBy=kubelet-dependencies.target\n", false)},
		"RequiredBy= a ruled service":     {myapp("RequiredBy=myapp-helper.service\n", true)},
		"a ruled unit requires it":        {myapp("", true), helper},
		"kubelet only wants it, after it": {myapp("", true), kubelet("[Unit]\nWants=myapp.service\nAfter=myapp.service\n")},
		"kubelet requires another unit":   {myapp("", true), kubelet("[Unit]\nRequires=myapp-other.service\n")},
		"a masked unit's requirement":     {myapp("", true), {Name: "kubelet.service", Mask: boolp(true), Dropins: []types.Dropin{{Name: "20-x.conf", Contents: str("[Unit]\nRequires=myapp.service\n")}}}},
	}
	for name, us := range accepted {
		t.Run("accepted/"+name, func(t *testing.T) {
			var rest []types.Unit
			for _, u := range us {
				if u.Name != "myapp.service" {
					rest = append(rest, u)
				}
			}
			p := ndpBuild(t, reachPolicy, withUnits(us...), withUnits(rest...))
			require.True(t, p.Eligible, "%+v", p.Refused)
			assert.Contains(t, p.Changes[0].States, allowlist.ActionStop)
		})
	}
}

// Round-7a F4: systemd hands a unit's *Directory= directories, recursively, to its User=/Group=
// (systemd.exec(5)). A payload may not make a unit with such a directory over a path the node
// policy manages run as a user who is not root, nor give such a unit one; and a directory mode it
// sets gives no group or other write and no special bit. A User= without such a directory, a
// directory the policy does not manage, root, and modes up to 0755 stay accepted.
func TestPayloadHandsNoManagedPathToAUser(t *testing.T) {
	svc := func(lines ...string) string {
		return "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n" + strings.Join(lines, "\n") + "\n"
	}
	refused := map[string]struct{ cur, des, want string }{
		"User=core, StateDirectory=myapp (the adversary's)": {svc(), svc("User=core", "StateDirectory=myapp", "StateDirectoryMode=0777"), "[Service] StateDirectory=myapp: the unit would run as User=core"},
		"StateDirectory added, the node's User=core":        {svc("User=core"), svc("User=core", "StateDirectory=myapp"), "[Service] StateDirectory=myapp: the unit would run as User=core"},
		"User=core added, the node's StateDirectory":        {svc("StateDirectory=myapp"), svc("StateDirectory=myapp", "User=core"), "[Service] User=core: the unit would run as User=core with StateDirectory=myapp"},
		"User=1000":                       {svc("StateDirectory=myapp"), svc("StateDirectory=myapp", "User=1000"), "[Service] User=1000: "},
		"User= reset after core":          {svc("StateDirectory=myapp"), svc("StateDirectory=myapp", "User=core", "User="), "[Service] User=: the unit would run as User=core"},
		"Group=core, ConfigurationDir":    {svc(), svc("Group=core", "ConfigurationDirectory=myapp"), "[Service] ConfigurationDirectory=myapp: the unit would run as Group=core"},
		"the node's DynamicUser=yes":      {svc("DynamicUser=yes"), svc("DynamicUser=yes", "StateDirectory=myapp"), "[Service] StateDirectory=myapp: the unit would run as DynamicUser=yes"},
		"a symlink entry onto it":         {svc("User=core"), svc("User=core", "StateDirectory=myapp-data:myapp"), "StateDirectory=myapp-data:myapp"},
		"a subdirectory holding it":       {svc("User=core"), svc("User=core", "ConfigurationDirectory=myapp/conf.d"), "/etc/myapp/conf.d is, holds or lies under /etc/myapp/"},
		"in a dropin":                     {svc(), svc() + "[Service]\nUser=core\nStateDirectory=myapp\n", "[Service] StateDirectory=myapp: "},
		"StateDirectoryMode=0777":         {svc("StateDirectory=myapp"), svc("StateDirectory=myapp", "StateDirectoryMode=0777"), "[Service] StateDirectoryMode=0777: more than 0755"},
		"ConfigurationDirectoryMode=0777": {svc(), svc("ConfigurationDirectoryMode=0777"), "[Service] ConfigurationDirectoryMode=0777: more than 0755"},
		"RuntimeDirectoryMode=0770":       {svc(), svc("RuntimeDirectoryMode=0770"), "[Service] RuntimeDirectoryMode=0770: "},
		"LogsDirectoryMode=0757":          {svc(), svc("LogsDirectoryMode=0757"), "[Service] LogsDirectoryMode=0757: "},
		"CacheDirectoryMode=1755":         {svc(), svc("CacheDirectoryMode=1755"), "[Service] CacheDirectoryMode=1755: "},
		"StateDirectoryMode=2755":         {svc(), svc("StateDirectoryMode=2755"), "[Service] StateDirectoryMode=2755: "},
		"StateDirectoryMode=4755":         {svc(), svc("StateDirectoryMode=4755"), "[Service] StateDirectoryMode=4755: "},
		"StateDirectoryMode=777":          {svc(), svc("StateDirectoryMode=777"), "[Service] StateDirectoryMode=777: "},
		"StateDirectoryMode junk":         {svc(), svc("StateDirectoryMode=0x1ff"), "[Service] StateDirectoryMode=0x1ff: not an octal mode"},
		"0777 then an empty one":          {svc(), svc("StateDirectoryMode=0777", "StateDirectoryMode="), "[Service] StateDirectoryMode=0777: "},
		"0777 then 0755":                  {svc(), svc("StateDirectoryMode=0777", "StateDirectoryMode=0755"), "[Service] StateDirectoryMode=0777: "},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, reachPolicy, withUnits(unit("myapp.service", str(c.cur))), withUnits(unit("myapp.service", str(c.des))))
			refusedWith(t, p, "unit myapp.service: ", c.want)
		})
		t.Run("new unit/"+name, func(t *testing.T) {
			p := ndpBuild(t, reachPolicy, plain(), withUnits(unit("myapp.service", str(c.des))))
			refusedWith(t, p, "unit myapp.service: ")
		})
	}
	accepted := map[string]struct{ cur, des string }{
		"StateDirectory as root":        {svc(), svc("StateDirectory=myapp", "StateDirectoryMode=0700")},
		"User=root":                     {svc(), svc("User=root", "Group=root", "StateDirectory=myapp")},
		"User=0":                        {svc(), svc("User=0", "StateDirectory=myapp")},
		"User=core without directories": {svc(), svc("User=core", "Group=core")},
		"User=core, unmanaged dirs":     {svc(), svc("User=core", "CacheDirectory=myapp", "LogsDirectory=myapp", "RuntimeDirectory=myapp", "StateDirectory=myapp-db")},
		"a sibling of the managed file": {svc(), svc("User=core", "StateDirectory=myapp/db")},
		"DynamicUser=no":                {svc("DynamicUser=no"), svc("DynamicUser=no", "StateDirectory=myapp")},
		"modes up to 0755":              {svc(), svc("StateDirectoryMode=0755", "RuntimeDirectoryMode=0700", "LogsDirectoryMode=750", "CacheDirectoryMode=0", "ConfigurationDirectoryMode=0555")},
		"the node's own mode kept":      {svc("RuntimeDirectoryMode=0775"), svc("RuntimeDirectoryMode=0775", "Restart=always")},
		"the node's own mode, then one": {svc("RuntimeDirectoryMode=0775"), svc("RuntimeDirectoryMode=0775", "RuntimeDirectoryMode=0700")},
		"the node's own user and dir":   {svc("User=core", "StateDirectory=myapp"), svc("User=core", "StateDirectory=myapp", "Restart=always")},
	}
	for name, c := range accepted {
		t.Run("accepted/"+name, func(t *testing.T) {
			p := ndpBuild(t, reachPolicy, withUnits(unit("myapp.service", str(c.cur))), withUnits(unit("myapp.service", str(c.des))))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
}
