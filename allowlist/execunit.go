package allowlist

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ExecKey is the key of Exec's entry i (ExecStart, ExecReload, …), or "" when unknown.
func (x Execution) ExecKey(i int) string {
	if i < len(x.ExecKeys) {
		return x.ExecKeys[i]
	}
	return ""
}

// Execution is how a unit's commands run and what systemd does with its jobs, as the unit file sets
// it (the plan) or the manager reports it (the executor).
type Execution struct {
	// ExecKeys names each entry of Exec (ExecStart, ExecReload, …) when known.
	ExecKeys []string
	// ExecQuoted marks the entries of Exec whose text is the payload's own (the plan finds it in
	// the payload's unit file or drop-ins): a refusal may quote such a line as written (redacted).
	// Any other (the node's own line; every line the manager reports over D-Bus) is named by its
	// skeleton only. nil: every line is quoted (a caller that knows no provenance, as in tests).
	ExecQuoted []bool
	// ExecChanged marks the entries of Exec the payload adds or changes (the plan compares the
	// desired unit with the node's current one; nil when unknown, e.g. over D-Bus). A changed line
	// is the ConfigMap's, not the node's: it is judged strictly (judgeExecution).
	ExecChanged []bool
	// Programs are the unit's own programs (OwnPrograms of the node's current definition of the
	// unit) and those the node policy grants it (Policy.UnitPrograms): besides the modeled ones, the
	// only programs a changed line may run (execmodel.go). Nil over D-Bus, where ExecChanged is.
	Programs []string
	// OwnWrites are the paths the node's current definition of the unit mutates (OwnWrites):
	// besides the unit's own places, the only ones a changed line may change (execmutate.go).
	OwnWrites []string
	// OwnSecrets are the node's secrets the node's current definition of the unit names
	// (OwnSecrets): a changed line's own program may name them too (execsecrets.go).
	OwnSecrets []string
	// OwnArgs are the paths the node's current definition of the unit gives its programs the judge
	// does not model (OwnArgs): a changed line may give them only these or read-only OS content
	// (execgiven.go).
	OwnArgs []OwnArg
	// NeverOwn are the agent's state dirs (Policy.StateDirs, wherever --state-dir puts them): never
	// a unit's own place, even one named after it or under /tmp (execmutate.go).
	NeverOwn []string
	// Managed are the paths the node policy's rules manage (Policy.Rules, a prefix rule ending in
	// "/"): their mode and owner are the policy's, so never a unit's own place either (round 9).
	Managed []string
	// NodeReads are the files the node's units and the payload's read as root (their
	// EnvironmentFile=, credentials, programs, PID files: NodeReadsOf, gathered by the plan from
	// every unit file and drop-in the node's manager loads): never a changed line's own place,
	// whatever their names (round 12). Those of the unit judged itself (by its name) stay its own
	// only for its PID file; its own EnvironmentFile= and programs are added from its definition.
	NodeReads []NodeRead
	// The job mode of the jobs OnFailure=/OnSuccess= start ("" is replace).
	OnFailureJobMode, OnSuccessJobMode string
	// StandardInput/Output/Error: file:PATH, append:PATH, truncate:PATH, journal, tty, …; over
	// D-Bus the kind only (systemd reports "file", not the path).
	StandardInput, StandardOutput, StandardError string
	WorkingDirectory, RootDirectory              string
	// Environment are the unit's Environment= assignments (KEY=VALUE, specifiers resolved); the
	// *Directory= settings give $RUNTIME_DIRECTORY and its kind.
	Environment []string
	// PassEnvironment names the manager's variables passed on; EnvironmentFiles the files read
	// ("-" first when a missing one is ignored).
	PassEnvironment, EnvironmentFiles []string
	// UnsetEnvironment names the variables (or KEY=VALUE assignments) removed from the environment.
	UnsetEnvironment                                                                        []string
	RuntimeDirectory, StateDirectory, CacheDirectory, LogsDirectory, ConfigurationDirectory []string
}

// jobModesOK are the job modes an OnFailure=/OnSuccess= job may have: isolate stops every other
// unit, replace-irreversibly makes the job uncancellable, flush cancels every queued job, and the
// ignore-* modes start a unit without what it needs.
var jobModesOK = []string{"", "fail", "replace"}

