package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 8: RHCOS's bash 5.1 matches a pattern with an explicit leading dot against "." and "..", and
// brace expansion writes them, so /tmp/.?/etc is /tmp/../etc: such a component is a ".." (refused
// in a changed line wherever it stands, and as a program or write target in every line). Every
// adversary case is kept; patterns that cannot make a dot component stay accepted.
func TestRound8GlobsThatClimb(t *testing.T) {
	for _, l := range []string{
		"ExecStartPre=/usr/bin/rm -rf /tmp/.?/etc/kubernetes",
		"ExecStartPre=/usr/bin/chmod -R 777 /tmp/.?/etc",
		`ExecStartPre=/usr/bin/sed -i "s/x/y/" /tmp/.?/etc/shadow`,
		"ExecStartPre=/usr/bin/mv /tmp/.?/etc/shadow /run/myapp/s",
		"ExecStartPre=/usr/bin/chown -R core /tmp/.?/etc",
		"ExecStartPre=/usr/bin/rm -rf --no-preserve-root /tmp/.?/*",
		"ExecStartPre=/usr/bin/touch /tmp/.?/etc/.updated",
		"ExecStartPre=/usr/bin/rm -rf /tmp/.*/etc",
		"ExecStartPre=/usr/bin/rm -rf /tmp/.[.]/etc",
		"ExecStartPre=/usr/bin/rm -rf /tmp/[.][.]/etc",
		"ExecStartPre=/usr/bin/rm -rf /tmp/[].]?/etc",
		`ExecStartPre=/bin/sh -c 'rm -rf /tmp/\\.?/etc'`,
		"ExecStartPre=/usr/bin/rm -rf /tmp/{.,}./etc",
		"ExecStartPre=/usr/bin/rm -rf /tmp/.{.,x}/etc",
		"ExecStartPre=/usr/bin/rm -rf /tmp/{a,{b,..}}/etc",
		"ExecStartPre=/usr/bin/rm -rf /tmp/{a/..,b}/etc", // a brace list holding a "/": expanded over the whole path
		`ExecStartPre=/bin/sh -c 'rm -rf /tmp/.?/etc/kubernetes'`,
		`ExecStartPre=/bin/bash -c 'echo b > /tmp/.?/proc/sysrq-trigger'`,
		`ExecStartPre=/bin/bash -c 'cd /tmp/.? && rm -rf etc'`,
		"ExecStartPre=/usr/bin/cp -s /tmp/.?/proc/s*q-t* /run/myapp/t",
	} {
		err := strictUnit(t, true, l)
		require.Error(t, err, l)
		assert.Regexp(t, `\.\.|SysRq`, err.Error(), l)
	}
	for _, l := range []string{
		"ExecStartPre=/usr/bin/rm -rf /run/myapp/*",
		"ExecStartPre=/usr/bin/rm -f /run/myapp/*.pid",
		"ExecStartPre=/usr/bin/rm -f /run/myapp/{a,b}.sock",
		"ExecStartPre=/usr/bin/rm -f /run/myapp/x?.tmp",
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
	// In the node's own lines: as a program and a write target.
	for _, l := range []string{"ExecStart=/usr/.?/bin/cat", "ExecStart=/usr/{bin/..,x}/cat", `ExecStart=/bin/sh -c 'echo x > /srv/.?/etc/x'`} {
		require.Error(t, strictUnit(t, false, l), l)
	}
}
