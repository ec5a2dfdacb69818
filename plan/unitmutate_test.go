package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 27 class 3: a changed Exec line of a unit the payload changes under a unit rule changes
// the node's files only in the unit's own places, or where the node's current definition of the
// same unit already changes them (the plan reads that from the current unit, as its programs).
func TestChangedLinesChangeOnlyTheUnitsOwnFiles(t *testing.T) {
	unitWith := func(exec string) string {
		return "[Unit]\nDescription=x\n[Service]\nExecStart=/usr/bin/myapp\n" + exec + "\n[Install]\nWantedBy=multi-user.target\n"
	}
	cur := withUnits(unit("myapp.service", str(unitWith("ExecStartPre=/usr/bin/rm -f /var/lib/other/x"))))
	for exec, why := range map[string]string{
		"ExecStartPre=/usr/bin/rm -rf /var/lib/kubelet":            "/var/lib/kubelet",
		"ExecStartPre=/usr/bin/chmod -R 777 /etc":                  "chmod changes /etc",
		"ExecStartPre=/bin/sh -c 'echo x >> /etc/hosts'":           "the shell changes /etc/hosts",
		"ExecStartPre=/usr/bin/rm -f /var/lib/other/y":             "rm changes /var/lib/other/y",
		"ExecStartPre=/usr/bin/mkdir -p /etc/cron.d":               "/etc/cron.d",
		"ExecStartPre=/usr/bin/hostname evil":                      "name",
		"ExecStartPre=/usr/bin/xargs -a /etc/myapp/app.conf rm -f": "xargs hands the words of its input to rm",
	} {
		p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(unitWith(exec)))))
		if assert.False(t, p.Eligible, exec) && assert.NotEmpty(t, p.Refused, exec) {
			assert.Contains(t, p.Refused[0].Reason, "unit myapp.service: ExecStartPre=", exec)
			assert.Contains(t, p.Refused[0].Reason, why, exec)
		}
	}
	for _, exec := range []string{
		"ExecStartPre=/usr/bin/rm -f /var/lib/other/x", // the node's unit already removes it
		"ExecStartPre=/usr/bin/rm -f /run/myapp/*.pid",
		"ExecStartPre=/usr/bin/mkdir -p /var/lib/myapp /var/log/myapp",
		"ExecStartPre=/bin/sh -c 'echo x > /run/myapp/state; cp /etc/myapp/a /tmp/b'",
		"ExecStartPre=/usr/bin/sed -i s/a/b/ /etc/myapp/app.conf",
	} {
		p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(unitWith(exec)))))
		assert.True(t, p.Eligible, "%s: %+v", exec, p.Refused)
	}
	// The same line the node's unit already has is unchanged: the node's own.
	same := withUnits(unit("myapp.service", str(unitWith("ExecStartPre=/usr/bin/rm -f /var/lib/other/x\nExecStartPre=/usr/bin/chmod 0644 /etc/hosts"))))
	changed := withUnits(unit("myapp.service", str(unitWith("ExecStartPre=/usr/bin/rm -f /var/lib/other/x\nExecStartPre=/usr/bin/chmod 0644 /etc/hosts\nRestartSec=5"))))
	p := ndpBuild(t, ndpPolicy, same, changed)
	assert.True(t, p.Eligible, "%+v", p.Refused)
	// An added unit has no own writes: only its own places.
	p = ndpBuild(t, ndpPolicy, plain(), withUnits(unit("myapp.service", str(unitWith("ExecStartPre=/usr/bin/rm -f /var/lib/other/x")))))
	assert.False(t, p.Eligible)
}
