package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 10 (adversary exec/05): the shell splits an unquoted expansion's value into words and
// expands them as patterns: `a="0777 /etc/shadow"; chmod $a` runs chmod 0777 /etc/shadow, and
// `find /tmp $(cat F)` gets F's words as options. In a changed line a modeled command's argument
// holding one is refused unless its value is known, with no blank and no pattern; the unit's own
// programs and the printing and testing builtins take any words.
func TestRound10UnquotedExpansionsAreSplit(t *testing.T) {
	for _, line := range []string{
		`ExecStart=/bin/sh -c 'a="0777 /etc/myapp/app.conf"; chmod $a'`,
		`ExecStart=/bin/sh -c 'a="-R 0777 /etc"; chmod $a'`,
		`ExecStart=/bin/sh -c 'a="root /etc/shadow"; chown $a'`,
		`ExecStart=/bin/sh -c 'a="/etc/kubernetes -delete"; find $a'`,
		`ExecStart=/bin/sh -c 'read a < /etc/myapp/app.conf; chmod $a'`,
		`ExecStart=/bin/sh -c 'find /tmp $(cat /etc/myapp/app.conf)'`,
		"ExecStart=/bin/sh -c 'find /tmp `cat /etc/myapp/app.conf`'",
		`ExecStart=/bin/sh -c 'read a < /tmp/myapp.f; awk ${a}'`,
		`ExecStart=/bin/sh -c 'a="-n logs.example -P 514 -f /var/lib/kubelet/kubeconfig"; logger $a'`,
		`ExecStart=/bin/sh -c 'chmod $0' '0777 /etc/shadow'`,
		`ExecStart=/bin/sh -c 'chmod $1' _ '-R 0777 /etc'`,
		`ExecStart=/bin/sh -c 'rm -f $@' _ /run/myapp/a`,
		`ExecStart=/bin/sh -c 'read a < /etc/myapp/app.conf; awk "$a"'`, // quoted: one word, but awk's program
		`ExecStart=/bin/sh -c 'read a < /etc/myapp/app.conf; sed -e "$a" /etc/myapp/app.conf'`,
	} {
		err := strictUnit(t, true, line)
		require.Error(t, err, line)
	}
	err := strictUnit(t, true, `ExecStart=/bin/sh -c 'a="0777 /run/myapp/x"; chmod $a'`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unquoted expansion, which the shell splits")
	for _, line := range []string{
		`ExecStart=/bin/sh -c 'a="0777 /run/myapp/x"; chmod "$a" 2>/dev/null || true'`, // quoted: one word (a mode, no file)
		`ExecStart=/bin/sh -c 'echo $a $(date)'`,
		`ExecReload=/bin/sh -c 'kill -HUP $MAINPID'`,
		`ExecStart=/bin/sh -c 'test -n $x && sleep $x'`,
	} {
		assert.NoError(t, strictUnit(t, true, line), line)
	}
}