// judgeExecution judges what the unit makes systemd do around its commands, then each command.
func judgeExecution(p UnitProps) error {
	for _, m := range []struct{ key, v string }{{"OnFailureJobMode", p.OnFailureJobMode}, {"OnSuccessJobMode", p.OnSuccessJobMode}} {
		if !slices.Contains(jobModesOK, strings.ToLower(strings.TrimSpace(m.v))) {
			return fmt.Errorf("%s=%s: the job the unit's end starts would %s", m.key, m.v, jobModeEffect(m.v))
		}
	}
	for _, dep := range []struct {
		key  string
		list []string
	}{{"OnFailure", p.OnFailure}, {"OnSuccess", p.OnSuccess}} {
		for _, u := range dep.list {
			cu := canonUnit(u)
			if strings.HasSuffix(cu, ".target") {
				return fmt.Errorf("%s=%s: the unit's end would start a target (with its job mode, the system's state): judged by identity, refused", dep.key, u)
			}
			if err := DependencyIdentity(u); err != nil {
				return fmt.Errorf("%s=%s: %v", dep.key, u, err)
			}
		}
	}
	for _, s := range []struct{ key, v string }{{"StandardInput", p.StandardInput}, {"StandardOutput", p.StandardOutput}, {"StandardError", p.StandardError}} {
		kind, target, _ := strings.Cut(s.v, ":")
		switch strings.ToLower(kind) {
		case "file", "append", "truncate":
			why := "the manager opens the path as root for the unit, and does not report it over D-Bus: the executor could not judge it"
			if target != "" {
				if w := (judge{}).reach(target, true); w != "" {
					why = w
				}
			}
			return fmt.Errorf("%s=%s: %s", s.key, s.v, why)
		}
	}
	if tty := strings.ToLower(p.StandardInput); strings.HasPrefix(tty, "tty") {
		for _, argv := range p.Exec {
			if len(argv) > 0 && (slices.Contains(shells, cmdName(argv[0])) || interpreterName(cmdName(argv[0])) != "") {
				return fmt.Errorf("StandardInput=%s with %s: a root shell on a console", p.StandardInput, argv[0])
			}
		}
	}
	for _, d := range []struct{ key, v string }{{"WorkingDirectory", p.WorkingDirectory}, {"RootDirectory", p.RootDirectory}} {
		v := strings.TrimLeft(d.v, "-!~")
		if v == "" {
			continue
		}
		c := cleanPath("/" + strings.TrimPrefix(v, "/"))
		if under(c, "/proc") || under(c, "/sys") || under(c, "/dev") {
			return fmt.Errorf("%s=%s: the unit's relative paths would reach the kernel's state", d.key, d.v)
		}
	}
	if n := commandWords(p.Exec); n > MaxExecWords {
		return fmt.Errorf("runs commands of %d words (at most %d): too long to judge", n, MaxExecWords)
	}
	left := execBudget(p.Exec)
	wd := unitWorkingDirs(p.WorkingDirectory)
	j := judge{env: unitEnv(p.Execution), left: &left, wd: &wd, unitWD: len(wd), made: map[string]bool{}, programs: p.Programs, progSet: newProgramSet(p.Programs), mut: placesOf(p),
		envFiles: len(p.EnvironmentFiles) > 0, given: &givenArgs{args: p.OwnArgs}}
	substituted := 0
	for i, line := range p.Exec {
		j.strict = i < len(p.ExecChanged) && p.ExecChanged[i]
		j.key = p.ExecKey(i)
		// The judges read the words the program gets: systemd's substitution of the unit's
		// variables done (execpaste.go).
		argv, unknown := systemdArgv(line, j.env)
		for _, w := range argv {
			substituted += len(w)
		}
		if substituted > MaxExecBytes {
			// The word bound counts words as written; a variable substituted into each of them
			// multiplies the bytes the judge reads (adversary r22 c/05: one 125 KB variable in
			// 16 000 words, a 1.1 KB ConfigMap value, was 2 GB to judge, 5 s of CPU on every node).
			return fmt.Errorf("runs commands of more than %d bytes once the unit's variables are substituted (%s): too long to judge", MaxExecBytes, cmp.Or(p.ExecKey(i), "Exec"))
		}
		why := ""
		if j.strict {
			why = notifySocket(line)
		}
		if why == "" && j.strict {
			why = notifySocket(argv)
		}
		if why == "" && j.strict {
			why = netWords(argv) // execlocal.go
		}
		var wd0 []string
		var made0 map[string]bool
		if j.strict {
			wd0, made0 = slices.Clone(*j.wd), maps.Clone(j.made)
		}
		if why == "" {
			why = j.argv(argv, 0)
		}
		if why == "" && j.strict {
			why = j.pasteWhy(argv, unknown) // execpaste.go (after: a command's own refusal says more)
		}
		if why == "" && j.strict {
			// The node's secrets the line names (execsecrets.go): a second pass from the same
			// state, after every other rule, whose reasons say more.
			js := j
			wd, budget := slices.Clone(wd0), execBudget([][]string{line})
			js.wd, js.made, js.left, js.secrets = &wd, made0, &budget, true
			why = js.argv(argv, 0)
		}
		for _, w := range j.written(argv) {
			j.made[w] = true
		}
		if why != "" {
			key := cmp.Or(p.ExecKey(i), "Exec")
			// The payload's own line is quoted as written (redacted), any other named by its
			// skeleton (lineSkeleton), and never with the unit's variables substituted: it may be the
			// node's own (a unit file the payload never held) or hold the node's values, and what a
			// reason says reaches the logs, the Node's annotation and Events (adversary r22 c/03,
			// c/04: the node's podman login -p and Environment= secrets came back).
			a := short(strings.Join(argv, " "))
			why = strings.TrimPrefix(why, a+": ")
			if l := short(strings.Join(line, " ")); l != a {
				why = strings.TrimPrefix(why, l+": ")
			}
			sk := redact(escapeControls.Replace(short(strings.Join(line, " "))))
			if p.ExecQuoted != nil && (i >= len(p.ExecQuoted) || !p.ExecQuoted[i]) {
				sk = lineSkeleton(line)
				why = maskWords(why, append(slices.Clone(line), argv...)...)
			}
			if !slices.Equal(line, argv) {
				sk += " (the unit's variables substituted)"
				why = maskWords(why, substitutedWords(line, argv)...) // the node's values, never the payload's
			}
			return fmt.Errorf("%s=%s: %s", key, sk, redact(escapeControls.Replace(why)))
		}
	}
	for i, argv := range p.Exec {
		if len(argv) > 0 {
			if why := programFile(argv[0]); why != "" {
				key := cmp.Or(p.ExecKey(i), "Exec")
				return fmt.Errorf("%s=%s: %s", key, lineSkeleton(argv), why)
			}
		}
	}
	// After the commands: a command's own refusal says more than the environment's.
	return judgeEnvironment(p.Execution)
}

