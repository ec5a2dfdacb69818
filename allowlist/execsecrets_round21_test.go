package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r21 a: a changed line read secrets by spellings and places the read side did not
// resolve, and by names the list lacked. Each is refused now; the honest lines beside them stay
// accepted.
func TestRound21SecretsBySpellingAndPlace(t *testing.T) {
	refused := []struct {
		lines []string
		why   string
	}{
		// 01, 02, 09: the same secrets under other names
		{[]string{`ExecStart=/bin/tar -cf /tmp/ra.tar /var/lib/refresh-agent`}, "/var/lib/refresh-agent"},
		{[]string{`ExecStart=/bin/sh -c 'cp -RL /var/lib/refresh-agent /tmp/ra-copy'`}, "/var/lib/refresh-agent"},
		{[]string{`ExecStart=/bin/cat /etc/mcd-currentconfig.json`}, "/etc/mcd-currentconfig.json"},
		{[]string{`ExecStart=/bin/cat /etc/mcs-machine-config-content.json`}, "/etc/mcs-machine-config-content.json"},
		{[]string{`ExecStart=/bin/cat /etc/ignition-machine-config-encapsulated.json`}, "/etc/ignition-machine-config-encapsulated.json"},
		{[]string{`ExecStart=/bin/sh -c 'cat /etc/machine-config-daemon/currentconfig'`}, "/etc/machine-config-daemon"},
		{[]string{`ExecStart=/bin/cat /etc/mco/proxy.env`}, "/etc/mco/proxy.env"},
		{[]string{`ExecStart=/bin/cat /etc/kubernetes/cloud.conf`}, "/etc/kubernetes/cloud.conf"},
		// 03: ANSI-C and locale quoting
		{[]string{`ExecStart=/bin/bash -c "cat $'/etc/sha\\x64ow' > /tmp/shadow"`}, "ANSI-C"},
		{[]string{`ExecStart=/bin/bash -c "grep -q $'^root:\\x24' $'/etc/sha\\x64ow'"`}, "ANSI-C"},
		{[]string{`ExecStart=/bin/bash -c 'head -c 1M $"/proc/kcore"'`}, "ANSI-C"},
		// 04: brace sequences and tilde forms
		{[]string{`ExecStart=/bin/bash -c 'cat /etc/sha{c..e}ow > /tmp/shadow'`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/bash -c 'cat /var/lib/kubelet/config.jso{m..o}'`}, "/var/lib/kubelet/config.json"},
		{[]string{`ExecStart=/bin/bash -c 'tar -cf /tmp/kubelet.tar /var/lib/kube{l..l}et'`}, "/var/lib/kubelet"},
		{[]string{`ExecStart=/bin/bash -c 'cd /etc && cat ~+/shadow > /tmp/shadow2'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/bash -c 'cat ~root/.bash_history > /tmp/h'`}, "a secret of the node"},
		// 05, 06: relative paths in dd's if= and in $(<F), after a cd
		{[]string{`ExecStart=/bin/bash -c 'cd /etc; dd if=shadow of=/tmp/x'`}, "/etc/shadow"},
		{[]string{`ExecStart=/usr/bin/env -C /etc dd if=gshadow of=/tmp/x`}, "/etc/gshadow"},
		{[]string{`ExecStart=/bin/bash -c 'cd /var/lib/kubelet; echo "$(<config.json)" > /tmp/x'`}, "/var/lib/kubelet/config.json"},
		{[]string{`ExecStart=/bin/bash -c 'cd /nonexistent; cat etc/shadow'`}, "/etc/shadow"},
		// 07: WorkingDirectory=~ is root's home
		{[]string{"WorkingDirectory=~", `ExecStart=/bin/tar -cf /tmp/x .`}, "a secret of the node"},
		{[]string{"WorkingDirectory=~", `ExecStart=/bin/cat .bash_history`}, "a secret of the node"},
		// 08: each Exec line starts in /, whatever an earlier one changed to
		{[]string{`ExecStart=/bin/bash -c 'cd /tmp'`, `ExecStart=/bin/cat etc/shadow`}, "/etc/shadow"},
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.lines...)
		if assert.Error(t, err, "%v", c.lines) {
			assert.Contains(t, err.Error(), c.why, "%v", c.lines)
		}
	}
	for _, l := range []string{
		`ExecStart=/bin/sh -c 'cd /var/lib/myapp && tar -cf /tmp/x.tar .'`,
		`ExecStart=/bin/sh -c 'cd /var/lib/myapp && dd if=state of=/var/lib/myapp/state.bak'`,
		`ExecStart=/usr/bin/grep -r root: /etc/myapp`,
		`ExecStart=/bin/sh -c 'for i in {1..3}; do echo $i; done'`,
		`ExecStart=/bin/sh -c 'echo /var/lib/myapp/{a..c}'`,
		`ExecStart=/usr/bin/dd if=/dev/zero of=/var/lib/myapp/blob bs=1M count=1`,
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}
