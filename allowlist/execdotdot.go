package allowlist

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// What the judge reads on the text is not what the kernel and the shell do (issue 27, round 7b):
//
//   - The kernel resolves ".." after the symlinks before it: /usr/local/../bin is /var/bin
//     (/usr/local -> ../var/usrlocal), /etc/ssl/certs/../../.. is /etc (certs -> ../pki/tls/certs).
//     Folding ".." on the text (cleanPath) is right only when no earlier component is a link,
//     which the judge cannot know. So a path with a ".." component is refused in a changed line
//     wherever it stands (program, script, operand, write target, working directory, cd), and in
//     every line as a program, a write target or a working directory (dotDotWhy; the MCO's units
//     have none). "." components and "//" are harmless and still folded.
//   - The manager sets variables for a unit's processes ($MAINPID, $NOTIFY_SOCKET, $LISTEN_FDS,
//     the *_DIRECTORY ones, …) and then merges the unit's Environment=, EnvironmentFile= and
//     PassEnvironment= over them (exec-invoke.c build_environment, then strv_env_merge: the unit's
//     own win). A unit may not set them (managerVar), and kill $MAINPID is trusted only where a
//     main process exists: never in ExecCondition=/ExecStartPre=/ExecStart= of a changed line.
//   - set -a (allexport) and namerefs export or assign variables no export or assignment the
//     judge reads names; builtins that assign a variable by name (for, read, printf -v, …) are
//     judged as an assignment of that name (assignedName).
//   - cd -, pushd/popd by index and a cd the judge cannot resolve leave the working directory
//     unknown (unknownDir): after them relative paths are refused. OLDPWD, PWD and CDPATH are
//     never set by a unit or a script (wdVars).

// hasDotDot says whether the path has a ".." component, or one the shell may make "." or ".."
// (round 8): RHCOS's bash 5.1 matches a pattern that starts with an explicit dot (.?, .*, .[.])
// against "." and "..", so /tmp/.?/etc is /tmp/../etc; and brace expansion writes them
// (/tmp/{.,}./etc, /tmp/{a/..,b}/etc: expanded over the whole path, as a brace list may hold a
// "/"). A pattern not starting with a dot never matches them (bash matches a leading dot only
// explicitly, even with dotglob). A brace expression with too many words to list counts as one.
func hasDotDot(p string) bool {
	if !strings.ContainsAny(p, "*?[{\\") {
		return literalDotDot(p)
	}
	words, ok := braceWords(p, 64)
	if !ok {
		return true
	}
	for _, w := range words {
		if literalDotDot(w) {
			return true
		}
		for _, c := range strings.Split(w, "/") {
			if patternDots(c) {
				return true
			}
		}
	}
	return false
}

