package allowlist

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// A unit's commands are judged by what they make systemd or the kernel do, by class, not by a
// list of power verbs (a list of verbs is never complete): a program that controls the service
// manager, logind, the kernel's power or the machine is refused whatever its arguments; signals
// may reach only the unit's own $MAINPID; no argument or write target may reach the kernel's
// switches (/proc/sys, /proc/sysrq-trigger, /sys) or the manager's sockets; the disks' mounts stay;
// and a script whose commands the judge cannot see (read from a pipe, eval, source, a command
// named by a variable or a substitution, inline code given to an interpreter) is refused as
// unjudgeable. The plan judges a payload's unit file and the executor what the manager reports
// with these same functions.

// managerControl are programs that drive the service manager, logind or the system's other
// managers over D-Bus or their sockets: a unit a refresh may restart has no business doing so.
var managerControl = []string{"systemctl", "busctl", "dbus-send", "gdbus", "qdbus", "dbus-monitor", "loginctl",
	"machinectl", "hostnamectl", "timedatectl", "localectl", "networkctl", "homectl", "portablectl", "userdbctl",
	"systemd-sysext", "systemd-confext", "systemd-mount", "systemd-umount", "systemd-stdio-bridge", "varlinkctl",
	"telinit", "init", "runlevel", "systemd", "systemd-shutdown", "systemd-sleep", "systemd-socket-activate",
	"systemd-tty-ask-password-agent", "pkexec"}

// machinePower are programs that reboot, halt, suspend, kexec, power-cycle the machine, switch its
// console, or change what it boots.
var machinePower = []string{"reboot", "poweroff", "halt", "shutdown", "kexec", "rtcwake", "ipmitool", "ipmiutil",
	"ipmi-power", "ipmi-chassis", "bmc-device", "racadm", "chvt", "openvt", "deallocvt", "sulogin", "agetty", "getty",
	"systemd-sulogin-shell", "login",
	"pm-suspend", "pm-hibernate", "pm-suspend-hybrid", "pm-powersave", "s2ram", "s2disk", "uswsusp", "hibernate",
	"zzz", "systemd-hibernate-resume", "rpm-ostree", "ostree", "bootc", "bootupctl", "machine-config-daemon",
	"pivot", "grubby", "grub2-reboot", "grub2-set-default", "grub2-editenv", "grub-reboot", "grub-set-default",
	"efibootmgr", "bootctl", "kernel-install", "dracut", "wdctl", "watchdog", "killall5", "sysrq", "magic-sysrq"}

// diskDown are programs whose run takes the node's disks or memory down whatever their arguments.
var diskDown = []string{"fsfreeze", "xfs_freeze", "swapoff", "blkdeactivate", "kpartx", "wipefs", "blkdiscard",
	"rmmod", "insmod", "kexec-load", "vgchange", "lvchange", "cryptsetup", "mdadm", "multipath", "iscsiadm",
	"partx", "sfdisk", "sgdisk", "fdisk", "parted", "mkfs", "dmsetup", "losetup", "zramctl", "eject", "hdparm",
	"nvme", "sg_start", "echo-reboot"}

// byPattern are programs that signal processes chosen by name or pattern: one may reach PID 1
// ("systemd", "init"), kubelet or crio.
var byPattern = []string{"pkill", "killall", "skill", "snice", "pkill2", "pidwait", "fuser"}

// shells run the script given to -c, or read their commands from a file or standard input.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "lksh", "posh", "fish", "csh", "tcsh", "rbash"}

// wrappers run the command their arguments name (some options take a value, which the judge does
// not need to know: every suffix of the argv is judged as a command).
var wrappers = []string{"env", "exec", "nohup", "setsid", "sudo", "doas", "nice", "ionice", "timeout", "stdbuf",
	"chrt", "taskset", "runuser", "chroot", "unshare", "nsenter", "xargs", "command", "builtin", "time", "busybox",
	"toybox", "systemd-inhibit", "systemd-cat", "setpriv", "prlimit", "numactl", "cgexec", "strace", "ltrace",
	"tini", "dumb-init", "catatonit", "chpst", "setuidgid", "s6-setuidgid", "bwrap", "firejail", "flock", "su",
	"sg", "newgrp", "script", "watch", "capsh", "ip", "find", "parallel", "daemonize", "start-stop-daemon",
	"runcon", "sandbox", "faketime", "proxychains", "torsocks", "valgrind", "perf", "ssh", "rsh"}

// interpreters run a program given inline or read from standard input; a script file is their
// operand. inlineFlags are the one-letter options (in any cluster) and long options that give code.
var interpreters = map[string][]string{
	"python": {"c"}, "pypy": {"c"}, "perl": {"e", "E"}, "ruby": {"e"}, "node": {"e", "p", "--eval", "--print"},
	"nodejs": {"e", "p", "--eval", "--print"}, "deno": {"eval"}, "lua": {"e"}, "luajit": {"e"}, "php": {"r", "R", "B", "E"},
	"tclsh": {}, "wish": {}, "expect": {"c"}, "rscript": {"e"}, "pwsh": {"c", "e", "-Command", "-EncodedCommand"},
	"guile": {"c", "e"}, "gdb": {"ex", "x", "-eval-command", "batch"}, "jrunscript": {"e"}, "osascript": {"e"},
	"julia": {"e", "E"}, "php-cgi": {"r"}, "bc": {}, "dc": {"e"},
}

