package allowlist

import (
	"regexp"
	"slices"
	"strings"
)

// systemd substitutes a unit's variables into an Exec line's words when it runs the line
// (systemd.service(5), "Command lines"; env-util.c replace_env_argv), after it resolved the
// specifiers and unquoted and unescaped the words when it loaded the unit:
//   - a word that is $NAME whole (not ${ or $$) is replaced by NAME's value split at whitespace,
//     its quotes and backslashes removed (strv_split_full with EXTRACT_UNQUOTE|EXTRACT_RELAX): zero
//     words when NAME is unset or empty, and for a word whose rest is no variable name ($ alone,
//     $A/b);
//   - in every other word ${NAME} is replaced by NAME's exact value, whitespace and shell syntax
//     included ("" when unset or no valid name), $$ by $; $NAME inside a word and ${NAME:-x} are
//     kept as text.
//
// So Environment="G=hi; /usr/sbin/reboot" with sh -c 'echo ${G}' runs reboot, and
// Environment="C=/run/myapp/c /etc/kubernetes" with rm -rf $C removes /etc/kubernetes (round 8).
// systemdArgv is that argv, the one every judge reads (judgeExecution, OwnWrites): the shell judge
// reads the script systemd hands the shell, the argv judges the words the program gets.

// systemdArgv is the argv systemd executes for an Exec line's words with the unit's variables as
// the judge knows them (unitEnv). unknown holds, for each word of out, the first reference in it
// whose value the judge does not know ("" for none): such a word is kept as written, a whole-word
// $NAME as one word (systemd makes it any number of words).
func systemdArgv(argv []string, env map[string]string) (out, unknown []string) {
	if len(argv) == 0 {
		return argv, nil
	}
	// argv[0] is the program's path: systemd executes the path as written.
	out, unknown = []string{argv[0]}, []string{""}
	for _, w := range argv[1:] {
		if w != "" && w[0] == '$' && (len(w) == 1 || w[1] != '{' && w[1] != '$') {
			name := w[1:]
			v, ok := env[name]
			if !plainName(name) || !ok {
				// Unknown, or no variable (systemd drops the word: $ alone, $A/b, sed's $!d):
				// kept as written, judged as the text it is, and refused in a changed line.
				out, unknown = append(out, w), append(unknown, w)
				continue
			}
			for _, f := range splitUnquote(v) {
				out, unknown = append(out, f), append(unknown, "")
			}
			continue
		}
		s, u := pasteWord(w, env)
		out, unknown = append(out, s), append(unknown, u)
	}
	return out, unknown
}

