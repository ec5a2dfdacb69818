package allowlist

import (
	"slices"
	"strings"
)

// A changed line's modeled programs act only on the node (round-7b adversary F6, F9, F10, F13):
// the models said what they write, not where else they connect or what else they run.
//   - systemd-run takes only a small grammar (--scope, --wait, --quiet, --collect, --no-block, --pipe,
//     --no-ask-password, --system, --unit, --description, --setenv judged by the environment
//     judge): --working-directory, --uid, --property, timers and the rest change what its command
//     is (cp F kubenswrapper run in /usr/local/bin).
//   - rsync's operands are local paths: none names a host (host:path, [user@]host::module,
//     rsync://…, which connect through ssh or to a daemon), none starts with "-" (after "--" ssh
//     still reads -oProxyCommand=… as its option).
//   - tar's and cpio's archive names are local: a ':' before any '/' is a file on another host
//     reached through rsh (tar -f host:/x), unless --force-local.
//   - logger logs only locally: no server, port, TCP, UDP, RFC framing or socket.
//   - gawk writes no file of the payload's text (-d, -o, -p: a program pretty-printed into
//     /etc/profile.d or /usr/local/bin), runs no debugger (-D) and takes no -W.
//   - an interpreter runs no module (python3 -m json.tool IN OUT wrote /etc/profile.d; -m
//     http.server served the kubelet's secrets): a module is a program of the OS the judge does
//     not model, as a script file is, and perl -M, ruby -r, node -r/--require/--import, lua -l,
//     php -d load code the same way.

// strictLocal judges a changed line's command by the rules above ("" when none applies).
func (j judge) strictLocal(prog string, argv []string) string {
	if !j.strict {
		return ""
	}
	args := argv[1:]
	why := ""
	switch {
	case prog == "rsync":
		why = rsyncLocal(args)
	case prog == "tar" || prog == "cpio":
		why = archiveLocal(prog, args)
		if v, set := j.env["TAPE"]; why == "" && prog == "tar" && set && remoteName(v) && !slices.Contains(args, "--force-local") {
			why = "tar's archive is $TAPE, " + short(v) + ": a file on another host (reached through rsh)"
		}
		if why == "" && prog == "tar" {
			why = j.tapeArchive(args)
		}
	case prog == "logger" && j.judgeSocketSender(prog, args) == "": // which names -u and -n itself
		why = loggerLocal(args)
	case prog == "awk" || prog == "gawk" || prog == "mawk" || prog == "nawk":
		why = awkLocal(args)
	case interpreterName(prog) != "":
		why = noModule(prog, interpreterName(prog), args)
	}
	if why != "" {
		return short(strings.Join(argv, " ")) + ": " + why
	}
	return ""
}

// tapeWhy is why no unit setting nor script may set TAPE (round 9): GNU tar's archive when it names
// no -f/--file is $TAPE, else its standard input or output.
const tapeWhy = "TAPE is tar's archive when it names none (-f): tar -c writes it, tar -t and -x open and read it " +
	"(Environment=TAPE=/etc/shadow made tar -c -C /var/lib/myapp . overwrite /etc/shadow; host:file is reached through rsh)"

// tapeArchive judges, in a changed line, a tar that names no archive (-f, --file): GNU tar then
// writes or reads $TAPE, else its standard output or input. The unit's own Environment= may not set
// TAPE (assignmentWhy), nor PassEnvironment= pass it (judgeEnvironment); an EnvironmentFile= (the
// node's own file) may, with a value the judge does not read: refused there.
func (j judge) tapeArchive(args []string) string {
	if len(tarValues(args, 'f', "--file")) > 0 {
		return ""
	}
	if v, set := j.env["TAPE"]; set && v != "" {
		return "tar names no archive (-f): it writes or reads $TAPE, " + short(v) + " (name the archive with -f; a unit may not set TAPE)"
	}
	if j.envFiles {
		return "tar names no archive (-f): it writes or reads $TAPE, which the unit's EnvironmentFile= may set to a path the judge cannot read (name the archive with -f, or - for standard output)"
	}
	return ""
}