// judge carries what the judge knows of the unit's environment: the values its own Environment=
// and *Directory= settings give variables (others, from EnvironmentFile= or the manager, are unknown).
type judge struct {
	env  map[string]string
	left *int // the work left (execBudget)
	// strict: the line is a changed one (Execution.ExecChanged): programs and script files only
	// from read-only OS content, no image runners (execstrict.go).
	strict bool
	// loose: argv may be only text (a quoted string, or a wrapper's later words): argv[0] is not
	// surely a program.
	loose bool
	// wd are the directories a script changed to (relative writes are judged from each).
	wd *[]string
	// unitWD is how many of wd's first entries are the unit's WorkingDirectory=.
	unitWD int
	// made are the files the unit's commands write: running one runs what the unit made.
	made map[string]bool
	// programs are the unit's own and granted programs (Execution.Programs): besides the modeled
	// ones, the only programs a changed line may run (execmodel.go).
	programs []string
	progSet  *programSet // programs indexed, when many (newProgramSet)
	// guess: argv is a guess at a command (a word of a program the judge does not model that could
	// start one, unknownProgram): judged by its class, but not held to the programs a changed line may run.
	guess bool
	// sure: argv[0] of the command being judged surely is its program, in a changed line (argv).
	sure bool
	// key is the line's Exec key (ExecStart, ExecReload, …): where a main process exists (mainPIDWhy).
	key string
	// mut: the unit's own places, where a changed line may change files (execmutate.go); found:
	// the command is find's -exec one, whose {} are the files find hands it.
	mut   *unitPlaces
	found bool
	// envFiles: the unit reads EnvironmentFile= files, whose variables the judge does not read
	// (tar's $TAPE, tapeArchive).
	envFiles bool
	// secrets: the pass of a changed line that judges the node's secrets it names (execsecrets.go),
	// after a pass of every other rule, whose reasons say more.
	secrets bool
	// given: the paths the node's current unit gives its programs the judge does not model
	// (Execution.OwnArgs), or where OwnArgs records them (execgiven.go).
	given *givenArgs
	// asWritten: the pass that judges a command's abbreviated long options as written, before
	// their readings (judgeAbbreviated), so that a refusal it earns names the payload's words.
	asWritten bool
	// reading: the command judged is a GNU reading of the words (judgeAbbreviated), not them as
	// written: a Go daemon's flags are judged as written only (daemonflags.go).
	reading bool
}

// charge takes n from the budget and says whether it is spent.
func (j judge) charge(n int) bool {
	if j.left == nil {
		return false
	}
	*j.left -= n
	return *j.left < 0
}

// short is a command line as a reason quotes it: at most 200 bytes.
func short(line string) string {
	if len(line) > 200 {
		return line[:200] + "…"
	}
	return line
}

// mayRun says whether judging a command that starts with word can find more than its arguments
// do (which the command that holds it already judged): a program of one of the judge's classes, a
// wrapper, shell or interpreter, or a program named by a variable or specifier. A wrapper's other
// suffixes are skipped, so that the cost stays linear in the words (env a a a … of a 1 MiB line).
func mayRun(word string) bool {
	n := cmdName(word)
	if strings.ContainsAny(word, "$%`") || interpreterName(n) != "" {
		return true
	}
	if runsContainers(n) {
		return true
	}
	if _, ok := processActors[n]; ok || n == "udevadm" || n == "systemd-bless-boot" {
		return true
	}
	if _, ok := codeOperands[n]; ok {
		return true
	}
	if _, ok := runnerOptions[n]; ok || strings.HasPrefix(n, "ld-linux") {
		return true
	}
	for _, l := range [][]string{managerControl, machinePower, diskDown, byPattern, shells, wrappers, writers, imageRunners, socketSenders, alwaysRunners,
		{"curl", "wget", "kill", "systemd-notify", "systemd-run", "umount", "mount", "sysctl", "modprobe", "crictl", "runc", "crun",
			"awk", "gawk", "mawk", "nawk", "sed", "gsed", "eval", "source", ".", "find"}} {
		if slices.Contains(l, n) {
			return true
		}
	}
	return hasPrefixAny(n, "systemctl", "busctl", "grub2-", "mkfs.", "qemu-", "lxc-")
}

// cmdName is the program's name as the tables know it: its base name, lower case.
func cmdName(argv0 string) string {
	return strings.ToLower(path.Base(argv0))
}

// interpreterName strips a version from an interpreter's name (python3.11, perl5.36, lua5.4).
func interpreterName(n string) string {
	if _, ok := interpreters[n]; ok {
		return n
	}
	if strings.HasPrefix(n, "platform-python") {
		n = strings.TrimPrefix(n, "platform-") // RHEL's /usr/libexec/platform-python (round-6 adversary F3)
	}
	t := strings.TrimRight(n, "0123456789.-")
	if _, ok := interpreters[t]; ok {
		return t
	}
	return ""
}

