package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r22 a/02: bash -O cdable_vars makes cd X change to $X; the judge refused shopt -s
// cdable_vars in a script but not the invocation option, and read a cluster's o and O as taking
// no word (bash -cO NAME 'script' ran a script the judge never read, -Oe nullglob slipped the glob
// rule). Invocation shopt options are judged as the shopt builtin is: in a changed line any is
// refused, in every line those that change patterns, cd or what runs; set options (-o pipefail,
// -euo pipefail) stay accepted.
func TestRound22ShellInvocationShoptOptions(t *testing.T) {
	refusedEverywhere := []struct{ line, why string }{
		{`ExecStart=/bin/bash -O cdable_vars -c "cd X && cat shadow > /tmp/myapp-x"`, "cdable_vars"},
		{`ExecStart=/bin/bash +O cdable_vars -c "cd /tmp"`, "cdable_vars"},
		{`ExecStart=/bin/bash -eO cdable_vars -c "cd X && cat shadow"`, "cdable_vars"},
		{`ExecStart=/bin/bash -cO cdable_vars "cd X && cat shadow"`, "cdable_vars"},
		{`ExecStart=/bin/bash -cO nullglob "/usr/sbin/reboot"`, "nullglob"},
		{`ExecStart=/bin/bash --login -O cdable_vars -c "cd X && cat shadow"`, "cdable_vars"},
		{`ExecStart=/bin/bash -c -O cdable_vars "cd X && cat shadow"`, "cdable_vars"},
		{`ExecStart=/bin/bash -Oe nullglob -c "cat /etc/os-release"`, "nullglob"},
		{`ExecStart=/bin/bash -O expand_aliases -c "cd /tmp"`, "expand_aliases"},
		{`ExecStart=/bin/bash -O extdebug -c "cd /tmp"`, "extdebug"},
		{`ExecStart=/bin/bash -O extglob -c "cd /tmp"`, "extglob"},
		{`ExecStart=/bin/bash -co vi "/usr/sbin/reboot"`, "reboots"},
		{`ExecStart=/bin/bash -c "shopt -s cdable_vars; cd X && cat shadow"`, "cdable_vars"},
		{`ExecStart=/bin/bash -c "shopt -qs cdable_vars; cd /tmp"`, "cdable_vars"},
	}
	for _, c := range refusedEverywhere {
		for _, changed := range []bool{true, false} {
			err := strictUnit(t, changed, "Environment=X=/etc", c.line)
			if assert.Error(t, err, "changed %v: %s", changed, c.line) {
				assert.Contains(t, err.Error(), c.why, c.line)
			}
		}
	}
	// any shopt option, in a changed line, as shopt in its script
	for _, l := range []string{
		`ExecStart=/bin/bash -O checkwinsize -c "cat /etc/os-release"`,
		`ExecStart=/bin/bash -xO lastpipe -c "cat /etc/os-release"`,
	} {
		assert.Error(t, strictUnit(t, true, l), l)
		assert.NoError(t, strictUnit(t, false, l), l)
	}
	for _, l := range []string{
		`ExecStart=/bin/bash -c "cd /var/lib/myapp && cat state"`,
		`ExecStart=/bin/bash -o pipefail -c "cat /etc/os-release | head -n 1"`,
		`ExecStart=/bin/bash -eo pipefail -c "cat /etc/os-release | head -n 1"`,
		`ExecStart=/bin/bash -euo pipefail -c "cat /etc/os-release | head -n 1"`,
		`ExecStart=/bin/bash -e -u -o pipefail -c "cat /etc/os-release"`,
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}
