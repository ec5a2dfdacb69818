package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 11 (adversary exec/02, 04): an option's value (env -u NAME, -C DIR) made the judge stop
// reading env's later NAME=VALUE words as env's assignments: BASH_ENV=, LD_PRELOAD=, MAINPID=1
// passed after it.
func TestRound11EnvOptionValuesKeepAssignmentsJudged(t *testing.T) {
	for _, line := range []string{
		`ExecStart=/usr/bin/env -u X BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/env --unset X BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/env --unset=X BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/env -uX BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/env -C /run/myapp BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/env --chdir /run/myapp LD_PRELOAD=/etc/myapp/x.so /usr/bin/true`,
		`ExecStart=/usr/bin/env -u X GLIBC_TUNABLES=glibc.malloc.check=3 /usr/bin/true`,
		`ExecStart=/usr/bin/env -u X SHELLOPTS=xtrace PS4=$(id) /bin/sh -c true`,
		`ExecStart=/usr/bin/env -u X -u Y LD_LIBRARY_PATH=/etc/myapp /usr/bin/true`,
		`ExecStart=/usr/bin/timeout 5 /usr/bin/env -u X BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/setsid /usr/bin/env -u X BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecStart=/usr/bin/nice -n 5 /usr/bin/env -u X BASH_ENV=/etc/myapp/hook bash -c true`,
		`ExecReload=/usr/bin/env -u X MAINPID=1 /bin/sh -c 'kill -s SIGRTMIN+15 $MAINPID'`,
		`ExecReload=/usr/bin/env -C /run/myapp MAINPID=1 /bin/kill -HUP $MAINPID`,
	} {
		require.Error(t, strictUnit(t, true, line), line)
	}
	for _, line := range []string{
		`ExecStart=/usr/bin/env -u X FOO=bar /usr/bin/true`,
		`ExecStart=/usr/bin/env -C /run/myapp FOO=bar /usr/bin/true`,
		`ExecReload=/bin/kill -HUP $MAINPID`,
	} {
		assert.NoError(t, strictUnit(t, true, line), line)
	}
}
