package allowlist

import (
	"fmt"
	"strings"
)

// redact replaces, in a refusal's reason, each word that may be a credential (mayBeSecret) by its
// length: a word is a run of the characters a token is written in (letters, digits, + / _ . ~ -). A reason quotes the payload's line or value it
// refuses (an ExecStart=, a static pod's field), and a reason reaches the logs, the Node's
// annotation and Events, which more can read than the ConfigMap: a bearer token, an API key or a
// password in the line must not (adversary r21 c, a refused line quoted whole with its token).
// Paths, unit names, options and short values stay as written, so that the reason still says
// which line.
func redact(s string) string {
	s = redactPasswords(s)
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		if w := s[start:end]; mayBeSecret(w) {
			fmt.Fprintf(&b, "<%d bytes not shown>", len(w))
		} else {
			b.WriteString(w)
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		if tokenByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		b.WriteByte(s[i])
	}
	flush(len(s))
	return b.String()
}

// redactPasswords replaces each blank-separated field that looks like a password with symbols
// (passwordLike) by its length: the token rule splits S3cr3t@Passw0rd!x at its symbols into parts
// each too short to weigh (adversary r24 a/12).
func redactPasswords(s string) string {
	if !strings.ContainsAny(s, "@!%#^") {
		return s
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		if w := s[start:end]; passwordLike(w) {
			fmt.Fprintf(&b, "<%d bytes not shown>", len(w))
		} else {
			b.WriteString(w)
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '=' || c == ',' || c == ';' {
			flush(i)
			b.WriteByte(c)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return b.String()
}

// passwordLike: 8 or more bytes holding a symbol a password is written with (@ ! % # ^) and two of
// lower case, upper case and digits; never a path or a unit name (getty@tty1.service).
func passwordLike(w string) bool {
	if len(w) < 8 || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "-") && !strings.ContainsAny(w, "@!%#^") || IsUnitName(strings.Trim(w, ":()")) {
		return false
	}
	if !strings.ContainsAny(w, "@!%#^") {
		return false
	}
	lower, upper, digit := 0, 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case 'a' <= c && c <= 'z':
			lower = 1
		case 'A' <= c && c <= 'Z':
			upper = 1
		case '0' <= c && c <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("+/_.~-", c) >= 0
}

// mayBeSecret: a word whose parts (split at - _ . as names are) hold one of 16 or more characters
// with a letter and a digit in it (a JWT's, an AWS key's, a hex or base64 key's), a hex group or a
// number of 8 or more (a UUID's, a Slack token's), or two parts with a digit between letters (a
// spelled password); an absolute path by its names. A name's parts are short words and numbers (40-kubelet-crio-image-credential-
// provider.conf), shown as written.
func mayBeSecret(w string) bool {
	if strings.HasPrefix(w, "/") {
		for _, name := range strings.Split(w, "/") {
			if mayBeSecret(name) {
				return true
			}
		}
		return false
	}
	mixed := 0
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		digits, letters := strings.ContainsAny(part, "0123456789"), strings.ContainsAny(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
		switch {
		case len(part) >= 16 && digits && letters:
			return true
		case len(part) >= 8 && digits && strings.Trim(part, "0123456789abcdefABCDEF") == "" && strings.Trim(part, "0123456789") != "":
			return true // a hex group of a UUID or key (3f2a9c0d-1e4b-…)
		case len(part) >= 8 && strings.Trim(part, "0123456789") == "":
			return true // a long number (xoxb-123456789012-…)
		case digits && letters && sandwiched(part):
			mixed++ // p4ssw0rd, S3cr3t: a digit between letters
		}
	}
	return mixed >= 2 // p4ssw0rd.S3cr3t.T0k3n
}

// sandwiched says whether part has a digit between two letters.
func sandwiched(part string) bool {
	isLetter := func(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
	for i := 1; i+1 < len(part); i++ {
		if '0' <= part[i] && part[i] <= '9' && isLetter(part[i-1]) && isLetter(part[i+1]) {
			return true
		}
	}
	return false
}

// shown is a value of the payload's file as a reason quotes it: redacted, at most 64 bytes.
func shown(v string) string {
	v = redact(v)
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return fmt.Sprintf("%q", v)
}

// lineSkeleton names a command line without its values: the program, the options' names, the
// absolute paths and the variables it names, the shell's operators; any other word is shown as
// "…". A reason names the line it refuses by it (the line may be the node's own, holding the
// node's secrets: adversary r22 c/03).
func lineSkeleton(words []string) string {
	out := make([]string, 0, len(words))
	for i, w := range words {
		switch {
		case (i == 0 || strings.HasPrefix(w, "/")) && !strings.ContainsAny(w, " \t\n;|&<>()`'\"$"):
			out = append(out, redact(w))
		case i == 0 || strings.HasPrefix(w, "/"):
			out = append(out, "…") // a shell string starting with a path (sh -c "/usr/bin/podman login -p …"): r25 a/01
		case strings.HasPrefix(w, "-") && len(w) < 64:
			name, _, valued := strings.Cut(w, "=")
			if valued {
				name += "=…"
			}
			out = append(out, redact(name))
		case skeletonWords[w], verbWords[w], strings.HasPrefix(w, "$") && len(w) < 64 && !strings.ContainsAny(w, " \t'\"`;|&<>()"):
			out = append(out, w)
		default:
			out = append(out, "…")
		}
	}
	return escapeControls.Replace(short(strings.Join(out, " ")))
}

// escapeControls keeps a reason on one line: a line's newlines, returns and tabs written as escapes.
var escapeControls = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

var skeletonWords = map[string]bool{"&&": true, "||": true, ";": true, "|": true, ">": true, ">>": true, "<": true, "2>&1": true}

// maskWords replaces, in a reason s, every word taken from the texts from that may hold a value
// (not a path, an option's name, a program the judge knows or a unit name) by "…": a reason about
// a line that is not the payload's own text names the line's shape, never its values, also where
// the judge's words quote a command inside it (adversary r24 a/13, c/05, c/06: the node's podman
// login -p, curl -u user:password inside a reached unit's sh -c). Words are split alike in both.
func maskWords(s string, from ...string) string {
	secret := map[string]bool{}
	for _, f := range from {
		for _, w := range strings.FieldsFunc(f, wordBreak) {
			if !safeWord(w) {
				secret[w] = true
			}
		}
	}
	if len(secret) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if wordBreak(rune(s[i])) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && !wordBreak(rune(s[j])) {
			j++
		}
		if w := s[i:j]; secret[w] {
			b.WriteString("…")
		} else {
			b.WriteString(w)
		}
		i = j
	}
	return b.String()
}

// wordBreak separates the words maskWords weighs: blanks, quotes and the shell's and URLs'
// punctuation (user:password@host splits into its parts).
func wordBreak(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(`'"`+"`"+`;&|()<>$={},:@`, r)
}

// safeWord says a word shows no value: an absolute path (not //host), an option's name, a program
// the judge models, a unit name, a manager's verb, a short number.
func safeWord(w string) bool {
	switch {
	case strings.HasPrefix(w, "/") && !strings.HasPrefix(w, "//"):
		return true
	case strings.HasPrefix(w, "-") && len(w) < 40 && !strings.ContainsAny(w[1:], "0123456789") || w == "-":
		return true
	case modeled(w) || IsUnitName(w) || verbWords[w]:
		return true
	case len(w) <= 5 && strings.Trim(w, "0123456789") == "":
		return true // a PID, a signal, a port, a mode: what the judge's words name (PID 1 is the manager)
	}
	return false
}

// verbWords are the service manager's and power commands' verbs: what a refusal of a line that
// controls the manager must still say (systemctl reboot, systemctl --user exit).
var verbWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("reboot poweroff halt kexec exit isolate start stop restart try-restart reload reload-or-restart " +
		"try-reload-or-restart kill suspend hibernate hybrid-sleep suspend-then-hibernate default rescue emergency enable disable " +
		"reenable mask unmask link daemon-reload daemon-reexec set-property set-environment import-environment switch-root soft-reboot now") {
		verbWords[w] = true
	}
}

// maskValue replaces in s the value v and each of its parts (split as a search path or a list is:
// ":", ",", ";", blanks), paths included, by "…": a reason about an Environment= assignment names
// the variable, never what it holds (adversary r25 a/13: SSL_CERT_FILE=/var/lib/myapp/hunter2-….pem).
func maskValue(s, v string) string {
	if v == "" {
		return s
	}
	s = strings.ReplaceAll(s, v, "…")
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' || r == ';' || r == ' ' || r == '\t' }) {
		if len(part) >= 3 {
			s = strings.ReplaceAll(s, part, "…")
		}
	}
	return s
}
