package allowlist

import (
	"slices"
	"strings"
)

// Round-5 adversary F1, F5: a program the judge has no class for may be a wrapper (setarch x86_64
// /usr/sbin/reboot, choom -n 0 -- reboot, ssh-agent bash F). A list of wrappers is never complete,
// so in every line (round 9: the node's own too, catchsegv systemctl --user exit) every program
// the judge does not model is judged as a possible wrapper: each later word that could start a
// command is judged as the command its suffix would be, by the classes of the line (a changed
// line's, or every line's).
//
// Which words could start a command (unknownProgram):
//   - an absolute path whose name is of one of the judge's classes (mayRun: /usr/sbin/reboot,
//     /usr/bin/bash, /usr/bin/python3, /usr/bin/env …), anywhere in the line, also as an option's
//     value (--exec=/usr/sbin/reboot). A path to data (/etc/myapp/app.conf) has no class: not judged.
//   - a bare name of one of the judge's classes (reboot, bash, env …) only in a command's position:
//     right after the program, after `--`, or after a word that is no option (setarch x86_64 reboot,
//     keyctl session - reboot). After an option it is the option's value (myapp --mode reboot) and
//     is not judged; write an absolute path and it is.
//
// The mayRun filter keeps the cost linear in the words (the budget, j.charge, bounds the rest).

// moreWrappers are the wrappers the adversaries found outside the list (rounds 5 and 9): judged as
// wrappers in every line, changed or not (their command's program file too: catchsegv /tmp/x).
var moreWrappers = []string{"setarch", "linux32", "linux64", "i386", "x86_64", "uname26", "choom",
	"dbus-run-session", "dbus-launch", "keyctl", "gpg-agent", "chronic", "ssh-agent", "ifne",
	"catchsegv", "pkexec", "fakeroot", "fakechroot", "eatmydata", "unbuffer", "nocache", "trickle",
	"systemd-socket-activate", "xvfb-run", "sshpass", "proxychains4", "tsocks", "torify", "schedtool",
	"cpulimit", "lckdo", "rootlesskit"}

func init() { wrappers = append(wrappers, moreWrappers...) }

// inertPrograms run no command from their words; a changed line's words after them are not
// judged as commands (echo reboot, logger restarting sh, test -x /usr/sbin/reboot).
var inertPrograms = []string{"echo", "printf", "logger", "sleep", "true", "false", "test", "[", "cat", "ls", "stat",
	"mkdir", "rmdir", "rm", "chmod", "chown", "chgrp", "grep", "egrep", "fgrep", "head", "tail", "wc", "date",
	"hostname", "id", "sha256sum", "sha1sum", "md5sum", "restorecon", "chcon", "readlink", "realpath", "basename",
	"dirname", "which", "file", "du", "df", "sync", "usleep", "printenv", "pidof", "uname", "nproc", "whoami", "tr", "cut"}

// modeled says whether the judge has a class for the program (or knows it runs no command).
func modeled(prog string) bool {
	return mayRun(prog) || slices.Contains(inertPrograms, prog)
}

// unknownProgram judges, in every line, the later words of a program the judge does not model
// that could start a command, each as the command argv[i:] would be.
func (j judge) unknownProgram(prog string, argv []string, depth int) string {
	if why := j.judgeSocketSender(prog, argv[1:]); why != "" {
		return short(strings.Join(argv, " ")) + ": " + why
	}
	if modeled(prog) {
		return ""
	}
	for i := 1; i < len(argv); i++ {
		a, prev := argv[i], argv[i-1]
		if j.strict && j.charge(1) {
			// (In every line the words were charged by argvClass, which called this once.)
			return tooCostly
		}
		cmd := argv[i:]
		switch {
		case strings.Contains(a, "/") && !strings.HasPrefix(a, "-") && namedForClass(a):
		case strings.HasPrefix(a, "-") && strings.Contains(a, "=") && strings.Contains(a, "/"):
			v := a[strings.LastIndex(a, "=")+1:]
			if !strings.Contains(v, "/") || !namedForClass(v) {
				continue
			}
			cmd = append([]string{v}, argv[i+1:]...)
		case strings.ContainsAny(a, " \t\n") && commandPosition(i, prev):
			// A quoted string where a command would start: what a program may hand to sh -c.
			if why := j.script(a, depth+1, false); why != "" {
				return short(strings.Join(argv, " ")) + ": " + argv[0] + " is a program the judge does not model, which may run its words as a command: " + why
			}
			continue
		case !strings.ContainsAny(a, "/=$`%") && !strings.HasPrefix(a, "-") && mayRun(a) && commandPosition(i, prev):
		default:
			continue
		}
		jg := j
		jg.guess = true
		if why := jg.argv(cmd, depth+1); why != "" {
			return short(strings.Join(argv, " ")) + ": " + argv[0] + " is a program the judge does not model, which may run its words as a command: " + why
		}
	}
	return ""
}

