package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary round 14 (c/04), through the plan: a changed line that attaches to, signals or
// re-schedules PID 1 or an arbitrary process is refused by class, naming the unit, the line and
// why, in a unit the payload adds and in a changed line of the node's own unit, though the node
// policy's unitPrograms grants the unit the program (or the unit already runs it).
func TestPlanProcessActorsAreRefusedThoughGranted(t *testing.T) {
	const rule = "nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"
	granted := rule + "unitPrograms:\n  myapp.service: [/usr/bin/strace, /usr/bin/renice, /usr/bin/nsenter, /usr/bin/udevadm, /usr/bin/myapp]\n"
	svcOf := func(pre string) string {
		return "[Unit]\nDescription=my app\n[Service]\nExecStartPre=" + pre + "\nExecStart=/usr/bin/myapp\n"
	}
	// The node's unit already runs each program, so it is its own too.
	node := withUnits(unit("myapp.service", str("[Unit]\nDescription=my app\n[Service]\n"+
		"ExecStartPre=/usr/bin/strace -o /tmp/myapp.trace /usr/bin/true\nExecStartPre=/usr/bin/udevadm settle\n"+
		"ExecStartPost=/usr/bin/renice -n 5 -p $MAINPID\nExecStartPre=/usr/bin/nsenter -n /usr/bin/true\nExecStart=/usr/bin/myapp\n")))
	cases := []struct{ pre, why string }{
		{"/usr/bin/strace -p 1 -e inject=all:signal=INT", "strace attaches to PID 1 and injects signals into it: it can reboot the node"},
		{"/usr/bin/strace -f --attach=4242", "strace attaches to process 4242"},
		{"/usr/bin/renice -n 19 -p 1", "renice changes the priority of PID 1"},
		{"/usr/bin/nsenter -t 1 -m /usr/bin/true", "nsenter joins the namespaces of PID 1"},
		{"/usr/bin/udevadm trigger --action=remove", "udevadm trigger --action=remove: replays an event other than add or change"},
	}
	for _, c := range cases {
		for _, m := range []struct {
			name string
			cur  bool
		}{{"a unit the payload adds", false}, {"a changed line of the node's unit", true}} {
			t.Run(m.name+"/"+c.pre, func(t *testing.T) {
				cur := plain()
				if m.cur {
					cur = node
				}
				p := ndpBuild(t, granted, cur, withUnits(unit("myapp.service", str(svcOf(c.pre)))))
				if assert.False(t, p.Eligible) && assert.NotEmpty(t, p.Refused) {
					r := p.Refused[0].Reason
					assert.Contains(t, r, "unit myapp.service: ExecStartPre="+c.pre+": ")
					assert.Contains(t, r, c.why)
					assert.Contains(t, r, "no unitPrograms grant lifts that")
				}
			})
		}
	}
	// The node's own lines, and a changed line that traces its own command, stay.
	p := ndpBuild(t, granted, node, withUnits(unit("myapp.service", str(svcOf("/usr/bin/strace -f -o /tmp/myapp.trace /usr/bin/myapp --check")))))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
