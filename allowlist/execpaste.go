package allowlist

import (
	"regexp"
	"strings"
)

// systemd substitutes a unit's variables before the program reads its words (systemd.service(5),
// "Command lines"): ${NAME} inside any word, a script's text included, by its exact value, and a
// whole-word $NAME by its value split at whitespace (round 8: Environment="G=hi; /usr/sbin/reboot"
// with sh -c 'echo ${G}' runs reboot; Environment="C=/run/myapp/c /etc/kubernetes" with
// rm -rf $C removes /etc/kubernetes). The judges read a script's ${NAME} as the shell's; so in a
// changed line a ${NAME} pasted into a script-like word must have a value the judge knows to be
// plain text, and a whole-word $NAME a value without whitespace.
var (
	bracedRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	bareRef   = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)$`)
	shellRef  = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
)

// plainValue says whether a value pasted into a script changes nothing of how the shell parses it.
func plainValue(v string) bool {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._:=,+@-", r)) {
			return false
		}
	}
	return true
}

// systemdPaste says why a changed line's words are not what the program will read once systemd
// has substituted the unit's variables, or "".
func systemdPaste(argv []string, env map[string]string) string {
	for _, w := range argv {
		if m := bareRef.FindStringSubmatch(w); m != nil {
			if v, ok := env[m[1]]; ok && strings.ContainsAny(v, " \t\n") {
				return "$" + m[1] + " is split by systemd at whitespace into several arguments (" + short(v) + "): the judge reads one; write ${" + m[1] + "} or one value per variable"
			}
			continue
		}
		if !strings.ContainsAny(w, " \t\n;&|<>") {
			continue // not a script: the word is one argument whatever the value
		}
		for _, m := range shellRef.FindAllStringSubmatch(w, -1) {
			// The unit's variables are the script's environment too: the shell splits an unquoted
			// $NAME at whitespace and globs it (sh -c "tee $T" with T="/run/myapp/x /etc/x").
			if v, ok := env[m[1]]; ok && strings.ContainsAny(v, " \t\n*?[") {
				return "$" + m[1] + " holds whitespace or a pattern (" + short(v) + "): the shell of " + short(w) + " may split it into words the judge reads as one"
			}
		}
		for _, m := range bracedRef.FindAllStringSubmatch(w, -1) {
			v, ok := env[m[1]]
			if !ok {
				return "${" + m[1] + "} is pasted by systemd into " + short(w) + " before the program reads it, with a value the judge does not know: cannot be judged"
			}
			if !plainValue(v) {
				return "${" + m[1] + "} is pasted by systemd into " + short(w) + " before the program reads it, and its value holds shell syntax or whitespace: cannot be judged"
			}
		}
	}
	return ""
}