// literalDotDot says whether the path, as written, has a ".." component.
func literalDotDot(p string) bool {
	return p == ".." || strings.HasPrefix(p, "../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "/../")
}

// patternDots says whether the shell may match the (brace-expanded) path component against "."
// or "..": an escaped dot is a dot, and a pattern starting with a dot or a bracket is matched.
func patternDots(c string) bool {
	c = strings.ReplaceAll(c, "\\.", ".")
	if c == "." || c == ".." {
		return true
	}
	if c == "" || !strings.ContainsAny(c, "*?[") || !strings.ContainsRune(".[", rune(c[0])) {
		return false
	}
	// bash reads "]" first in a bracket as a member ([].]?); Go's path.Match wants it escaped.
	// A pattern still malformed is text to bash.
	c = strings.NewReplacer("[]", "[\\]", "[!]", "[!\\]", "[^]", "[^\\]").Replace(c)
	if m, _ := path.Match(c, ".."); m {
		return true
	}
	m, _ := path.Match(c, ".")
	return m
}

// braceWords is the word after bash's brace expansion of {a,b} lists and {x..y[..n]} sequences
// (letters or integers: /etc/sha{c..e}ow is /etc/shadow among others, adversary r21 a/04), at most
// max words; ok is false past max.
func braceWords(c string, max int) ([]string, bool) {
	open := strings.IndexByte(c, '{')
	if open < 0 {
		return []string{c}, true
	}
	depth, commas := 0, []int{}
	for i := open; i < len(c); i++ {
		switch c[i] {
		case '{':
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			depth--
			if depth == 0 {
				alts, isSeq := braceSequence(c[open+1:i], max)
				if isSeq && alts == nil {
					return nil, false // more than max
				}
				if !isSeq && len(commas) == 0 {
					rest, ok := braceWords(c[i+1:], max)
					out := make([]string, 0, len(rest))
					for _, r := range rest {
						out = append(out, c[:i+1]+r)
					}
					return out, ok
				}
				if !isSeq {
					start := open + 1
					for _, k := range append(commas, i) {
						alts = append(alts, c[start:k])
						start = k + 1
					}
				}
				var out []string
				for _, x := range alts {
					words, ok := braceWords(x+c[i+1:], max)
					if !ok {
						return nil, false
					}
					for _, a := range words {
						out = append(out, c[:open]+a)
					}
					if len(out) > max {
						return nil, false
					}
				}
				return out, true
			}
		}
	}
	return []string{c}, true // an unclosed brace is text
}

var braceSeqRE = regexp.MustCompile(`^(?:([+-]?[0-9]+)\.\.([+-]?[0-9]+)|([A-Za-z])\.\.([A-Za-z]))(?:\.\.([+-]?[0-9]+))?$`)

// braceSequence expands bash's sequence expression inner (of {inner}) as bash does: integers from
// x to y (zero-padded to the wider when either has a leading zero) or letters, by the increment's
// size, either way; isSeq is false when inner is none, and seq nil when it has more than limit words.
func braceSequence(inner string, limit int) (seq []string, isSeq bool) {
	m := braceSeqRE.FindStringSubmatch(inner)
	if m == nil {
		return nil, false
	}
	step := 1
	if m[5] != "" {
		n, err := strconv.Atoi(m[5])
		if err != nil {
			return nil, true
		}
		if step = n; step < 0 {
			step = -step
		}
		if step == 0 {
			step = 1
		}
	}
	var from, to, width int
	letters := m[3] != ""
	if letters {
		from, to = int(m[3][0]), int(m[4][0])
	} else {
		var err1, err2 error
		from, err1 = strconv.Atoi(m[1])
		to, err2 = strconv.Atoi(m[2])
		if err1 != nil || err2 != nil {
			return nil, true
		}
		if from < -1e9 || from > 1e9 || to < -1e9 || to > 1e9 {
			return nil, true // as many words as that: over any limit
		}
		for _, x := range []string{m[1], m[2]} {
			d := strings.TrimLeft(x, "+-")
			if len(d) > 1 && d[0] == '0' {
				width = max(width, len(x))
			}
		}
	}
	dir := 1
	if to < from {
		dir = -1
	}
	if (to-from)*dir/step+1 > limit {
		return nil, true
	}
	for v := from; (to-v)*dir >= 0; v += dir * step {
		switch {
		case letters:
			seq = append(seq, string(rune(v)))
		case width > 0:
			seq = append(seq, fmt.Sprintf("%0*d", width, v))
		default:
			seq = append(seq, strconv.Itoa(v))
		}
	}
	return seq, true
}

// dotDotIn is the first path in the word (itself, or a value after = : , or a space) with a ".."
// component, or "".
func dotDotIn(w string) string {
	if !strings.Contains(w, "..") && !strings.ContainsAny(w, "*?[{\\") {
		return ""
	}
	if strings.Contains(w, "{") && hasDotDot(w) {
		return w // a brace expression's commas are its own, not a list's
	}
	for _, part := range strings.FieldsFunc(w, func(r rune) bool {
		return r == '=' || r == ':' || r == ',' || r == ' ' || r == '\t' || r == '\n'
	}) {
		if hasDotDot(part) {
			return part
		}
	}
	return ""
}

// dotDotWhy is the reason a path with ".." is refused where it stands (what: "runs", "writes", …).
func dotDotWhy(what, p string) string {
	return what + " " + p + ": a path with \"..\" is resolved by the kernel after the symbolic links before it (/usr/local/../bin is /var/bin), which the judge cannot see: cannot be judged"
}

// unknownDir stands in a judge's working directories for one it cannot know (cd -, popd, cd
// through CDPATH, a WorkingDirectory= with ".."): relative paths after it are refused.
const unknownDir = "?"

// wdUnknown says whether a command may run in a working directory the judge does not know.
func (j judge) wdUnknown() bool {
	if j.wd == nil {
		return false
	}
	return slices.ContainsFunc(*j.wd, func(d string) bool { return strings.HasPrefix(d, unknownDir) })
}

// relativeWhy says why a relative path may not be used: the working directory is unknown.
func relativeWhy(w string) string {
	return "names " + w + " relative to a working directory the judge cannot know (after cd -, popd, pushd +N, CDPATH or a directory with \"..\"): cannot be judged"
}

// argvPaths judges the command's words as paths (argvClass): a program with ".." in every line;
// in a changed line any word with a ".." component, and a relative path when the working
// directory is unknown.
func (j judge) argvPaths(argv []string) string {
	prog, _ := j.expand(argv[0])
	if hasDotDot(prog) {
		return dotDotWhy("runs", argv[0])
	}
	unknown := j.wdUnknown()
	if unknown && strings.Contains(prog, "/") && !strings.HasPrefix(prog, "/") {
		return relativeWhy(argv[0])
	}
	if !j.strict {
		return ""
	}
	for _, a := range argv[1:] {
		x, _ := j.expand(a)
		if p := dotDotIn(x); p != "" {
			return dotDotWhy("names", p)
		}
		if unknown && strings.Contains(x, "/") && !strings.HasPrefix(x, "/") && !strings.HasPrefix(x, "-") && !strings.ContainsAny(x, " \t\n=:") {
			return relativeWhy(a)
		}
	}
	return ""
}

// pathWhy judges a write target (after its variables): ".." anywhere, and a relative one when the
// working directory is unknown.
func (j judge) pathWhy(x string) string {
	if p := dotDotIn(x); p != "" {
		return dotDotWhy("writes", p)
	}
	if !strings.HasPrefix(x, "/") && !strings.HasPrefix(x, "~") && j.wdUnknown() {
		return relativeWhy(x)
	}
	return ""
}

// changeDirTo is the directory a cd, pushd or popd leads to as changeDir records it: unknownDir for
// one the judge cannot place (cd -, pushd/popd by index, popd, CDPATH set, an unresolved word),
// or why it is refused (a ".." in a changed line).
func (j judge) changeDirTo(prog, x string, resolved bool) (string, string) {
	if prog == "popd" || x == "-" || (prog == "pushd" || prog == "popd") && len(x) > 1 && (x[0] == '+' || x[0] == '-') ||
		!resolved || j.env["CDPATH"] != "" && !strings.HasPrefix(x, "/") && !strings.HasPrefix(x, ".") {
		return unknownDir, ""
	}
	if hasDotDot(x) || dotDotIn(x) != "" {
		if j.strict {
			return "", prog + " " + x + ": " + dotDotWhy("changes to", x)
		}
		return unknownDir, ""
	}
	return x, ""
}

// managerVars are the variables the service manager sets for a unit's processes (systemd.exec(5)
// "Environment Variables in Spawned Processes"): the unit's Environment=, EnvironmentFile= and
// PassEnvironment= would override them (Environment=MAINPID=1 makes kill $MAINPID signal PID 1).
// RUNTIME_DIRECTORY and the other *_DIRECTORY of the unit's own directories are not among them: the
// judge reads their values as systemd merges them, Environment= over the manager's (unitEnv), and
// the MCO's kubens.service sets RUNTIME_DIRECTORY itself.
var managerVars = []string{"MAINPID", "MANAGERPID", "INVOCATION_ID", "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS",
	"LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC", "SERVICE_RESULT", "EXIT_CODE", "EXIT_STATUS", "MONITOR_*",
	"TRIGGER_*", "CREDENTIALS_DIRECTORY", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID", "MEMORY_PRESSURE_WATCH",
	"MEMORY_PRESSURE_WRITE", "FDSTORE", "PIDFILE", "REMOTE_ADDR", "REMOTE_PORT", "LOG_NAMESPACE", "INVOCATION_ID",
	"XDG_RUNTIME_DIR", "NOTIFY_SOCKET"}

// wdVars name the shell's working directories: cd - goes to $OLDPWD, cd NAME searches $CDPATH.
var wdVars = []string{"OLDPWD", "PWD", "CDPATH"}

// managerVar says whether the variable is the manager's (managerVars) or a working directory's.
func managerVar(name string) bool {
	u := strings.ToUpper(name)
	for _, v := range managerVars {
		if raw, ok := strings.CutSuffix(v, "*"); ok && strings.HasPrefix(u, raw) || u == v {
			return true
		}
	}
	return slices.Contains(wdVars, u)
}

// managerVarWhy says why a unit or a script may not set the variable, or "".
func managerVarWhy(name string) string {
	if slices.Contains(wdVars, strings.ToUpper(name)) {
		return name + " moves where cd -, cd NAME or the shell's working directory lead (the judge could not follow the unit's relative paths)"
	}
	if managerVar(name) {
		return name + " is the service manager's for the unit (as $MAINPID, $NOTIFY_SOCKET, $LISTEN_FDS are): a unit that sets it makes what trusts it (kill $MAINPID) reach another process, PID 1 or every one"
	}
	return ""
}

// nameWhy says why a script may not assign the variable by name (for, read, printf -v, …) with a
// value the judge cannot see: it loads code, moves where programs read code or write, or is the
// manager's or a working directory's.
func nameWhy(k string) string {
	u := strings.ToUpper(k)
	switch {
	case codeVar(k):
		return "sets " + k + ", a variable that loads code or moves where programs are found (cannot be judged)"
	case u == "HOME" || slices.Contains(dirVars, u) || slices.Contains(writeDirVars, u):
		return "sets " + k + ", a variable that moves where programs read their code or write their files, to a value the judge cannot see"
	case managerVar(k):
		return "sets " + managerVarWhy(k)
	}
	return ""
}

var shellName = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// assignedNames are the variables a builtin assigns by name (not NAME=VALUE words): for and
// select's variable, read's and mapfile's, printf -v's, getopts's, let's and ((…))'s names, and
// declare/typeset/local/readonly/export's names with or without a value.
func assignedNames(cmd []string) []string {
	n := cmd[0]
	args := cmd[1:]
	operands := func(valued string) []string {
		var out []string
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "--" {
				return append(out, args[i+1:]...)
			}
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				if strings.ContainsAny(a[len(a)-1:], valued) && i+1 < len(args) {
					if a[len(a)-1] == 'a' && n == "read" {
						out = append(out, args[i+1]) // read -a NAME: the array's name
					}
					i++
				}
				continue
			}
			out = append(out, a)
		}
		return out
	}
	switch {
	case n == "for" || n == "select":
		if len(args) > 0 {
			return args[:1]
		}
	case n == "read":
		return operands("adinNptu")
	case n == "mapfile" || n == "readarray":
		if o := operands("dnOsuCc"); len(o) > 0 {
			return o[len(o)-1:]
		}
		return []string{"MAPFILE"}
	case n == "printf":
		for i, a := range args {
			if a == "-v" && i+1 < len(args) {
				return []string{args[i+1]}
			}
			if v, ok := strings.CutPrefix(a, "-v"); ok && v != "" {
				return []string{v}
			}
		}
	case n == "getopts":
		if o := operands(""); len(o) > 1 {
			return o[1:2]
		}
	case n == "let" || strings.HasPrefix(n, "(("):
		return shellName.FindAllString(strings.Join(cmd, " "), -1)
	case slices.Contains([]string{"declare", "typeset", "local", "readonly", "export"}, n):
		var out []string
		for _, a := range operands("") {
			out = append(out, strings.SplitN(strings.TrimSuffix(strings.SplitN(a, "=", 2)[0], "+"), "[", 2)[0])
		}
		return out
	}
	return nil
}

