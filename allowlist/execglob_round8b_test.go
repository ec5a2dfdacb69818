package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 8 (b): a pattern or a brace expression names every name the shell may make of it, names
// the judge cannot list among them: /proc/s*q-t* is /proc/sysrq-trigger, /pr*/kcore is
// /proc/kcore, /s{y,}s/power/state is /sys/power/state. Each is judged as that name by the reach
// rules, in every line (the node's own included); shopt and bash -O options that change what a
// pattern matches are refused. Patterns that can match no denied name stay accepted.
func TestRound8PatternsNameWhatTheyMayMatch(t *testing.T) {
	for _, l := range []string{
		`ExecStart=/bin/bash -c 'echo b > /proc/s*q-t*'`,
		`ExecStart=/bin/bash -c 'echo b > /proc/sy{s,}rq-trigger'`,
		`ExecStart=/bin/bash -c 'echo mem > /s{y,}s/power/state'`,
		`ExecStart=/bin/bash -c 'tee /s{y,}s/power/state'`,
		`ExecStart=/bin/bash -c 'echo x > /de{v,}/sda'`,
		`ExecStart=/bin/bash -c 'dd if=/etc/myapp/x of=/de{v,}/sda'`,
		`ExecStart=/bin/bash -c 'cat /proc/kc* > /run/myapp/t'`,
		`ExecStart=/bin/bash -c 'cat /pr*/kcore > /run/myapp/t'`,
		`ExecStart=/bin/bash -c 'cat /proc/[k]core > /run/myapp/t'`,
		`ExecStart=/bin/bash -c 'cat /proc/[!x]core > /run/myapp/t'`,
		`ExecStart=/bin/bash -c 'cat /proc/[[:alpha:]]core > /run/myapp/t'`,
		`ExecStart=/usr/bin/cat /proc/kc*`,
		`ExecStart=/bin/bash -c 'cat /proc/1/r*/etc/shadow > /run/myapp/t'`,
		`ExecStart=/bin/bash -c 'cat /proc/1/roo{t,}/etc/shadow > /run/myapp/t'`,
		`ExecStart=/bin/bash -c 'cat /dev/watchdo?'`,
		`ExecStart=/bin/bash -c 'cat /dev/watchdo{g,}'`,
		`ExecStart=/bin/bash -c 'nc -U /run/systemd/priv*'`,
		`ExecStart=/bin/bash -c 'nc -U /var/ru?/systemd/private'`,
		`ExecStart=/bin/bash -c 'rm -rf /etc/systemd/sys*/x'`,
		`ExecStart=/bin/bash -c 'rm -rf /etc/system?/system/x.service'`,
		`ExecStart=/bin/bash -c 'cp /etc/myapp/x /etc/systemd/sys{tem,}/x.service'`,
		"ExecStart=/bin/bash -c 'shopt -s extglob\ncat /proc/@(kcore) > /run/myapp/x'",
		"ExecStart=/bin/bash -c 'shopt -s nocaseglob\ncat /PROC/KCOR? > /run/myapp/x'",
		"ExecStart=/bin/bash -c 'shopt -s globstar\ncat /**/kcore > /run/myapp/x'",
		`ExecStart=/bin/bash -c 'shopt -s nullglob; cd /run/myapp/x* && rm -rf .ssh'`,
		`ExecStart=/bin/bash -c 'shopt -u globskipdots; rm -rf /tmp/x'`,
		`ExecStart=/bin/bash -O extglob -c 'cat /proc/kcore'`,
		`ExecStart=/bin/bash -O nocaseglob -c 'rm -f /run/myapp/x'`,
	} {
		for _, changed := range []bool{true, false} {
			err := strictUnit(t, changed, l)
			require.Error(t, err, l)
			assert.Regexp(t, `may match|SysRq|reaches /|writes /|socket|patterns match|a path with "\.\."`, err.Error(), l)
		}
	}
	for _, l := range []string{
		`ExecStart=/bin/bash -c 'rm -rf /run/myapp/*'`,
		`ExecStart=/bin/bash -c 'rm -f /run/myapp/{a,b}.sock'`,
		`ExecStart=/bin/bash -c 'cat /run/myapp/*.conf > /run/myapp/all'`,
		`ExecStart=/usr/bin/rm -f /run/myapp/*.pid /var/lib/myapp/x?.tmp`,
		`ExecStart=/bin/bash -c 'cp /etc/myapp/{a,b}.conf /run/myapp/'`,
		`ExecStart=/bin/bash -c 'rm -f /tmp/myapp.? /var/tmp/x*'`,
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}