// unitWorkingDirs are the directories the unit's commands may start in, as systemd reads
// WorkingDirectory= (systemd.exec(5); load-fragment.c config_parse_working_directory, exec-invoke.c
// apply_working_directory), or none for the default (the system manager's "/", placeDirs). A
// leading "-" (the unit file's spelling) or "!" (the manager's over D-Bus) makes a missing
// directory not fatal: chdir fails and the command runs where the manager runs, "/", so both are
// read (round 9: WorkingDirectory=-/tmp/missing made rm -rf etc remove /etc). "~" is the home of
// User=, which the judge does not read: unknown, so relative paths are refused (execdotdot.go), as
// after a ".." (resolved after the links before it). Any other value that is not an absolute path
// is ignored with "-" and fails the unit without it: "/".
func unitWorkingDirs(v string) []string {
	v = strings.TrimSpace(v)
	missingOK := false
	for strings.HasPrefix(v, "-") || strings.HasPrefix(v, "!") {
		v, missingOK = v[1:], true
	}
	var wd []string
	switch {
	case v == "~" || strings.HasPrefix(v, "~"):
		wd = []string{unknownDir}
	case !strings.HasPrefix(v, "/"):
		return []string{}
	case hasDotDot(v):
		wd = []string{unknownDir}
	default:
		wd = []string{cleanPath(v)}
	}
	if missingOK && wd[0] != "/" {
		wd = append(wd, "/")
	}
	return wd
}

func jobModeEffect(m string) string {
	switch strings.ToLower(strings.TrimSpace(m)) {
	case "isolate":
		return "stop every unit the started one does not need (the node's services)"
	case "replace-irreversibly":
		return "replace every conflicting job and could not be cancelled"
	case "flush":
		return "cancel every queued job"
	}
	return "start a unit outside the rules systemd enforces (" + m + ")"
}

