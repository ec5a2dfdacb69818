package allowlist

import (
	"slices"
	"strings"
)

// GNU long-option abbreviations (round-7b adversary F2, F4, F5). getopt_long accepts any unique
// prefix of a long option (tar --checkpoint-act=exec=…, install --strip-p=…, gawk --fil=F), and
// so do the other programs built on it; the judge's tables match options by their full names.
// So before any table reads a command, longVariants rewrites each --word[=value] that is a prefix
// (of at least three characters, dashes included) of an option the judge lists to that option;
// a prefix of several is judged as each (refused if any refuses). The options listed are every
// long option any table or rule of the judge names (judgedLongOptions, which a test keeps equal
// to the option names in the judge's code) and the option tables' own (codeOperands,
// valueOptions, wrapperGrammars, wrapperValueOptions, systemd-run's, the interpreters', execlocal.go's). A GNU
// program's option that no table lists is not rewritten: that is the rule's residual risk.

// judgedLongOptions are the long options the judge's rules name in their code (not in a table
// longOptions reads itself), with the GNU options of the modeled programs whose meaning a rule
// needs (tar's, cpio's, install's, rsync's, sed's, gawk's, logger's).
var judgedLongOptions = []string{
	// execsecrets.go's recursive readers: grep's and mount's options that read below a directory.
	"--dereference-recursive", "--directories", "--bind", "--rbind", "--files0-from",
	// execmutate.go's models of what the modeled programs mutate (issue 27 class 3).
	"--compile", "--date", "--format", "--from", "--iterations", "--listed-incremental", "--message", "--modify",
	"--modify-file", "--no-preserve", "--pattern-file", "--random-source", "--range", "--remove-file", "--remove-files",
	"--remove-sent-files", "--remove-source-files", "--restore", "--rfc-3339", "--role", "--set-file", "--sparse",
	"--time", "--type",
	"--absolute-names", "--adjustment", "--all", "--all-targets", "--append", "--arg-file", "--assign", "--associated",
	"--basedir", "--batch", "--boot", "--booted", "--bundle", "--chdir", "--checkpoint-action", "--class", "--classdata",
	"--cmd", "--cni-config-dir", "--collect", "--command", "--concatenate", "--config", "--config-env", "--config-file",
	"--conflict-exit-code", "--conmon", "--cpu-list", "--create", "--ctty", "--daemon", "--debug", "--delimiter",
	"--description", "--detail", "--directory", "--directory-prefix", "--dirname", "--eof", "--error", "--eval",
	"--examine", "--exclude-prefix", "--exec", "--exec-path", "--execute", "--exit", "--expression", "--extract",
	"--field-separator", "--file", "--foreground", "--fork", "--fstab", "--get", "--gid", "--group", "--hooks-dir",
	"--idle", "--ignore", "--ignore-environment", "--image", "--in-place", "--include", "--include-dir", "--info-script",
	"--init-file", "--input", "--interactive", "--kill-after", "--label", "--line-length", "--list", "--load", "--log",
	"--log-file", "--lua-exec", "--mail", "--make-rshared", "--make-rslave", "--make-rprivate", "--make-shared",
	"--make-slave", "--make-private", "--make-unbindable", "--make-runbindable", "--makefile", "--map-group",
	"--map-groups", "--map-user", "--map-users", "--max-args", "--max-chars", "--max-lines", "--max-procs", "--mode",
	"--module", "--move", "--namespace", "--network-cmd-path", "--new-volume-script", "--nice", "--no-absolute-filenames",
	"--no-ask-password", "--no-block", "--no-run-if-empty", "--no-target-directory", "--null", "--open-tty", "--options",
	"--options-mode", "--options-source", "--other", "--output", "--output-dir", "--output-document", "--pager",
	"--pass-through", "--pid", "--pid-file", "--pidfile", "--pipe", "--prefix", "--preserve-status", "--print",
	"--process-slot-var", "--propagation", "--pty", "--query", "--queue", "--quiet", "--rcfile", "--ready", "--reloading",
	"--remain-after-exit", "--remote-name", "--remote-name-all", "--remount", "--remove", "--remove-dependencies",
	"--replace", "--require", "--reset-on-fork", "--root", "--rsh", "--rsh-command", "--rsync-path", "--runroot",
	"--runtime", "--runtime-flag", "--same-dir", "--scope", "--send-sighup", "--server", "--service-type", "--set",
	"--setenv", "--setgid", "--setgroups", "--setuid", "--sh-exec", "--shell", "--show-limits", "--signal", "--slice",
	"--socket", "--source", "--split-string", "--state", "--status", "--stopping", "--storage-opt", "--system",
	"--target", "--target-directory", "--target-prefix", "--template", "--test-opts", "--timeout", "--to-command",
	"--types", "--uid", "--unit", "--unixsock", "--unset", "--unzip-command", "--update", "--use-compress-program",
	"--use-file", "--user", "--uuid", "--verbose", "--volumepath", "--wait", "--wd", "--working-directory", "--write",
	// GNU tar and cpio: commands, archive names on another host (rsh), absolute names.
	"--rmt-command", "--force-local", "--checkpoint", "--multi-volume", "--tape-length", "--files-from", "--to-stdout",
	"--transform", "--xform", "--index-file", "--one-top-level", "--overwrite", "--unlink-first", "--same-owner",
	"--preserve-permissions", "--make-directories", "--delete",
	// cp's and rsync's links (execlinks.go).
	"--dereference", "--no-dereference", "--recursive", "--links", "--no-links", "--copy-links", "--safe-links",
	"--copy-unsafe-links", "--munge-links", "--keep-dirlinks", "--no-l", "--times",
	// install.
	"--strip", "--strip-program", "--owner", "--backup", "--suffix", "--compare", "--preserve-timestamps", "--context",
	// rsync (its operands and the options that name a host, a command or a file it reads).
	"--remote-option", "--port", "--address", "--sockopts", "--password-file", "--include-from", "--exclude-from",
	"--filter", "--exclude", "--chown", "--chmod", "--temp-dir", "--partial-dir", "--backup-dir", "--link-dest",
	"--copy-dest", "--compare-dest", "--write-batch", "--only-write-batch", "--read-batch", "--server", "--sender",
	"--out-format", "--log-file-format", "--archive", "--recursive", "--dry-run", "--contimeout", "--protocol",
	// sed.
	"--null-data", "--zero-terminated", "--silent", "--regexp-extended", "--separate", "--sandbox", "--unbuffered",
	"--posix", "--follow-symlinks", "--binary",
	// gawk (the options that write a file: --dump-variables, --profile, --pretty-print).
	"--dump-variables", "--profile", "--pretty-print", "--characters-as-bytes", "--traditional", "--lint", "--bignum",
	"--non-decimal-data", "--use-lc-numeric", "--re-interval", "--optimize", "--no-optimize", "--gen-pot", "--csv",
	// logger.
	"--tcp", "--udp", "--rfc3164", "--rfc5424", "--socket-errors", "--journald", "--id", "--msgid", "--priority",
	"--tag", "--stderr", "--size", "--octet-count", "--prio-prefix", "--sd-id", "--sd-param", "--skip-empty", "--no-act",
	// chmod, chown (--reference=FILE takes its mode or owner from another file); setfacl's
	// traversal (execmutate.go: followedTraversal).
	"--reference", "--logical", "--physical",
	// round 8's writers' options (execwriters.go).
	"--link", "--symbolic-link", "--preserve", "--hard-links", "--perms", "--no-perms", "--executability",
	"--keep-directory-symlink", "--volno-file", "--incremental", "--overwrite-dir", "--recursive-unlink",
	"--no-same-permissions", "--no-p", "--same-permissions",
	// round 14's: gdb's end of its own words, udevadm's (execprocs.go).
	"--args", "--action", "--stop-exec-queue",
}

