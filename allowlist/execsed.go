package allowlist

import (
	"strings"
)

// A changed line's sed script is read by a whitelist grammar (round-7b adversary F3): a scan for
// the e and w commands missed them after a label (:a;e), a branch (tx;e) or an s command with
// another delimiter (s,^,sh F #,e). So the script must parse, whole, as commands that only edit
// the stream: s (any delimiter, escapes; flags g p i I m M and a number), y, d D p P = l n N g G h
// H x z q Q (an exit code), a i c (text, classic and GNU one-liner forms), {…}, !, addresses
// (N, $, /re/I M, \cREc, first~step, addr1,+N, addr1,~N, 0,/re/), labels, b t T, comments.
// Anything else (e, w, W, r, R, F, v, the s flags e and w, a script that does not parse) is
// refused as a sed command the judge does not model; so is a script file (-f, whatever the file,
// /dev/stdin included), which the judge cannot read. Unchanged lines keep judgeSed's rules.

// strictSed judges a changed line's sed options and script.
func strictSed(args []string) string {
	// GNU sed's script is its -e (and -f) options' when it has any, wherever they stand
	// (sed '1a\' -e 'e reboot' F: '1a\' is a file); else its first operand.
	var scripts, operands []string
	haveScript := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, v, has := strings.Cut(a, "=")
			switch name {
			case "--expression":
				if !has {
					if i+1 >= len(args) {
						return "sed --expression without its script"
					}
					i++
					v = args[i]
				}
				scripts, haveScript = append(scripts, v), true
			case "--file":
				if !has && i+1 < len(args) {
					v = args[i+1]
				}
				return "sed --file " + short(v) + ": a changed line's sed reads no script file (the judge cannot read it; /dev/stdin is the payload's)"
			case "--line-length":
				if !has {
					i++
				}
			case "--in-place", "--quiet", "--silent", "--regexp-extended", "--separate", "--sandbox", "--unbuffered",
				"--null-data", "--zero-terminated", "--posix", "--debug", "--follow-symlinks", "--binary":
			default:
				return "sed " + short(a) + ": an option the judge does not model (refused in a changed line)"
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				switch c := a[k]; c {
				case 'n', 'E', 'r', 's', 'u', 'z', 'b':
					continue
				case 'i':
				case 'e', 'l':
					v := a[k+1:]
					if v == "" {
						if i+1 >= len(args) {
							return "sed -" + string(c) + " without its value"
						}
						i++
						v = args[i]
					}
					if c == 'e' {
						scripts, haveScript = append(scripts, v), true
					}
				case 'f':
					v := a[k+1:]
					if v == "" && i+1 < len(args) {
						v = args[i+1]
					}
					return "sed -f " + short(v) + ": a changed line's sed reads no script file (the judge cannot read it; /dev/stdin is the payload's)"
				default:
					return "sed " + short(a) + ": an option the judge does not model (refused in a changed line)"
				}
				break // -i's suffix, -e's or -l's value: the rest of the word
			}
		default:
			operands = append(operands, a)
		}
	}
	if !haveScript && len(operands) > 0 {
		scripts = operands[:1]
	}
	if why := sedGrammar(strings.Join(scripts, "\n")); why != "" {
		return "sed script " + short(strings.Join(scripts, "\n")) + ": " + why
	}
	return ""
}

// sedUnmodeled is the refusal of what the grammar does not model.
func sedUnmodeled(what string) string {
	return "a sed command the judge does not model: " + what + " (a changed line's sed only edits its stream: s, y, d, p, q, a, i, c, branches, …)"
}

