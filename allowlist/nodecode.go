package allowlist

import (
	"path"
	"slices"
	"strings"
)

// What a node unit's command line runs as code, for the read index (filereaders.go): not a judge
// of the line (the node's lines are the node's), but a generous reading of which files the line's
// processes take code from, so that no refresh writes one (adversary r24 d/01-d/04, d/06). A
// line's words are read so:
//   - its program, and every later word that is a shell or an interpreter wherever it stands (a
//     wrapper before it: env, nice, timeout, flock, setsid, systemd-cat …, modelled or not), with
//     that shell's or interpreter's script operand after its options (relative ones from
//     WorkingDirectory=), -f program files (awk, sed, make, expect), and for python and node the
//     script's directory (their module search starts there);
//   - a shell's -c string: each simple command's program and its shells' operands, every file
//     it sources (. F, source F), and the words after the string when it runs "$0" or "$@";
//   - the unit's Environment= variables that name code (codeVar: LD_PRELOAD, BASH_ENV, PATH,
//     PYTHONPATH …): each of their paths, a directory covering the files below it.

// shellNames are the shells whose operand is a script.
var shellNames = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"busybox": true, "csh": true, "tcsh": true, "fish": true}

// shellValued are a shell's options that take the next word as their value.
var shellValued = map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true}

// interpreterValued are an interpreter's options that take the next word (python's -W, -X).
var interpreterValued = map[string]bool{"-W": true, "-X": true, "-I": true, "-r": true}

// fileProgram are the programs whose -f option names their program file.
var fileProgram = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true, "sed": true, "make": true, "gmake": true, "expect": true}

// namedMark marks a path a shell string only names (not as its program, nor as what it sources):
// a read for the file writes the plan judges, never for a changed line's own places.
const namedMark = "\x00named\x00"

// codeOptions are programs' options whose value is a file of code or commands they run (r25 a/05,
// a/06, a/15).
var codeOptions = map[string][]string{"sqlite3": {"-init", "--init"}, "gdb": {"-x", "--command", "-ix", "--init-command"},
	"vim": {"-S", "-u"}, "vi": {"-S", "-u"}, "nvim": {"-S", "-u"}, "capsh": {"--"}, "xargs": {"-a", "--arg-file"},
	"sysctl": {"-p", "--load"}, "systemd-sysctl": {}, "modprobe": {"-C", "--config"}, "systemd-tmpfiles": {"--create", "--remove", "--clean"},
	"openssl": {"-config"}, "ssh": {"-F"}, "bpftrace": {}, "m4": {}, "sqlite": {"-init"}}

// commandWrappers run a command given as a string (-c, -S) or a shell given by name (-s).
var commandWrappers = map[string]bool{"flock": true, "su": true, "runuser": true, "script": true, "env": true, "sudo": true}

// maxCodeDepth bounds how deep -c strings nest (sh -c "bash -c '…'").
const maxCodeDepth = 4