// longOptions is every long option longVariants matches a --word against.
var longOptions = func() []string {
	var out []string
	add := func(opts ...string) {
		for _, o := range opts {
			if len(o) > 3 && strings.HasPrefix(o, "--") && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	add(judgedLongOptions...)
	for _, row := range codeOperands {
		add(row.opts...)
	}
	for _, v := range valueOptions {
		add(v...)
	}
	for _, g := range wrapperGrammars {
		add(g.flags...)
		add(g.valued...)
		add(g.optional...)
	}
	add(wrapperValueOptions...)
	add(runFlags...)
	add(runValues...)
	for _, fl := range interpreters {
		add(fl...)
	}
	for _, fl := range moduleFlags {
		add(fl...)
	}
	add(loggerNet...)
	add(strictRunFlags...)
	add(strictRunValues...)
	for _, a := range processActors {
		add(a.long...)
		add(a.group...)
		add(a.pidMode...)
		add(a.priority...)
	}
	slices.Sort(out)
	return out
}()

// longMatches are the listed long options a word judged as an option names: the word's name
// itself when it is one, else every listed option it is a prefix of (at least "--x"); nil when it
// names none.
func longMatches(word string) []string {
	name, _, _ := strings.Cut(word, "=")
	if len(name) < 3 || !strings.HasPrefix(name, "--") {
		return nil
	}
	if _, ok := slices.BinarySearch(longOptions, name); ok {
		return []string{name}
	}
	var out []string
	for _, o := range longOptions {
		if strings.HasPrefix(o, name) {
			out = append(out, o)
		}
	}
	return out
}

// maxVariants bounds the readings of one command whose abbreviations are ambiguous.
const maxVariants = 64

// longVariants are the readings of argv with its abbreviated long options written out (nil when
// it has none): one reading a combination of the options each ambiguous prefix may be. Only the
// program's own options are read: a program that runs a command (a wrapper, a shell, an
// interpreter, systemd-run) has its options before the command, which is judged on its own.
func longVariants(argv []string) ([][]string, string) {
	if len(argv) < 2 {
		return nil, ""
	}
	prog := cmdName(argv[0])
	runner := runsCommand(prog)
	variants := [][]string{slices.Clone(argv)}
	changed := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			if runner {
				break // the command (or the script) starts
			}
			continue
		}
		m := longMatches(a)
		name, val, hasVal := strings.Cut(a, "=")
		if len(m) == 0 || len(m) == 1 && m[0] == name {
			if runner && !hasVal && runnerValued(prog, a) {
				i++ // the option's value, not the command
			}
			continue
		}
		changed = true
		if len(variants)*len(m) > maxVariants {
			return nil, short(a) + " and the command's other abbreviated options name too many options to judge each"
		}
		var next [][]string
		for _, v := range variants {
			for _, o := range m {
				w := slices.Clone(v)
				w[i] = o
				if hasVal {
					w[i] = o + "=" + val
				}
				next = append(next, w)
			}
		}
		variants = next
		if runner && !hasVal && slices.ContainsFunc(m, func(o string) bool { return runnerValued(prog, o) }) {
			i++
		}
	}
	if !changed {
		return nil, ""
	}
	return variants, ""
}