// argv says why the command stops, suspends or takes over the node or the manager, or cannot be
// judged, or "". In a changed line, after its class (whose reason says more), a program named by a
// path outside read-only OS content is refused where argv[0] surely is the program (not in a
// quoted string's text, nor a wrapper's later words, which wrapped judges itself).
func (j judge) argv(argv []string, depth int) string {
	if len(argv) == 0 {
		return ""
	}
	loose, guess := j.loose, j.guess
	j.loose, j.guess = false, false
	// sure: argv[0] surely is the program of a changed line's command, which runs only modeled,
	// own or granted programs (execmodel.go).
	sure := j.strict && !loose && !guess
	j.sure = sure
	why := j.argvClass(argv, depth, sure)
	if why == "" && !loose {
		// After the class (judged by the program's name, whatever its path): the words as paths.
		if s := j.argvPaths(argv); s != "" {
			return short(strings.Join(argv, " ")) + ": " + s
		}
	}
	if why == "" && j.strict && !loose {
		if s := strictProgram(argv[0]); s != "" {
			return short(strings.Join(argv, " ")) + ": " + s
		}
	}
	if why == "" && sure {
		if s := j.programRule(argv[0]); s != "" {
			return short(strings.Join(argv, " ")) + ": " + s
		}
	}
	return why
}

// argvClass judges the command by the class of its program. sure: argv[0] surely is the program
// of a changed line's command (argv then refuses one that is neither modeled, own nor granted).
func (j judge) argvClass(argv []string, depth int, sure bool) string {
	if j.charge(len(argv)) {
		return tooCostly
	}
	line := short(strings.Join(argv, " "))
	if depth > 8 {
		return line + " (nested too deep to judge)"
	}
	if strings.ContainsAny(argv[0], "$%`") {
		return line + " (a program named by a variable, specifier or substitution cannot be judged)"
	}
	if j.found && strings.Contains(argv[0], "{}") {
		// find's -exec command, through a wrapper or a shell (-exec env {} ;): the program is
		// what find finds (/usr/sbin/reboot), which the judge does not see (every line).
		return line + ": runs {}, a file find finds, as the program: cannot be judged"
	}
	if j.made[cleanPath(argv[0])] {
		return line + ": runs a file the unit's own commands wrote (its code cannot be judged)"
	}
	written := argv
	argv, why := j.judgeAbbreviated(argv, depth, sure) // tar --checkpoint-act= is --checkpoint-action= (execopts.go)
	j.reading = j.reading || !slices.Equal(argv, written)
	if why != "" {
		return why
	}
	for _, a := range argv[1:] {
		if why := j.reach(a, false); why != "" {
			return line + ": " + why
		}
	}
	prog := cmdName(argv[0])
	args := argv[1:]
	// What it does to other processes (every line) and, in a changed line, to what the node's
	// processes stand on, by class, before every rule a grant or the unit's own programs answer
	// (execprocs.go); nsenter's command first.
	acted := j.processWhy(prog, args)
	if acted == "" && j.strict {
		acted = nodeWideWhy(prog, args)
	}
	if acted != "" && !processActors[prog].commandFirst {
		return line + ": " + acted
	}
	if why := j.engineUnshare(prog, args, depth); why != "" {
		return why
	}
	if why := j.judgeImages(prog, args); why != "" {
		return line + ": " + why
	}
	switch {
	case slices.Contains(managerControl, prog) || strings.HasPrefix(prog, "systemctl") || strings.HasPrefix(prog, "busctl"):
		return line + ": controls the service manager, logind or the system's managers (no unit a refresh acts on may)"
	case slices.Contains(machinePower, prog) || strings.HasPrefix(prog, "grub2-") || strings.HasPrefix(prog, "mkfs."):
		return line + ": reboots, halts, suspends or power-cycles the machine, takes its console or changes what it boots"
	case slices.Contains(diskDown, prog):
		if why := judgeDisk(prog, args); why != "" {
			return line + ": " + why
		}
	case slices.Contains(byPattern, prog):
		return line + ": signals processes chosen by name or pattern (they may be PID 1, kubelet or crio): only kill $MAINPID is judged"
	case prog == "kill":
		if why := j.judgeKill(args); why != "" {
			return line + ": " + why
		}
	case prog == "systemd-notify":
		if why := judgeNotify(args); why != "" {
			return line + ": " + why
		}
	case prog == "systemd-run":
		return j.judgeRun(argv, depth)
	case prog == "umount" || prog == "mount":
		if why := j.judgeMount(prog, args); why != "" {
			return line + ": " + why
		}
	case prog == "sysctl":
		if why := judgeSysctl(args); why != "" {
			return line + ": " + why
		}
	case prog == "modprobe":
		for _, a := range args {
			if a == "-r" || a == "--remove" || a == "--remove-dependencies" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "r") {
				return line + ": removes a kernel module (storage or network drivers go with it)"
			}
		}
	case prog == "crictl" || prog == "runc" || prog == "crun":
		if why := judgeRuntime(args); why != "" {
			return line + ": " + why
		}
	case slices.Contains(shells, prog):
		return j.judgeShell(argv, depth)
	case interpreterName(prog) != "":
		if why := j.judgeInterpreter(interpreterName(prog), args); why != "" {
			return line + ": " + why
		}
	case prog == "awk" || prog == "gawk" || prog == "mawk" || prog == "nawk":
		if why := j.judgeAwk(args); why != "" {
			return line + ": " + why
		}
	case prog == "sed" || prog == "gsed":
		if why := j.judgeSed(args); why != "" {
			return line + ": " + why
		}
	case prog == "find":
		if why := j.judgeFind(args); why != "" {
			return line + ": " + why
		}
	case prog == "eval" || prog == "source" || prog == ".":
		return line + ": runs commands from a string or a file the judge cannot see"
	}
	if slices.Contains(writers, prog) || prog == "curl" || prog == "wget" {
		if why := j.writes(prog, args); why != "" {
			return line + ": " + why
		}
	}
	if why := j.commandOptions(prog, args, depth); why != "" {
		return line + ": " + why
	}
	if why := judgeRunner(prog, args); why != "" {
		return line + ": " + why
	}
	if why := j.writesNodeCode(prog, args); why != "" {
		return line + ": " + why
	}
	if why := j.operandsNameCode(prog, args); why != "" {
		return line + ": " + why
	}
	if why := j.codeOperandWhy(prog, args); why != "" {
		return line + ": " + why
	}
	if sure {
		if why := j.strictModeled(prog, argv); why != "" {
			return why
		}
	}
	if why := j.strictLocal(prog, argv); why != "" {
		return why // rsync, tar, logger and interpreters act only on the node (execlocal.go)
	}
	if why := j.mutations(prog, argv); why != "" {
		return line + ": " + why
	}
	if sure {
		if why := writerOptions(prog, argv[1:]); why != "" {
			return line + ": " + why // after the models' own refusals, which name the place (execwriters.go)
		}
		if why := copiedLinks(prog, argv[1:]); why != "" {
			return line + ": " + why // execlinks.go
		}
	}
	if why := j.secretWhy(prog, argv); why != "" {
		return why // execsecrets.go (after the other rules, whose reasons say more)
	}
	if why := j.givenWhy(argv, sure); why != "" {
		return line + ": " + why // execgiven.go: under the tables, the paths an unmodeled program is given
	}
	judged := 0 // the suffix of argv judged as the wrapper's command, which wrapped need not judge again
	if sure && modeledWrapper(argv[0]) {
		if why := j.modeledWrapped(prog, argv, depth); why != "" {
			return why
		}
	} else if modeledWrapper(argv[0]) {
		// In every line, where the grammar reads a modeled wrapper's command exactly, that command
		// is judged as one, as it would be with no wrapper (the fuzzer's env X against X); the
		// loose reading of wrapped below still judges every other suffix (that one's loose
		// judgement is a part of this one: judging it again would double the cost per level).
		if start, _, why := wrapperCommand(prog, argv[1:]); why == "" && 1+start < len(argv) {
			if why := j.argv(argv[1+start:], depth+1); why != "" {
				return why
			}
			if !j.strict {
				judged = 1 + start // in a changed line the two readings differ (sure): both stay
			}
		}
	}
	if slices.Contains(wrappers, prog) {
		// An own or granted wrapper the judge does not model: its command's position is not
		// known, so the first program path among its words must be modeled, own or granted too.
		if why := j.wrapped(prog, argv, depth, sure && !modeledWrapper(argv[0]) && j.ownProgram(argv[0]), judged); why != "" || acted == "" {
			return why
		}
		return line + ": " + acted
	}
	if sure && !modeledProgram(argv[0]) && !j.ownProgram(argv[0]) {
		return "" // argv refuses it: no guessing at what an unmodeled program may run
	}
	return j.unknownProgram(prog, argv, depth)
}