// sedGrammar says why the script is not wholly of the commands the grammar models, or "".
func sedGrammar(s string) string {
	p, depth := 0, 0
	spaces := func() {
		for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
			p++
		}
	}
	digits := func() bool {
		k := p
		for p < len(s) && s[p] >= '0' && s[p] <= '9' {
			p++
		}
		return p > k
	}
	regexFlags := func() {
		for p < len(s) && (s[p] == 'I' || s[p] == 'M') {
			p++
		}
	}
	// address reads one address ("" when there is none, ok false when it does not parse).
	address := func(second bool) (bool, bool) {
		if p >= len(s) {
			return false, true
		}
		switch c := s[p]; {
		case c >= '0' && c <= '9':
			digits()
			if !second && p < len(s) && s[p] == '~' {
				p++
				if !digits() {
					return true, false
				}
			}
		case c == '$':
			p++
		case c == '/':
			p++
			if _, ok := sedField(s, &p, '/', true); !ok {
				return true, false
			}
			regexFlags()
		case c == '\\':
			if p+1 >= len(s) || s[p+1] == '\n' || s[p+1] == '\\' {
				return true, false
			}
			d := s[p+1]
			p += 2
			if _, ok := sedField(s, &p, d, true); !ok {
				return true, false
			}
			regexFlags()
		case second && (c == '+' || c == '~'):
			p++
			if !digits() {
				return true, false
			}
		default:
			return false, true
		}
		return true, true
	}
	for {
		for p < len(s) && strings.IndexByte(" \t\n;", s[p]) >= 0 {
			p++
		}
		if p >= len(s) {
			break
		}
		if s[p] == '#' {
			for p < len(s) && s[p] != '\n' {
				p++
			}
			continue
		}
		had, ok := address(false)
		if !ok {
			return "an address that cannot be read"
		}
		if had {
			spaces()
			if p < len(s) && s[p] == ',' {
				p++
				spaces()
				if had2, ok := address(true); !had2 || !ok {
					return "an address that cannot be read"
				}
			}
		}
		spaces()
		for p < len(s) && s[p] == '!' {
			p++
			spaces()
		}
		if p >= len(s) {
			return "an address without its command"
		}
		c := s[p]
		p++
		switch c {
		case '{':
			depth++
			continue
		case '}':
			if depth--; depth < 0 {
				return "a } without its {"
			}
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z':
		case 'l', 'q', 'Q':
			spaces()
			digits()
		case ':', 'b', 't', 'T':
			spaces()
			k := p
			// A label ends at the first character any sed ends one at (GNU: ; and blanks): what
			// follows is read as commands.
			for p < len(s) && strings.IndexByte(" \t\n;}#", s[p]) < 0 {
				p++
			}
			if c == ':' && (p == k || had) {
				return "a label that cannot be read"
			}
		case 's', 'y':
			if p >= len(s) || s[p] == '\n' || s[p] == '\\' {
				return "an " + string(c) + " command that cannot be read"
			}
			d := s[p]
			p++
			if _, ok := sedField(s, &p, d, c == 's'); !ok {
				return "an " + string(c) + " command that cannot be read"
			}
			if _, ok := sedField(s, &p, d, false); !ok {
				return "an " + string(c) + " command that cannot be read"
			}
			for c == 's' && p < len(s) && strings.IndexByte("gpiImM0123456789", s[p]) >= 0 {
				p++
			}
		case 'a', 'i', 'c':
			// Text to the end of the line; a backslash escapes the next character (a newline
			// continues the text). "a\" then a newline is the classic form, "a text" GNU's.
			spaces()
			if p >= len(s) || s[p] == '\n' {
				return "an " + string(c) + " command without its text"
			}
			if p < len(s) && s[p] == '\\' {
				p++
				if p < len(s) && s[p] == '\n' {
					p++
				}
			}
			for p < len(s) && s[p] != '\n' {
				if s[p] == '\\' {
					p++
				}
				p++
			}
			continue
		default:
			return sedUnmodeled(string(c))
		}
		spaces()
		if p < len(s) && strings.IndexByte(";\n}#", s[p]) < 0 {
			if strings.IndexByte("ew", s[p]) >= 0 && (c == 's') {
				return "the s command's " + string(s[p]) + " flag (runs its result as a command or writes a file)"
			}
			return sedUnmodeled(short(s[p:]))
		}
	}
	if depth != 0 {
		return "a { without its }"
	}
	return ""
}

// sedField reads one delimited field of an s or y command or an address (p just past the opening
// delimiter) to its closing delimiter. A backslash escapes the next character. In a regular
// expression a bracket expression must close before the delimiter and hold neither a backslash
// nor the delimiter: sed versions disagree on whether a delimiter inside one ends the field.
func sedField(s string, p *int, d byte, regex bool) (string, bool) {
	start := *p
	for *p < len(s) && s[*p] != d {
		if s[*p] == '\\' {
			*p++
		} else if s[*p] == '\n' && regex {
			return "", false
		}
		*p++
	}
	if *p >= len(s) {
		return "", false
	}
	f := s[start:*p]
	*p++
	if regex && !bracketsClose(f) {
		return "", false
	}
	return f, true
}

// bracketsClose says whether every bracket expression of a regular expression closes within it,
// holding no backslash.
func bracketsClose(re string) bool {
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '[':
			i++
			if i < len(re) && re[i] == '^' {
				i++
			}
			if i < len(re) && re[i] == ']' {
				i++
			}
			for ; i < len(re) && re[i] != ']'; i++ {
				if re[i] == '\\' {
					return false
				}
				if re[i] == '[' && i+1 < len(re) && strings.IndexByte(":.=", re[i+1]) >= 0 {
					end := strings.Index(re[i+2:], string(re[i+1])+"]")
					if end < 0 {
						return false
					}
					i += 2 + end + 1
				}
			}
			if i >= len(re) {
				return false
			}
		}
	}
	return true
}
