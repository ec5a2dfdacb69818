package allowlist

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// A changed line runs only what the judge models or what the unit already runs (issue 27, class 3).
// Six adversary rounds each found one more program the lists of bad classes missed (setarch, choom,
// ssh-agent, m4, sqlite3 -init, bpftrace …): a list of bad things is never complete. So in a changed
// line every command the judge finds, at every depth (the line's program, each ";" command, each
// command of a shell script, each modeled wrapper's command, find -exec's, xargs's, an '@' argv0
// program), must run a program that is
//   - modeled: one the judge has an exact model of (modeledProgram): the inert programs, the writers
//     it judges, sed, awk, grep, find, xargs, kill, systemd-notify, systemd-run, shells (their scripts
//     judged under the same rule), interpreters (a script file only from read-only OS content),
//     container engines' read-only and stop commands, and the wrappers whose option grammar is
//     modeled exactly (wrapperGrammars), so that where their command starts is known;
//   - the unit's own: one the node's current definition of the same unit already runs as a command
//     (OwnPrograms), the payload changing only its arguments; or
//   - granted: one the node policy lists for the unit (Policy.UnitPrograms).
//
// Both of the last two come in Execution.Programs. Every other wrapper and every unmodeled program
// is refused in a changed line, naming it; the argument rules (reach, writes into the node's code,
// code operands, images, socket senders, class names in command position) still judge every
// program's arguments, own and granted ones included.

// wrapperGrammar is a wrapper's option grammar, exactly: what is neither is refused, since the word
// an unknown option takes might be the command.
type wrapperGrammar struct {
	flags    []string // options without a value
	valued   []string // options with a value: joined (-n5, --adjustment=5) or the next word
	optional []string // options whose value, if any, is joined only (xargs -i[R], --replace[=R])
	operands int      // words before the command (timeout's DURATION, chrt's priority, taskset's mask)
	assigns  bool     // env's NAME=VALUE words before the command
	numbers  bool     // nice's legacy -N
}

// wrapperGrammars are the modeled wrappers (GNU coreutils, util-linux, findutils as RHCOS ships
// them; all stop reading options at the first operand). exec and command are the shell's, run as a
// program (/usr/bin/command); kubenswrapper is the MCO's /usr/local/bin/kubenswrapper, which runs
// its arguments as the command.
var wrapperGrammars = map[string]wrapperGrammar{
	"env": {flags: []string{"-i", "--ignore-environment", "-0", "--null", "-v", "--debug"},
		valued: []string{"-u", "--unset", "-C", "--chdir"}, assigns: true},
	"nice":   {valued: []string{"-n", "--adjustment"}, numbers: true},
	"ionice": {flags: []string{"-t", "--ignore"}, valued: []string{"-c", "--class", "-n", "--classdata"}},
	"timeout": {flags: []string{"--preserve-status", "-p", "--foreground", "-f", "-v", "--verbose"},
		valued: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	"nohup":  {},
	"setsid": {flags: []string{"-f", "--fork", "-w", "--wait", "-c", "--ctty"}},
	"stdbuf": {valued: []string{"-i", "--input", "-o", "--output", "-e", "--error"}},
	// Only the policies a unit's own settings may have: CPUSchedulingPolicy=fifo|rr and
	// IOSchedulingClass=realtime are refused, and so are chrt's real-time policies (its default
	// among them) and ionice's real-time class (wrapperValues).
	"chrt":    {flags: []string{"-b", "--batch", "-i", "--idle", "-o", "--other", "-R", "--reset-on-fork", "-v", "--verbose"}, operands: 1},
	"taskset": {flags: []string{"-c", "--cpu-list"}, operands: 1},
	"exec":    {}, "command": {}, "kubenswrapper": {},
	"xargs": {flags: []string{"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit", "-p",
		"--interactive", "-o", "--open-tty", "--show-limits"},
		valued: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
			"--max-procs", "-s", "--max-chars", "--process-slot-var"},
		optional: []string{"-e", "--eof", "-i", "--replace", "-l", "--max-lines"}},
}

