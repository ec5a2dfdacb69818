package allowlist

import (
	"regexp"
	"slices"
	"strings"
)

// The paths a changed line gives a program the judge does not model (adversary r14 b/01-06). A
// changed line may run the unit's own programs (execmodel.go: kubelet behind kubenswrapper, crio,
// a daemon, an unmodeled wrapper such as strace or flock) with new arguments, and the argument
// rules judge only the flags some table names: kubelet's --pod-manifest-path=, --config=,
// --kubeconfig=, --volume-plugin-dir=, --image-credential-provider-config=, crio's --config-dir=,
// --cni-plugin-dir=, --runtimes=, strace's -o were no table's, so the payload pointed root's
// daemons at files it wrote itself (a privileged static pod, a crio.conf.d drop-in, an exec
// plugin's kubeconfig) or had strace write /etc/passwd. A list of flags is never complete, so the
// rule is a mechanism, under the tables:
//
//   - In a changed line, a program the judge does not model that the node's current definition of
//     the unit runs (an own program, granted by the policy or not: crio's daemon, whose flags
//     beyond judgeImages' table are no model's), and a container engine run without a modeled
//     subcommand, may be given only the paths the node's current unit gives the same program with
//     the same option (Execution.OwnArgs, gathered by the judge itself from the node's lines,
//     OwnArgs), or read-only OS content (/usr, readOnlyOS). Every other path in its words is
//     refused, naming the program, the option and the path: an option's value (--opt=V, --opt V,
//     -oV), an operand, and every part of a list value (NAME=V, k=v:path, a,b) that names a path,
//     absolute or relative to the line's working directories (a relative part whose first name is
//     a DNS name with a dot, node-role.kubernetes.io/worker, quay.io/x, is a label's or an image's
//     and no path where the line runs in /).
//   - Any of its words, or a part of a word's value, shaped NAME=VALUE whose NAME the environment
//     judge refuses (LD_PRELOAD, LD_AUDIT, the *CONF*/*PATH* families to a place the payload may
//     write, …) is refused with the Environment= judge's reason (assignmentWhy): crio
//     --conmon-env=LD_PRELOAD=F hands it to every conmon.
//
// Label, taint, level and size flags (--node-labels=, --register-with-taints=, --v=,
// --system-reserved=cpu=500m) name no path and stay eligible; the same flag with the same path as
// the node's line stays eligible too, wherever it stands in the line.

// OwnArg is a path the node's current definition of a unit gives one of its own programs that the
// judge does not model (OwnArgs), or, with Path "", that the unit runs the program.
type OwnArg struct {
	Program string // as OwnPrograms names it: a path as RHCOS reaches it, or a name
	Option  string // the option the path is the value of ("" for an operand)
	Path    string // clean, as the judge resolves it
	// Flag marks a trust daemon's option (or, Option "", operand) and its Value as the node's line
	// gives them (daemonflags.go); Path is then "".
	Flag  bool
	Value string
	Key   string // the Exec key of the node's line (ExecStart, …), for a Flag
}

// givenArgs are a unit's OwnArgs for the judge, or, collecting (OwnArgs), where it records them.
type givenArgs struct {
	args    []OwnArg
	collect *[]OwnArg
	// progs indexes args' programs, when many (newProgramSet): runs is asked once a word.
	progs *programSet
}

// OwnArgs are the paths the unit's commands (its Exec lines as the node's current definition has
// them) give the programs the judge does not model, read as a changed line's are: a changed line
// of the same unit may give the same program the same paths by the same options.
func OwnArgs(p UnitProps) []OwnArg {
	var out []OwnArg
	var writes []string
	left := execBudget(p.Exec)
	wd := unitWorkingDirs(p.WorkingDirectory)
	j := judge{env: unitEnv(p.Execution), left: &left, wd: &wd, unitWD: len(wd), made: map[string]bool{},
		programs: OwnPrograms(p.Exec), strict: true, mut: &unitPlaces{collect: &writes}, given: &givenArgs{collect: &out}}
	j.progSet = newProgramSet(j.programs)
	for i, line := range p.Exec {
		j.key = p.ExecKey(i)
		argv, _ := systemdArgv(line, j.env)
		j.argv(argv, 0)
	}
	return out
}