// commandPosition says whether the i-th word, after prev, is where a wrapper's command would
// start: right after the program, after -- or -, or after a word that is no option.
func commandPosition(i int, prev string) bool {
	return i == 1 || prev == "--" || prev == "-" || !strings.HasPrefix(prev, "-")
}

// namedForClass says whether a path's last name (without variables or specifiers in it) is of one
// of the judge's classes: ../../usr/sbin/reboot and %h/../usr/sbin/reboot are, %t/%n.ctr-id and
// /etc/myapp/app.conf are not.
func namedForClass(p string) bool {
	b := p[strings.LastIndexByte(p, '/')+1:]
	return b != "" && !strings.ContainsAny(b, "$`%") && mayRun(b) && !slices.Contains(builtinNames, strings.ToLower(b))
}

// builtinNames are classes only as a shell's builtins: a path ending in one names a file or a
// directory (the MCS kubelet's --volume-plugin-dir=/etc/kubernetes/kubelet-plugins/volume/exec),
// not the builtin. (/usr/bin/command, a real program, is judged by the word after it.)
var builtinNames = []string{"exec", "eval", "source", ".", "command", "builtin", "trap", "export"}

// socketSenders are the programs that send what their input holds to a local socket (nc -U): in a
// changed line, not to a unix socket (the manager's notification socket, however its name is
// spelled or computed), and never running a program on the connection (nc -e/-c, ncat --exec).
var socketSenders = []string{"nc", "ncat", "netcat", "nc.openbsd", "nc.traditional", "logger"}

// judgeSocketSender judges nc and its kin in a changed line.
func (j judge) judgeSocketSender(prog string, args []string) string {
	if !j.strict || !slices.Contains(socketSenders, prog) {
		return ""
	}
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		switch {
		case name == "--unixsock" || name == "--exec" || name == "--sh-exec" || name == "--lua-exec":
		case prog == "logger" && (name == "--socket" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "u")):
			// logger -u SOCKET writes its message to any unix socket (round-6 adversary F1).
		case prog == "logger" && (name == "--server" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "n")):
			// logger -n HOST -f F sends a file (a secret) to any host.
		case prog != "logger" && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "Uec"):
		default:
			continue
		}
		return prog + " " + a + ": sends to a local socket (the service manager's notification socket among them) or another host, or runs a program on the connection (refused in a changed line)"
	}
	return ""
}

// notifySocket says why a changed line may not name the manager's notification socket: a message
// there (MAINPID= of another daemon, FDSTORE=, EXTEND_TIMEOUT_USEC=) is the manager's to trust.
// systemd-notify is judged by its class; any other sender (nc -U "$NOTIFY_SOCKET", socat, python)
// is refused by its words (round-5 adversary F5).
func notifySocket(argv []string) string {
	for _, a := range argv {
		if strings.Contains(a, "NOTIFY_SOCKET") || strings.Contains(a, "/run/systemd/notify") ||
			strings.Contains(a, "/run/systemd/") && hasGlob(a) { // /run/systemd/notif?, [n]otify (round 6)
			return short(strings.Join(argv, " ")) + ": names the service manager's notification socket ($NOTIFY_SOCKET): a message there (MAINPID= of another daemon, FDSTORE=) is refused in a changed line"
		}
	}
	return ""
}

