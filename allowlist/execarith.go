package allowlist

import (
	"strconv"
	"strings"
)

// Data as code in a changed line's shell script (round 8): bash evaluates a variable's value as an
// arithmetic expression in $(( )), $[ ], (( )), let, declare -i, an indexed array's subscript,
// ${s:off:len} and [[ -eq ]]'s operands, and as a name in test -v, printf -v, read, unset, ${!n}:
// a value such as a[$(cmd)] runs cmd there. The judge does not track values, so in those contexts
// only literals it can see (numbers, plain names as names) are accepted.

// arithLiteral says whether an arithmetic text holds no name or expansion: digits, operators,
// spaces and parentheses only (1+2, (3 * 4) % 5).
func arithLiteral(e string) bool {
	for _, c := range e {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '`' || c == '[' || c == '\'' || c == '"' || c == '\\' {
			if c == 'x' || c == 'X' || c == '#' {
				continue
			}
			return false
		}
	}
	return true
}

// plainName says whether w is a variable name with no subscript or expansion: bash's, and the
// names systemd accepts (env_name_is_valid).
func plainName(w string) bool {
	if w == "" || w[0] >= '0' && w[0] <= '9' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !isNameByte(w[i]) {
			return false
		}
	}
	return true
}

const arithWhy = ": bash evaluates it as arithmetic, where a variable's value (a[$(cmd)]) runs commands the judge cannot see (only literal numbers in a changed line)"
const nameCtxWhy = ": bash reads it as a variable name, where a value (a[$(cmd)]) runs commands the judge cannot see (only plain literal names in a changed line)"

// arithTextWhy refuses, outside single quotes, $(( )), $[ ] and (( )) whose contents are not literal.
func arithTextWhy(s string) string {
	inDouble := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			continue
		case c == '\'' && !inDouble:
			k := strings.IndexByte(s[i+1:], '\'')
			if k < 0 {
				return ""
			}
			i += k + 1
			continue
		case c == '"':
			inDouble = !inDouble
			continue
		}
		open, close := "", ""
		switch {
		case strings.HasPrefix(s[i:], "$(("), strings.HasPrefix(s[i:], "(("):
			open, close = "(", ")"
		case strings.HasPrefix(s[i:], "$["):
			open, close = "[", "]"
		default:
			continue
		}
		start := strings.Index(s[i:], open) + i
		depth, k := 0, start
		for ; k < len(s); k++ {
			if s[k] == open[0] {
				if depth++; depth > MaxShellNesting {
					return short(s[i:k]) + ": nested more than " + strconv.Itoa(MaxShellNesting) + " deep (cannot be judged)"
				}
			} else if s[k] == close[0] {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		inner := s[start+1 : min(k, len(s))]
		if !arithLiteral(strings.Trim(inner, "()")) {
			return short(s[i:min(k+1, len(s))]) + arithWhy
		}
		// A literal group holds no quote, name or expansion: the (( within it are literal too, so
		// the scan goes on after it, each byte read once (adversary r13 c/04: from each nested ((
		// again, 60 000 of them cost seconds).
		i = k
	}
	return ""
}

// MaxShellNesting is the deepest nesting of parentheses or brackets the judge reads in a changed
// line's arithmetic: no real script nests so deep, and past it the line is refused, naming it.
const MaxShellNesting = 64

// paramWhy refuses a parameter expansion's arithmetic or name context: ${!n} indirection, a
// subscript ${a[n]} and an offset or length ${s:n:m} that are not literal.
func paramWhy(inner string) string {
	name := strings.TrimPrefix(inner, "#")
	if strings.HasPrefix(name, "!") {
		rest := name[1:]
		k := 0
		for k < len(rest) && (plainName(rest[:k+1]) || rest[k] >= '0' && rest[k] <= '9') {
			k++
		}
		if tail := rest[k:]; tail != "[@]" && tail != "[*]" && tail != "*" && tail != "@" {
			return "${" + short(inner) + "}: an indirection names the variable by a value" + nameCtxWhy
		}
		return ""
	}
	k := 0
	for k < len(name) && (name[k] == '_' || name[k] >= 'a' && name[k] <= 'z' || name[k] >= 'A' && name[k] <= 'Z' || name[k] >= '0' && name[k] <= '9') {
		k++
	}
	rest := name[k:]
	if strings.HasPrefix(rest, "[") {
		e := strings.IndexByte(rest, ']')
		if e < 0 {
			return "${" + short(inner) + "}: a subscript" + arithWhy
		}
		if sub := rest[1:e]; sub != "@" && sub != "*" && !arithLiteral(sub) {
			return "${" + short(inner) + "}: a subscript" + arithWhy
		}
		rest = rest[e+1:]
	}
	if strings.HasPrefix(rest, ":") && len(rest) > 1 && !strings.ContainsRune("-=?+", rune(rest[1])) && !arithLiteral(rest[1:]) {
		return "${" + short(inner) + "}: an offset or length" + arithWhy
	}
	return ""
}

