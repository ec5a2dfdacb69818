package allowlist

import (
	"strconv"
	"strings"
)

// Programs that act on other processes are judged by what they do to those processes (adversary
// round 14, c/04: ExecStartPre=/usr/bin/strace -p 1 -e inject=all:signal=INT sends SIGINT to PID 1,
// ctrl-alt-del, a reboot, and passed in every line with a unitPrograms grant for strace). A tracer
// or debugger that attaches to a process (strace -p, gdb -p, perf -p, …) may stop it, fault its
// system calls, signal it and read its memory; a program that joins another process's namespaces,
// or changes its priority, scheduling, affinity or limits, acts on that process, not on its own
// command. Whichever process they name, PID 1 or a number, variable or substitution that may be
// PID 1, kubelet or crio, is refused by class in every line, as kill is (only the unit's own
// $MAINPID may be acted on, and by no tracer): classes come before the programs a changed line may
// run, so no unitPrograms grant lifts them. Such a program running its own command (strace -o F
// /usr/bin/myapp, ionice -c 3 /usr/bin/myapp) acts only on that command, which is judged as a
// command.

// processActor is how a program names the processes it acts on.
type processActor struct {
	verb string // what it does to the process: "attaches to", "changes the priority of"
	// pid1: what that does to PID 1 (the reason's last clause).
	pid1 string
	// short and long options whose value (joined, after =, or the next word) names target processes;
	// valued: the program's other short options with a value (read so that a cluster's value, -etrace=%process,
	// is not read as options).
	short, valued string
	long          []string
	// group: options making the operands users or process groups (every process of root's holds
	// PID 1, kubelet and crio).
	group []string
	// pidMode: options after which the operands are the targets too (ionice -p 1 2, renice -p);
	// lastOperand: with one of pidMode, only the last operand is the target (chrt -p PRIO PID,
	// taskset -p MASK PID).
	pidMode     []string
	lastOperand bool
	// operands: every operand from the operands-th is a target (gcore PID…, renice PRIO PID…);
	// priority: options that give renice's priority, after which every operand is one.
	operands int
	priority []string
	// mainPID: the unit's own $MAINPID may be the target (no tracer's).
	mainPID bool
	// commandFirst: the program always runs a command, whose class is judged first (its reason
	// says more: nsenter -t 1 -m rpm-ostree rebase is a boot change).
	commandFirst bool
}

const (
	traced    = "it can reboot the node or take its init: a tracer stops it, faults or signals it and reads its memory"
	scheduled = "it can starve or stall the node's init and every unit it starts"
)

// processActors are the programs that act on processes they name, by their option grammar
// (strace's, ltrace's, perf's, util-linux's, gdb's as RHCOS and Fedora ship them).
var processActors = map[string]processActor{
	"strace":    {verb: "attaches to", pid1: traced, short: "p", long: []string{"--attach"}, valued: "abeEIoOPsSuUX"},
	"ltrace":    {verb: "attaches to", pid1: traced, short: "p", valued: "beFlnosuxXwAD"},
	"perf":      {verb: "attaches to", pid1: traced, short: "pt", long: []string{"--pid", "--tid"}, valued: "eoFcCmGurDINLMSjkKzwy"},
	"trace-cmd": {verb: "attaches to", pid1: traced, short: "P", long: []string{"--proc-map"}, valued: "eopfgnlbsrmMOCBcdDvSqzk"},
	"bpftrace":  {verb: "attaches to", pid1: traced, short: "p", valued: "Bfecoik"},
	"criu":      {verb: "attaches to", pid1: traced, short: "t", long: []string{"--tree"}, valued: "DWoLvpfj"},
	"gdb":       {verb: "attaches to", pid1: traced},
	"gdbserver": {verb: "attaches to", pid1: traced, pidMode: []string{"--attach"}, lastOperand: true},
	"gcore":     {verb: "attaches to", pid1: traced, valued: "o", operands: 1},
	"pstack":    {verb: "attaches to", pid1: traced, operands: 1},
	"gstack":    {verb: "attaches to", pid1: traced, operands: 1},
	"nsenter": {verb: "joins the namespaces of", pid1: "its command runs where the node's init runs, outside the unit's own namespaces and sandbox",
		short: "t", long: []string{"--target"}, valued: "SGN", mainPID: true, commandFirst: true},
	"prlimit": {verb: "changes the resource limits of", pid1: scheduled + " (no file it can open, no process it can start)",
		short: "p", long: []string{"--pid"}, mainPID: true},
	"renice": {verb: "changes the priority of", pid1: scheduled, group: []string{"-g", "--pgrp", "-u", "--user"},
		operands: 2, priority: []string{"-n", "--priority", "--relative"}, mainPID: true},
	"ionice": {verb: "changes the I/O scheduling of", pid1: scheduled, valued: "cn", group: []string{"-P", "--pgid", "-u", "--uid"},
		pidMode: []string{"-p", "--pid"}, mainPID: true},
	"chrt": {verb: "changes the CPU scheduling of", pid1: scheduled, valued: "TPD", pidMode: []string{"-p", "--pid"},
		lastOperand: true, mainPID: true},
	"taskset": {verb: "changes the CPU affinity of", pid1: scheduled, pidMode: []string{"-p", "--pid"}, lastOperand: true, mainPID: true},
}