// replaceCommand says why, in every line (round 9: the node's own lines too, as the executor
// judges them), xargs or find runs a command whose words come from their input or what they find
// (a payload's file, /usr/bin/systemctl): xargs's replace string (-I R, -iR, --replace[=R]) as the
// program or in a shell's or interpreter's words, xargs -a F feeding a shell or an interpreter,
// xargs feeding a wrapper, and find's {} as the program of -exec, -execdir, -ok, -okdir (find
// /usr/bin -name systemctl -exec {} --user exit ;). A {} where a wrapper or a shell of find's
// command runs a program is refused by argvClass (found).
func (j judge) replaceCommand(prog string, argv []string) string {
	line := short(strings.Join(argv, " "))
	switch prog {
	case "find":
		for i, a := range argv {
			if (a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir") && i+1 < len(argv) && strings.Contains(argv[i+1], "{}") {
				return line + ": find " + a + " runs the files it finds as the program (find /usr/bin -name systemctl -exec {} … runs systemctl): cannot be judged"
			}
		}
	case "xargs":
		repl, file, start := "", false, len(argv)
		valued := []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-L", "-l", "-n", "--max-args", "-P",
			"--max-procs", "-s", "--max-chars", "--process-slot-var", "-I"}
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			if !strings.HasPrefix(a, "-") || a == "-" {
				start = i
				break
			}
			if a == "--" {
				start = i + 1
				break
			}
			name, val, hasVal := strings.Cut(a, "=")
			switch {
			case a == "-I" && i+1 < len(argv):
				repl = argv[i+1]
			case strings.HasPrefix(a, "-I"):
				repl = a[2:]
			case name == "--replace" || name == "-i":
				repl = "{}"
				if hasVal && val != "" {
					repl = val
				}
			case strings.HasPrefix(a, "-i") && !strings.HasPrefix(a, "--"):
				repl = a[2:]
			case name == "-a" || name == "--arg-file" || strings.HasPrefix(a, "-a"):
				file = true
			}
			if slices.Contains(valued, a) {
				i++
			}
		}
		if start >= len(argv) {
			return ""
		}
		cmd := argv[start:]
		p := cmdName(cmd[0])
		runsCode := slices.Contains(shells, p) || interpreterName(p) != "" || slices.Contains([]string{"awk", "gawk", "mawk", "nawk", "sed", "eval", "source", "."}, p)
		if repl != "" && strings.Contains(cmd[0], repl) {
			return line + ": xargs's replace string " + repl + " is the program: it runs what its input names (refused in every line)"
		}
		if repl != "" && runsCode {
			for _, w := range cmd[1:] {
				if strings.Contains(w, repl) {
					return line + ": xargs's replace string " + repl + " is code for " + p + ": it runs its input (refused in every line)"
				}
			}
		}
		if file && runsCode {
			return line + ": xargs -a hands the words of a file to " + p + " (refused in every line)"
		}
		if runsCode || slices.Contains(wrappers, p) || p == "xargs" || p == "sudo" {
			// Its input (a payload file, a pipe) becomes p's words: a wrapper runs them as the
			// command, a shell or interpreter as its script (round-6 adversary F2: xargs -a F env).
			return line + ": xargs hands the words of its input to " + p + ", which runs them as a command or code (refused in every line)"
		}
	}
	return ""
}

// engineUnshare judges, in every line, the command a container engine's unshare subcommand runs
// on the host (podman unshare CMD, buildah unshare CMD: the caller's namespaces but a user one,
// as root the same): as a wrapper's, every word that may start it (round 9: podman unshare
// systemctl --user exit). Its options' values are not known, so every "unshare" word counts.
func (j judge) engineUnshare(prog string, args []string, depth int) string {
	if prog != "podman" && prog != "buildah" {
		return ""
	}
	for i, a := range args {
		if a == "unshare" {
			return j.wrapped(prog+"-unshare", append([]string{prog + "-unshare"}, args[i+1:]...), depth, false, 0)
		}
	}
	return ""
}
