package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r22 a/03: inside `…` a backslash before ` starts a substitution nested in it (bash's
// old-style command substitution), whose command the judge read as a word of the outer one: any
// program (reboot, systemctl, bash -c $P) ran unjudged. The text the shell runs in `…` is judged as
// a script of its own now, at every depth; plain backquotes and escaped ones that stay literal are
// accepted.
func TestRound22NestedBackquotes(t *testing.T) {
	refused := []struct {
		lines []string
		why   string
	}{
		{[]string{"Environment=P=id>/tmp/myapp-pwned", "ExecStart=/bin/bash -c 'echo `echo \\\\`bash -c $$P\\\\``'"}, "$P"},
		{[]string{"ExecStart=/bin/sh -c 'echo \"`echo \\\\`/usr/sbin/reboot\\\\``\"'"}, "reboots"},
		{[]string{"ExecStart=/bin/sh -c 'echo \"`: \\\\`systemctl start debug-shell.service\\\\``\"'"}, "controls the service manager"},
		{[]string{"ExecStart=/bin/sh -c 'echo `echo \\\\`/usr/sbin/reboot\\\\``'"}, "reboots"},
		// three deep: \\\` in the outer text is \` in the middle one
		{[]string{"ExecStart=/bin/sh -c 'echo `echo \\\\`echo \\\\\\\\\\\\`/usr/sbin/reboot\\\\\\\\\\\\`\\\\``'"}, "reboots"},
		// a double-quoted string inside `…`, whose \` the shell unescapes first
		{[]string{"ExecStart=/bin/sh -c 'echo `echo \"\\\\`/usr/sbin/reboot\\\\`\"`'"}, "reboots"},
		// \$ inside `…` is an expansion the shell performs
		{[]string{"Environment=P=/usr/sbin/reboot", "ExecStart=/bin/sh -c 'echo `\\\\$$P`'"}, "$P"},
		// inside double quotes, after an escaped ` that stays literal
		{[]string{"ExecStart=/bin/sh -c 'echo \"\\\\`x\\\\``/usr/sbin/reboot`\"'"}, "reboots"},
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.lines...)
		if assert.Error(t, err, "%v", c.lines) {
			assert.Contains(t, err.Error(), c.why, "%v", c.lines)
		}
	}
	for _, l := range []string{
		"ExecStart=/bin/sh -c 'echo `date`'",
		"ExecStart=/bin/sh -c 'echo \"now: `date`\"'",
		"ExecStart=/bin/sh -c 'echo \\\\`date\\\\`'",
		"ExecStart=/bin/sh -c 'echo \"\\\\`date\\\\`\"'",
		"ExecStart=/bin/sh -c 'echo `echo \\\\`date\\\\``'",
		"ExecStart=/bin/sh -c 'echo `echo \\\\\\\\\\\\`/usr/sbin/reboot\\\\\\\\\\\\``'", // \\\` is a literal ` in the middle text
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}