// shellStateWhy refuses what makes the shell export or assign variables the judge cannot follow:
// set -a / set -o allexport, namerefs (declare/typeset/local -n), and a builtin's assignment by
// name of a variable no script may set (nameWhy).
func shellStateWhy(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	line := short(strings.Join(cmd, " "))
	for len(cmd) > 1 && cmd[0] == "builtin" {
		cmd = cmd[1:] // builtin set -a is set -a
	}
	n := cmd[0]
	switch n {
	case "set":
		for i, a := range cmd[1:] {
			if a == "--" {
				break
			}
			if (a == "-o" || a == "+o") && i+2 < len(cmd) && cmd[i+2] == "allexport" {
				return line + ": set -o allexport exports every variable the script assigns (for, read: names the judge does not see exported)"
			}
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'a') {
				return line + ": set " + a + " (allexport) exports every variable the script assigns (for, read: names the judge does not see exported)"
			}
			if (a == "-o" || a == "+o") && i+2 < len(cmd) && cmd[i+2] == "keyword" && a == "-o" ||
				strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'k') {
				return line + ": set " + a + " (keyword) puts NAME=VALUE arguments into commands' environments (BASH_ENV=, LD_PRELOAD= the judge reads as arguments)"
			}
		}
	case "declare", "typeset", "local":
		for _, a := range cmd[1:] {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'n') {
				return line + ": a nameref (" + n + " " + a + ") assigns a variable the judge does not see named"
			}
		}
	}
	declares := slices.Contains([]string{"declare", "typeset", "local", "readonly", "export"}, n)
	for _, k := range assignedNames(cmd) {
		if declares && !codeVar(k) && !managerVar(k) {
			continue // with a value judged by assignmentWhy; without one it keeps the value it has
		}
		if why := nameWhy(k); why != "" {
			return line + ": " + why
		}
	}
	return ""
}

