package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round-5 adversary F1 and F5 (adv r5a t2, t3, t5, t10): a program the judge has no class for may
// be a wrapper, so in a changed line its later words that could start a command are judged as that
// command; xargs's replace string and find's {} as the program are refused; no changed line names
// the manager's notification socket. Ordinary changed lines stay accepted, and the node's own
// (unchanged) lines are judged as before but for the wrappers added to the list.
func TestChangedLinesJudgeUnknownProgramsAsWrappers(t *testing.T) {
	refused := []struct{ line, why string }{
		// F1: t3 w_*, t2 setarch_reboot, sshagent_reboot, sshagent_bash.
		{`ExecStart=/usr/bin/setarch x86_64 /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/linux64 /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/choom -n 0 -- /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/dbus-run-session -- /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/keyctl session - /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/gpg-agent --daemon /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/chronic /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/ssh-agent /usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/ssh-agent /usr/bin/bash /etc/myapp/app.conf`, "the script /etc/myapp/app.conf"},
		// The same behind programs no list names: the root fix.
		{`ExecStart=/usr/bin/somewrapper /usr/sbin/reboot`, "a program the judge does not model"},
		{`ExecStart=/usr/bin/somewrapper -x 3 /usr/bin/systemctl reboot`, "controls the service manager"},
		{`ExecStart=/usr/bin/somewrapper reboot`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper arg -- reboot`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper x86_64 poweroff`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper --exec=/usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper /usr/bin/bash /etc/myapp/app.conf`, "the script /etc/myapp/app.conf"},
		{`ExecStart=/usr/bin/somewrapper bash -c 'systemctl reboot'`, "controls the service manager"},
		{`ExecStart=/usr/bin/somewrapper /usr/bin/python3 /etc/myapp/app.conf`, "/etc/myapp/app.conf"},
		{`ExecStart=/usr/bin/somewrapper --flag /usr/bin/env /usr/bin/sh /etc/myapp/app.conf`, "/etc/myapp/app.conf"},
		{`ExecStart=/usr/bin/sh -c '/usr/bin/somewrapper /usr/sbin/reboot'`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper /usr/bin/somewrapper2 /usr/sbin/halt`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper ./reboot`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper ../../usr/sbin/reboot`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper -- %h/../usr/sbin/reboot`, "specifier"},
		{`ExecStart=/usr/bin/somewrapper FOO=1 reboot`, "reboots"},
		{`ExecStart=/usr/bin/somewrapper sh`, "standard input"},
		{`ExecStart=/usr/bin/somewrapper 'systemctl reboot'`, "controls the service manager"},
		{`ExecStart=/usr/bin/somewrapper -- "/usr/sbin/reboot -f"`, "reboots"},
		// Programs refused by what they are, behind a wrapper (fuzz: "env AT"); socat to the socket.
		{`ExecStart=/usr/bin/timeout 5 /usr/bin/socat - UNIX-SENDTO:/run/x`, "socat"},
		{`ExecStart=/usr/bin/env /usr/bin/at now`, "at now"},
		{`ExecStart=/usr/bin/nice /usr/bin/ncat -e /usr/bin/bash 127.0.0.1 1`, "ncat -e"},
		// F1 xargs / find (t10).
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -I{} /usr/bin/sh -c {}`, "replace string {}"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -IX /usr/bin/sh -c X`, "replace string X"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -I X /usr/bin/sh -c "echo X"`, "replace string X"},
		{`ExecStart=/usr/bin/xargs --arg-file=/etc/myapp/app.conf --replace /usr/bin/bash -c {}`, "replace string {}"},
		{`ExecStart=/usr/bin/xargs --arg-file=/etc/myapp/app.conf --replace=R /usr/bin/python3 -c R`, "replace string R"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -I{} {}`, "is the program"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -i /usr/bin/{}`, "is the program"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf /usr/bin/bash`, "xargs -a hands"},
		{`ExecStart=/usr/bin/find /etc/myapp -name app.conf -exec {} +`, "runs the files it finds"},
		{`ExecStart=/usr/bin/find /etc/myapp -name app.conf -execdir {} ;`, "runs the files it finds"},
		{`ExecStart=/usr/bin/find /etc/myapp -ok ./{} ;`, "runs the files it finds"},
		// F5 (t5 notify_nc, notify_ncat) and other senders.
		{`ExecStart=/usr/bin/bash -c 'printf "READY=1\nMAINPID=%s" "$(pidof kubelet)" | /usr/bin/nc -u -U "$NOTIFY_SOCKET"; exec sleep infinity'`, "notification socket"},
		{`ExecStart=/usr/bin/bash -c 'echo MAINPID=1234 | /usr/bin/ncat -u -U ${NOTIFY_SOCKET}'`, "notification socket"},
		{`ExecStart=/usr/bin/socat - UNIX-SENDTO:/run/systemd/notify`, "notification socket"},
		{`ExecStart=/usr/bin/python3 -c 'import os,socket; socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM).sendto(b"MAINPID=1",os.environ["NOTIFY_SOCKET"])'`, "notification socket"},
		// The socket's name computed (the script's words read NOTIFY_SOCKE""T as one), or any unix socket.
		{`ExecStart=/usr/bin/sh -c 'exec /usr/bin/nc -u -U "$(printenv NOTIFY_SOCKE""T)" < /run/myapp/m'`, "nc -U: sends to a local socket"},
		{`ExecStart=/usr/bin/timeout 5 /usr/bin/ncat --unixsock /run/x`, "sends to a local socket"},
		{`ExecStart=/usr/bin/nc -l 8080 -e /usr/bin/bash`, "nc -e"},
		{`ExecStart=/usr/bin/ncat -l 8080 --sh-exec /usr/bin/myapp`, "--sh-exec"},
		// Issue 27 class 3 (was accepted): xargs hands a program that changes files its input's words.
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/list /usr/bin/rm -f`, "xargs hands the words of its input to /usr/bin/rm"},
	}
	// Issue 27 class 3: a changed line runs only modeled, own or granted programs, so the payload's
	// own line is refused naming the program it may not run; the unit's own (unknown) programs are
	// still judged as possible wrappers, with the reasons above.
	for _, c := range refused {
		err := strictUnit(t, true, c.line)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), "ExecStart=", c.line)
		}
		err = ownUnit(t, c.line)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), c.why, c.line)
			assert.Contains(t, err.Error(), "ExecStart=", c.line)
		}
	}
	accepted := []string{
		`ExecStart=/usr/bin/myapp --config /etc/myapp/app.conf`,
		`ExecStart=/usr/bin/myapp --config=/etc/myapp/app.conf /var/lib/myapp`,
		`ExecStart=/usr/bin/timeout 5 /usr/bin/myapp`,
		// A bare name after an option is the option's value, not a command (documented).
		`ExecStart=/usr/bin/myapp --mode reboot`,
		`ExecStart=/usr/bin/myapp --on-exit sh --config ${CONF}`,
		`ExecStart=/usr/bin/echo reboot`,
		`ExecStart=/usr/bin/logger -t myapp restarting sh`,
		`ExecStart=/usr/bin/test -x /usr/sbin/reboot`,
		`ExecStart=/usr/bin/myapp /usr/bin/myhelper`,
		`ExecStart=/usr/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf --node-ip=${KUBELET_NODE_IP}`,
		`ExecStart=/usr/bin/setarch x86_64 /usr/bin/myapp`,
		`ExecStart=/usr/bin/xargs -a /etc/myapp/list -I{} /usr/bin/echo {}`,
		`ExecStart=/usr/bin/xargs -a /etc/myapp/list /usr/bin/echo`, // (not rm: issue 27 class 3; not cat: its input may name a secret, round 12)
		`ExecStart=/usr/bin/find /var/lib/myapp -name '*.tmp' -exec /usr/bin/rm -f {} +`,
		`ExecStart=/usr/bin/systemd-notify --ready`,
		`ExecStart=/usr/bin/myapp --pidfile=%t/%n.pid --config %t/myapp/conf`,
		`ExecStart=/usr/bin/myapp --data /var/lib/myapp/bash-history`,
		`ExecStartPre=/usr/bin/nc -z 127.0.0.1 8080`,
		`ExecStart=/usr/bin/myapp --greeting "reboot now" "hello world"`,
	}
	for _, l := range accepted {
		assert.NoError(t, ownUnit(t, l), l)
	}
	// Unchanged lines: the node's own; the known wrappers are judged there too, an unknown program's
	// words are not (the node's own commands may pass any word).
	for _, l := range []string{`ExecStart=/usr/bin/setarch x86_64 /usr/sbin/reboot`, `ExecStart=/usr/bin/ssh-agent reboot`, `ExecStart=/usr/bin/env AT`,
		`ExecStart=/usr/bin/chronic /usr/bin/systemctl reboot`} {
		assert.Error(t, strictUnit(t, false, l), l)
	}
	for _, l := range []string{`ExecStart=/usr/bin/bash -c 'echo $NOTIFY_SOCKET'`} {
		assert.NoError(t, strictUnit(t, false, l), l)
	}
}
