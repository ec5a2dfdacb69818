package allowlist

import (
	"path"
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
			for k := i + 1; k+1 < len(argv) && ok; k++ {
				if argv[k] == "-f" || argv[k] == "--file" {
					ok = add(abs(argv[k+1]))
				} else if f, has := strings.CutPrefix(argv[k], "--file="); has {
					ok = add(abs(f))
				}
			}
		}
	}
	return ok
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
			if strings.ContainsAny(strings.TrimLeft(a, "-+"), inline) {
				if shell && i+1 < len(args) && depth < maxCodeDepth {
					return inlineCode(args[i+1], args[i+2:], wd, depth+1, add, abs)
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
		for len(cmd) > 0 && isAssignment(cmd[0]) {
			cmd = cmd[1:]
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
func envCode(v string, add func(string) bool) bool {
	words, err := SplitExec(v)
	if err != nil || len(words) == 0 {
		return true
	}
	for _, w := range words[0] {
		name, val, ok := strings.Cut(w, "=")
		if !ok || !codeVar(name) {
			continue
		}
		for _, p := range strings.FieldsFunc(val, func(r rune) bool { return r == ':' || r == ' ' || r == ';' || r == ',' }) {
			if k := strings.IndexAny(p, "?*"); k >= 0 {
				p = path.Dir(p[:k] + "x") // lua's ?.lua: the directory
			}
			if strings.HasPrefix(p, "--require=") || strings.HasPrefix(p, "-r") {
				p = strings.TrimPrefix(strings.TrimPrefix(p, "--require="), "-r")
			}
			if strings.HasPrefix(p, "/") && !add(p) {
				return false
			}
		}
	}
	return true
}
