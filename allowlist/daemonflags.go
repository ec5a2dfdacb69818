package allowlist

import (
	"slices"
	"strings"
)

// The flags of the daemons that hold the node's trust (adversary r18 c/03, c/04). The path rule
// (execgiven.go) judges the paths a changed line gives a program the judge does not model, but a
// daemon's trust also lies in flags that name no path: kubelet --anonymous-auth=true,
// --authorization-mode=AlwaysAllow, --authentication-token-webhook=false, crio --selinux=false,
// --default-capabilities=SYS_ADMIN, --insecure-registry=quay.io, sshd -o PermitRootLogin=yes each
// turn a guard off with a word. A list of dangerous flags is never complete, so the rule is the
// other way round: in a changed line, a trust daemon (trustDaemons; a container engine run as a
// daemon, engineDaemon) may be given
//
//   - an option, or an operand, with the value the node's current definition of the unit gives
//     it (Execution.OwnArgs), its paths judged by the path rule (the same path by the same option:
//     unix:///run/crio/crio.sock for /var/run/crio/crio.sock);
//   - a tunable (trustDaemons' list): its log level, labels, taints, reserved sizes, pod limit,
//     feature gates and pause image, crio's metrics and its printing subcommands, which move no
//     guard;
//
// and may drop only a tunable of those the node's definition gives it: kubelet without --config
// runs with the built-in defaults (anonymous requests allowed, AlwaysAllow). Options are matched
// as written (--anonymous_auth, which the kubelet reads as --anonymous-auth, is a new option,
// refused): the trust daemons are Go programs (pflag, urfave/cli), which take no abbreviation, so
// the rule reads their words as written only, never a GNU reading of them (execopts.go: this file
// is no exec*.go, whose long options the abbreviation tables must list). Words that are a
// variable the judge does not know ($CRIO_CONFIG_OPTIONS of the package's line) are the paste
// rule's (execpaste.go), not this one's. Other unmodeled programs of the unit keep the path rule only: the node policy that
// lets their unit change owns their flags (docs/security.md, residual risks).

// trustDaemons are the daemons whose flags the rule judges, each with its tunables.
var trustDaemons = map[string][]string{
	"kubelet":    kubeletTunables,
	"hyperkube":  kubeletTunables,
	"crio":       crioTunables,
	"cri-o":      crioTunables,
	"conmon":     {"--log-level", "--syslog"},
	"containerd": {"--log-level"},
	"dockerd":    {"--log-level", "--debug"},
	"sshd":       {"-D", "-e"},
}

var (
	kubeletTunables = []string{"--v", "--node-labels", "--register-with-taints", "--system-reserved", "--kube-reserved",
		"--max-pods", "--feature-gates", "--pod-infra-container-image", "--minimum-container-ttl-duration"}
	// crio's also its metrics endpoint and the subcommands that only print (config, version).
	crioTunables = []string{"--log-level", "--log-format", "--log-size-max", "--log-journald", "--conmon-env", "--enable-metrics",
		"--metrics-port", "config", "version"}
	// engineTunables are a container engine daemon's (podman system service and the like).
	engineTunables = []string{"--log-level"}
)

// tunable says whether the word is one of the tunables: an option by its name, an operand (a
// subcommand) by its value.
func tunable(tun []string, opt, val string) bool {
	if opt == "" {
		return val != "" && !strings.HasPrefix(val, "-") && slices.Contains(tun, val)
	}
	return slices.Contains(tun, opt)
}

// tunables are the program's tunables, and whether its flags are judged at all.
func tunables(argv []string) ([]string, bool) {
	if t, ok := trustDaemons[cmdName(argv[0])]; ok {
		return t, true
	}
	if engineDaemon(argv) {
		return engineTunables, true
	}
	return nil, false
}

// flagOf is how OwnArgs records a trust daemon's option (or, Option "", operand) and its value.
func flagOf(prog, key string, w givenWord) OwnArg {
	return OwnArg{Program: prog, Option: w.opt, Value: w.val, Flag: true, Key: key}
}

// flagWords are the words the rule reads: every word but an unknown variable's.
func flagWords(words []givenWord) []givenWord {
	return slices.DeleteFunc(slices.Clone(words), func(w givenWord) bool { return strings.HasPrefix(w.val, "$") && w.opt == "" })
}

// flagsWhy judges, in a changed line, the options and operands given a trust daemon (see above),
// after the path rule passed them; collecting, it records them.
func (j judge) flagsWhy(argv []string, key string, words []givenWord) string {
	tun, ok := tunables(argv)
	if !ok {
		return ""
	}
	if j.reading {
		return "" // a GNU reading of the words (execopts.go): not the daemon's
	}
	g, prog := j.given, cmdName(argv[0])
	if g.collect == nil && !modeledProgram(argv[0]) && !j.ownProgram(argv[0]) {
		return "" // the program rule refuses it, and says why (execmodel.go)
	}
	words = flagWords(words)
	if g.collect != nil {
		for _, w := range words {
			g.record(flagOf(key, j.key, w))
		}
		return ""
	}
	mayChange := " (a changed line may give " + prog + " only the options and operands the node's definition of the unit gives it, or change or drop its " +
		strings.Join(tun, ", ") + ")"
	for _, w := range words {
		if tunable(tun, w.opt, w.val) || g.flagGiven(argv[0], w, len(j.givenPaths(w.val)) > 0) {
			continue
		}
		what := "the option " + w.opt + " with a value the node's definition of the unit does not give it"
		switch {
		case w.opt == "":
			what = "the operand " + short(w.val) + " the node's definition of the unit does not give it"
		case !g.optionGiven(argv[0], w.opt):
			what = "the option " + w.opt + ", which the node's definition of the unit does not give it"
		}
		return prog + " " + short(w.word) + ": a changed line gives " + prog + ", a daemon that holds the node's trust, " + what +
			": a flag that names no path can still turn one of its guards off (kubelet --anonymous-auth, --authorization-mode; crio --selinux, --default-capabilities)" + mayChange
	}
	for _, a := range g.args {
		// Dropped from the node's line of the same Exec key: a new ExecStartPre=crio version
		// drops nothing of ExecStart=crio's.
		if !a.Flag || a.Key != j.key || !sameProgram(a.Program, argv[0]) || tunable(tun, a.Option, a.Value) {
			continue
		}
		if !slices.ContainsFunc(words, func(w givenWord) bool { return w.opt == a.Option && (a.Option != "" || w.val == a.Value) }) {
			what := "the option " + a.Option
			if a.Option == "" {
				what = "the operand " + short(a.Value)
			}
			return prog + ": a changed line drops " + what + " the node's definition of the unit gives " + prog +
				", a daemon that holds the node's trust: without it the daemon runs with its built-in defaults (kubelet without --config allows anonymous requests)" + mayChange
		}
	}
	return ""
}

// flagGiven says whether the node's definition of the unit gives the program the option (or
// operand) with the same value, or, for a value naming paths (which the path rule judged), the
// same option.
func (g *givenArgs) flagGiven(argv0 string, w givenWord, paths bool) bool {
	if w.opt != "" && paths {
		return g.optionGiven(argv0, w.opt)
	}
	return slices.ContainsFunc(g.args, func(a OwnArg) bool {
		return a.Flag && a.Option == w.opt && a.Value == w.val && sameProgram(a.Program, argv0)
	})
}

// optionGiven says whether the node's definition of the unit gives the program the option.
func (g *givenArgs) optionGiven(argv0, opt string) bool {
	return slices.ContainsFunc(g.args, func(a OwnArg) bool { return a.Flag && a.Option == opt && sameProgram(a.Program, argv0) })
}