// modeledWrapper says whether argv0 is a modeled wrapper (kubenswrapper only as the MCO's).
func modeledWrapper(argv0 string) bool {
	n := path.Base(argv0) // exactly: /usr/local/bin/ENV is no env
	if n == "kubenswrapper" {
		return argv0 == n || nodePath(argv0) == "/usr/local/bin/kubenswrapper"
	}
	_, ok := wrapperGrammars[n]
	return ok
}

// wrapperCommand reads a modeled wrapper's arguments by its grammar: where its command starts
// (len(args) when it runs none), the directories it changes to (env -C), or why the arguments
// cannot be read exactly.
func wrapperCommand(prog string, args []string) (start int, dirs []string, why string) {
	g := wrapperGrammars[prog]
	i := 0
	var opts [][2]string // the options read, with their values
	value := func(opt, joined string, hasJoined bool) string {
		if hasJoined {
			return joined
		}
		if i+1 >= len(args) {
			why = prog + " " + opt + " without its value"
			return ""
		}
		i++
		return args[i]
	}
	record := func(opt, v string) { // a valued option; env -C's is a directory its command runs in
		opts = append(opts, [2]string{opt, v})
		if prog == "env" && (opt == "-C" || opt == "--chdir") {
			dirs = append(dirs, v)
		}
	}
options:
	for ; i < len(args) && why == ""; i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
			break options
		case a == "-" || !strings.HasPrefix(a, "-"):
			break options
		case g.numbers && isNumber(a[1:]):
			opts = append(opts, [2]string{"-n", a[1:]}) // nice -5 is nice -n 5
		case strings.HasPrefix(a, "--"):
			name, v, has := strings.Cut(a, "=")
			switch {
			case slices.Contains(g.flags, name) && !has:
				opts = append(opts, [2]string{name, ""})
			case slices.Contains(g.optional, name):
			case slices.Contains(g.valued, name):
				record(name, value(name, v, has))
			default:
				return 0, nil, prog + " " + short(a) + ": an option the judge does not model (a changed line runs " + prog + " only with the options whose command it knows)"
			}
		default:
			// A cluster of short options (-iu NAME, -n5): a valued one takes the rest of the word or the next.
			for k := 1; k < len(a); k++ {
				o := "-" + a[k:k+1]
				switch {
				case slices.Contains(g.flags, o):
					opts = append(opts, [2]string{o, ""})
					continue
				case slices.Contains(g.optional, o):
				case slices.Contains(g.valued, o):
					record(o, value(o, a[k+1:], k+1 < len(a)))
				default:
					return 0, nil, prog + " " + short(a) + ": an option the judge does not model (a changed line runs " + prog + " only with the options whose command it knows)"
				}
				break
			}
		}
	}
	if why != "" {
		return 0, nil, why
	}
	if why := wrapperValues(prog, opts); why != "" {
		return 0, nil, why
	}
	if prog == "env" && i < len(args) && args[i] == "-" {
		i++ // env - is env -i
		opts = append(opts, [2]string{"-i", ""})
	}
	for n := 0; n < g.operands && i < len(args); n++ {
		i++
	}
	for g.assigns && i < len(args) && strings.Contains(args[i], "=") {
		i++ // env reads every word with "=" as an assignment
	}
	if prog == "env" && i < len(args) && (slices.Contains(shells, cmdName(args[i])) || slices.Contains(wrappers, cmdName(args[i]))) {
		// A shell without PATH (started here, or by a wrapper below) searches bash's default
		// path, which ends in "." (a bare name runs a file in the working directory).
		for _, o := range opts {
			if o[0] == "-i" || o[0] == "--ignore-environment" || (o[0] == "-u" || o[0] == "--unset") && o[1] == "PATH" {
				return 0, nil, "env " + strings.TrimSpace(o[0]+" "+o[1]) + " " + args[i] + ": a shell run without PATH searches bash's default path, which ends in \".\" (a bare name runs a file in the working directory)"
			}
		}
	}
	return i, dirs, ""
}