// modeledWrapped judges, in a changed line, a modeled wrapper by its grammar: an option it does
// not model is refused, and its command (where the grammar says it starts) is judged as a command
// of the line, held to the programs a changed line may run. wrapped then judges its words as in
// every line.
func (j judge) modeledWrapped(prog string, argv []string, depth int) string {
	if why := j.replaceCommand(prog, argv); why != "" {
		return why // xargs's own reasons say more
	}
	line := short(strings.Join(argv, " "))
	start, dirs, why := wrapperCommand(prog, argv[1:])
	if why != "" {
		return line + ": " + why
	}

	for _, d := range dirs {
		if why := j.changeDir(d); why != "" {
			return why
		}
	}
	cmd := argv[1+start:]
	if len(cmd) == 0 {
		return ""
	}
	if why := j.argv(cmd, depth+1); why != "" {
		return why
	}
	if prog == "xargs" && !slices.Contains(xargsReaders, path.Base(cmd[0])) {
		// Its command's words are its input's (xargs -a F cp: a destination in the node's code;
		// xargs -a F myapp: flags no argument rule reads).
		return line + ": xargs hands the words of its input to " + cmd[0] + ", which the judge cannot then judge (a changed line's xargs runs only " + strings.Join(xargsReaders, ", ") + ")"
	}
	return ""
}