// lineCode calls add with every file the command argv runs as code, wd the unit's working
// directory ("" if none), depth the -c nesting.
func lineCode(argv []string, wd string, depth int, add func(string) bool) bool {
	if len(argv) == 0 {
		return true
	}
	abs := func(p string) string {
		if strings.HasPrefix(p, "/") || wd == "" || p == "" {
			return p
		}
		return path.Join(wd, p)
	}
	prog := strings.TrimLeft(argv[0], "@-:+!|")
	if strings.Contains(prog, "/") {
		prog = abs(prog) // ./run.sh from the working directory; a bare name is looked up in PATH
	}
	ok := add(prog)
	// Every later absolute word that is no option's value may be what the line runs or loads: a
	// wrapper's program (env F, nice -n 19 F, xargs F), a tool's code (podman kube play F,
	// run-parts DIR, insmod F). Named reads: for the file writes the plan judges only. An option's
	// value (--authfile F, -p F) is taken as data: the pull secret is one (r25 a/06, d/01, d/07).
	for i := 1; i < len(argv) && ok; i++ {
		if w := argv[i]; strings.HasPrefix(w, "/") && !strings.HasPrefix(argv[i-1], "-") {
			ok = add(namedMark + w)
		}
	}
	for i := 0; i < len(argv) && ok; i++ {
		w := argv[i]
		if i == 0 {
			w = strings.TrimLeft(w, "@-:+!|")
		}
		b := path.Base(w)
		if b == "busybox" && i+1 < len(argv) && shellNames[argv[i+1]] {
			continue // busybox sh F: sh's operand
		}
		switch {
		case shellNames[b] || interpreterName(b) != "":
			if i > 0 && strings.HasPrefix(w, "/") {
				ok = add(w) // a later word that is a shell's or an interpreter's program
			}
			ok = ok && operandCode(b, argv[i+1:], wd, depth, add, abs)
		case fileProgram[b]:
			for k := i + 1; k < len(argv) && ok; k++ {
				a := argv[k]
				switch {
				case (a == "-f" || a == "--file" || a == "--makefile" || a == "-E" || a == "--exec" || a == "-i" || a == "--include") && k+1 < len(argv):
					ok = add(abs(argv[k+1]))
				case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--makefile=") || strings.HasPrefix(a, "--exec=") || strings.HasPrefix(a, "--include="):
					_, f, _ := strings.Cut(a, "=")
					ok = add(abs(f))
				case len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "f"):
					// -fF, -nf F: a joined or bundled program file
					if j := strings.IndexByte(a, 'f'); j+1 < len(a) {
						ok = add(abs(a[j+1:]))
					} else if k+1 < len(argv) {
						ok = add(abs(argv[k+1]))
					}
				case (a == "-C" || a == "--directory") && k+1 < len(argv) && (b == "make" || b == "gmake"):
					ok = makefiles(abs(argv[k+1]), add)
				}
			}
			if (b == "make" || b == "gmake") && wd != "" {
				ok = ok && makefiles(wd, add)
			}
		case codeOptions[b] != nil:
			for k := i + 1; k+1 < len(argv) && ok; k++ {
				if slices.Contains(codeOptions[b], argv[k]) {
					ok = add(abs(argv[k+1]))
				}
			}
		case commandWrappers[b]:
			// flock LOCK -c "…", su -c "…", runuser -c "…", script -c "…", env -S "…": a shell
			// string; su -s F, runuser -s F: F is the shell; env -C DIR: the directory after.
			for k := i + 1; k+1 < len(argv) && ok; k++ {
				switch a := argv[k]; {
				case a == "-c" || a == "--command" || a == "-S" || a == "--split-string":
					if depth < maxCodeDepth {
						ok = inlineCode(argv[k+1], nil, wd, depth+1, add, abs)
					}
				case a == "-s" || a == "--shell":
					ok = add(abs(argv[k+1]))
				case (a == "-C" || a == "--chdir") && b == "env":
					return lineCode(argv[k+2:], abs(argv[k+1]), depth, add)
				case strings.HasPrefix(a, "--chdir=") && b == "env":
					return lineCode(argv[k+1:], abs(strings.TrimPrefix(a, "--chdir=")), depth, add)
				}
			}
		}
	}
	return ok
}

// makefiles adds the makefiles make reads from dir by default.
func makefiles(dir string, add func(string) bool) bool {
	for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if !add(path.Join(dir, n)) {
			return false
		}
	}
	return true
}

// operandCode reads the arguments of the shell or interpreter b: its script operand, an rc file,
// a -c string.
func operandCode(b string, args []string, wd string, depth int, add func(string) bool, abs func(string) string) bool {
	shell := shellNames[b]
	inline := "cem" // perl -e, python -c and -m, ruby -e, node -e
	valued := interpreterValued
	if shell {
		inline, valued = "c", shellValued // sh -e is errexit
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return script(b, abs(args[i+1]), add)
			}
			return true
		case shell && (a == "--rcfile" || a == "--init-file"):
			if i+1 < len(args) && !add(abs(args[i+1])) {
				return false
			}
			i++
		case valued[a]:
			i++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			letters := strings.TrimLeft(a, "-+")
			if !shell && len(letters) > 0 {
				letters = letters[:1] // an interpreter's -Wignore, -Mstrict: one option, its value joined
			}
			if strings.ContainsAny(letters, inline) {
				if shell && i+1 < len(args) && depth < maxCodeDepth {
					return inlineCode(args[i+1], args[i+2:], wd, depth+1, add, abs)
				}
				if n := interpreterName(b); (n == "python" || n == "pypy") && wd != "" {
					return add(wd) // python -m and -c search the working directory first (r25 a/14)
				}
				return true
			}
		default:
			return script(b, abs(a), add)
		}
	}
	return true
}

// script adds the script s of the shell or interpreter b, and for python and node its directory.
func script(b, s string, add func(string) bool) bool {
	if !add(s) {
		return false
	}
	if n := interpreterName(b); (n == "python" || n == "pypy" || n == "node" || n == "nodejs") && strings.HasPrefix(s, "/") {
		return add(path.Dir(s))
	}
	return true
}