// wrapperValues says why a modeled wrapper's options give its command more than a unit's own
// settings may (Nice= is 0 to 19; no real-time CPU or I/O scheduling), or "".
func wrapperValues(prog string, opts [][2]string) string {
	switch prog {
	case "nice":
		for _, o := range opts {
			if n, err := strconv.Atoi(o[1]); err != nil || n < 0 || n > 19 {
				return "nice " + o[0] + " " + o[1] + ": an adjustment of 0 to 19 only, as Nice= (never above the default priority)"
			}
		}
	case "ionice":
		for _, o := range opts {
			if (o[0] == "-c" || o[0] == "--class") && !slices.Contains([]string{"0", "2", "3", "none", "best-effort", "idle"}, strings.ToLower(o[1])) {
				return "ionice " + o[0] + " " + o[1] + ": the real-time I/O class (refused as IOSchedulingClass=realtime is)"
			}
		}
	case "chrt":
		for _, o := range opts {
			if slices.Contains([]string{"-b", "--batch", "-i", "--idle", "-o", "--other"}, o[0]) {
				return ""
			}
		}
		return "chrt without -o, -b or -i sets a real-time policy (refused as CPUSchedulingPolicy=fifo or rr is)"
	}
	return ""
}

func isNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// judgedPrograms are the programs, besides shells, interpreters, container engines and the modeled
// wrappers, whose runs the judge models: what they do is in their words, judged (sed's and awk's
// programs, the writers' targets, find's and xargs's commands, kill's PID, systemd-notify's
// message, systemd-run's options and command), or they run nothing (inertPrograms).
var judgedPrograms = []string{"sed", "gsed", "awk", "gawk", "mawk", "nawk", "grep", "egrep", "fgrep", "find", "xargs",
	"kill", "systemd-notify", "systemd-run"}

// shellWords are what a script's command splitter yields for the shell's own syntax and builtins
// (for x in …; case … esac; [[ … ]]; cd; read; exit): no program.
var shellWords = []string{"for", "in", "case", "esac", "fi", "done", "[[", "]]", ":", "cd", "pushd", "popd", "exit",
	"return", "shift", "break", "continue", "read", "wait", "umask", "ulimit", "unset", "set", "export", "local",
	"declare", "typeset", "readonly", "trap", "pwd", "times", "getopts", "let", "mapfile", "readarray", "type", "{", "}"}

// unmodeledShells are shells whose syntax the script splitter (POSIX sh's) does not model: zsh's
// ${(e)x} and =cmd, fish's and csh's own grammars. chcon sets a label of its choosing (what a
// confined domain may then run or read). Neither is modeled; own or granted, they run.
var unmodeledShells = []string{"zsh", "fish", "csh", "tcsh"}

// editors are writers the judge does not model (their commands come from their input): never a
// modeled program (judgeRunner refuses most of their uses in every line).
var editors = []string{"ed", "ex", "vi", "vim"}

// modeledProgram says whether the judge has an exact model of the program argv0 runs. Its name
// must be the model's exactly (the classes that refuse read names in any case; this one admits).
func modeledProgram(argv0 string) bool {
	n := path.Base(argv0)
	if n == "chcon" || slices.Contains(unmodeledShells, n) {
		return false
	}
	if _, engine := containerEngines[n]; engine {
		return true // only their read-only and stop commands in a changed line (judgeImages)
	}
	return modeledWrapper(argv0) || slices.Contains(inertPrograms, n) ||
		slices.Contains(writers, n) && !slices.Contains(editors, n) || slices.Contains(judgedPrograms, n) ||
		slices.Contains(shells, n) || interpreterName(n) != "" && n == cmdName(n) || slices.Contains(shellWords, n)
}

// modeledSet names the modeled programs in a refusal (docs/security.md lists them all).
const modeledSet = "echo, cat, test, mkdir, cp, ln, tee, …, sed, awk, grep, find, xargs, kill, systemd-notify, systemd-run, shells, " +
	"interpreters, podman stop, env, nice, ionice, timeout, nohup, setsid, stdbuf, chrt, taskset, kubenswrapper"

// programRule says why a changed line may not run argv0: neither modeled nor the unit's own nor
// granted to it by the node policy.
func (j judge) programRule(argv0 string) string {
	if modeledProgram(argv0) || j.ownProgram(argv0) {
		return ""
	}
	return "runs " + argv0 + ": a changed line may run only the programs the judge models (" + modeledSet +
		") or the unit's own programs (run by the node's current definition of the unit, or granted by the node policy's unitPrograms)"
}