// assignmentSubscriptWhy refuses a[n]=v whose subscript is not literal.
func assignmentSubscriptWhy(w string) string {
	k, _, _ := strings.Cut(w, "=")
	if i := strings.IndexByte(k, '['); i >= 0 {
		sub := strings.TrimSuffix(strings.TrimSuffix(k[i+1:], "+"), "]")
		if !arithLiteral(sub) {
			return short(w) + ": a subscript" + arithWhy
		}
	}
	return ""
}

// dataCodeWhy refuses, in a changed line's script command, builtins that evaluate a word as
// arithmetic or as a variable name when the word is not a literal.
func dataCodeWhy(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	for len(cmd) > 1 && (cmd[0] == "builtin" || cmd[0] == "command") {
		cmd = cmd[1:]
	}
	line := short(strings.Join(cmd, " "))
	n, args := cmd[0], cmd[1:]
	names := []string{} // words read as names
	switch n {
	case "let":
		for _, a := range args {
			if !arithLiteral(a) {
				return line + arithWhy
			}
		}
	case "declare", "typeset", "local", "readonly", "export", "unset":
		for _, a := range args {
			if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") {
				if n != "unset" && strings.ContainsRune(a[1:], 'i') {
					return line + ": " + n + " " + a + " makes every assignment to its variables arithmetic" + arithWhy
				}
				continue
			}
			k, _, _ := strings.Cut(a, "=")
			names = append(names, k)
		}
	case "read", "mapfile", "readarray", "printf", "getopts", "wait", "for", "select":
		valued := map[string]string{"read": "dptnNui", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "printf": "", "wait": "", "getopts": "", "for": "", "select": ""}[n]
		nameOpt := map[string]byte{"read": 'a', "printf": 'v', "wait": 'p'}[n]
		i := 0
		for ; i < len(args); i++ {
			a := args[i]
			if a == "--" {
				i++
				break
			}
			if !strings.HasPrefix(a, "-") || len(a) < 2 || n == "for" || n == "select" {
				break
			}
			for k := 1; k < len(a); k++ {
				if nameOpt != 0 && a[k] == nameOpt {
					if k+1 < len(a) {
						names = append(names, a[k+1:])
					} else if i+1 < len(args) {
						i++
						names = append(names, args[i])
					}
					break
				}
				if strings.IndexByte(valued, a[k]) >= 0 {
					if k+1 == len(a) {
						i++
					}
					break
				}
			}
		}
		rest := args[min(i, len(args)):]
		switch n {
		case "read":
			names = append(names, rest...)
		case "mapfile", "readarray":
			if len(rest) > 0 {
				names = append(names, rest[len(rest)-1])
			}
		case "getopts":
			if len(rest) > 1 {
				names = append(names, rest[1])
			}
		case "for", "select":
			if len(rest) > 0 && !strings.HasPrefix(rest[0], "((") {
				names = append(names, rest[0])
			}
		}
	case "[[", "test", "[":
		for i, a := range args {
			if a == "-v" || a == "-R" {
				if i+1 < len(args) {
					names = append(names, args[i+1])
				}
			}
			if n == "[[" && (a == "-eq" || a == "-ne" || a == "-lt" || a == "-le" || a == "-gt" || a == "-ge") {
				for _, o := range []int{i - 1, i + 1} {
					if o >= 0 && o < len(args) && !arithLiteral(args[o]) {
						return line + ": [[ " + a + " ]]'s operand " + short(args[o]) + arithWhy
					}
				}
			}
		}
	}
	for _, k := range names {
		if !plainName(k) {
			return line + ": " + short(k) + nameCtxWhy
		}
	}
	return ""
}