// record collects a; the judge may read a command more than once (a modeled wrapper's command).
func (g *givenArgs) record(a OwnArg) {
	if !slices.Contains(*g.collect, a) {
		*g.collect = append(*g.collect, a)
	}
}

// runs says whether the node's current unit runs the program.
func (g *givenArgs) runs(argv0 string) bool {
	if g.progs == nil && len(g.args) > 32 {
		progs := make([]string, len(g.args))
		for i, a := range g.args {
			progs[i] = a.Program
		}
		g.progs = newProgramSet(progs)
	}
	if g.progs != nil {
		return g.progs.has(argv0)
	}
	return slices.ContainsFunc(g.args, func(a OwnArg) bool { return sameProgram(a.Program, argv0) })
}

// gave says whether the node's current unit gives the program the path by the option.
func (g *givenArgs) gave(argv0, opt, p string) bool {
	return slices.ContainsFunc(g.args, func(a OwnArg) bool {
		return a.Path == p && a.Option == opt && sameProgram(a.Program, argv0)
	})
}

// engineDaemon says whether the command runs a container engine without a subcommand (podman's
// service without one): judgeImages reads only its code options, the rest of its flags are no
// model's; crio (criDaemons) whatever its words: a grant of it lifts none of this rule.
func engineDaemon(argv []string) bool {
	if slices.Contains(criDaemons, cmdName(argv[0])) {
		return true
	}
	if _, ok := containerEngines[cmdName(argv[0])]; !ok {
		return false
	}
	return !slices.ContainsFunc(argv[1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
}

// givenWhy judges, in a changed line (sure), the paths and variables a program the judge does not
// model is given (see above); collecting, it records them.
func (j judge) givenWhy(argv []string, sure bool) string {
	if !sure || j.given == nil || len(argv) == 0 {
		return ""
	}
	g := j.given
	own := !modeledProgram(argv[0]) && (g.collect != nil && j.ownProgram(argv[0]) || g.collect == nil && g.runs(argv[0]))
	if !own && !engineDaemon(argv) {
		return ""
	}
	prog := cmdName(argv[0])
	key := argv[0]
	if strings.Contains(key, "/") {
		key = programKey(key)
	}
	if g.collect != nil {
		g.record(OwnArg{Program: key})
	}
	words := givenWords(argv[1:])
	for _, w := range words {
		if g.collect == nil {
			if why := givenAssignment(w); why != "" {
				return prog + " " + short(w.word) + ": " + why + " (" + prog + " hands it to the programs it starts, as Environment= would)"
			}
		}
		for _, p := range j.givenPaths(w.val) {
			if g.collect != nil {
				g.record(OwnArg{Program: key, Option: w.opt, Path: p})
				continue
			}
			if readOnlyOS(p) || g.gave(argv[0], w.opt, p) {
				continue
			}
			by, before := "as an operand", "by no option or operand"
			if w.opt != "" {
				by, before = "by "+w.opt, "by "+w.opt
			}
			return prog + " " + short(w.word) + ": a changed line gives " + prog + ", which the judge does not model, the path " + p + " (" + by +
				") it was not given before: a root daemon's path argument can name code or configuration the judge never reads (only the paths the node's definition of the unit gives " +
				prog + " " + before + ", or read-only OS content: /usr but /usr/local)"
		}
	}
	return j.flagsWhy(argv, key, words)
}

// givenWord is one argument of an unmodeled program: the option it is the value of ("" for an
// operand), the value, and the words as written.
type givenWord struct{ opt, val, word string }

// givenWords reads an unmodeled program's arguments as options and their values: --opt=V, -oV,
// -opt=V; --opt V and -o V where the next word is no option (read as the option's value, whatever
// the program's grammar: the node's lines are read the same way, so the same words match);
// operands (every word after --).
func givenWords(args []string) []givenWord {
	var out []givenWord
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for _, o := range args[i+1:] {
				out = append(out, givenWord{val: o, word: o})
			}
			return out
		case !strings.HasPrefix(a, "-") || a == "-":
			out = append(out, givenWord{val: a, word: a})
		case strings.Contains(a, "="):
			name, val, _ := strings.Cut(a, "=")
			out = append(out, givenWord{opt: name, val: val, word: a})
		case !strings.HasPrefix(a, "--") && len(a) > 2:
			out = append(out, givenWord{opt: a[:2], val: a[2:], word: a})
		case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			out = append(out, givenWord{opt: a, val: args[i+1], word: a + " " + args[i+1]})
			i++
		default:
			out = append(out, givenWord{opt: a, word: a})
		}
	}
	return out
}

