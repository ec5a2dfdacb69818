package allowlist

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Exec lines are judged as systemd runs them: the line is split into words as systemd does
// (quotes, C escapes, the -@:+!| prefixes, ";" between commands), then every command is judged
// through the wrappers that run another command (env, exec, nohup, setsid, systemd-run, …) and
// the shell scripts given to sh -c. A line that cannot be split with confidence is refused.

// SplitExec splits an Exec*= value into the argv of each command it runs. The '@' prefix's
// argv[0] override is dropped; the '|' prefix (run through the shell) gives the argv sh -c <rest>.
func SplitExec(v string) ([][]string, error) {
	v = strings.TrimSpace(v)
	var out [][]string
	for v != "" {
		prefix := ""
		for v != "" && strings.ContainsRune("-@:+!|", rune(v[0])) {
			prefix += v[:1]
			v = v[1:]
		}
		if strings.Contains(prefix, "|") {
			return append(out, []string{"sh", "-c", v}), nil
		}
		words, rest, err := execWords(v)
		if err != nil {
			return nil, err
		}
		if strings.Contains(prefix, "@") && len(words) > 1 {
			words = append(words[:1], words[2:]...)
		}
		if len(words) > 0 {
			out = append(out, words)
		}
		v = strings.TrimSpace(rest)
	}
	return out, nil
}

// execWords reads words up to a lone ";" (the rest is returned) as systemd's extract_first_word
// with unquoting and C unescaping does.
func execWords(v string) (words []string, rest string, err error) {
	var w strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			if i+1 >= len(v) {
				return nil, "", fmt.Errorf("exec line ends in a backslash")
			}
			n, r, err := cUnescape(v[i+1:])
			if err != nil {
				return nil, "", err
			}
			w.WriteString(r)
			i += n
			inWord = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				if w.String() == ";" {
					return words, v[i:], nil
				}
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, "", fmt.Errorf("exec line has an unterminated %c quote", quote)
	}
	if inWord && w.String() != ";" {
		words = append(words, w.String())
	}
	return words, "", nil
}

// cUnescape reads one C escape after a backslash: how many bytes it used and what it means.
func cUnescape(s string) (int, string, error) {
	simple := map[byte]string{'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
		'\\': "\\", '"': "\"", '\'': "'", ' ': " ", 's': " ", ';': ";", '$': "$"}
	if r, ok := simple[s[0]]; ok {
		return 1, r, nil
	}
	switch {
	case s[0] == 'x' && len(s) >= 3:
		b, err := strconv.ParseUint(s[1:3], 16, 8)
		if err == nil {
			return 3, string(rune(b)), nil
		}
	case s[0] >= '0' && s[0] <= '7' && len(s) >= 3:
		b, err := strconv.ParseUint(s[:3], 8, 8)
		if err == nil {
			return 3, string(rune(b)), nil
		}
	case (s[0] == 'u' && len(s) >= 5) || (s[0] == 'U' && len(s) >= 9):
		n := 4
		if s[0] == 'U' {
			n = 8
		}
		b, err := strconv.ParseUint(s[1:1+n], 16, 32)
		if err == nil {
			return 1 + n, string(rune(b)), nil
		}
	}
	return 0, "", fmt.Errorf("exec line has an escape \\%c systemd does not read", s[0])
}

// wrappers run the command their arguments name.
var wrappers = []string{"env", "exec", "nohup", "setsid", "systemd-run", "sudo", "nice", "ionice", "timeout",
	"stdbuf", "flock", "chrt", "taskset", "runuser", "chroot", "unshare", "nsenter", "xargs", "command",
	"builtin", "eval", "time", "busybox", "systemd-inhibit", "systemd-cat", "setpriv", "capsh", "watch"}

// shells run the script given to -c.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"}