// runsCommand says whether the program runs a command its later words name.
func runsCommand(prog string) bool {
	_, modeled := wrapperGrammars[prog]
	return modeled || prog == "systemd-run" || slices.Contains(wrappers, prog) || slices.Contains(shells, prog) || interpreterName(prog) != ""
}

// runnerValued says whether a command runner's option takes the next word as its value.
func runnerValued(prog, opt string) bool {
	g := wrapperGrammars[prog]
	return slices.Contains(g.valued, opt) || slices.Contains(wrapperValueOptions, opt) ||
		prog == "systemd-run" && slices.Contains(runValues, opt) ||
		interpreterName(prog) != "" && (slices.Contains(interpreterValueOptions, opt) || opt == "-m") ||
		slices.Contains(shells, prog) && (opt == "-o" || opt == "-O" || opt == "--rcfile" || opt == "--init-file")
}

// judgeAbbreviated judges every reading of a command with abbreviated long options but the first,
// which it returns for the caller to judge (argv itself when it has none).
//
// A program the judge does not model may be no GNU one (kubelet's --v=2 is no --volno-file=2): its
// words as written are judged first, as a reading of their own, so that a refusal they earn names
// them as the payload wrote them (adversary r16 c/02); one only a reading earns names that reading.
func (j judge) judgeAbbreviated(argv []string, depth int, sure bool) ([]string, string) {
	if j.asWritten {
		return argv, ""
	}
	vs, why := longVariants(argv)
	if why != "" {
		return argv, short(strings.Join(argv, " ")) + ": " + why
	}
	if vs == nil {
		return argv, ""
	}
	if !modeledProgram(argv[0]) {
		jw := j
		jw.asWritten = true
		if why := jw.argvClass(argv, depth, sure); why != "" {
			return argv, why
		}
	}
	jr := j
	jr.reading = true
	for _, v := range vs[1:] {
		if why := jr.argvClass(v, depth, sure); why != "" {
			return argv, why
		}
	}
	return vs[0], ""
}