// unitEnv is what the judge knows of the unit's variables: its Environment= values (a value with a
// specifier left is unknown) and the directories systemd creates for it.
func unitEnv(e Execution) map[string]string {
	env := map[string]string{}
	for _, d := range []struct {
		name, base string
		v          []string
	}{{"RUNTIME_DIRECTORY", "/run", e.RuntimeDirectory}, {"STATE_DIRECTORY", "/var/lib", e.StateDirectory},
		{"CACHE_DIRECTORY", "/var/cache", e.CacheDirectory}, {"LOGS_DIRECTORY", "/var/log", e.LogsDirectory},
		{"CONFIGURATION_DIRECTORY", "/etc", e.ConfigurationDirectory}} {
		if len(d.v) > 0 && !strings.Contains(d.v[0], "..") && !strings.HasPrefix(d.v[0], "/") {
			env[d.name] = path.Join(d.base, strings.SplitN(d.v[0], ":", 2)[0])
		}
	}
	for _, a := range e.Environment {
		k, v, ok := strings.Cut(a, "=")
		// A manager's variable (MAINPID=) is refused by judgeEnvironment: unknown here, so that
		// kill $MAINPID is judged as the manager's, and the refusal names the assignment.
		if !ok || strings.ContainsAny(v, "%$`") || managerVar(k) && !slices.Contains(wdVars, strings.ToUpper(k)) {
			delete(env, k)
			continue
		}
		env[k] = v
	}
	// UnsetEnvironment= applies last, after every other source (systemd.exec(5)): NAME removes the
	// variable, NAME=VALUE the assignment with that value. systemd pastes an unset ${NAME} as ""
	// and drops an unset whole-word $NAME, as an empty value; the shell expands it as "" too.
	// (Environment=D=run/myapp/x with UnsetEnvironment=D makes rm -rf /${D}etc rm -rf /etc.)
	for _, a := range e.UnsetEnvironment {
		k, v, hasValue := strings.Cut(a, "=")
		if old, known := env[k]; !hasValue || known && old == v {
			env[k] = ""
		}
	}
	return env
}

// specifiers are the unit specifiers (systemd.unit(5)) that name the system manager's directories.
var specifiers = map[byte]string{'t': "/run", 'S': "/var/lib", 'C': "/var/cache", 'L': "/var/log", 'E': "/etc",
	'T': "/tmp", 'V': "/var/tmp", 'h': "/root", 'u': "root", 'U': "0", 'g': "root", 'G': "0", 's': "/bin/sh", '%': "%"}

// ResolveSpecifiers resolves the specifiers of a unit file value as the system manager would for the
// unit named (%n, %N, %p, %i, %j, their unescaped %P, %I, %J, %f and the directories); one it does not know is kept, so that a
// word holding it is judged as one the judge cannot resolve.
func ResolveSpecifiers(unit, s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	stem := unitStem(unit)
	prefix, inst, _ := strings.Cut(stem, "@")
	j := prefix
	if k := strings.LastIndexByte(prefix, '-'); k >= 0 {
		j = prefix[k+1:]
	}
	f := "/" + unitUnescape(prefix)
	if inst != "" {
		f = "/" + unitUnescape(inst)
	}
	names := map[byte]string{'n': unit, 'N': stem, 'p': prefix, 'P': unitUnescape(prefix), 'i': inst, 'I': unitUnescape(inst),
		'j': j, 'J': unitUnescape(j), 'f': f}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if v, ok := specifiers[s[i+1]]; ok {
			b.WriteString(v)
		} else if v, ok := names[s[i+1]]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+2])
		}
		i++
	}
	return b.String()
}

// unitUnescape is systemd's unescaping of a unit name's part (unit_name_unescape, as %I, %P, %J and
// %f read it): a '-' is a '/', \xNN the byte NN.
func unitUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '-':
			b.WriteByte('/')
		case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x':
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// substitutedWords are the words of argv that the line does not hold: the values its variables gave.
func substitutedWords(line, argv []string) []string {
	own := map[string]bool{}
	for _, l := range line {
		for _, w := range strings.FieldsFunc(l, wordBreak) {
			own[w] = true
		}
	}
	var out []string
	for _, a := range argv {
		for _, w := range strings.FieldsFunc(a, wordBreak) {
			if !own[w] {
				out = append(out, w)
			}
		}
	}
	return out
}