// noGrant ends every reason of the classes no unitPrograms grant lifts.
const noGrant = "no unitPrograms grant lifts that"

// processWhy says why the command acts on a process other than the unit's own, or "".
func (j judge) processWhy(prog string, args []string) string {
	a, ok := processActors[prog]
	if !ok {
		return ""
	}
	targets, group := a.targets(prog, args)
	if group != "" {
		return prog + " " + a.verb + " every process of a user or group (" + group + ": root's, and group 1, hold PID 1, kubelet and crio; " + noGrant + ")"
	}
	for _, t := range targets {
		if isPID1(t) {
			return prog + " " + a.verb + " PID 1" + injects(prog, args) + ": " + a.pid1 + " (" + noGrant + ")"
		}
	}
	for _, t := range targets {
		if a.mainPID && (t == "$MAINPID" || t == "${MAINPID}") {
			if why := j.mainPIDWhy(prog + " " + a.verb + " $MAINPID"); why != "" {
				return why
			}
			continue
		}
		own := "only the unit's own $MAINPID may be"
		if !a.mainPID {
			own = "no tracer may attach to any, the unit's own $MAINPID included: it then runs as the tracer says"
		}
		return prog + " " + a.verb + " process " + short(t) + ": a number, a variable or a substitution may be PID 1, kubelet or crio, and " + own + " (" + noGrant + ")"
	}
	return ""
}

// targets are the processes the program's words name, by its grammar, or the option that makes
// them every process of a user or group. Options are read up to "--" (wherever the program stops
// reading its own: a traced command's -p is read as the tracer's, which refuses more, never less).
func (a processActor) targets(prog string, args []string) (targets []string, group string) {
	if prog == "gdb" {
		return gdbTargets(args), ""
	}
	var operands []string
	pidMode, first := false, a.operands
	for i := 0; i < len(args); i++ {
		w := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case w == "--":
			i = len(args)
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w, "=")
			switch {
			case longIs(name, a.long):
				if !hasVal {
					val = next()
				}
				targets = append(targets, pidList(val)...)
			case longIs(name, a.group):
				return nil, w
			case longIs(name, a.priority):
				if !hasVal {
					next()
				}
				first = 1
			case longIs(name, a.pidMode):
				pidMode = true
				if prog == "ionice" && hasVal {
					targets = append(targets, pidList(val)...)
				}
			}
		case strings.HasPrefix(w, "-") && len(w) > 1 && !isNumber(w):
			for k := 1; k < len(w); k++ {
				c := w[k : k+1]
				switch {
				case strings.Contains(a.short, c):
					val := w[k+1:]
					if val == "" {
						val = next()
					}
					targets = append(targets, pidList(val)...)
				case shortIs(c, a.group):
					return nil, w
				case shortIs(c, a.priority):
					if k+1 == len(w) {
						next()
					}
					first = 1
				case shortIs(c, a.pidMode):
					pidMode = true
					if prog == "ionice" { // -p takes the first PID as its value: ionice -p1, -p 1
						val := w[k+1:]
						if val == "" {
							val = next()
						}
						targets = append(targets, pidList(val)...)
					}
				case strings.Contains(a.valued, c):
					if k+1 == len(w) {
						next()
					}
				default:
					continue
				}
				break
			}
		default:
			operands = append(operands, w)
		}
	}
	switch {
	case pidMode && a.lastOperand && len(operands) > 0:
		targets = append(targets, operands[len(operands)-1])
	case pidMode && !a.lastOperand:
		targets = append(targets, operands...)
	case first > 0 && len(operands) >= first:
		targets = append(targets, operands[first-1:]...)
	}
	return targets, ""
}

// gdbTargets are the processes gdb attaches to: -p, -pid, --pid (joined by = or the next word),
// -c/-core/--core with a number (gdb attaches to that process when no core file has the name), and
// the operand after the program when it is a number or an expansion (gdb PROGRAM PID, not
// gdb PROGRAM CORE); --args ends gdb's words.
func gdbTargets(args []string) []string {
	var targets []string
	operands := 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--args" || w == "-args" {
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			if operands++; operands == 2 && (isNumber(w) || strings.ContainsAny(w, "$`")) {
				targets = append(targets, w) // else a core file
			}
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		switch name {
		case "p", "pid", "c", "core":
			if !hasVal && i+1 < len(args) {
				i++
				val = args[i]
			}
			if name == "p" || name == "pid" || isNumber(val) || strings.ContainsAny(val, "$`") {
				targets = append(targets, val)
			}
		case "ex", "x", "iex", "ix", "eval-command", "command", "init-eval-command", "init-command", "cd", "d", "directory",
			"s", "symbols", "e", "exec", "se", "b", "l", "tty", "t", "data-directory", "D", "i", "interpreter":
			if !hasVal {
				i++
			}
		}
	}
	return targets
}