// wrapped judges what a wrapper runs: whatever its options, the command it runs is one of its
// suffixes; a string that is a script (su -c, flock -c, env -S, watch, sg, ssh) is judged as one.
//
// ruled: the wrapper is an own or granted one the judge does not model, in a changed line.
// judged: the index of the suffix argvClass already judged as the command (0: none).
func (j judge) wrapped(prog string, argv []string, depth int, ruled bool, judged int) string {
	if why := j.replaceCommand(prog, argv); why != "" {
		return why
	}
	if prog == "watch" || prog == "ssh" || prog == "rsh" {
		// watch runs its words through sh -c; ssh runs them on a host (this one, possibly).
		if why := j.script(strings.Join(argv[1:], " "), depth+1, false); why != "" {
			return why
		}
	}
	if prog == "capsh" {
		// capsh -- ARGS runs /bin/bash ARGS.
		if i := slices.Index(argv, "--"); i >= 0 {
			return j.judgeShell(append([]string{"bash"}, argv[i+1:]...), depth+1)
		}
	}
	if prog == "find" {
		for i, a := range argv {
			if a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir" {
				end := len(argv)
				for k := i + 1; k < len(argv); k++ {
					if argv[k] == ";" || argv[k] == "+" || argv[k] == `\;` {
						end = k
						break
					}
				}
				if why := j.inFind().argv(argv[i+1:end], depth+1); why != "" {
					return why
				}
			}
		}
		return ""
	}
	program := false // a program path was passed: variables after it are its arguments
	word := false    // a word that is no option was passed (an option's value, or the program)
	prev, operands := prog, 0
	jl := j
	jl.loose = true // the wrapper's later words: its command, or its command's arguments
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		last := prev
		prev = a
		if program && strings.ContainsAny(a, "$%`") && !strings.ContainsAny(a, " \t\n") {
			continue
		}
		if !program && strings.ContainsAny(a, "$%`") && !strings.HasPrefix(a, "-") &&
			!(isAssignment(a) && !strings.ContainsAny(strings.SplitN(a, "=", 2)[0], "$`%")) {
			// The wrapper's command named by a variable (env $CMD, nice -n $N x: the words cannot
			// tell a value from the command; systemd splits an unbraced $CMD into words).
			return short(a) + " (a program named by a variable, specifier or substitution cannot be judged)"
		}
		if strings.ContainsAny(a, " \t\n") {
			// A split string (env -S "…", su -c "…", flock -c "…", sg grp "…") is a script; in a
			// changed line, the value of the option that gives one is judged as a script that runs.
			f, ok := joinedCommandFlags[prog]
			if why := j.script(a, depth+1, j.strict && ok && (last == "-"+f || last == "--command" || last == "--split-string")); why != "" {
				return why
			}
			continue
		}
		if isAssignment(a) && !strings.ContainsAny(strings.SplitN(a, "=", 2)[0], "$`%") {
			// Before the program: the wrapper's own assignments (env's), whatever words came
			// before (in a changed line also after a word that may be an option's value: env -u X
			// BASH_ENV=F bash, round 11).
			if why := assignmentWhy(a); why != "" && !program && (!word || j.strict) {
				return short(strings.Join(argv, " ")) + ": " + why
			}
			if k, v, _ := strings.Cut(a, "="); !program && !word || j.strict && !program {
				// env D=/etc/cron.d sh -c 'rm -rf "$D"': the command runs with the wrapper's value
				// (unknown when it holds an expansion), not the unit's (round 11).
				jl = jl.setVar(k, v)
			}
			continue // an assignment (env FOO=$BAR), never the program the wrapper runs
		}
		if strings.HasPrefix(a, "-") {
			// A working directory the command runs in (env -C, --chdir=, nsenter --wd=): its
			// relative writes are judged from it.
			for _, o := range []string{"--chdir=", "--wd=", "--working-directory="} {
				if d, ok := strings.CutPrefix(a, o); ok {
					if why := j.changeDir(d); why != "" {
						return why
					}
				}
			}
			continue // an option, never the program the wrapper runs
		}
		if last == "-C" && prog == "env" || last == "--chdir" || last == "--wd" || last == "--working-directory" {
			if why := j.changeDir(a); why != "" {
				return why
			}
		}
		if g, ok := wrapperGrammars[prog]; ok && slices.Contains(g.valued, last) && i > 1 {
			// A modeled wrapper's option value (env -u NAME, -C DIR; nice -n N): neither its command
			// nor a word after which env's assignments stop being env's (round 11).
			continue
		}
		if j.strict && !program {
			if why := strictCandidate(prog, a, last, operands); why != "" {
				return short(strings.Join(argv, " ")) + ": " + why
			}
		}
		operands++
		if prog == "flock" && operands == 1 {
			continue // the lock file it opens
		}
		if j.found && !program && strings.Contains(a, "{}") && !j.foundArgument(argv, i) {
			// find -exec catchsegv {} ;: before a program is seen, a word of a wrapper the
			// grammar does not read may be its command: the program would be what find finds.
			return short(strings.Join(argv, " ")) + ": " + a + ": a file find finds may be the program " + prog + " runs: cannot be judged"
		}
		if !program && hasDotDot(a) && !slices.Contains(wrapperPathValues, last) {
			// ".." alone has no "/" but is no name either: execvp runs $PATH/.. (the fuzzer's
			// env .. against the line ..).
			return short(strings.Join(argv, " ")) + ": " + dotDotWhy("runs", a)
		}
		if !program && strings.Contains(a, "/") && !slices.Contains(wrapperPathValues, last) {
			if why := programFile(a); why != "" {
				return short(strings.Join(argv, " ")) + ": " + why
			}
			if ruled {
				if why := j.programRule(a); why != "" {
					return short(strings.Join(argv, " ")) + ": " + why
				}
			}
		}
		if !word {
			// The first word that is no option may be the command, of a class or not: the bound on
			// its abbreviated options' readings holds there as it does where it is argv[0] (the
			// fuzzer's env 0 --a --a against 0 --a --a).
			if _, why := longVariants(argv[i:]); why != "" {
				return short(strings.Join(argv, " ")) + ": " + why
			}
		}
		program = program || strings.Contains(a, "/")
		word = true
		if !mayRun(a) {
			continue
		}
		if i == judged {
			program = true // judged as the command, with its arguments (argvClass)
			continue
		}
		if why := jl.argv(argv[i:], depth+1); why != "" {
			return why
		}
		// A program of the judge's classes, judged with its arguments: the words after it are
		// those arguments (unshare … mount --make-rshared /).
		program = true
	}
	return ""
}