// ownProgram says whether w names one of the unit's own or granted programs: the same path
// (cleaned, as RHCOS reaches it), or the same name where one side names it without a path and the
// other lies on the search path.
func (j judge) ownProgram(w string) bool {
	if j.progSet != nil {
		return j.progSet.has(w)
	}
	for _, p := range j.programs {
		if sameProgram(p, w) {
			return true
		}
	}
	return false
}

// programSet is sameProgram against many programs at once: by key for a path, by name for a bare
// name and for a path on the search path (a unit may run thousands: adversary r25 c/06, quadratic).
type programSet struct{ keys, bare, searched map[string]bool }

// newProgramSet indexes programs when there are many (nil: few, compared one by one).
func newProgramSet(programs []string) *programSet {
	if len(programs) <= 32 {
		return nil
	}
	s := &programSet{keys: map[string]bool{}, bare: map[string]bool{}, searched: map[string]bool{}}
	for _, p := range programs {
		switch {
		case !strings.Contains(p, "/"):
			s.bare[p] = true
		default:
			s.keys[programKey(p)] = true
			if onSearchPath(p) {
				s.searched[path.Base(programKey(p))] = true
			}
		}
	}
	return s
}

func (s *programSet) has(w string) bool {
	if !strings.Contains(w, "/") {
		return s.bare[w] || s.searched[w]
	}
	return s.keys[programKey(w)] || onSearchPath(w) && s.bare[path.Base(programKey(w))]
}

func sameProgram(a, b string) bool {
	pa, pb := strings.Contains(a, "/"), strings.Contains(b, "/")
	switch {
	case pa && pb:
		return programKey(a) == programKey(b)
	case !pa && !pb:
		return a == b
	case pa:
		return onSearchPath(a) && path.Base(programKey(a)) == b
	default:
		return onSearchPath(b) && path.Base(programKey(b)) == a
	}
}

// programKey is a program path as RHCOS reaches it: nodePath, with /bin and /sbin in /usr.
func programKey(p string) string {
	c := nodePath(p)
	for _, d := range []string{"/bin/", "/sbin/"} {
		if strings.HasPrefix(c, d) {
			return "/usr" + c
		}
	}
	return c
}

// onSearchPath says whether the program lies in a directory of the search path
// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin).
func onSearchPath(p string) bool {
	return plainPath(p) && slices.Contains([]string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"}, path.Dir(programKey(p)))
}

// OwnPrograms are the programs a unit's commands run (the node's current definition of it): the
// argv[0] of each command, and of the commands its modeled wrappers and its shells' -c scripts run,
// a path as RHCOS reaches it (programKey) or a name; the script files its shells and interpreters
// run; and an unmodeled wrapper's first program path. A changed line may run them with other
// arguments.
func OwnPrograms(exec [][]string) []string {
	left := execBudget(exec)
	j := judge{env: map[string]string{}, left: &left, wd: &[]string{}, made: map[string]bool{}}
	var out []string
	for _, argv := range exec {
		j.ownOf(argv, 0, &out)
	}
	return out
}

func (j judge) ownOf(argv []string, depth int, out *[]string) {
	if len(argv) == 0 || depth > 8 || j.charge(len(argv)) || strings.ContainsAny(argv[0], "$%`") {
		return
	}
	w := argv[0]
	if strings.Contains(w, "/") {
		w = programKey(w)
	}
	if !slices.Contains(*out, w) {
		*out = append(*out, w)
	}
	prog := cmdName(argv[0])
	switch {
	case modeledWrapper(argv[0]):
		if start, _, why := wrapperCommand(prog, argv[1:]); why == "" {
			j.ownOf(argv[1+start:], depth+1, out)
		}
	case slices.Contains(wrappers, prog):
		// A wrapper the judge does not model: its command's position is unknown; its first
		// program path is the unit's (the one wrapped holds a changed line's to).
		skip := slices.Contains(wrapperFirstOperand, prog)
		for k, a := range argv[1:] {
			if strings.HasPrefix(a, "-") || k > 0 && slices.Contains(wrapperPathValues, argv[k]) {
				continue
			}
			if skip {
				skip = false
				continue
			}
			if strings.Contains(a, "/") {
				if nodeProgram(a) {
					j.ownOf([]string{a}, depth+1, out)
				}
				return
			}
		}
	case isAwk(prog):
		for _, f := range awkOwnFiles(argv[1:]) {
			j.ownOf([]string{f}, depth+1, out) // its program files: scripts (judgeAwk)
		}
	case interpreterName(prog) != "":
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") {
				j.ownOf([]string{a}, depth+1, out) // its script: a program too (scriptFile)
				return
			}
		}
	case slices.Contains(shells, prog):
		s, ok := inlineScript(argv[1:])
		if s != "" && !ok {
			j.ownOf([]string{s}, depth+1, out) // its script file
			return
		}
		if !ok {
			return
		}
		cmds, why := j.splitScript(s, depth+1, true)
		if why != "" {
			return
		}
		for _, c := range cmds {
			if c.strict {
				j.ownOf(scriptCommand(c.words), depth+1, out)
			}
		}
	}
}