// longIs says whether name is one of the long options or an abbreviation getopt_long takes for one.
func longIs(name string, opts []string) bool {
	for _, o := range opts {
		if strings.HasPrefix(o, "--") && len(name) > 3 && strings.HasPrefix(o, name) {
			return true
		}
	}
	return false
}

// shortIs says whether the letter c is one of the short options (-p) among opts.
func shortIs(c string, opts []string) bool {
	for _, o := range opts {
		if len(o) == 2 && o[1:] == c {
			return true
		}
	}
	return false
}

// pidList splits a list of processes as strace's -p and perf's --pid take them (1,2 or "1 2").
func pidList(v string) []string {
	f := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(f) == 0 || strings.ContainsAny(v, "$`") {
		return []string{v} // -p with no value, or an empty one: which process is not known
	}
	return f
}

// isPID1 says whether a target is PID 1 or reaches it: 1 in any base, 0 (the caller's group) and
// negative numbers (groups, every process).
func isPID1(t string) bool {
	n, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 0, 64)
	return err == nil && n <= 1
}

// injects says how a tracer's reason names what it sends: strace's inject= with signal= sends a
// signal at each call (SIGINT to PID 1 is ctrl-alt-del).
func injects(prog string, args []string) string {
	if prog != "strace" {
		return ""
	}
	for _, a := range args {
		if strings.Contains(a, "inject") && strings.Contains(a, "signal=") {
			return " and injects signals into it"
		}
	}
	return ""
}

// nodeWideWhy says why a changed line's command takes down what the node's processes stand on, or
// changes what the machine boots, whatever its arguments say of the unit: udev's removal of the
// node's devices (udevadm trigger with an action other than add or change, the default) or udevd's
// own stop, the boot loader's verdict on the boot (systemd-bless-boot good, bad, indeterminate:
// boot counting then keeps or drops the entry), and the wipe of the container storage every pod
// runs from (crio wipe, podman system reset; RHCOS's CRI-O and podman share
// /var/lib/containers/storage). The node's own boot-time units run some of them (crio-wipe.service,
// systemd-bless-boot.service, each refused by identity where a payload names it), so the node's
// unchanged lines keep them.
func nodeWideWhy(prog string, args []string) string {
	sub, i := "", 0
	for ; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			sub = args[i]
			break
		}
	}
	switch {
	case prog == "udevadm" && sub == "trigger":
		for k := i + 1; k < len(args); k++ {
			w, n := args[k], k
			action, set := "", false
			if name, val, hasVal := strings.Cut(w, "="); strings.HasPrefix(w, "--") && longIs(name, []string{"--action"}) {
				action, set = val, true
				if !hasVal && k+1 < len(args) {
					k++
					action = args[k]
				}
			} else if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") {
				// udevadm trigger's short options: -c takes the action; t a A s S p g y b take a value.
				for c := 1; c < len(w); c++ {
					if w[c] == 'c' {
						action, set = w[c+1:], true
						if action == "" && k+1 < len(args) {
							k++
							action = args[k]
						}
					}
					if strings.IndexByte("ctaAsSpgyb", w[c]) >= 0 {
						if c+1 == len(w) && w[c] != 'c' {
							k++
						}
						break
					}
				}
			}
			if set && action != "add" && action != "change" {
				return "udevadm trigger " + short(strings.Join(args[n:k+1], " ")) + ": replays an event other than add or change for the node's devices (remove and unbind take disks, NICs and their drivers down: a disruptive class; " + noGrant + ")"
			}
		}
	case prog == "udevadm" && sub == "control":
		for _, w := range args[i+1:] {
			if w == "-e" || w == "--exit" || w == "-s" || w == "--stop-exec-queue" {
				return "udevadm control " + w + ": stops udevd or its event queue, the node's device manager (" + noGrant + ")"
			}
		}
	case prog == "systemd-bless-boot" && sub != "" && sub != "status":
		return "systemd-bless-boot " + short(sub) + ": marks the boot in the boot loader's boot counting: it changes what the machine boots next (" + noGrant + ")"
	case (prog == "crio" || prog == "cri-o") && sub == "wipe",
		(prog == "podman" || prog == "buildah") && sub == "system" && i+1 < len(args) && args[i+1] == "reset":
		return prog + " " + sub + ": wipes the node's container storage, every pod's images and containers (" + noGrant + ")"
	}
	return ""
}
