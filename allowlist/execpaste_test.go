package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 8: systemd pastes ${NAME} into a script's text and splits a whole-word $NAME before the
// program reads them; systemd-notify's arguments with a newline are several assignments. The
// adversary's cases (a07, a22, a23, a10) are refused in a changed line; plain values stay accepted.
func TestRound8SystemdPastesVariables(t *testing.T) {
	refused := [][]string{
		{`Environment=GREETING=hello; /usr/sbin/reboot`, `ExecStart=/bin/sh -c 'echo ${GREETING} > /run/myapp/x'`},
		{`Environment=N=x /etc`, `ExecStart=/bin/sh -c 'rm -rf /run/myapp/${N}'`},
		{`ExecStart=/bin/sh -c 'echo ${FROMFILE} > /run/myapp/x'`}, // a value the judge does not know (EnvironmentFile=)
		{`Environment=CACHE=/run/myapp/cache /etc/kubernetes /var/lib/kubelet`, `ExecStartPre=/usr/bin/rm -rf $CACHE`},
		{`Environment=T=/run/myapp/x /etc`, `ExecStartPre=/usr/bin/chmod -R 777 $T`},
		{`Environment=T=/run/myapp/x /etc/sudoers.d/core`, `ExecStart=/bin/sh -c "echo hi | tee $T"`},
		{`ExecStart=/bin/sh -c 'exec systemd-notify "STATUS=starting\nMAINPID=$(pidof kubelet)"'`},
		{`ExecStart=/usr/bin/systemd-notify "STATUS=x\nMAINPID=1"`},
		{`ExecStart=/bin/sh -c 'systemd-notify STATUS=$(cat /etc/myapp/x)'`},
	}
	for _, lines := range refused {
		require.Error(t, strictUnit(t, true, lines...), "%v", lines)
	}
	for _, lines := range [][]string{
		{`Environment=DIR=/run/myapp/cache`, `ExecStart=/bin/sh -c 'rm -rf ${DIR}/old'`},
		{`Environment=CACHE=/run/myapp/cache`, `ExecStartPre=/usr/bin/rm -rf $CACHE`},
		{`ExecStart=/usr/bin/systemd-notify --ready "--status=Serving"`},
	} {
		assert.NoError(t, strictUnit(t, true, lines...), "%v", lines)
	}
	// In the node's own lines a newline to systemd-notify is refused too.
	require.Error(t, strictUnit(t, false, `ExecStart=/usr/bin/systemd-notify "STATUS=x\nMAINPID=1"`))
}
