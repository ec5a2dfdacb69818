package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 11 (adversary exec/03): a script that sets a variable the judge knows from the unit
// (Environment=, the manager's *_DIRECTORY) wrote wherever it set it: the judge kept the unit's
// value. A name the script may set is unknown for the whole script; env NAME=VALUE sets it for the
// command env runs.
func TestRound11ScriptReassignsAKnownVariable(t *testing.T) {
	for _, c := range [][]string{
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'D=/etc/cron.d; rm -rf $D'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'read D < /run/myapp/x; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'for D in /etc/cron.d; do rm -rf "$D"; done'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'printf -v D %%s /etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'declare D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'export D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'mapfile D < /run/myapp/x; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'getopts D D; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'D[0]=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/usr/bin/env D=/etc/cron.d /bin/sh -c 'rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'D=/etc/cron.d sh -c "rm -rf \"\$D\""'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'local D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'typeset D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'readonly D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'D+=/../../etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c ': ${D:=/etc}; unset D; : ${D:=/etc/cron.d}; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'unset D; rm -rf "${D:-/etc/cron.d}"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'let D=1; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'cd /etc; D=$PWD; rm -rf "$D/cron.d"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'select D in /etc/cron.d; do rm -rf "$D"; done'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'IFS= read -r D; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'eval D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'set -a; D=/etc/cron.d; rm -rf "$D"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/bash -c 'declare -n D=E; E=/etc/cron.d; rm -rf "$D"'`},
		{`ExecStart=/bin/sh -c 'STATE_DIRECTORY=/etc/systemd/system; cp /etc/myapp/x $STATE_DIRECTORY/evil.service'`},
		{`ExecStart=/bin/sh -c 'read RUNTIME_DIRECTORY < /run/x; cp /etc/myapp/x $RUNTIME_DIRECTORY/evil.service'`},
		{`ExecStart=/usr/bin/env -u X RUNTIME_DIRECTORY=/etc/profile.d /bin/sh -c 'echo hi > $RUNTIME_DIRECTORY/x.sh'`},
		{`Environment=RUNTIME_DIRECTORY=/run/myapp`, `ExecReload=/usr/bin/env -u X RUNTIME_DIRECTORY=/etc/profile.d /bin/sh -c 'echo hi > $RUNTIME_DIRECTORY/x.sh'`},
		{`Environment=STATE_DIRECTORY=/var/lib/myapp`, `ExecStartPre=/bin/sh -c 'STATE_DIRECTORY=/etc/systemd/system; cp /etc/myapp/x $STATE_DIRECTORY/evil.service'`},
	} {
		require.Error(t, strictUnit(t, true, c...), "%q", c)
	}
	for _, c := range [][]string{
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'echo x > ${D}/x'`},
		{`Environment=D=/run/myapp`, `ExecStart=/bin/sh -c 'mkdir -p "$D" && echo x > "$D/x"'`},
		{`Environment=D=/run/myapp`, `ExecStart=/usr/bin/env D=/run/myapp/sub /bin/sh -c 'echo x > "$D/x"'`},
	} {
		assert.NoError(t, strictUnit(t, true, c...), "%q", c)
	}
}