// joinedCommandFlags are the one-letter options whose value is a command line, for the programs
// that take one: given in the option's own word (-S/usr/sbin/reboot, -creboot) the value is judged
// like the option given apart.
var joinedCommandFlags = map[string]string{"env": "S", "su": "c", "runuser": "c", "flock": "c"}

// commandOptions judges option values that are commands (--to-command=, --use-compress-program,
// --rsh, --checkpoint-action=exec=, env's --split-string=, -p ExecStart=…, su -cCMD): each is a script.
func (j judge) commandOptions(prog string, args []string, depth int) string {
	rule := ""
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if f, ok := joinedCommandFlags[prog]; ok && len(a) > 2 && a[1:2] == f {
			if why := j.script(a[2:], depth+1, false); why != "" {
				return "option -" + f + " runs " + why
			}
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		ln := strings.ToLower(name)
		cmdLike := false
		for _, k := range []string{"command", "exec", "program", "shell", "eval", "hook", "action", "rsh", "ssh", "split"} {
			if strings.Contains(ln, k) {
				cmdLike = true
			}
		}
		if !cmdLike {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				continue
			}
			val = args[i+1]
		}
		if j.strict && (strings.Contains(ln, "command") || strings.Contains(ln, "exec") || strings.Contains(ln, "program")) {
			// In a changed line the command an option names runs only from read-only OS content;
			// named by its path (install --strip-program=/usr/bin/x), only a program a changed line
			// may run (execmodel.go).
			for _, v := range []string{val, val[strings.LastIndexByte(val, '=')+1:]} {
				if f := strings.Fields(v); len(f) > 0 {
					if why := strictProgram(f[0]); why != "" {
						return "option " + name + ": " + why
					}
					if why := j.programRule(f[0]); why != "" && strings.Contains(f[0], "/") && rule == "" {
						rule = "option " + name + ": " + why // after the script's class, which says more
					}
				}
			}
		}
		if k := strings.LastIndexByte(val, '='); k >= 0 {
			if why := j.script(val[k+1:], depth+1, false); why != "" {
				return "option " + name + " runs " + why
			}
		}
		if why := j.script(val, depth+1, false); why != "" {
			return "option " + name + " runs " + why
		}
	}
	return rule
}

// judgeKill allows signals only to the unit's own main process ($MAINPID, what ExecReload=/bin/kill
// -HUP $MAINPID sends): PID 1 (SIGINT is ctrl-alt-del, SIGRTMIN+N the manager's power requests), -1
// (every process), a process group, a name or any other number may reach the manager or the node.
func (j judge) judgeKill(args []string) string {
	sigSeen, operands := false, []string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "-s" || a == "--signal" || a == "-n" || a == "-q" || a == "--queue":
			i++
			sigSeen = true
		case a == "--timeout":
			i += 2
		case strings.HasPrefix(a, "--"):
			// --signal=X, --queue=X, --list, --table, --verbose, --pid, --all, --require-handler
			if strings.HasPrefix(a, "--signal") || strings.HasPrefix(a, "--queue") {
				sigSeen = true
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 && !sigSeen:
			sigSeen = true // -HUP, -9, -SIGRTMIN+5, -l, -L
		default:
			operands = append(operands, a)
		}
	}
	for _, o := range operands {
		if o == "$MAINPID" || o == "${MAINPID}" {
			if why := j.mainPIDWhy("signals $MAINPID"); why != "" {
				return why
			}
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimPrefix(o, "+"), 0, 64); err == nil && n <= 1 {
			return fmt.Sprintf("signals %s (PID 1 is the manager: SIGINT reboots, SIGRTMIN+N powers off; -1 is every process)", o)
		}
		return fmt.Sprintf("signals %s: only the unit's own $MAINPID can be judged (a number, a name or a variable may be PID 1, kubelet or crio)", o)
	}
	return ""
}

// judgeNotify allows the notifications a service sends of itself (ready, reloading, stopping,
// status, watchdog); MAINPID= (which makes the manager signal that process on stop), --pid,
// file descriptors or anything else are refused.
func judgeNotify(args []string) string {
	for _, a := range args {
		// One argument with a newline is several assignments to the manager (round 8:
		// "STATUS=x\nMAINPID=$(pidof kubelet)"); a value from an expansion may hold one.
		if strings.ContainsAny(a, "\n\r") {
			return "sends the manager " + short(a) + ", an argument with a newline (several assignments: only the service's own readiness, status and watchdog can be judged)"
		}
		if strings.ContainsAny(a, "$`") {
			return "sends the manager " + short(a) + ", a value from an expansion the judge cannot see (it may hold a newline: several assignments)"
		}
		ok := slices.Contains([]string{"--ready", "--reloading", "--stopping", "--booted", "--no-block", "-q", "--quiet",
			"READY=1", "RELOADING=1", "STOPPING=1", "WATCHDOG=1", "WATCHDOG=trigger"}, a)
		for _, p := range []string{"--status=", "STATUS=", "ERRNO=", "BUSERROR=", "EXTEND_TIMEOUT_USEC=", "WATCHDOG_USEC=", "MONOTONIC_USEC="} {
			ok = ok || strings.HasPrefix(a, p)
		}
		if !ok {
			return "sends the manager " + a + " (only the service's own readiness, status and watchdog can be judged)"
		}
	}
	return ""
}