// pasteWord is the word with ${NAME} and $$ replaced as systemd does, and the first reference whose
// value the judge does not know (kept as written).
func pasteWord(w string, env map[string]string) (string, string) {
	if !strings.Contains(w, "$") {
		return w, ""
	}
	var b strings.Builder
	unknown := ""
	for i := 0; i < len(w); i++ {
		if w[i] != '$' || i+1 >= len(w) {
			b.WriteByte(w[i])
			continue
		}
		switch w[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			k := i + 2
			for k < len(w) && w[k] != '}' && w[k] != ':' {
				k++
			}
			if k >= len(w) || w[k] == ':' {
				// No closing brace, or ${NAME:…}: systemd keeps the text (and reads on after it).
				b.WriteString(w[i:k])
				i = k - 1
				continue
			}
			if v, ok := env[w[i+2:k]]; ok && plainName(w[i+2:k]) {
				b.WriteString(v)
			} else {
				// Unknown, or no variable name (a shell's ${a[n]}, ${!n}, ${#x}, which systemd
				// pastes as ""): kept as written, refused in a changed line.
				if unknown == "" {
					unknown = w[i : k+1]
				}
				b.WriteString(w[i : k+1])
			}
			i = k
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), unknown
}

// splitUnquote splits a value as systemd splits a whole-word $NAME's (strv_split_full with
// EXTRACT_UNQUOTE|EXTRACT_RELAX at " \t\n\r"; readWords).
func splitUnquote(v string) []string {
	words, _, _ := readWords(v, false, -1)
	return words
}

// shellRef is a variable reference the shell expands in a script's text ($NAME, ${NAME…).
var shellRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// scriptLike says whether a word reads as a script (a shell's, an interpreter's): it holds a
// separator, a redirection or whitespace, so a value pasted into it can be code.
func scriptLike(w string) bool {
	return strings.ContainsAny(w, " \t\n\r;&|<>()`")
}

// pasteWhy says why a changed line's words, as systemd executes them (systemdArgv), cannot be
// judged, or "".
//   - A word holding a reference whose value the judge does not know (EnvironmentFile='s,
//     PassEnvironment='s, the manager's, a value with a specifier or an expansion): pasted into a
//     script it is code the judge cannot see; as a whole word it is any number of words; in a word
//     any text (find's -delete, chmod's u+s, awk's program). Only the unit's own programs, whose
//     words the judge does not read, and $MAINPID as a whole word (kill's own rule) take one.
//   - The unit's variables are a script's environment too: the shell splits an unquoted $NAME at
//     whitespace and globs it (sh -c "tee $T" with T="/run/myapp/x /etc/x").
func (j judge) pasteWhy(argv, unknown []string) string {
	own := j.opaqueFrom(argv)
	for k, w := range argv {
		if u := unknown[k]; u != "" && k < own && u != "$MAINPID" && u != "${MAINPID}" {
			if name := strings.Trim(u, "${}"); !plainName(name) {
				return u + " is no variable systemd substitutes: it drops the word (" + short(w) + ") or pastes \"\" for ${…}: write $$ for a literal $ (the judge reads the text as written)"
			}
			if scriptLike(w) {
				return u + " is pasted by systemd into " + short(w) + " before the program reads it, with a value the judge does not know: cannot be judged"
			}
			if u[1] != '{' {
				return u + " is split by systemd into as many arguments as its value has words, and the judge does not know its value: cannot be judged in a changed line (a word of " + argv[0] + " may be an option, an operand or a command)"
			}
			return u + " is pasted by systemd into " + short(w) + " with a value the judge does not know: cannot be judged in a changed line (the word of " + argv[0] + " may be an option, an operand or a command)"
		}
		if k == 0 || !scriptLike(w) {
			continue
		}
		for _, m := range shellRef.FindAllStringSubmatch(w, -1) {
			if v, ok := j.env[m[1]]; ok && strings.ContainsAny(v, " \t\n\r*?[") {
				return "$" + m[1] + " holds whitespace or a pattern (" + short(v) + "): the shell of " + short(w) + " may split it into words the judge reads as one"
			}
		}
	}
	return ""
}

// opaqueFrom is the index of argv's word from which the words are the unit's own program's, which
// the judge does not read (a program neither modeled nor a shell, after the modeled wrappers whose
// grammar reads its place exactly: kubenswrapper /usr/bin/kubelet … --node-ip=${KUBELET_NODE_IP}),
// or len(argv).
func (j judge) opaqueFrom(argv []string) int {
	off := 0
	for depth := 0; depth < 8 && off < len(argv); depth++ {
		w := argv[off]
		if modeledWrapper(w) {
			start, _, why := wrapperCommand(cmdName(w), argv[off+1:])
			if why != "" {
				return len(argv)
			}
			off += 1 + start
			continue
		}
		if !strings.ContainsAny(w, "$%`") && j.ownProgram(w) && !modeledProgram(w) {
			return off
		}
		// A shell's or an interpreter's own script file (bash /usr/local/sbin/calc.sh ${SIZE}):
		// the words after it are the script's arguments.
		if n := cmdName(w); (slices.Contains(shells, n) || interpreterName(n) != "") && off+1 < len(argv) {
			if f := argv[off+1]; !strings.ContainsAny(f, "$%`") && !strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "+") && j.ownProgram(f) {
				return off + 2
			}
		}
		break
	}
	return len(argv)
}