// dnsFirst is a relative word's first name that is a DNS name with a dot: a label's prefix
// (node-role.kubernetes.io/worker) or an image's registry (quay.io/openshift/pause), no path.
var dnsFirst = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+/`)

// givenPaths are the paths a value names, clean: each part between "=", ":", "," and blanks that
// holds a "/", absolute, or relative from every directory the line may run in (but a label's or
// an image's where it runs in /), and where the line runs elsewhere than / every bare name too.
func (j judge) givenPaths(val string) []string {
	if x, ok := j.expand(val); ok {
		val = x
	}
	dirs := j.dirs()
	inRoot := !slices.ContainsFunc(dirs, func(d string) bool { return d != "/" })
	var out []string
	for _, part := range strings.FieldsFunc(val, func(r rune) bool { return strings.ContainsRune("=:, \t\n", r) }) {
		switch {
		case !strings.Contains(part, "/") && inRoot:
			// A bare name in / is a level, a label's value or a name, not a path the payload writes.
		case !strings.Contains(part, "/"):
			// Outside / a bare name (pwn, .) is a file below the line's directory, which the payload
			// may choose and write (WorkingDirectory=/etc/docker/certs.d/x with --pod-manifest-path=pwn:
			// adversary r16 c/03-04). Refused unless the node's unit gave the same, read as it reads.
			for _, d := range dirs {
				out = append(out, cleanPath(d+"/"+part))
			}
		case strings.HasPrefix(part, "/"):
			out = append(out, cleanPath(part))
		case inRoot && dnsFirst.MatchString(part):
		default:
			for _, d := range dirs {
				out = append(out, cleanPath(d+"/"+part))
			}
		}
	}
	return out
}

// envName is a word's NAME in NAME=VALUE as a program's environment reads it: an identifier in
// one case (LD_PRELOAD, http_proxy; a CamelCase feature gate, RotateKubeletServerCertificate=true,
// is no variable's name).
var envName = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)$`)

// givenAssignment says why a part of the argument shaped NAME=VALUE (the word, its value after the
// option, a short option's joined value, and each of their comma-separated parts) sets a variable
// the environment judge refuses, or "".
func givenAssignment(w givenWord) string {
	cands := []string{w.word, w.val}
	if strings.HasPrefix(w.word, "-") && !strings.HasPrefix(w.word, "--") && len(w.word) > 2 {
		cands = append(cands, w.word[2:])
	}
	for _, c := range slices.Clone(cands) {
		cands = append(cands, strings.Split(c, ",")...)
	}
	for _, c := range cands {
		name, _, ok := strings.Cut(strings.TrimSpace(c), "=")
		if !ok || !envName.MatchString(name) {
			continue
		}
		if why := assignmentWhy(strings.TrimSpace(c)); why != "" {
			return "sets " + short(c) + ": " + why
		}
	}
	return ""
}
