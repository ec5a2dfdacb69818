package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 27 class 3, through the plan: a changed Exec line runs only the programs the judge models,
// those the node's current definition of the unit runs (the plan reads them from the current
// payload), and those the node policy's unitPrograms grants the unit. A unit the payload adds has
// no own programs.
func TestPlanChangedLinesRunOnlyOwnOrGrantedPrograms(t *testing.T) {
	const rule = "nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"
	granted := rule + "unitPrograms:\n  myapp.service: [/usr/bin/foo]\n"
	svcOf := func(lines string) string { return "[Unit]\nDescription=my app\n[Service]\n" + lines + "\n" }
	node := withUnits(unit("myapp.service", str(svcOf("ExecStart=/usr/bin/myapp --v=2"))))
	cases := []struct {
		name, pol string
		cur       bool // the node runs myapp.service as node defines it
		exec      string
		refused   string // "" when eligible
	}{
		{"own program, new flags", rule, true, "ExecStart=/usr/bin/myapp --v=4", ""},
		{"own program by name", rule, true, "ExecStart=myapp --v=4", ""},
		{"own program behind nice", rule, true, "ExecStart=/usr/bin/nice -n 5 /usr/bin/myapp --v=4", ""},
		{"own program in a script", rule, true, "ExecStart=/bin/sh -c 'exec /usr/bin/myapp --v=4'", ""},
		{"another program", rule, true, "ExecStart=/usr/bin/foo --v=4", "runs /usr/bin/foo: a changed line may run only"},
		{"another program behind env", rule, true, "ExecStart=/usr/bin/env /usr/bin/foo", "runs /usr/bin/foo"},
		{"another program by find", rule, true, "ExecStart=/usr/bin/find /var/lib/myapp -exec /usr/bin/foo {} +", "runs /usr/bin/foo"},
		{"an unmodeled wrapper of the own program", rule, true, "ExecStart=/usr/bin/setarch x86_64 /usr/bin/myapp", "setarch"},
		{"granted program", granted, true, "ExecStart=/usr/bin/foo --v=4", ""},
		{"granted program by name behind timeout", granted, true, "ExecStart=/usr/bin/timeout 5 foo", ""},
		{"added unit, unmodeled program", rule, false, "ExecStart=/usr/bin/myapp --v=4", "runs /usr/bin/myapp: a changed line may run only"},
		{"added unit, granted program", granted, false, "ExecStart=/usr/bin/foo --v=4", ""},
		{"added unit, modeled programs only", rule, false, "ExecStart=/bin/sh -c 'mkdir -p /run/myapp && echo ok > /run/myapp/x'", ""},
		{"granted, still judged by class", granted, true, "ExecStart=/usr/bin/foo --exec=/usr/sbin/reboot", "reboots"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := plain()
			if c.cur {
				cur = node
			}
			p := ndpBuild(t, c.pol, cur, withUnits(unit("myapp.service", str(svcOf(c.exec)))))
			if c.refused == "" {
				assert.True(t, p.Eligible, "%+v", p.Refused)
				return
			}
			if assert.False(t, p.Eligible) && assert.NotEmpty(t, p.Refused) {
				assert.Contains(t, p.Refused[0].Reason, "unit myapp.service: ExecStart=")
				assert.Contains(t, p.Refused[0].Reason, c.refused)
			}
		})
	}
	// A masked unit runs nothing: no own programs.
	masked := unit("myapp.service", str(svcOf("ExecStart=/usr/bin/myapp --v=2")))
	masked.Mask = boolp(true)
	p := ndpBuild(t, rule, withUnits(masked), withUnits(unit("myapp.service", str(svcOf("ExecStart=/usr/bin/myapp --v=4")))))
	assert.False(t, p.Eligible)
}