// runFlags are systemd-run's options that only say how the command runs; runValues take a value.
// Everything else (--property, --on-*, timers, --user, --machine, --host, --shell) makes the
// manager run a unit the judge cannot see: refused.
var (
	runFlags  = []string{"--scope", "--wait", "-P", "--pipe", "-q", "--quiet", "-G", "--collect", "-d", "--same-dir", "--no-ask-password", "--no-block", "-r", "--remain-after-exit", "--system", "--send-sighup", "-t", "--pty"}
	runValues = []string{"-u", "--unit", "-E", "--setenv", "--uid", "--gid", "--nice", "--working-directory", "--description", "--slice", "--service-type", "-D"}
)

// judgeRun judges systemd-run: its options in both --opt=value and --opt value forms, the unit
// name it asks for (by identity), then the command it runs.
func (j judge) judgeRun(argv []string, depth int) string {
	line := short(strings.Join(argv, " "))
	if j.strict {
		if why := strictRun(argv); why != "" {
			return why // a changed line's grammar (execlocal.go)
		}
	}
	i := 1
	// The transient unit runs in the manager's / unless told otherwise (systemd-run(1): --same-dir
	// runs it in the caller's directory; --working-directory= in that one): not in the calling
	// unit's WorkingDirectory=.
	ownDir := false
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 {
			name, val, hasVal = a[:2], a[2:], true // -uNAME
		}
		if name == "-d" || name == "--same-dir" || name == "--working-directory" {
			ownDir = true
		}
		switch {
		case slices.Contains(runFlags, name) && !hasVal:
		case slices.Contains(runValues, name):
			if !hasVal {
				if i+1 >= len(argv) {
					return line + ": systemd-run " + name + " without its value"
				}
				i++
				val = argv[i]
			}
			if name == "--working-directory" {
				if why := j.changeDir(val); why != "" {
					return why // its command's relative writes are judged from there
				}
			}
			if (name == "-E" || name == "--setenv") && j.strict {
				if why := assignmentWhy(val); why != "" {
					return line + ": systemd-run " + name + " " + short(val) + ": " + why
				}
			}
			if name == "-u" || name == "--unit" || name == "--slice" {
				if err := UnitIdentity(withSuffix(val)); err != nil || strings.ContainsAny(val, "$%`") {
					return line + ": systemd-run " + name + " " + val + ": a unit judged by identity " + fmt.Sprint(err)
				}
			}
		default:
			return line + ": systemd-run " + a + " makes the manager run a unit whose properties or timing the judge cannot see"
		}
	}
	if i >= len(argv) {
		return ""
	}
	if !ownDir {
		if why := j.changeDir("/"); why != "" {
			return why // its command's relative paths are judged from / too
		}
	}
	if j.strict {
		// The manager substitutes the transient unit's variables ($X, ${X}: its -E values and the
		// manager's own) in the command it runs, after systemd's first pass turned $$X into $X: a
		// second substitution the judge does not see (round 10: -E X=-delete with find … $$X).
		for _, w := range argv[i:] {
			if strings.Contains(w, "$") {
				return line + ": systemd-run's command holds " + short(w) + ", which the manager substitutes again from the transient unit's environment (refused in a changed line)"
			}
		}
	}
	return j.argv(argv[i:], depth+1)
}

// judgeShell judges a shell's run: the script given to -c is judged; a script file is the file's
// business (a policy grants that file, or it is the node's); a shell that reads its commands from
// standard input (no operand, -s, -, /dev/stdin: a pipe, here-document or StandardInput= feeds it)
// cannot be judged.
func (j judge) judgeShell(argv []string, depth int) string {
	line := short(strings.Join(argv, " "))
	if why := shellOptionsWhy(argv[1:], j.strict); why != "" {
		return line + ": " + why
	}
	inline := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--" || a == "-":
			if a == "-" || i+1 >= len(argv) {
				if inline {
					return line + ": sh -c without a script cannot be judged"
				}
				return line + ": the shell reads its commands from standard input (a pipe, here-document or StandardInput=): cannot be judged"
			}
			i++
			return j.shellOperand(line, cmdName(argv[0]), argv[i], inline, depth)
		case a == "--rcfile" || a == "--init-file":
			if i+1 >= len(argv) {
				return line + ": " + a + " without its file"
			}
			i++
			if why := j.scriptFile(argv[0], argv[i]); why != "" {
				return line + ": " + why
			}
		case strings.HasPrefix(a, "--"):
		case (strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+")) && len(a) > 1:
			// A cluster of options: each o and O in it takes the next word (bash -cO NAME 'script',
			// -euo pipefail), whose name is no operand (shellOptionsWhy judged it).
			i += strings.Count(a[1:], "o") + strings.Count(a[1:], "O")
			if strings.ContainsRune(a[1:], 's') || strings.ContainsRune(a[1:], 'i') {
				return line + ": the shell reads its commands from standard input (a pipe, here-document or StandardInput=): cannot be judged"
			}
			if strings.ContainsRune(a[1:], 'c') {
				inline = true
			}
		default:
			return j.shellOperand(line, cmdName(argv[0]), a, inline, depth)
		}
	}
	if inline {
		return line + ": sh -c without a script cannot be judged"
	}
	return line + ": the shell reads its commands from standard input (a pipe, here-document or StandardInput=): cannot be judged"
}

