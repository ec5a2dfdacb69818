package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 7b: what the judge read on the text is not what the kernel and the shell do. `..` is
// resolved after symlinks (/usr/local/../bin is /var/bin), $MAINPID is the unit's environment's,
// set -a and namerefs export variables the judge never sees assigned, and cd - / pushd / popd /
// CDPATH go where the judge cannot follow. Every adversary case (f1, f7, f8, f11) is kept here.
func TestRound7bPathsEnvAndDirs(t *testing.T) {
	install := "ExecStartPre=/usr/bin/install -D -m 0755 /etc/myapp/app.conf /var/bin/cat"
	refused := []struct {
		name  string
		lines []string
		why   string
	}{
		// f11: a program path with .. after a node symlink.
		// (issue 27 class 3: f11's install into /var/bin is refused on its own, outside the unit's own
		// places; the program paths are refused for their ".." without it)
		{"f11's install", []string{install, "ExecStart=/usr/local/../bin/cat"}, "install changes /var/bin/cat"},
		{"f11 /usr/local/../bin/cat", []string{"ExecStart=/usr/local/../bin/cat"}, "/usr/local/../bin/cat"},
		{"f11 /usr/tmp/../bin/cat", []string{"ExecStart=/usr/tmp/../bin/cat"}, ".."},
		{"f11 /home/../bin/cat", []string{"ExecStart=/home/../bin/cat"}, ".."},
		{"f11 one sh -c line", []string{`ExecStart=/usr/bin/sh -c 'install -D -m 0755 /etc/myapp/app.conf /var/bin/cat && /usr/local/../bin/cat'`}, ".."},
		{"f11 behind env/timeout", []string{"ExecStart=/usr/bin/timeout 60 /usr/bin/env /usr/local/../bin/cat"}, ".."},
		{"f11 /bin/.. (a link to usr/bin)", []string{"ExecStart=/bin/../usr/bin/sleep 1"}, ".."},
		{"relative program with ..", []string{"WorkingDirectory=/run/myapp", "ExecStart=/usr/bin/sh -c '../../usr/bin/sleep 1'"}, ".."},
		// f8: write targets, redirections, cd targets with ..
		{"f8 /home/.. cp", []string{"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /home/../usrlocal/bin/kubenswrapper"}, ".."},
		{"f8 /srv/.. redirection", []string{`ExecStartPre=/usr/bin/sh -c 'cat /etc/myapp/app.conf > /srv/../usrlocal/bin/kubenswrapper'`}, ".."},
		{"f8 /mnt/.. cd", []string{`ExecStartPre=/usr/bin/sh -c 'cd /mnt/../usrlocal/bin && cat /etc/myapp/app.conf > kubenswrapper'`}, ".."},
		{"f8 dd of=/srv/..", []string{"ExecStartPre=/usr/bin/dd if=/etc/myapp/app.conf of=/srv/../usrlocal/bin/kubenswrapper"}, ".."},
		{"f8 /home/../roothome/.bashrc", []string{"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /home/../roothome/.bashrc"}, ".."},
		{"f8 /etc/ssl/certs/../../../ kubelet dropin", []string{"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /etc/ssl/certs/../../../systemd/system/kubelet.service.d/99-x.conf"}, ".."},
		{"f8 sudoers.d", []string{"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /etc/ssl/certs/../../../sudoers.d/x"}, ".."},
		{"f8 profile.d", []string{"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /etc/ssl/certs/../../../profile.d/zz.sh"}, ".."},
		{"cd .. then a relative write", []string{`ExecStart=/usr/bin/sh -c 'cd /etc/ssl/certs && cd .. && cp /etc/myapp/app.conf x'`}, ".."},
		{"relative write target with ..", []string{"WorkingDirectory=/etc/ssl/certs", "ExecStart=/usr/bin/cp /etc/myapp/app.conf ../../../sudoers.d/x"}, ".."},
		{"env -C with ..", []string{"ExecStart=/usr/bin/env -C /etc/ssl/certs/../../../sudoers.d /usr/bin/cp /etc/myapp/app.conf x"}, ".."},
		{"env --chdir= with ..", []string{"ExecStart=/usr/bin/env --chdir=/home/../usrlocal/bin /usr/bin/cp /etc/myapp/app.conf x"}, ".."},
		{"WorkingDirectory= with ..", []string{"WorkingDirectory=/home/../usrlocal/bin", "ExecStart=/usr/bin/cp /etc/myapp/app.conf kubenswrapper"}, ".."},
		{"a variable's value with ..", []string{"Environment=D=/home/../usrlocal/bin", "ExecStart=/usr/bin/cp /etc/myapp/app.conf ${D}/kubenswrapper"}, ".."},
		{"quotes split the ..", []string{`ExecStart=/usr/bin/bash -c 'cat /etc/myapp/app.conf > /srv/.""./usrlocal/bin/x'`}, ".."},
		{"cd ./..", []string{`ExecStart=/usr/bin/bash -c 'cd /srv && cd ./.. && cp /etc/myapp/app.conf x'`}, ".."},
		{"an option's attached value", []string{"ExecStart=/usr/bin/cp -t/srv/../usrlocal/bin /etc/myapp/app.conf"}, ".."},
		{"tar -C with ..", []string{"ExecStart=/usr/bin/tar -x -f /etc/myapp/app.conf -C /srv/../usrlocal"}, ".."},
		{"$PWD/..", []string{`ExecStart=/usr/bin/bash -c 'cd /srv; cp /etc/myapp/app.conf $PWD/../usrlocal/bin/x'`}, "PWD"},
		{"read operand with ..", []string{"ExecStart=/usr/bin/cat /var/run/../proc/sys/kernel/x"}, ".."},
		// f1: $MAINPID is the unit's environment's.
		{"f1 RTMIN+15", []string{"Environment=MAINPID=", "ExecStartPre=/bin/kill -s RTMIN+15 $MAINPID", "ExecStart=/usr/bin/sleep infinity"}, "MAINPID"},
		{"f1 INT", []string{"Environment=MAINPID=", "ExecStartPre=/bin/kill -INT $MAINPID", "ExecStart=/usr/bin/sleep infinity"}, "MAINPID"},
		{"f1 braced, in ExecReload", []string{"Environment=MAINPID=", "ExecReload=/bin/kill -s INT ${MAINPID}", "ExecStart=/usr/bin/sleep infinity"}, "MAINPID"},
		{"f1 MAINPID=-1", []string{"Environment=MAINPID=-1", "ExecStartPre=/bin/kill -s TERM -- $MAINPID", "ExecStart=/usr/bin/sleep infinity"}, "MAINPID"},
		{"MAINPID set, no kill", []string{"Environment=MAINPID=", "ExecStart=/usr/bin/sleep infinity"}, "Environment=MAINPID="},
		{"NOTIFY_SOCKET set", []string{"Environment=NOTIFY_SOCKET=/run/x", "ExecStart=/usr/bin/sleep infinity"}, "NOTIFY_SOCKET"},
		{"LISTEN_FDS set", []string{"Environment=LISTEN_FDS=3", "ExecStart=/usr/bin/sleep infinity"}, "LISTEN_FDS"},
		{"CREDENTIALS_DIRECTORY set", []string{"Environment=CREDENTIALS_DIRECTORY=/etc/myapp", "ExecStart=/usr/bin/sleep infinity"}, "CREDENTIALS_DIRECTORY"},
		{"RUNTIME_DIRECTORY set, followed", []string{"Environment=RUNTIME_DIRECTORY=/usr/local/bin", "ExecStart=/usr/bin/cp /etc/myapp/app.conf ${RUNTIME_DIRECTORY}/x"}, "/usr/local/bin/x"},
		{"kill $MAINPID before there is one", []string{"ExecStartPre=/bin/kill -HUP $MAINPID", "ExecStart=/usr/bin/sleep infinity"}, "no main process"},
		{"kill $MAINPID in ExecStart", []string{"ExecStart=/bin/kill -HUP $MAINPID"}, "no main process"},
		{"script assigns MAINPID", []string{`ExecReload=/usr/bin/sh -c 'MAINPID=1; kill -INT $MAINPID'`, "ExecStart=/usr/bin/sleep infinity"}, "MAINPID=1: MAINPID is the service manager's"},
		{"for MAINPID in 1", []string{`ExecReload=/usr/bin/sh -c 'for MAINPID in 1; do kill -INT $MAINPID; done'`, "ExecStart=/usr/bin/sleep infinity"}, "sets MAINPID"},
		{"read MAINPID", []string{`ExecReload=/usr/bin/sh -c 'read MAINPID < /etc/myapp/app.conf; kill -INT $MAINPID'`, "ExecStart=/usr/bin/sleep infinity"}, "sets MAINPID"},
		{"read -a MAINPID", []string{`ExecReload=/usr/bin/bash -c 'read -ra MAINPID < /etc/myapp/app.conf; kill -INT $MAINPID'`, "ExecStart=/usr/bin/sleep infinity"}, "sets MAINPID"},
		{"printf -v MAINPID", []string{`ExecReload=/usr/bin/bash -c 'printf -v MAINPID 1; kill -INT $MAINPID'`, "ExecStart=/usr/bin/sleep infinity"}, "sets MAINPID"},
		{"declare MAINPID=1", []string{`ExecReload=/usr/bin/bash -c 'declare MAINPID=1; kill -INT $MAINPID'`, "ExecStart=/usr/bin/sleep infinity"}, "MAINPID"},
		{"for MAINPID in ExecReload", []string{"ExecStart=/usr/bin/sleep infinity", `ExecReload=/usr/bin/sh -c 'for MAINPID in 1; do kill -INT $MAINPID; done'`}, "sets MAINPID"},
		{"env MAINPID=1 kill", []string{`ExecReload=/usr/bin/env MAINPID=1 /bin/kill -INT $MAINPID`, "ExecStart=/usr/bin/sleep infinity"}, "MAINPID is the service manager's"},
		// f7: variables the judge does not see exported.
		{"f7 set -a; for BASH_ENV", []string{`ExecStart=/usr/bin/bash -c 'set -a; for BASH_ENV in /etc/myapp/app.conf; do bash -c :; done'`}, "set -a"},
		{"f7 set -a; read BASH_ENV", []string{`ExecStart=/usr/bin/bash -c 'set -a; read -r BASH_ENV < /etc/myapp/app.conf; bash -c :'`}, "set -a"},
		{"f7 set -a; for LD_PRELOAD", []string{`ExecStart=/usr/bin/bash -c 'set -a; for LD_PRELOAD in /etc/myapp/app.conf; do /usr/bin/true; done'`}, "set -a"},
		{"f7 nameref", []string{`ExecStart=/usr/bin/bash -c 'declare -n r=BASH_ENV; r=/etc/myapp/app.conf; export r; bash -c :'`}, "nameref"},
		{"set -ea cluster", []string{`ExecStart=/usr/bin/bash -c 'set -ea; X=1; bash -c :'`}, "set -ea"},
		{"set -o allexport", []string{`ExecStart=/usr/bin/bash -c 'set -o allexport; X=1'`}, "allexport"},
		{"bash -a -c", []string{`ExecStart=/usr/bin/bash -a -c 'X=1; bash -c :'`}, "-a"},
		{"sh -ac", []string{`ExecStart=/usr/bin/sh -ac 'X=1; sh -c :'`}, "-ac"},
		{"bash -o allexport", []string{`ExecStart=/usr/bin/bash -o allexport -c 'X=1'`}, "allexport"},
		{"typeset -n", []string{`ExecStart=/usr/bin/bash -c 'typeset -n r=LD_PRELOAD; r=/etc/myapp/app.conf'`}, "nameref"},
		{"local -n", []string{`ExecStart=/usr/bin/bash -c 'local -n r=PATH; r=/tmp'`}, "nameref"},
		{"declare -gn", []string{`ExecStart=/usr/bin/bash -c 'declare -gn r=BASH_ENV'`}, "nameref"},
		{"select BASH_ENV", []string{`ExecStart=/usr/bin/bash -c 'select BASH_ENV in /etc/myapp/app.conf; do break; done'`}, "BASH_ENV"},
		{"printf -v HOME", []string{`ExecStart=/usr/bin/bash -c 'printf -v HOME %s /etc/myapp; bash -lc :'`}, "HOME"},
		{"read HOME", []string{`ExecStart=/usr/bin/bash -c 'read -r HOME < /etc/myapp/app.conf; bash -lc :'`}, "HOME"},
		{"for XDG_CONFIG_HOME", []string{`ExecStart=/usr/bin/bash -c 'for XDG_CONFIG_HOME in /etc/myapp; do :; done'`}, "XDG_CONFIG_HOME"},
		{"getopts LD_PRELOAD", []string{`ExecStart=/usr/bin/bash -c 'getopts a LD_PRELOAD'`}, "LD_PRELOAD"},
		{"mapfile -t HOME", []string{`ExecStart=/usr/bin/bash -c 'mapfile -t HOME < /etc/myapp/app.conf'`}, "HOME"},
		{"let HOME", []string{`ExecStart=/usr/bin/bash -c 'let HOME=1'`}, "sets HOME"},
		{"(( )) assigns", []string{"ExecStart=/usr/bin/sleep infinity", `ExecReload=/usr/bin/bash -c '((MAINPID=1)); kill -INT $MAINPID'`}, "MAINPID=1"},
		{"readonly HOME=", []string{`ExecStart=/usr/bin/bash -c 'readonly HOME=/etc/myapp; bash -lc :'`}, "HOME"},
		{"export OLDPWD", []string{`ExecStart=/usr/bin/bash -c 'export OLDPWD=/usr/local/bin'`}, "OLDPWD"},
		// f8: working directories the judge does not track.
		{"f8 Environment=OLDPWD + cd -", []string{"Environment=OLDPWD=/usr/local/bin", `ExecStartPre=/usr/bin/sh -c 'cd - && cp /etc/myapp/app.conf kubenswrapper'`, "ExecStart=/usr/bin/sleep infinity"}, "relative to a working directory"},
		{"f8 script OLDPWD= + cd -", []string{`ExecStartPre=/usr/bin/sh -c 'OLDPWD=/usr/local/bin; cd - && cat /etc/myapp/app.conf > kubenswrapper'`, "ExecStart=/usr/bin/sleep infinity"}, "OLDPWD=/usr/local/bin: OLDPWD moves where cd -"},
		{"cd - alone", []string{`ExecStart=/usr/bin/sh -c 'cd - && cp /etc/myapp/app.conf kubenswrapper'`}, "cd -"},
		{"cd - then a redirection", []string{`ExecStart=/usr/bin/sh -c 'cd -; cat /etc/myapp/app.conf > kubenswrapper'`}, "cd -"},
		{"popd", []string{`ExecStart=/usr/bin/bash -c 'pushd /run; popd; cp /etc/myapp/app.conf kubenswrapper'`}, "popd"},
		{"pushd +1", []string{`ExecStart=/usr/bin/bash -c 'pushd +1; cp /etc/myapp/app.conf kubenswrapper'`}, "pushd +1"},
		{"cd $(…)", []string{`ExecStart=/usr/bin/bash -c 'cd "$(cat /etc/myapp/app.conf)"; cp /etc/myapp/app.conf kubenswrapper'`}, "cd"},
		{"CDPATH in Environment=", []string{"Environment=CDPATH=/usr/local", `ExecStart=/usr/bin/bash -c 'cd bin; cp /etc/myapp/app.conf kubenswrapper'`}, "CDPATH"},
		{"CDPATH in a script", []string{`ExecStart=/usr/bin/bash -c 'CDPATH=/usr/local; cd bin; cp /etc/myapp/app.conf kubenswrapper'`}, "CDPATH"},
		{"PWD in Environment=", []string{"Environment=PWD=/usr/local/bin", "ExecStart=/usr/bin/sleep 1"}, "PWD"},
		{"cd - then a relative program", []string{`ExecStart=/usr/bin/sh -c 'cd -; ./kubenswrapper'`}, "cd -"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			err := strictUnit(t, true, c.lines...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.why)
		})
	}
	accepted := [][]string{
		{"ExecStart=/usr/bin/sleep infinity", "ExecReload=/bin/kill -HUP $MAINPID"},
		{"ExecStart=/usr/bin/sleep infinity", "ExecStop=/bin/kill -s TERM ${MAINPID}"},
		{"ExecStart=/usr/bin/cp /etc/myapp/app.conf /run/myapp/app.conf"},
		{"ExecStart=/usr/bin/cp /etc/myapp/./app.conf //run/myapp/app.conf"},
		// (issue 27 class 3: a relative write is judged from the unit's WorkingDirectory= and every
		// directory the script changes to, all of them the unit's own)
		{"WorkingDirectory=/run/myapp", `ExecStart=/usr/bin/sh -c 'cd /run/myapp && cat /etc/myapp/app.conf > out'`},
		{`ExecStart=/usr/bin/bash -c 'for f in a b; do echo $f; done'`},
		{`ExecStart=/usr/bin/bash -c 'read -r line < /etc/myapp/app.conf; echo "$line"'`},
		{`ExecStart=/usr/bin/bash -c 'set -eu; echo x'`},
		{`ExecStart=/usr/bin/bash -c 'set -euo pipefail; echo x'`},
		{`ExecStart=/usr/bin/bash -c 'declare -r X=1; echo $X'`},
		{"Environment=FOO=1", "ExecStart=/usr/bin/sleep 1"},
		{"Environment=RUNTIME_DIRECTORY=/run/myapp", "ExecStart=/usr/bin/mkdir -p ${RUNTIME_DIRECTORY}"}, // (class 3: the unit's own place)
	}
	for _, lines := range accepted {
		assert.NoError(t, strictUnit(t, true, lines...), "%q", lines)
	}
}