// inlineScript is the script a shell's -c runs, if it has one.
func inlineScript(args []string) (string, bool) {
	inline := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++
		case a == "--":
			return "", false
		case strings.HasPrefix(a, "--"):
		case (a[0] == '-' || a[0] == '+') && len(a) > 1:
			inline = inline || strings.ContainsRune(a[1:], 'c')
		default:
			return a, inline
		}
	}
	return "", false
}

// scriptPrefixes are the words before a script's command that the shell reads as no command.
var scriptPrefixes = []string{"then", "else", "do", "if", "elif", "while", "until", "time", "coproc", "exec", "command"}

// scriptCommand is a script's simple command without what stands before its program (assignments,
// !, keywords, exec, command).
func scriptCommand(words []string) []string {
	for len(words) > 0 && (isAssignment(words[0]) || words[0] == "!" || slices.Contains(scriptPrefixes, words[0])) {
		words = words[1:]
	}
	return words
}

// xargsReaders are the programs a changed line's xargs may hand its input's words to: programs that
// only read or print, whatever words they get (not rm: what it removes would not be in its words). Any other program's words would be the
// input's, which the judge cannot see (xargs -a F cp: a destination in the node's code; xargs -a F
// myapp: flags no argument rule reads).
var xargsReaders = []string{"echo", "printf", "cat", "test", "[", "true", "false", "ls", "stat", "grep", "egrep", "fgrep",
	"head", "tail", "wc", "sha256sum", "sha1sum", "md5sum", "readlink", "realpath", "basename", "dirname", "file", "du",
	"sleep"}

