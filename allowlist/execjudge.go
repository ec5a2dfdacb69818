package allowlist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Exec lines are judged as systemd runs them: the line is split into words as systemd does
// (quotes, C escapes, the -@:+!| prefixes, ";" between commands), then every command is judged by
// the class of what it makes systemd or the kernel do (execclass.go), through the wrappers that run
// another command and the shell scripts given to sh -c (execscript.go). A line that cannot be split
// with confidence is refused, and so is a command whose effect the judge cannot see.

// SplitExec splits an Exec*= value into the argv of each command it runs. The '@' prefix's
// argv[0] override gives a second argv, named by it, when it names another program; the '|' prefix (run through the shell) gives the argv sh -c <rest>.
func SplitExec(v string) ([][]string, error) { return splitExec(v, -1) }

// ErrTooManyWords: an Exec*= value splits into more words than the caller allows (SplitExecUpTo).
var ErrTooManyWords = errors.New("too many words")

// SplitExecUpTo is SplitExec for at most limit words in all (the argv SplitExec returns, counted as
// it splits): past limit it stops, having held no more than limit words, and fails with
// ErrTooManyWords.
// The plan reads a unit's commands through it with what is left of MaxExecWords, so a unit's
// continued lines cost what the bound allows, not what they hold.
func SplitExecUpTo(v string, limit int) ([][]string, error) { return splitExec(v, max(limit, 0)) }

// splitExec is SplitExec for at most max words (none when max < 0).
func splitExec(v string, max int) ([][]string, error) {
	v = strings.TrimSpace(v)
	var out [][]string
	left, held := max, 0 // words still allowed; argvs counted
	for v != "" {
		prefix := ""
		for v != "" && strings.ContainsRune("-@:+!|", rune(v[0])) {
			prefix += v[:1]
			v = v[1:]
		}
		if strings.Contains(prefix, "|") {
			if max >= 0 && left < 3 {
				return nil, ErrTooManyWords
			}
			return append(out, []string{"sh", "-c", v}), nil
		}
		words, rest, err := readWords(v, true, left)
		if err != nil {
			return nil, err
		}
		if strings.Contains(prefix, "@") && len(words) > 1 {
			// A multi-call binary (kmod, lvm, busybox) picks its applet by argv[0]: @/usr/bin/kmod
			// insmod F runs insmod. The line is judged as the file it runs and as the program its
			// argv[0] names, each with the same arguments.
			if name := words[1]; cmdName(name) != cmdName(words[0]) {
				out = append(out, append([]string{name}, words[2:]...))
			}
			words = append(words[:1], words[2:]...)
		}
		if len(words) > 0 {
			out = append(out, words)
		}
		if max >= 0 {
			for _, argv := range out[held:] {
				left -= len(argv)
			}
			if held = len(out); left < 0 {
				return nil, ErrTooManyWords
			}
		}
		v = strings.TrimSpace(rest)
	}
	return out, nil
}

// execWords reads words up to a lone ";" (the rest is returned) as systemd's extract_first_word
// with unquoting and C unescaping does.
func execWords(v string) (words []string, rest string, err error) {
	return readWords(v, true, -1)
}

// readWords reads words as systemd's extract_first_word with unquoting does: for an Exec line
// (exec) C-unescaping, up to a lone ";", an unterminated quote an error; else as systemd splits a
// whole-word $NAME's value (EXTRACT_RELAX, execpaste.go): a backslash takes the next byte as it
// is, an unterminated quote ends with the value, ";" is a word.
//
// With max >= 0 it stops with ErrTooManyWords once it has read more than max words.
func readWords(v string, exec bool, max int) (words []string, rest string, err error) {
	var w strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && !exec:
			if i+1 < len(v) {
				i++
			}
			w.WriteByte(v[i])
			inWord = true
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
				if exec && w.String() == ";" {
					return words, v[i:], nil
				}
				if max >= 0 && len(words) >= max {
					return nil, "", ErrTooManyWords
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
	if quote != 0 && exec {
		return nil, "", fmt.Errorf("exec line has an unterminated %c quote", quote)
	}
	if inWord && (!exec || w.String() != ";") {
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

// The work of judging a unit's commands is bounded, whatever a payload's unit file holds (a 1 MiB
// ExecStart= of continued lines, wrappers within wrappers): the judge charges the words and bytes
// it looks at to a budget of execCostPerWord times the commands' words, and a unit that would cost
// more is refused as one that cannot be judged. An ordinary unit costs a few times its words.
const (
	execCostPerWord = 16
	execCostBase    = 4096
)

const tooCostly = "commands too long or too deeply wrapped to judge"

// MaxExecWords bounds the words of all of a unit's commands (every Exec*= line of the unit file and
// its dropins): more cannot be judged at a bounded cost, and no unit a refresh acts on has them.
const MaxExecWords = 16384

// MaxExecBytes bounds a unit's commands once its variables are substituted, as systemd runs them
// (the MCO's and HyperShift's units: under 16 KiB).
const MaxExecBytes = 1 << 20

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