// The manager's own variables may not be passed by PassEnvironment= either, and $MAINPID read from
// an EnvironmentFile= the payload may write is refused (judgeEnvironment).
func TestManagerVariablesNotPassed(t *testing.T) {
	p := unitOfLines(t, false, "ExecStart=/usr/bin/sleep infinity", "ExecReload=/bin/kill -HUP $MAINPID")
	require.NoError(t, allowlist.JudgeUnit(p))
	for _, v := range []string{"MAINPID", "MANAGERPID", "NOTIFY_SOCKET", "LISTEN_PID", "INVOCATION_ID", "OLDPWD", "CDPATH"} {
		q := p
		q.PassEnvironment = []string{v}
		err := allowlist.JudgeUnit(q)
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), "PassEnvironment="+v)
	}
	for _, f := range []string{"-/etc/myapp/app.conf", "/etc/ssl/certs/../../../usr/lib/x"} {
		q := p
		q.EnvironmentFiles = []string{f}
		err := allowlist.JudgeUnit(q)
		require.Error(t, err, f)
		assert.Contains(t, err.Error(), "EnvironmentFile="+f)
	}
	q := p
	q.EnvironmentFiles = []string{"-/usr/lib/myapp/env"}
	assert.NoError(t, allowlist.JudgeUnit(q))
}