// strictModeled judges, in a changed line's command, what a modeled program's model does not
// cover otherwise: rsync's daemon (its configuration runs commands), find's output files and what
// it changes, archives' names, set-ID modes, the clock and the name, and the files sed -i edits,
// chmod, chown and rm change (each as a write, nodeWrite).
func (j judge) strictModeled(prog string, argv []string) string {
	line := short(strings.Join(argv, " "))
	if n := interpreterName(prog); n != "" {
		if why := interpreterOptions(n, argv[1:]); why != "" {
			return line + ": " + why
		}
	}
	switch prog {
	case "rsync":
		for _, a := range argv[1:] {
			if a == "--daemon" || strings.HasPrefix(a, "--config") {
				return line + ": rsync's daemon runs the commands its configuration names (pre-xfer exec) as root (refused in a changed line)"
			}
		}
	case "tar", "cpio", "unzip":
		if why := j.archive(prog, argv[1:]); why != "" {
			return line + ": " + why
		}
	case "chmod", "install", "mkdir":
		if m := modeOf(prog, argv[1:]); setID(m) {
			return line + ": mode " + m + " sets the set-user-ID or set-group-ID bit (a program any user runs as its owner; refused in a changed line)"
		}
		if prog == "chmod" {
			return j.metadataWrites(line, argv[1:], true)
		}
	case "sed", "gsed":
		// What sed -i edits is written: not the node's code, nor, for a pattern, the directory of
		// its fixed part (sed -i … /etc/cron*).
		if _, files, inPlace := sedArgs(argv[1:]); inPlace {
			for _, f := range files {
				above := false
				if x, ok := j.expand(f); ok && hasGlob(x) {
					f, above = path.Dir(x[:strings.IndexAny(x, "*?[{")]+"x"), true
				}
				if why := j.nodeWrite(f, above); why != "" {
					return line + ": " + why + changesAsWrites
				}
			}
		}
	case "chown", "chgrp":
		return j.metadataWrites(line, argv[1:], true)
	case "rm", "rmdir", "unlink", "shred":
		// Removing the node's code or what it trusts (a policy file, a hardening dropin) changes it.
		return j.metadataWrites(line, argv[1:], false)
	case "date", "hostname":
		for _, a := range argv[1:] {
			if a == "-s" || strings.HasPrefix(a, "--set") || prog == "date" && !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") ||
				prog == "hostname" && (!strings.HasPrefix(a, "-") || a == "-F" || strings.HasPrefix(a, "--file") || a == "-b" || a == "--boot") {
				return line + ": sets the system's clock or name (timedatectl's and hostnamectl's business, refused in a changed line)"
			}
		}
	case "find":
		if why := j.findChanges(line, argv[1:]); why != "" {
			return why
		}
		for i, a := range argv {
			if (a == "-fprint" || a == "-fprint0" || a == "-fprintf" || a == "-fls") && i+1 < len(argv) {
				if why := j.target(argv[i+1]); why != "" {
					return line + ": " + why
				}
				if why := j.nodeWrite(argv[i+1], false); why != "" {
					return line + ": " + why
				}
			}
		}
	}
	return ""
}

// archive judges an archiver's run in a changed line beyond its destination (destinations): names
// it writes as the archive has them, absolute or with "..", escape any -C (tar -P, cpio without
// --no-absolute-filenames, unzip -:); the archive tar or cpio creates is a file it writes.
func (j judge) archive(prog string, args []string) string {
	short := func(a string) bool { return strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") }
	switch prog {
	case "tar":
		creates := false
		for i, a := range args {
			old := i == 0 && !strings.HasPrefix(a, "-") // tar cvf F: the old style's first word
			if a == "--absolute-names" || (short(a) || old) && strings.Contains(a, "P") {
				return "tar -P writes the archive's absolute names (the node's code among them)"
			}
			creates = creates || a == "--create" || a == "--append" || a == "--update" || a == "--concatenate" ||
				(short(a) || old) && strings.ContainsAny(a, "cruA")
		}
		if !creates {
			return ""
		}
		for _, f := range tarValues(args, 'f', "--file") {
			if f == "" || f == "-" {
				continue
			}
			if why := j.target(f); why != "" {
				return why
			}
			if why := j.nodeWrite(f, false); why != "" {
				return why
			}
		}
	case "cpio":
		if extracts(prog, args) && !slices.Contains(args, "--no-absolute-filenames") {
			return "cpio writes the archive's names as they are, absolute ones too (--no-absolute-filenames keeps them below the directory)"
		}
		for i, a := range args {
			name, v, has := strings.Cut(a, "=")
			if (name == "-O" || name == "-F" || name == "--file") && !has && i+1 < len(args) {
				v, has = args[i+1], true
			}
			if has && (name == "-O" || name == "-F" || name == "--file") {
				if why := j.nodeWrite(v, false); why != "" {
					return why
				}
				if why := j.target(v); why != "" {
					return why
				}
			}
		}
	case "unzip":
		for _, a := range args {
			if short(a) && strings.ContainsAny(a, ":^") {
				return "unzip " + a + " keeps the archive's ../ names (they escape -d)"
			}
		}
	}
	return ""
}

// modeOf is the mode a chmod, install -m or mkdir -m sets ("" when none is given).
func modeOf(prog string, args []string) string {
	for i, a := range args {
		name, v, has := strings.Cut(a, "=")
		switch {
		case prog != "chmod" && (name == "-m" || name == "--mode"):
			if has {
				return v
			}
			if i+1 < len(args) {
				return args[i+1]
			}
		case prog != "chmod" && strings.HasPrefix(a, "-m") && len(a) > 2:
			return a[2:]
		case prog != "chmod" && shortCluster(a, 'm', "gmoStZ"):
			// install -Dm4755, mkdir -pm u+s: the mode is the cluster's rest, or the next word.
			if v := a[strings.IndexByte(a, 'm')+1:]; v != "" {
				return v
			}
			if i+1 < len(args) {
				return args[i+1]
			}
		case prog == "chmod" && !strings.HasPrefix(a, "-") || prog == "chmod" && len(a) > 1 && strings.ContainsAny(a[1:2], "rwxXst") && !strings.HasPrefix(a, "--"):
			return a // chmod's first operand (-w, -x are modes too)
		}
	}
	return ""
}

// metadataWrites judges the files chmod, chown, chgrp (after their mode or owner: first) or rm
// name, in a changed line: changing or removing one changes the node's code or what it trusts, as
// a write does (nodeWrite).
func (j judge) metadataWrites(line string, args []string, first bool) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if strings.HasPrefix(a, "--reference") {
				first = false // the mode or owner is the reference file's
			}
			if !(first && len(a) > 1 && strings.ContainsAny(a[1:2], "rwxXst")) {
				continue // an option (chmod -w is a mode, taken below)
			}
		}
		if first {
			first = false
			continue
		}
		if why := j.nodeWrite(a, false); why != "" {
			return line + ": " + why + changesAsWrites
		}
	}
	return ""
}

