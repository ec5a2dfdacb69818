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

// Round 8: the judges read the argv systemd executes (systemdArgv): a known ${NAME} pasted into
// any word and a whole-word $NAME split into words, UnsetEnvironment= applied last. A value that
// makes an option, a mode, a program or a script is judged as it: each was accepted while the
// judges read the words as written. A reference with a value the judge does not know, or one
// systemd drops or pastes as "" ($a\, ${a[1]}), is refused in a changed line unless the word is
// the unit's own program's.
func TestRound8JudgesReadTheArgvSystemdExecutes(t *testing.T) {
	for _, c := range []struct {
		why   string
		lines []string
	}{
		{"find changes", []string{`Environment=A=-delete`, `ExecStart=/usr/bin/find /etc/kubernetes ${A}`}},
		{"find changes", []string{`Environment=A=-delete`, `ExecStart=/usr/bin/find /etc/kubernetes $A`}},
		{"set-user-ID", []string{`Environment=M=u+s`, `ExecStart=/usr/bin/chmod ${M} /run/myapp/x`}},
		{"set-user-ID", []string{`Environment=M=4755`, `ExecStart=/usr/bin/chmod $M /var/lib/myapp/bin`}},
		{"links", []string{`Environment=O=-s`, `ExecStart=/usr/bin/cp ${O} /etc/shadow /run/myapp/x`}},
		{"an awk program", []string{`Environment=P=BEGIN{system("/usr/sbin/reboot")}`, `ExecStart=/usr/bin/awk ${P}`}},
		{"reboot", []string{`Environment=X=--to-command=/usr/sbin/reboot`, `ExecStart=/usr/bin/tar -xf /etc/myapp/a.tar -C /var/lib/myapp ${X}`}},
		{"reboot", []string{`Environment=O=-c`, `ExecStart=/bin/bash ${O} /usr/sbin/reboot`}},
		{"reboot", []string{`Environment=X=/usr/sbin/reboot now`, `ExecStart=/usr/bin/env -S${X}`}},
		{"reboot", []string{`Environment=G=hello; /usr/sbin/reboot`, `ExecStart=/bin/sh -c 'echo ${G} > /run/myapp/x'`}},
		{"/etc", []string{`Environment=N=x /etc`, `ExecStart=/bin/sh -c 'rm -rf /run/myapp/${N}'`}},
		{"/etc", []string{`Environment=CACHE=/run/myapp/cache /etc/kubernetes`, `ExecStartPre=/usr/bin/rm -rf $CACHE`}},
		{"/etc", []string{`Environment=X='/run/myapp/a' /etc`, `ExecStartPre=/usr/bin/rm -rf $X`}},
		{"sends the manager", []string{`Environment=X=READY=1 MAINPID=1`, `ExecStart=/usr/bin/systemd-notify $X`}},
		// UnsetEnvironment= applies after Environment=: ${D} is "" (rm -rf /etc/kubernetes).
		{"/etc/kubernetes", []string{`Environment=D=run/myapp/x/`, `UnsetEnvironment=D`, `ExecStart=/usr/bin/rm -rf /${D}etc/kubernetes`}},
		{"/etc/kubernetes", []string{`Environment=D=run/myapp/x/`, `UnsetEnvironment=D=run/myapp/x/`, `ExecStart=/bin/sh -c 'rm -rf /${D}etc/kubernetes'`}},
		// Values the judge does not know: any text, any number of words.
		{"does not know", []string{`ExecStart=/usr/bin/find /run/myapp ${ACTION}`}},
		{"does not know", []string{`ExecStart=/usr/bin/chmod $MODE /run/myapp/x`}},
		{"does not know", []string{`ExecStopPost=/bin/sh -c 'echo ${SERVICE_RESULT} > /run/myapp/r'`}},
		{"does not know", []string{`Environment=V=$(x)`, `ExecStart=/bin/sh -c 'echo ${V}'`}},
		// What systemd drops ($a\ as a whole word) or pastes as "" (${a[1]}).
		{"no variable systemd substitutes", []string{`ExecStart=/usr/bin/sed -e '$a\\' -e 'last' /etc/myapp/app.conf`}},
		{"no variable systemd substitutes", []string{`ExecStart=/bin/bash -c 'a[1]=x; echo ${a[1]}'`}},
	} {
		err := strictUnit(t, true, c.lines...)
		if assert.Error(t, err, "%v", c.lines) {
			assert.Contains(t, err.Error(), c.why, "%v", c.lines)
		}
	}
	for _, lines := range [][]string{
		{`Environment=V=ok`, `ExecStart=/usr/bin/systemd-notify STATUS=${V}`},
		{`Environment=V=serving`, `ExecStart=/bin/sh -c 'exec systemd-notify STATUS=${V}'`},
		{`ExecStart=/bin/sh -c 'x=$$(cat /etc/myapp/x); echo "$$x" > /run/myapp/x'`},
		{`ExecStart=/usr/bin/sed -e '$$a\\' -e 'last' /etc/myapp/app.conf`},
		{`ExecStart=/bin/bash -c 's=abc; echo ${s:1:2}'`}, // ${NAME:…}: systemd keeps the text
		{`ExecReload=/bin/kill -HUP $MAINPID`},
	} {
		assert.NoError(t, strictUnit(t, true, lines...), "%v", lines)
	}
	for _, lines := range [][]string{ // the unit's own program: its words are its own
		{`Environment=OPTS=-v -p 8080`, `ExecStart=/usr/bin/myapp $OPTS`},
		{`ExecStart=/usr/bin/myapp --ip=${FROMFILE} $MORE`},
		{`ExecStart=/usr/bin/nice -n 5 /usr/bin/myapp --ip=${FROMFILE} $MORE`},
		{`ExecStart=/bin/bash /usr/local/sbin/calc.sh ${SIZE} $MORE`}, // its own script's arguments
	} {
		assert.NoError(t, ownUnit(t, lines...), "%v", lines)
	}
	err := ownUnit(t, `ExecStart=/usr/bin/nice $N /usr/bin/myapp`) // a wrapper's word: its command may move
	require.Error(t, err)
	// In every line: a pasted value is judged as the text the program reads.
	require.Error(t, strictUnit(t, false, `Environment=G=hello; /usr/sbin/reboot`, `ExecStart=/bin/sh -c 'echo ${G}'`))
	require.Error(t, strictUnit(t, false, `Environment=CACHE=/run/myapp/c /proc/sysrq-trigger`, `ExecStart=/usr/bin/tee $CACHE`))
}