// A `..` in an unchanged line's program or write target is refused too: the node's own unit is
// judged on the kernel's path as well (the MCO's units have none).
func TestDotDotUnchangedLines(t *testing.T) {
	for _, l := range []string{
		"ExecStart=/usr/local/../bin/cat",
		"ExecStart=/usr/bin/cp /etc/myapp/app.conf /etc/ssl/certs/../../../sudoers.d/x",
		`ExecStart=/usr/bin/sh -c 'echo x > /srv/../usrlocal/bin/kubenswrapper'`,
		"ExecStart=/usr/bin/cat /var/run/../proc/sys/kernel/x",
		"ExecStart=/usr/bin/env /usr/local/../bin/cat",
		// FuzzExecJudge's seed: ".." alone is refused, and so behind a wrapper (execvp runs $PATH/..).
		"ExecStart=..", "ExecStart=/usr/bin/env ..", "ExecStart=/usr/bin/nohup ..", "ExecStart=/usr/bin/nice -n 5 ..",
		"ExecStart=/usr/bin/timeout 10 ..",
	} {
		err := strictUnit(t, false, l)
		require.Error(t, err, l)
		assert.Contains(t, err.Error(), "..", l)
	}
	assert.NoError(t, strictUnit(t, false, "ExecStart=/usr/bin/cp /etc/myapp/app.conf /run/myapp/x"))
}