// netWords says why a changed line names bash's network devices (a redirection from or to
// /dev/tcp/HOST/PORT, /dev/udp/…, connects) or sets TAPE (tar's default archive, host:file through
// rsh) in any word, or "".
func netWords(argv []string) string {
	for _, a := range argv {
		for _, w := range []string{"/dev/tcp/", "/dev/udp/"} {
			if strings.Contains(a, w) {
				return short(strings.Join(argv, " ")) + ": names " + w + " (bash connects to another host there): refused in a changed line"
			}
		}
		for k := 0; ; {
			i := strings.Index(a[k:], "TAPE=")
			if i < 0 {
				break
			}
			if i += k; i == 0 || !isNameByte(a[i-1]) {
				return short(strings.Join(argv, " ")) + ": sets TAPE, tar's archive when it names none (host:file is reached through rsh): refused in a changed line"
			}
			k = i + 1
		}
	}
	return ""
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// remoteName says whether an rsync operand or an archive name names another host: a ':' before
// any '/' (host:path, host::module, rsync://host/…).
func remoteName(w string) bool {
	c := strings.IndexByte(w, ':')
	s := strings.IndexByte(w, '/')
	return c >= 0 && (s < 0 || c < s)
}

func rsyncLocal(args []string) string {
	operands := false
	for _, a := range args {
		switch {
		case !operands && a == "--":
			operands = true
		case operands && strings.HasPrefix(a, "-"):
			return "rsync operand " + short(a) + " starts with \"-\" (ssh reads it as its option: -oProxyCommand= runs a command)"
		case !operands && strings.HasPrefix(a, "-"):
			if name, v, has := strings.Cut(a, "="); has && name == "--files-from" && remoteName(v) {
				return "rsync " + short(a) + ": reads its file list from another host"
			}
		case remoteName(a):
			return "rsync " + short(a) + ": names another host (host:path, host::module, rsync://): a changed line's rsync copies only between local paths"
		}
	}
	return ""
}

func archiveLocal(prog string, args []string) string {
	if slices.Contains(args, "--force-local") {
		return ""
	}
	letters := "f"
	if prog == "cpio" {
		letters = "FOI"
	}
	refuse := func(name string) string {
		return prog + " archive " + short(name) + ": a ':' before any '/' names a file on another host (reached through rsh; --force-local keeps it local)"
	}
	for _, a := range args {
		if a == "--" {
			continue
		}
		name, v, has := strings.Cut(a, "=")
		switch {
		case strings.HasPrefix(a, "--"):
			if has && name == "--file" && remoteName(v) {
				return refuse(v)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if k := strings.IndexAny(a[1:], letters); k >= 0 && remoteName(a[k+2:]) {
				return refuse(a[k+2:])
			}
		case remoteName(a):
			return refuse(a) // an archive given apart (-f host:x), or any other operand
		}
	}
	return ""
}

// awkWrites are gawk's options that write a file (the variables, the program pretty-printed or
// profiled: text the payload chose, anywhere) or read debugger commands.
var awkWrites = []string{"--dump-variables", "--debug", "--pretty-print", "--profile"}

// awkLocal refuses, in a changed line, gawk's options that write a file of the payload's text
// (-d, -o, -p and their long forms: gawk -o/usr/local/bin/x 'PROGRAM'), its debugger (-D) and
// -W, by which gawk takes any long option and mawk a program file (-W exec F, -W file=F).
func awkLocal(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-" || !strings.HasPrefix(a, "-"):
			return "" // the program text (judgeAwk)
		case strings.HasPrefix(a, "--"):
			if name, _, _ := strings.Cut(a, "="); slices.Contains(awkWrites, name) {
				return "awk " + short(a) + ": writes a file of the payload's text, or runs the debugger (refused in a changed line)"
			}
		default:
			for k := 1; k < len(a); k++ {
				c := a[k]
				if strings.IndexByte("dDopW", c) >= 0 {
					return "awk -" + string(c) + ": writes a file of the payload's text, runs the debugger or takes any long option (refused in a changed line)"
				}
				if strings.IndexByte("fFveEil", c) >= 0 { // a value: the rest of the word or the next
					if k+1 == len(a) {
						i++
					}
					break
				}
			}
		}
	}
	return ""
}

// loggerNet are logger's options that send elsewhere than the local journal or syslog socket.
var loggerNet = []string{"--server", "--port", "--tcp", "--udp", "--socket", "--rfc3164", "--rfc5424", "--socket-errors"}

func loggerLocal(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "--"):
			if name, _, _ := strings.Cut(a, "="); slices.Contains(loggerNet, name) {
				return "logger " + short(a) + ": sends to another host or socket (a changed line's logger logs only locally)"
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				c := a[k]
				if strings.IndexByte("nPTdu", c) >= 0 {
					return "logger -" + string(c) + ": sends to another host or socket (a changed line's logger logs only locally)"
				}
				if strings.IndexByte("fpStn", c) >= 0 { // a valued option: the rest of the word or the next
					if k+1 == len(a) {
						i++
					}
					break
				}
			}
		}
	}
	return ""
}

// moduleFlags are the one-letter options by which an interpreter loads a module, and its long ones.
var moduleFlags = map[string][]string{
	"python": {"m"}, "pypy": {"m"}, "perl": {"M", "m"}, "ruby": {"r", "--require"},
	"node": {"r", "--require", "--import", "--loader", "--experimental-loader"}, "nodejs": {"r", "--require", "--import", "--loader", "--experimental-loader"},
	"lua": {"l"}, "luajit": {"l"}, "php": {"d"}, "julia": {"L"},
}

// noModule refuses an interpreter's module in a changed line.
func noModule(prog, name string, args []string) string {
	flags := moduleFlags[name]
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return "" // its script (judged as one) or standard input (judgeInterpreter)
		}
		if strings.HasPrefix(a, "--") {
			if n, _, _ := strings.Cut(a, "="); slices.Contains(flags, n) {
				return prog + " " + short(a) + ": loads a module, a program of the OS the judge does not model (refused in a changed line, as a script file is unless the unit's own)"
			}
			continue
		}
		for _, f := range flags {
			if len(f) == 1 && strings.Contains(a[1:], f) {
				return prog + " " + short(a) + ": runs or loads a module, a program of the OS the judge does not model (refused in a changed line, as a script file is unless the unit's own)"
			}
		}
	}
	return ""
}

// strictRunFlags and strictRunValues are the systemd-run grammar of a changed line.
var (
	strictRunFlags  = []string{"--scope", "--wait", "-q", "--quiet", "-G", "--collect", "--no-block", "-P", "--pipe", "--no-ask-password", "--system"}
	strictRunValues = []string{"-u", "--unit", "--description", "-E", "--setenv"}
)

// strictRun judges a changed line's systemd-run options by its grammar (their values, and the
// command, judgeRun judges).
func strictRun(argv []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return ""
		}
		name, _, has := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 {
			name, has = a[:2], true
		}
		switch {
		case slices.Contains(strictRunFlags, name) && !has:
		case slices.Contains(strictRunValues, name):
			if !has {
				i++
			}
		default:
			return short(strings.Join(argv, " ")) + ": systemd-run " + short(a) + ": outside the grammar of a changed line's systemd-run (--scope, --wait, --quiet, --collect, --no-block, --pipe, --unit, --description, --setenv): its working directory, identity, properties or timing change what its command does"
		}
	}
	return ""
}
