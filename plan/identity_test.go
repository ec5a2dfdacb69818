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
)

// Issue 27, class 2, in the plan: a unit file (or dropin) a payload carries that would make a job on
// the unit stop the system is refused, under a unit rule and for a unit a file rule restarts. The
// executor refuses the same units from their properties over D-Bus (actions TestExecutorJudges…).
func TestPlanJudgesUnitsByWhatTheyDo(t *testing.T) {
	base := "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := withUnits(unit("myapp.service", str(base)))
	bad := map[string]string{
		"SuccessAction":         "[Unit]\nSuccessAction=reboot-force\n[Service]\nExecStart=/bin/true\n",
		"FailureAction":         "[Unit]\nFailureAction=poweroff\n[Service]\nExecStart=/bin/false\n",
		"JobTimeoutAction":      "[Unit]\nJobTimeoutAction=reboot\n[Service]\nExecStart=/bin/true\n",
		"Requires runlevel6":    "[Unit]\nRequires=runlevel6.target\n[Service]\nExecStart=/bin/true\n",
		"Wants continued line":  "[Unit]\nWants=network.target \\\n  suspend.target\n[Service]\nExecStart=/bin/true\n",
		"OnFailure emergency":   "[Unit]\nOnFailure=emergency.target\n[Service]\nExecStart=/bin/true\n",
		"After shutdown":        "[Unit]\nDefaultDependencies=no\nAfter=shutdown.target umount.target\n[Service]\nExecStart=/bin/true\n",
		"Conflicts kubelet":     "[Unit]\nConflicts=kubelet.service\n[Service]\nExecStart=/bin/true\n",
		"ExecStart reboot":      "[Service]\nExecStart=-/usr/bin/systemctl reboot\n",
		"ExecStartPost halt":    "[Service]\nExecStart=/bin/true\nExecStartPost=/usr/sbin/halt -f\n",
		"ExecReload isolate":    "[Service]\nExecStart=/bin/true\nExecReload=systemctl isolate emergency.target\n",
		"Alias to exit service": "[Service]\nExecStart=/bin/true\n[Install]\nAlias=systemd-exit.service\n",
	}
	for name, contents := range bad {
		t.Run("unit rule/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(contents))))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, "unit myapp.service")
			assert.Empty(t, p.Actions)
		})
		t.Run("dropin/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(base), types.Dropin{Name: "50-x.conf", Contents: str(contents)})))
			assert.False(t, p.Eligible)
		})
		t.Run("restarted by a file rule/"+name, func(t *testing.T) {
			// The unit itself is unchanged; a file rule's restart would run it.
			c := withUnits(unit("myapp.service", str(contents)))
			d := withUnits(unit("myapp.service", str(contents))).File("/etc/myapp/restart.conf", []byte("x"), 0o644)
			p := ndpBuild(t, ndpPolicy, c, d)
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Equal(t, "myapp.service", p.Refused[len(p.Refused)-1].Unit)
		})
	}
	// What an ordinary unit says is fine: a reset list, a dropin, the default dependencies spelled out.
	good := "[Unit]\nRequires=\nWants=network-online.target\nAfter=network-online.target\nConflicts=shutdown.target\n" +
		"Before=shutdown.target\n[Service]\nExecStart=/usr/bin/myapp --reboot-policy=never\nExecReload=/bin/kill -HUP $MAINPID\n"
	p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(good))))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}

// A policy built in code (not through ParsePolicy) still never gets an unsafe unit acted on: the
// plan checks every action's unit too.
func TestPlanNeverActsOnAnUnsafeUnit(t *testing.T) {
	for _, u := range []string{"runlevel6.target", "systemd-suspend.service", "machine-config-daemon-firstboot.service", "user@0.service", "myapp@.service"} {
		pol := allowlist.Default()
		pol.Rules = append(pol.Rules, allowlist.Rule{Path: "/etc/myapp/a.conf", Action: allowlist.ActionRestart, Services: []string{u}})
		pol.AllowedUnits = append(pol.AllowedUnits, u)
		c, err := diff.Decode(plain().JSON())
		require.NoError(t, err)
		d, err := diff.Decode(plain().File("/etc/myapp/a.conf", []byte("x"), 0o644).JSON())
		require.NoError(t, err)
		p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol})
		require.NoError(t, err)
		assert.False(t, p.Eligible, u)
		require.NotEmpty(t, p.Refused, u)
		assert.Equal(t, u, p.Refused[0].Unit)
		assert.Empty(t, p.Actions, u)
	}
}

// A unit file is judged by what it makes the unit, both ways: a unit ordered into the system's stop
// (not stopped by it) is a job of the stop and refused; the early-boot shape RHCOS's own units have
// (DefaultDependencies=no, Conflicts= and Before=shutdown.target) passes.
func TestPlanJudgesShutdownOrderingBothWays(t *testing.T) {
	base := "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := withUnits(unit("myapp.service", str(base)))
	for name, contents := range map[string]string{
		"before the poweroff service":  "[Unit]\nDefaultDependencies=no\nBefore=systemd-poweroff.service\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=poweroff.target\n",
		"before shutdown, not stopped": "[Unit]\nDefaultDependencies=no\nBefore=shutdown.target\n[Service]\nExecStart=/bin/true\n",
		"before final, in a dropin":    "[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/bin/true\n",
	} {
		des := withUnits(unit("myapp.service", str(contents)))
		if name == "before final, in a dropin" {
			des = withUnits(unit("myapp.service", str(contents), types.Dropin{Name: "90-late.conf", Contents: str("[Unit]\nBefore=final.target\n")}))
		}
		p := ndpBuild(t, ndpPolicy, cur, des)
		assert.False(t, p.Eligible, name)
		if assert.NotEmpty(t, p.Refused, name) {
			assert.Contains(t, p.Refused[0].Reason, "Before=", name)
		}
	}
	for name, contents := range map[string]string{
		"early boot, stopped at shutdown": "[Unit]\nDefaultDependencies=no\nConflicts=shutdown.target\nBefore=sysinit.target shutdown.target\n[Service]\nExecStart=/sbin/auditd\n",
		"default dependencies":            "[Unit]\nBefore=shutdown.target kubelet.service\n[Service]\nExecStart=/usr/bin/myapp --shutdown-grace=30s\n[Install]\nWantedBy=multi-user.target\n",
	} {
		p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(contents))))
		assert.True(t, p.Eligible, "%s: %+v", name, p.Refused)
	}
}

// A unit file's commands are judged at a bounded cost (issue 27, class 1): a continued ExecStart=
// of more words than can be judged is refused, naming the unit, as the payload's other parsers
// refuse what they cannot bound.
func TestPlanRefusesUnitCommandsTooLongToJudge(t *testing.T) {
	cur := withUnits(unit("myapp.service", str("[Service]\nExecStart=/usr/bin/myapp\n")))
	line := "[Service]\nExecStart=/usr/bin/env " + strings.Repeat("a \\\n", allowlist.MaxExecWords) + "/usr/bin/myapp\n"
	p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(line))))
	assert.False(t, p.Eligible)
	if assert.NotEmpty(t, p.Refused) {
		assert.Contains(t, p.Refused[0].Reason, "unit myapp.service")
		assert.Contains(t, p.Refused[0].Reason, "too long to judge")
	}
	// (assignments: env's first word without "=" is its command, which a changed line holds to the
	// programs it may run, issue 27 class 3)
	ok := "[Service]\nExecStart=/usr/bin/env " + strings.Repeat("a=1 \\\n", 1000) + "/usr/bin/myapp\n"
	p = ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(ok))))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