// set -a, namerefs, the manager's variables and a builtin's assignment by name are refused in the
// node's own (unchanged) lines too; the reload idiom and ordinary scripts stay accepted there.
func TestShellStateUnchangedLines(t *testing.T) {
	for _, c := range []struct {
		lines []string
		why   string
	}{
		{[]string{`ExecStart=/usr/bin/bash -c 'set -a; for BASH_ENV in /etc/myapp/app.conf; do bash -c :; done'`}, "set -a"},
		{[]string{`ExecStart=/usr/bin/bash -c 'builtin set -a; X=1'`}, "set -a"},
		{[]string{`ExecStart=/usr/bin/bash -c 'declare -n r=BASH_ENV; r=/etc/myapp/app.conf'`}, "nameref"},
		{[]string{`ExecStart=/usr/bin/sh -a -c 'X=1'`}, "allexport"},
		{[]string{"ExecStart=/usr/bin/sleep infinity", `ExecReload=/usr/bin/sh -c 'for MAINPID in 1; do kill -INT $MAINPID; done'`}, "sets MAINPID"},
		{[]string{"Environment=MAINPID=", "ExecStart=/usr/bin/sleep infinity", "ExecReload=/bin/kill -INT $MAINPID"}, "Environment=MAINPID="},
		{[]string{"Environment=OLDPWD=/usr/local/bin", "ExecStart=/usr/bin/sleep infinity"}, "Environment=OLDPWD"},
	} {
		err := strictUnit(t, false, c.lines...)
		require.Error(t, err, "%q", c.lines)
		assert.Contains(t, err.Error(), c.why, "%q", c.lines)
	}
	for _, lines := range [][]string{
		{"ExecStart=/usr/bin/sleep infinity", "ExecStartPre=/bin/kill -HUP $MAINPID"},
		{`ExecStart=/usr/bin/bash -c 'set -euo pipefail; while read -r line; do echo "$line"; done < /etc/myapp/app.conf'`},
	} {
		assert.NoError(t, strictUnit(t, false, lines...), "%q", lines)
	}
}