// inlineCode reads a shell's -c string: every simple command's code (lineCode), what it sources,
// and the words after the string ($0, $1 …) when it runs them.
func inlineCode(s string, after []string, wd string, depth int, add func(string) bool, abs func(string) string) bool {
	if strings.Contains(s, "$0") || strings.Contains(s, "$@") || strings.Contains(s, "${@") || strings.Contains(s, "$*") ||
		strings.Contains(s, "$1") || strings.Contains(s, "${0") || strings.Contains(s, "${1") {
		for _, a := range after {
			if !add(abs(a)) {
				return false
			}
		}
	}
	for _, cmd := range simpleCommands(s) {
		// Every absolute path the string names that is no option's value may be its code (cat F |
		// sh, sh < F, f=F; . "$f", eval "$(cat F)"): a generous reading, as a command computed at
		// run time cannot be followed (adversary r25 a/04, a/12).
		for k, w := range cmd {
			if _, v, ok := strings.Cut(w, "="); ok && isAssignment(w) {
				w = v
			}
			if strings.HasPrefix(w, "/") && (k == 0 || !strings.HasPrefix(cmd[k-1], "-")) && !add(namedMark+w) {
				return false
			}
			// A path inside a quoted substitution: "$(cat F)", "`cat F`" (adversary r25 a/04).
			if strings.Contains(w, "$(") || strings.Contains(w, "`") {
				for _, sub := range simpleCommands(strings.NewReplacer("$(", ";", "`", ";", ")", ";").Replace(w)) {
					for _, x := range sub {
						if strings.HasPrefix(x, "/") && !add(namedMark+x) {
							return false
						}
					}
				}
			}
		}
		for len(cmd) > 0 && isAssignment(cmd[0]) {
			cmd = cmd[1:]
		}
		if cmd0 := cmd; len(cmd0) > 1 && cmd0[0] == "cd" {
			wd = abs(cmd0[1]) // what follows runs there (cd /etc/myapp && sh run.sh)
			abs = func(p string) string {
				if strings.HasPrefix(p, "/") || p == "" {
					return p
				}
				return path.Join(wd, p)
			}
			continue
		}
		for len(cmd) > 0 && (cmd[0] == "exec" || cmd[0] == "command" || cmd[0] == "builtin" || cmd[0] == "nohup" || cmd[0] == "time") {
			cmd = cmd[1:]
		}
		if len(cmd) == 0 {
			continue
		}
		if (cmd[0] == "." || cmd[0] == "source") && len(cmd) > 1 {
			if !add(abs(cmd[1])) {
				return false
			}
			continue
		}
		if !lineCode(cmd, wd, depth, add) {
			return false
		}
	}
	return true
}

// simpleCommands splits a shell string into its simple commands' words, generously: at ; & | ( )
// { } newlines, `, $( and the keywords that start a command (if then else do …), quotes removed.
func simpleCommands(s string) [][]string {
	var out [][]string
	var cur []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		for len(cur) > 0 && shellKeyword(cur[0]) {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			word.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			flushWord()
		case strings.IndexByte(";&|(){}`\n", c) >= 0 || c == '$' && i+1 < len(s) && s[i+1] == '(':
			flushCmd()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flushCmd()
	return out
}

func shellKeyword(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "!", "{", "}":
		return true
	}
	return false
}

// envCode calls add with every path the unit's Environment= value v (one or more VAR=value
// assignments, quoted as systemd quotes them) names in a code variable.
func envCode(v, wd string, add func(string) bool) bool {
	words, err := SplitExec(v)
	if err != nil || len(words) == 0 {
		return true
	}
	for _, w := range words[0] {
		name, val, ok := strings.Cut(w, "=")
		if !ok || !codeVar(name) && !homeVars[name] {
			continue
		}
		for _, p := range strings.FieldsFunc(val, func(r rune) bool { return r == ':' || r == ' ' || r == ';' || r == ',' }) {
			for _, opt := range []string{"--require=", "-r", "-I", "-M", "@"} {
				p = strings.TrimPrefix(p, opt) // NODE_OPTIONS --require=F, PERL5OPT -I/dir, LUA_INIT @F
			}
			if wd != "" && p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "%") && !strings.HasPrefix(p, "$") && !strings.HasPrefix(p, "-") {
				p = path.Join(wd, p) // LD_LIBRARY_PATH=., PATH=.: from the working directory (r25 a/14)
			}
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "%") || strings.HasPrefix(p, "$") {
				if !add(literalDir(p)) {
					return false
				}
			}
		}
	}
	return true
}

// literalDir is p up to what the reader cannot resolve: a variable ($LIB, ${PLATFORM}: ld.so's own
// tokens, the unit's variables), a pattern (lua's ?.lua), as the directory before it (covering
// every file below); p itself when it has none; "" when nothing absolute comes before it.
func literalDir(p string) string {
	k := strings.IndexAny(p, "$?*[")
	if k < 0 {
		return p
	}
	if d := path.Dir(p[:k] + "x"); strings.HasPrefix(d, "/") {
		return d
	}
	return "" // nothing literal before it: unknown (the variable's value is the unit's, not the payload's)
}

// homeVars name a directory whose startup files a program runs (a login shell's profile, git's
// config with its hooks and aliases): code as the unit's user (adversary r25 a/07).
var homeVars = map[string]bool{"HOME": true, "XDG_CONFIG_HOME": true, "XDG_CONFIG_DIRS": true, "ZDOTDIR": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true}