const changesAsWrites = " (a changed line's sed -i, chmod, chown, rm and find -delete change what they name as a write does)"

// findChanges judges, in a changed line, a find that removes or hands its files to a program that
// may change them (-delete, -exec cp {} …): what it finds below its starting points is not in its
// words, so no starting point may be or hold the node's code.
func (j judge) findChanges(line string, args []string) string {
	changes := false
	for i, a := range args {
		switch a {
		case "-delete":
			changes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			changes = changes || i+1 < len(args) && !slices.Contains(xargsReaders, path.Base(args[i+1]))
		}
	}
	if !changes {
		return ""
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		if why := j.nodeWrite(strings.TrimSuffix(a, "/")+"/", true); why != "" {
			return line + ": find changes what it finds below " + a + ": " + why + changesAsWrites
		}
	}
	return ""
}

// interpreterFlags are, by interpreter, the one-letter options a changed line may give it: those
// that change neither where its code comes from nor what it writes. A letter in valued takes a
// value (the rest of its word or the next); one in digits may carry digits in its word (perl -l0,
// ruby -W2). Every other option (python -X, perl -I/-M/-i/-x, ruby -I/-r, node --require, php -c
// or -d auto_prepend_file=, any long option) is refused: it may load code from a file the payload
// may write, or make the interpreter write one.
var interpreterFlags = map[string]struct{ flags, valued, digits string }{
	"python": {"uBEIsSOqbdvP", "W", ""}, "pypy": {"uBEIsSOqbdvP", "W", ""},
	"perl": {"wWXTtans", "", "l0C"}, "ruby": {"wvnpal", "", "W"},
}

// interpreterOptions says why, in a changed line, an interpreter's options are outside its model.
// They end at its script (or python's -m, judged by pythonModule).
func interpreterOptions(name string, args []string) string {
	f := interpreterFlags[name]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return ""
		}
		if strings.HasPrefix(a, "--") {
			return name + " " + short(a) + ": an option the judge does not model (it may load code from a file the payload may write)"
		}
	letters:
		for k := 1; k < len(a); k++ {
			c := a[k : k+1]
			switch {
			case (name == "python" || name == "pypy") && c == "m":
				return "" // the module: pythonModule
			case strings.Contains(f.flags, c):
			case strings.Contains(f.valued, c):
				if k+1 == len(a) {
					i++
				}
				break letters
			case strings.Contains(f.digits, c):
				for k+1 < len(a) && a[k+1] >= '0' && a[k+1] <= '9' {
					k++
				}
			default:
				return name + " " + short(a) + ": an option the judge does not model (it may load code from a file the payload may write)"
			}
		}
	}
	return ""
}