func (j judge) shellOperand(line, shell, op string, inline bool, depth int) string {
	if inline {
		return j.script(op, depth+1, true)
	}
	if stdinPath(op) {
		return line + ": the shell reads its commands from standard input: cannot be judged"
	}
	if strings.ContainsAny(op, "$`") {
		return line + ": a script named by a variable cannot be judged"
	}
	if why := j.scriptFile(shell, op); why != "" {
		return line + ": " + why
	}
	return ""
}

// stdinPath says whether a script operand is standard input or a descriptor (a pipe).
func stdinPath(op string) bool {
	c := path.Clean(op)
	return op == "-" || c == "/dev/stdin" || strings.HasPrefix(c, "/dev/fd/") || strings.HasPrefix(c, "/proc/self/fd/") ||
		strings.HasPrefix(c, "/dev/tcp/") || strings.HasPrefix(c, "/dev/udp/") || op == "<("
}

// judgeInterpreter refuses inline code (python -c, perl -e, node -e, …) and a program read from
// standard input; a script file is the file's business.
func (j judge) judgeInterpreter(name string, args []string) string {
	flags := interpreters[name]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-" || stdinPath(a) {
			return name + " reads its program from standard input: cannot be judged"
		}
		if !strings.HasPrefix(a, "-") {
			if strings.ContainsAny(a, "$`") {
				return name + " runs a script named by a variable: cannot be judged"
			}
			return j.scriptFile(name, a)
		}
		if a == "--" {
			if i+1 < len(args) && !stdinPath(args[i+1]) {
				return j.scriptFile(name, args[i+1])
			}
			return name + " reads its program from standard input: cannot be judged"
		}
		long := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		for _, f := range flags {
			if len(f) > 1 && strings.EqualFold(strings.TrimLeft(f, "-"), long) {
				return name + " " + a + ": inline code cannot be judged"
			}
			if len(f) == 1 && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], f) {
				return name + " " + a + ": inline code cannot be judged"
			}
		}
		if (name == "python" || name == "pypy") && a[1] != '-' {
			// python's one-letter options: only -c (above), -m, -W and -X take a value, the rest
			// of the word or the next word (-I is a flag: python3 -I -m json.tool, -Im json.tool).
			for k := 1; k < len(a); k++ {
				if a[k] == 'm' {
					return "" // a module, the node's (pythonModule; refused in a changed line: noModule)
				}
				if a[k] == 'W' || a[k] == 'X' {
					if k+1 == len(a) {
						i++
					}
					break
				}
			}
			continue
		}
		if slices.Contains([]string{"-m", "-W", "-X", "-I", "-M", "-r", "--require", "-x"}, a) {
			i++ // a module or a setting; -m runs a module, which is the node's
			if a == "-m" {
				return ""
			}
		}
	}
	return name + " reads its program from standard input: cannot be judged"
}

// judgeSysctl allows reading the kernel's settings; writing them (-w, key=value, -p, --system,
// --load) is a write to /proc/sys.
func judgeSysctl(args []string) string {
	for _, a := range args {
		if strings.Contains(a, "=") || a == "-w" || a == "--write" || a == "-p" || a == "--system" || strings.HasPrefix(a, "--load") ||
			(strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "wpf")) {
			return "writes the kernel's settings (/proc/sys)"
		}
	}
	return ""
}

// judgeDisk refuses what takes the disks or memory down; a few read-only forms are allowed.
func judgeDisk(prog string, args []string) string {
	readOnly := map[string][]string{
		"dmsetup": {"ls", "info", "status", "table", "deps", "version", "targets", "udevcookies"},
		"losetup": {"-l", "--list", "-a", "--all", "-j", "--associated"},
		"mdadm":   {"--detail", "-D", "--examine", "-E", "--query", "-Q"},
		"nvme":    {"list", "id-ctrl", "id-ns", "smart-log", "list-subsys"},
	}
	for _, a := range args {
		if slices.Contains(readOnly[prog], a) && len(args) <= 3 {
			return ""
		}
	}
	return "takes the node's disks, mounts, swap or kernel modules down"
}

// judgeRuntime refuses CRI commands (crictl, and the OCI runtimes CRI-O drives) that stop, remove
// or kill the node's pods and containers. podman's own containers (podman stop --cidfile, what a
// podman-run unit's ExecStop does) are the unit's; what an image runs is, like a program's
// contents, beyond the judge (docs/security.md).
func judgeRuntime(args []string) string {
	for _, a := range args {
		switch a {
		case "stop", "stopp", "rm", "rmp", "kill", "pause", "delete", "reset", "unmount", "umount", "update":
			return "stops, removes or kills the node's pods or containers"
		}
	}
	return ""
}

func withSuffix(u string) string {
	if strings.Contains(u, ".") {
		return u
	}
	return u + ".service"
}

// foundArgument says whether argv[i] is an argument of the command a modeled wrapper runs, by
// its grammar (find -exec ionice -c 3 rm -f {} +: rm's operand), not where its program may be.
func (j judge) foundArgument(argv []string, i int) bool {
	if !modeledWrapper(argv[0]) {
		return false
	}
	start, _, why := wrapperCommand(cmdName(argv[0]), argv[1:])
	return why == "" && 1+start < i
}