// judgeArgv says which command of argv stops the system (looking through wrappers and shells), or "".
func judgeArgv(argv []string, depth int, left *int) string {
	if len(argv) == 0 {
		return ""
	}
	if *left -= len(argv); *left < 0 {
		return tooCostly
	}
	if depth > 8 {
		return strings.Join(argv, " ") + " (nested too deep to judge)"
	}
	for _, a := range argv {
		if strings.Contains(a, "sysrq-trigger") {
			return strings.Join(argv, " ")
		}
	}
	prog := path.Base(argv[0])
	if strings.ContainsAny(argv[0], "$%`") {
		return strings.Join(argv, " ") + " (a program named by a variable or specifier cannot be judged)"
	}
	if why := powerCommand(argv); why != "" {
		return why
	}
	if slices.Contains(shells, prog) {
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+1 < len(argv) {
				if why := judgeScript(argv[i+1], depth+1, left); why != "" {
					return why
				}
			}
		}
	}
	if slices.Contains(wrappers, prog) || slices.Contains(shells, prog) {
		if variableCommand(argv[1:]) != "" && !(slices.Contains(shells, prog) && hasDashC(argv[1:])) {
			// The wrapper's command (env $CMD, nice $PROG, sh $SCRIPT) is named by a variable:
			// systemd splits an unbraced $CMD into words, so it may be systemctl reboot.
			return strings.Join(argv, " ") + " (a program named by a variable or specifier cannot be judged)"
		}
		// Whatever the wrapper's options, the command it runs is one of its suffixes; a split string
		// (env -S "…", systemd-run -p …=…) is judged too.
		for i := 1; i < len(argv); i++ {
			if strings.Contains(argv[i], "Action=") {
				return strings.Join(argv, " ")
			}
			if strings.ContainsAny(argv[i], " \t\n$`") {
				// A script or a variable is not the program a suffix runs: scripts are judged below.
			} else if !mayRun(argv[i]) {
				// A suffix that starts with an ordinary program says nothing its judgement here
				// has not (sysrq-trigger was looked for in all of argv): skipping it keeps the cost
				// linear in the words, not quadratic (env a a a … of a 1 MiB continued line).
			} else if why := judgeArgv(argv[i:], depth+1, left); why != "" {
				return why
			}
			if strings.ContainsAny(argv[i], " \t\n") {
				if why := judgeScript(argv[i], depth+1, left); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// variableCommand returns the first word of a wrapper's arguments that is named by a variable or
// specifier before any program path: the wrapper would run it (env $CMD, timeout 5 $CMD). Options
// and NAME=value assignments are skipped; after a word with a "/" (the program) variables are its
// arguments. An option's value given by a variable (nice -n $N /usr/bin/x) is refused too: the
// words cannot tell it from the command.
func variableCommand(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if name, _, ok := strings.Cut(a, "="); ok && name != "" && !strings.ContainsAny(name, "/$`%") {
			continue
		}
		if strings.ContainsAny(a, "$%`") {
			return a
		}
		if strings.Contains(a, "/") {
			return ""
		}
	}
	return ""
}

// hasDashC says whether a shell's options include -c (its first operand is then the script).
func hasDashC(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return false
		}
		if !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
			return true
		}
	}
	return false
}

// The work of judging a unit's commands is bounded, whatever a payload's unit file holds (a 1 MiB
// ExecStart= of continued lines, wrappers within wrappers): judgeArgv and judgeScript charge the
// words and bytes they look at to a budget of execCostPerWord times the commands' words, and a unit
// that would cost more is refused as one that cannot be judged. An ordinary unit costs a few times
// its words.
const (
	execCostPerWord = 16
	execCostBase    = 4096
)

const tooCostly = "commands too long or too deeply wrapped to judge"

// MaxExecWords bounds the words of all of a unit's commands (every Exec*= line of the unit file and
// its dropins): more cannot be judged at a bounded cost, and no unit a refresh acts on has them.
const MaxExecWords = 16384

// execBudget is the work judging the commands may take.
func execBudget(exec [][]string) int {
	n := execCostBase
	for _, argv := range exec {
		for _, a := range argv {
			n += execCostPerWord * (1 + len(a)/8)
		}
	}
	return n
}

// commandWords counts the words of the commands.
func commandWords(exec [][]string) int {
	n := 0
	for _, argv := range exec {
		n += len(argv)
	}
	return n
}

// mayRun says whether judging a command that starts with word can find more than its arguments
// do: a wrapper or shell (it runs another command), a power tool, or a program named by a variable
// or specifier.
func mayRun(word string) bool {
	prog := path.Base(word)
	return slices.Contains(wrappers, prog) || slices.Contains(shells, prog) || slices.Contains(powerCommands, prog) ||
		slices.Contains(busTools, prog) || prog == "systemctl" || prog == "loginctl" || strings.ContainsAny(word, "$%`")
}

// judgeScript judges a shell script: every command in it (split on ; & | newlines, parentheses,
// braces, command substitutions), and every quoted string in it as a script of its own.
func judgeScript(s string, depth int, left *int) string {
	if *left -= len(s)/8 + 1; *left < 0 {
		return tooCostly
	}
	if depth > 8 {
		return "a shell script nested too deep to judge"
	}
	var cmds [][]string
	var cur []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			cur = append(cur, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			w.WriteByte(s[i+1])
			inWord = true
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return "a shell script with an unterminated quote (cannot be judged)"
			}
			q := s[i+1 : i+1+j]
			// A quoted single word ("$@", "$X", "reboot") is a word of this script, judged where it
			// stands below (as the command, or a wrapper's); only a quoted script is judged as one.
			if strings.ContainsAny(q, " \t\n;&|(){}<>`") {
				if why := judgeScript(q, depth+1, left); why != "" {
					return why
				}
			}
			w.WriteString(q)
			inWord = true
			i += j + 1
		case strings.IndexByte(";&|(){}`\n", c) >= 0:
			endCmd()
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			endCmd()
			i++
		case c == '<' || c == '>':
			endWord()
			cur = append(cur, string(c))
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	for _, cmd := range cmds {
		// Assignments before the command (X=1 cmd) and redirections are not the program.
		for len(cmd) > 0 && (strings.Contains(cmd[0], "=") && !strings.HasPrefix(cmd[0], "=") || cmd[0] == "!" ||
			slices.Contains([]string{"then", "else", "do", "if", "elif", "while", "until"}, cmd[0])) {
			cmd = cmd[1:]
		}
		if len(cmd) > 0 && strings.ContainsAny(cmd[0], "$") {
			return strings.Join(cmd, " ") + " (a command named by a variable cannot be judged)"
		}
		if why := judgeArgv(cmd, depth+1, left); why != "" {
			return why
		}
	}
	return ""
}
