package allowlist

import (
	"slices"
	"strings"
)

// shCmd is one simple command of a shell script: its words without redirections, the files it
// redirects output to, whether it reads a process substitution, and whether it stands where the
// shell runs it (strict) or is only text inside a quoted string, judged as a script in case it is
// one (loose: a command named by a variable there is only a word).
type shCmd struct {
	words   []string
	targets []string
	strict  bool
	subst   bool // a command substitution or a process substitution stands in command position
}

// script judges a shell script: every command in it (split on ; & | newlines, parentheses,
// braces, command substitutions), its redirection targets, and every quoted string in it as a
// script of its own. strict is false for a quoted string's text (it may be only text).
func (j judge) script(s string, depth int, strict bool) string {
	if j.charge(len(s)/8 + 1) {
		return tooCostly
	}
	if depth > 8 {
		return "a shell script nested too deep to judge"
	}
	cmds, why := j.splitScript(s, depth, strict)
	if why != "" {
		return why
	}
	written := map[string]bool{}
	for _, c := range cmds {
		for _, t := range c.targets {
			if why := j.target(t); why != "" {
				return why
			}
			x, _ := j.expand(t)
			written[cleanPath(x)] = true
		}
		cmd := c.words
		for len(cmd) > 0 && (isAssignment(cmd[0]) || cmd[0] == "!" ||
			slices.Contains([]string{"then", "else", "do", "if", "elif", "while", "until", "time", "coproc", "exec", "command"}, cmd[0])) {
			cmd = cmd[1:]
		}
		if c.strict && c.subst && len(cmd) == 0 {
			return "a command named by a substitution cannot be judged"
		}
		if len(cmd) == 0 {
			continue
		}
		if c.strict && strings.ContainsAny(cmd[0], "$`") {
			return strings.Join(cmd, " ") + " (a command named by a variable or substitution cannot be judged)"
		}
		if c.strict && c.subst && (slices.Contains(shells, cmdName(cmd[0])) || interpreterName(cmdName(cmd[0])) != "") {
			return strings.Join(cmd, " ") + ": an interpreter reading a process substitution cannot be judged"
		}
		if c.strict {
			if why := j.runsWritten(cmd, written); why != "" {
				return why
			}
			if n := cmdName(cmd[0]); (n == "cd" || n == "pushd") && len(cmd) > 1 {
				x, ok := j.expand(cmd[len(cmd)-1])
				if c := cleanPath("/" + strings.TrimPrefix(x, "/")); !ok || under(c, "/proc") || under(c, "/sys") {
					return strings.Join(cmd, " ") + ": relative paths after it would reach /proc or /sys, or cannot be judged"
				}
			}
		}
		if !c.strict && strings.ContainsAny(cmd[0], "$`") {
			continue
		}
		if why := j.argv(cmd, depth+1); why != "" {
			return why
		}
	}
	return ""
}