// globShellOptions are bash's options that change what a pattern matches or what a word with one
// becomes (round 8): extglob's @(…) and +(…), nocaseglob's /PROC/KCOR?, globstar's **, dotglob,
// nullglob's and failglob's vanished words (cd with no directory is cd $HOME), globskipdots off
// (bash 5.2's .? matches .. again). The judge reads patterns as bash's defaults make them.
var globShellOptions = []string{"extglob", "nocaseglob", "globstar", "dotglob", "nullglob", "failglob",
	"globasciiranges", "globskipdots", "nocasematch"}

const globOptionsWhy = "the judge reads a pattern as bash's default options match it: extglob, nocaseglob, globstar, dotglob, nullglob, failglob and globskipdots are refused"

// shellOptionsWhy refuses a shell started with allexport (sh -a, bash -o allexport) or keyword, a
// shopt option (-O NAME, +O NAME) that changes how its patterns match or where cd goes, and in a
// changed line (strict) any shopt option, as the shopt builtin in its script is: options before
// its first operand, read as bash reads them (shellOptionWords): in a cluster each o and O takes
// the next word (bash -eO cdable_vars, -euo pipefail; adversary r22 a/02: bash -O cdable_vars -c
// 'cd X && cat shadow' read /etc/shadow with Environment=X=/etc).
func shellOptionsWhy(args []string, strict bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return ""
		}
		if a == "--rcfile" || a == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(a, "--") || len(a) < 2 {
			continue
		}
		if a[0] == '-' && strings.ContainsRune(a[1:], 'a') {
			return a + " (allexport) exports every variable the script assigns (for, read: names the judge does not see exported)"
		}
		if a[0] == '-' && strings.ContainsRune(a[1:], 'k') {
			return a + " (keyword) puts NAME=VALUE arguments into commands' environments (BASH_ENV=, LD_PRELOAD= the judge reads as arguments)"
		}
		for _, l := range a[1:] {
			if l != 'o' && l != 'O' {
				continue
			}
			opt := a[:1] + string(l)
			i++
			if i >= len(args) {
				return ""
			}
			name := args[i]
			switch {
			case opt == "-o" && name == "allexport":
				return "-o allexport exports every variable the script assigns (for, read: names the judge does not see exported)"
			case opt == "-o" && name == "keyword":
				return "-o keyword puts NAME=VALUE arguments into commands' environments (BASH_ENV=, LD_PRELOAD= the judge reads as arguments)"
			case l == 'O' && slices.Contains(globShellOptions, name):
				return opt + " " + name + " changes what the shell's patterns match (" + globOptionsWhy + ")"
			case l == 'O' && slices.Contains(wordShellOptions, name):
				return opt + " " + name + " " + wordOptionsWhy
			case l == 'O' && strict:
				return opt + " " + name + " sets a shell option as shopt does, which a changed line may not run (the judge reads a script as bash's default options run it)"
			}
		}
	}
	return ""
}

// wordShellOptions are bash's shopt options besides the glob ones that change where a word goes
// or what runs: cdable_vars makes cd X change to $X, expand_aliases runs an alias's text, extdebug
// a debug trap's verdicts.
var wordShellOptions = []string{"cdable_vars", "expand_aliases", "extdebug"}

const wordOptionsWhy = "changes where cd goes or what the shell runs (cdable_vars, expand_aliases and extdebug are refused)"

// mainPIDWhy refuses kill $MAINPID (what: "signals $MAINPID"), or another act on the unit's
// own main process (processWhy), where there is no main process yet: ExecCondition=,
// ExecStartPre= and ExecStart= run before the manager knows one (the variable is empty, or an
// EnvironmentFile='s), in a changed line.
func (j judge) mainPIDWhy(what string) string {
	if j.strict && slices.Contains([]string{"ExecCondition", "ExecStartPre", "ExecStart"}, j.key) {
		return what + " in " + j.key + "=, which runs before the unit has a main process (no main process yet: the variable is not the manager's)"
	}
	return ""
}