// runsWritten refuses running, sourcing or interpreting a file the script itself wrote (a decoded
// payload run as a script: its commands cannot be judged).
func (j judge) runsWritten(cmd []string, written map[string]bool) string {
	if len(written) == 0 {
		return ""
	}
	check := []string{cmd[0]}
	n := cmdName(cmd[0])
	if slices.Contains(shells, n) || interpreterName(n) != "" || n == "source" || n == "." || n == "exec" || n == "env" {
		check = cmd
	}
	for _, w := range check {
		x, _ := j.expand(w)
		if written[cleanPath(x)] {
			return strings.Join(cmd, " ") + ": runs a file the script itself wrote (its commands cannot be judged)"
		}
	}
	return ""
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for _, c := range w[:i] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// splitScript tokenizes a script into simple commands as a POSIX shell reads them, closely enough
// to find every command: quotes (whose contents are judged as scripts of their own), backslashes,
// separators, redirections (with their targets), here-documents (whose lines are judged as
// commands), and command and process substitutions (whose contents are commands).
func (j judge) splitScript(s string, depth int, strict bool) ([]shCmd, string) {
	var cmds []shCmd
	cur := shCmd{strict: strict}
	var w strings.Builder
	inWord := false
	redirect := false // the next word is a redirection target
	inBacktick := false
	endWord := func() {
		if !inWord {
			return
		}
		if redirect {
			cur.targets = append(cur.targets, w.String())
			redirect = false
		} else {
			cur.words = append(cur.words, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func(nextStrict bool) {
		endWord()
		redirect = false
		if len(cur.words) > 0 || len(cur.targets) > 0 || cur.subst {
			cmds = append(cmds, cur)
		}
		cur = shCmd{strict: nextStrict}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			if s[i+1] != '\n' {
				w.WriteByte(s[i+1])
				inWord = true
			}
			i++
		case c == '\'' || c == '"':
			k := i + 1
			for k < len(s) && s[k] != c {
				if c == '"' && s[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(s) {
				return nil, "a shell script with an unterminated quote (cannot be judged)"
			}
			q := s[i+1 : k]
			if c == '"' && strings.ContainsAny(q, "`") || c == '"' && strings.Contains(q, "$(") {
				// A substitution inside double quotes runs: its commands stand in command position.
				if why := j.script(substitutions(q), depth+1, true); why != "" {
					return nil, why
				}
			}
			if why := j.script(q, depth+1, false); why != "" {
				return nil, why
			}
			if len(cur.words) == 0 && !inWord && strings.HasPrefix(q, "$(") {
				cur.subst = true
			}
			w.WriteString(q)
			inWord = true
			i = k
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			// ${VAR}, ${VAR##*:}: a parameter expansion is part of the word.
			k, depth := i+1, 0
			for ; k < len(s); k++ {
				if s[k] == '{' {
					depth++
				} else if s[k] == '}' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if k >= len(s) {
				return nil, "a shell script with an unterminated ${ (cannot be judged)"
			}
			w.WriteString(s[i : k+1])
			inWord = true
			i = k
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			if !inWord && len(cur.words) == 0 && !redirect {
				cur.subst = true
				if !strings.HasPrefix(s[i:], "$((") {
					endCmd(true)
					cmds = append(cmds, shCmd{strict: strict, subst: true})
				}
			} else {
				w.WriteByte('$')
				inWord = true
				endCmd(true)
			}
			i++
		case c == '`' && inBacktick:
			inBacktick = false
			endCmd(true)
		case c == '`':
			inBacktick = true
			if !inWord && len(cur.words) == 0 && !redirect {
				cmds = append(cmds, shCmd{strict: strict, subst: true})
			} else {
				w.WriteByte('$')
				inWord = true
			}
			endCmd(true)
		case (c == '<' || c == '>') && i+1 < len(s) && s[i+1] == '(':
			// Process substitution: a descriptor whose contents the judge cannot see.
			endWord()
			cur.words = append(cur.words, "/dev/fd/procsubst")
			cur.subst = true
			saved := cur
			cmds = append(cmds, saved)
			cur = shCmd{strict: true}
			i++
		case c == '<' && strings.HasPrefix(s[i:], "<<"):
			// A here-document or here-string feeds the command's standard input; its lines are
			// judged as commands too (they may be the script of a shell reading stdin).
			endWord()
			i++
			if i+1 < len(s) && s[i+1] == '<' {
				i++
			}
			if i+1 < len(s) && s[i+1] == '-' {
				i++
			}
			cur.words = append(cur.words, "<<")
		case c == '<':
			endWord()
			redirect = false
			cur.words = append(cur.words, "<")
			// The next word is an input file: read, not run (a shell reading it is judged by its operand).
		case c == '>':
			endWord()
			// A descriptor number right before it (2>) is not a word.
			if n := len(cur.words); n > 0 && isFD(cur.words[n-1]) && i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
				cur.words = cur.words[:n-1]
			}
			if i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '|') {
				i++
			}
			if i+1 < len(s) && s[i+1] == '&' {
				i++ // >&2: a duplication, or >&file
				k := i + 1
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					k++
				}
				if k > i+1 || k < len(s) && s[k] == '-' {
					i = k - 1
					if k < len(s) && s[k] == '-' {
						i = k
					}
					continue
				}
			}
			redirect = true
		case c == '&' && i+1 < len(s) && s[i+1] == '>':
			endWord()
			i++
			if i+1 < len(s) && s[i+1] == '>' {
				i++
			}
			redirect = true
		case (c == '{' || c == '}') && (inWord || i+1 < len(s) && strings.IndexByte(" \t\n;", s[i+1]) < 0):
			// {} (find's and xargs' placeholder), a{b,c}: part of a word; a brace group's { and }
			// stand alone.
			w.WriteByte(c)
			inWord = true
		case strings.IndexByte(";&|(){}\n", c) >= 0:
			endCmd(strict)
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd(strict)
	// Drop the input-redirection markers: "<" and "<<" are not words of the command; the word
	// after "<" is a file read; after "<<" the delimiter.
	for k := range cmds {
		var ws []string
		words := cmds[k].words
		for i := 0; i < len(words); i++ {
			if words[i] == "<" || words[i] == "<<" {
				i++
				continue
			}
			ws = append(ws, words[i])
		}
		cmds[k].words = ws
	}
	return cmds, ""
}

func isFD(w string) bool {
	if w == "" || len(w) > 2 {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// substitutions are the contents of the $(…) and `…` in a double-quoted string, one a line.
func substitutions(q string) string {
	var out []string
	for i := 0; i < len(q); i++ {
		if strings.HasPrefix(q[i:], "$(") {
			depth, k := 0, i+1
			for ; k < len(q); k++ {
				if q[k] == '(' {
					depth++
				} else if q[k] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if k > i+2 {
				out = append(out, strings.Trim(q[i+2:min(k, len(q))], "()"))
			}
			i = k
		} else if q[i] == '`' {
			k := strings.IndexByte(q[i+1:], '`')
			if k < 0 {
				out = append(out, q[i+1:])
				break
			}
			out = append(out, q[i+1:i+1+k])
			i += k + 1
		}
	}
	return strings.Join(out, "\n")
}
