package allowlist

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// The paths a unit's commands may not reach: the kernel's switches, the manager's and the bus's
// sockets, the machine's watchdog and memory. Any argument reaching them is refused; a write target
// (a shell redirection, a writer program's operand, StandardOutput=file:…) may in addition not be
// anywhere under /proc, /sys or /dev (but the few harmless /dev sinks).

// reachDenied are paths no argument may reach (the path itself or below it).
var reachDenied = []string{
	"/proc/sysrq-trigger", "/proc/sys", "/proc/acpi", "/proc/kcore", "/proc/kmem", "/proc/mem",
	"/sys", "/dev/watchdog", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/initctl", "/dev/nvram", "/dev/cpu",
	"/run/initctl", "/run/systemd/private", "/run/systemd/notify", "/run/systemd/system", "/run/systemd/transient",
	"/run/systemd/generator", "/run/systemd/generator.early", "/run/systemd/generator.late", "/run/systemd/shutdown",
	"/run/systemd/userdb", "/run/systemd/io.systemd.ManagedOOM", "/run/systemd/journal/dev-log", "/run/dbus",
	"/run/systemd/seats", "/run/systemd/sessions", "/run/systemd/users", "/run/systemd/inhibit", "/run/nologin",
	"/run/systemd/ask-password", "/run/systemd/reboot-param", "/run/systemd/reboot-to-firmware-setup",
	"/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system", "/etc/systemd/system.conf",
	"/run/systemd/system.conf.d", "/etc/systemd/system.conf.d", "/etc/systemd/logind.conf",
	// /dev/char/MAJ:MIN names every character device by number: /dev/char/10:130 is /dev/watchdog.
	"/dev/char",
}

// reachDeniedNames are names no argument may reach by a name they begin (a file of the directory
// whose name starts so, and below it): the kernel's watchdog devices are watchdog, watchdog0,
// watchdog1, …, and opening any of them arms the machine's reset (round 9).
var reachDeniedNames = []struct{ dir, prefix string }{{"/dev", "watchdog"}}

// procEscapes are the entries of /proc/<pid>/ that reach another process's files, memory or the
// host's root (/proc/1/root/proc/sysrq-trigger).
var procEscapes = []string{"root", "cwd", "fd", "mem", "map_files", "environ", "attr", "task", "ns", "exe"}

// devSinks are the /dev files a command may write to.
var devSinks = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/kmsg",
	"/dev/console", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/shm"}

// varRef is a reference the judge resolves: $NAME, or ${NAME} with nothing else inside the braces.
// A parameter expansion with an operator (${F,,}, ${F@L}, ${F:1}, ${F/X/d}, ${F@E}, ${#F}) is the
// operator's result, not the variable's value: it stays unresolved (adversary r22 a/01: ${F,,} with
// F=/ETC/SHADOW was read as /ETC/SHADOW,,}).
var varRef = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// refName is the name varRef's match m refers to.
func refName(m string) string {
	return strings.Trim(m, "${}")
}

// expand resolves $VAR and ${VAR} from the unit's own environment; ok is false when a variable is
// unknown (or the word holds a substitution), as the judge cannot tell what it will be.
func (j judge) expand(s string) (string, bool) {
	if strings.ContainsAny(s, "`") || strings.Contains(s, "$(") {
		return s, false
	}
	ok := true
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := refName(m)
		if v, found := j.env[name]; found {
			return v
		}
		ok = false
		return m
	})
	if strings.ContainsRune(out, '$') {
		ok = false
	}
	return out, ok
}

// cleanPath is the path as the kernel reaches it: "." and "//" folded, /var/run is /run. It folds
// ".." on the text too, which the kernel does only after the links before it: no caller relies on
// that, as a path with ".." is refused before (reach, target, nodeWrite, argvPaths, changeDirTo;
// plainPath is false for it, so nodeProgram, readOnlyOS and payloadCannotWrite are too).
func cleanPath(p string) string {
	c := path.Clean(p)
	if c == "/var/run" || strings.HasPrefix(c, "/var/run/") {
		c = "/run" + strings.TrimPrefix(c, "/var/run")
	}
	return c
}

// pathsIn are the absolute paths a word names: itself, and the values after = , : or , (dd
// of=/x, --output=/x, file:/x, unix:path=/run/dbus/…).
func pathsIn(w string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '=' || r == ':' || r == ',' || r == ' ' }) {
		if strings.HasPrefix(part, "/") {
			out = append(out, part)
		}
	}
	return out
}

// reach says why the word (an argument, or with write a write target) reaches what no unit's
// command may, or "". The shell may make the word other words (round 8): its brace expansion
// (/proc/sy{s,}rq-trigger, /s{y,}s/power/state) is judged word by word, and a pattern component
// names every name it may match, names the judge cannot list among them (/proc/s*q-t* is
// /proc/sysrq-trigger, /pr?c/kcore is /proc/kcore, /proc/1/r*/ is /proc/1/root/).
func (j judge) reach(w string, write bool) string {
	if why := sysrqWhy(w); why != "" || !strings.ContainsAny(w, "/$") {
		return why
	}
	x := w
	if strings.ContainsRune(w, '$') {
		x, _ = j.expand(w)
	}
	words := []string{x}
	if strings.ContainsRune(x, '{') {
		bw, ok := braceWords(x, 64)
		if !ok {
			return "reaches " + w + ": a brace expansion with more words than the judge lists (cannot be judged)"
		}
		if j.charge(len(bw)) {
			return tooCostly
		}
		words = append(words, bw...)
	}
	for _, bw := range words {
		for _, p := range pathsIn(bw) {
			if why := reachPath(p, write); why != "" {
				return why
			}
		}
		if why := sysrqWhy(bw); why != "" {
			return why
		}
	}
	return ""
}

func sysrqWhy(w string) string {
	if strings.Contains(w, "sysrq") || strings.ContainsAny(w, "SYRQ") && strings.Contains(strings.ToLower(w), "sysrq") {
		return "reaches the kernel's SysRq trigger"
	}
	return ""
}

// reachPath says why the absolute path (a pattern's components read as every name they may match)
// reaches what no unit's command may, or "".
func reachPath(p string, write bool) string {
	if hasDotDot(p) {
		// /var/run/../proc is /proc: the kernel resolves ".." after the links (execdotdot.go).
		return dotDotWhy("reaches", p)
	}
	c := cleanPath(p)
	pattern := strings.ContainsAny(c, "*?[")
	may := func(d string) string {
		if !pattern {
			return ""
		}
		return ": the pattern may match " + d
	}
	for _, alias := range patternAliases(c) {
		for _, d := range reachDenied {
			if mayBeUnder(alias, d) {
				return "reaches " + c + may(d) + " (the kernel's switches, the machine's watchdog or memory, or the manager's or the bus's sockets and units)"
			}
		}
		for _, n := range reachDeniedNames {
			if d, ok := mayBeNamed(alias, n.dir, n.prefix); ok {
				return "reaches " + c + may(d) + " (the kernel's switches, the machine's watchdog or memory, or the manager's or the bus's sockets and units)"
			}
		}
		parts := strings.Split(strings.TrimPrefix(alias, "/"), "/")
		if len(parts) >= 3 && componentMayBe(parts[0], "proc") {
			for _, e := range procEscapes {
				if componentMayBe(parts[2], e) {
					return "reaches " + c + may("/proc/"+parts[1]+"/"+e) + " (another process's root, files or memory through /proc)"
				}
			}
		}
		if write && !pattern {
			return writeTarget(c)
		}
		for _, k := range []string{"/proc", "/sys", "/dev"} {
			if write && mayBeUnder(alias, k) {
				return "writes " + c + ": the pattern may match a name under " + k + " (the kernel's state or a device: never a write target)"
			}
		}
	}
	return ""
}

// patternAliases are the (clean) pattern path and, when its first components may be /var/run,
// the same below /run (cleanPath folds only the literal /var/run).
func patternAliases(c string) []string {
	parts := strings.Split(strings.TrimPrefix(c, "/"), "/")
	if len(parts) >= 2 && componentMayBe(parts[0], "var") && componentMayBe(parts[1], "run") {
		return []string{c, "/run/" + strings.Join(parts[2:], "/")}
	}
	return []string{c}
}

// mayBeUnder says whether the path p, whose components may be shell patterns, may name d (a
// literal path) or a path below it: each of d's components may be matched by p's at its place (a
// pattern never matches a "/").
func mayBeUnder(p, d string) bool {
	pc := strings.Split(strings.TrimPrefix(p, "/"), "/")
	dc := strings.Split(strings.TrimPrefix(strings.TrimSuffix(d, "/"), "/"), "/")
	if len(pc) < len(dc) {
		return false
	}
	for i, n := range dc {
		if !componentMayBe(pc[i], n) {
			return false
		}
	}
	return true
}

// mayBeNamed says whether the path p (perhaps a pattern) may lie in dir under a name that starts
// with prefix (or below one), and which name.
func mayBeNamed(p, dir, prefix string) (string, bool) {
	if !mayBeUnder(p, dir) {
		return "", false
	}
	pc := strings.Split(strings.TrimPrefix(p, "/"), "/")
	k := len(strings.Split(strings.TrimPrefix(dir, "/"), "/"))
	if len(pc) <= k {
		return "", false
	}
	return dir + "/" + pc[k], patternMayStartWith(pc[k], prefix)
}

// patternMayStartWith says whether the component, perhaps a shell pattern, may match a name that
// begins with prefix: the pattern read as an automaton over prefix's bytes (*, ?, brackets,
// literals) keeps a live state after the last one. A form it does not read matches (as
// componentMayBe errs).
func patternMayStartWith(pc, prefix string) bool {
	if !strings.ContainsAny(pc, "*?[") {
		return strings.HasPrefix(pc, prefix)
	}
	if strings.Contains(pc, "[:") || strings.Contains(pc, "[=") || strings.Contains(pc, "[.") || strings.Contains(pc, "(") {
		return true
	}
	var toks []string // "*", "?", "[…]" or one byte
	for i := 0; i < len(pc); i++ {
		switch {
		case pc[i] == '\\' && i+1 < len(pc):
			toks = append(toks, pc[i+1:i+2])
			i++
		case pc[i] == '[':
			e := i + 1
			if e < len(pc) && (pc[e] == '!' || pc[e] == '^') {
				e++
			}
			if e < len(pc) && pc[e] == ']' {
				e++ // a "]" first is a member
			}
			for e < len(pc) && pc[e] != ']' {
				e++
			}
			if e >= len(pc) {
				toks = append(toks, "[") // no closing bracket: a literal "["
				continue
			}
			toks = append(toks, pc[i:e+1])
			i = e
		default:
			toks = append(toks, pc[i:i+1])
		}
	}
	closure := func(set map[int]bool) map[int]bool {
		for i := 0; i < len(toks); i++ {
			if set[i] && toks[i] == "*" {
				set[i+1] = true
			}
		}
		return set
	}
	set := closure(map[int]bool{0: true})
	for b := 0; b < len(prefix) && len(set) > 0; b++ {
		next := map[int]bool{}
		for i := range set {
			if i >= len(toks) {
				continue
			}
			switch t := toks[i]; {
			case t == "*":
				next[i] = true
			case t == "?" || t == prefix[b:b+1]:
				next[i+1] = true
			case len(t) > 1 && t[0] == '[':
				if m, err := path.Match(goPattern(t), prefix[b:b+1]); m || err != nil {
					next[i+1] = true
				}
			}
		}
		set = closure(next)
	}
	return len(set) > 0
}

// componentMayBe says whether the path component, perhaps a shell pattern, may be the name. It
// errs toward a match: Go's path.Match lets * and ? match a leading dot, which bash does not; a
// bracket form it does not read ([[:alpha:]], [[=a=]], [[.a.]]) and a pattern it finds malformed
// (text to bash) count as matching; an extglob form (@(…), +(…)) matches anything.
func componentMayBe(pc, name string) bool {
	if !strings.ContainsAny(pc, "*?[") {
		return pc == name
	}
	if strings.Contains(pc, "[:") || strings.Contains(pc, "[=") || strings.Contains(pc, "[.") || strings.Contains(pc, "(") {
		return true
	}
	m, err := path.Match(goPattern(pc), name)
	return m || err != nil
}

// goPattern is a bash pattern as Go's path.Match reads it: [!…] is [^…], and a "]" first in a
// bracket is a member.
func goPattern(p string) string {
	return strings.NewReplacer("[!]", "[^\\]", "[^]", "[^\\]", "[]", "[\\]", "[!", "[^").Replace(p)
}

// writeTarget says why a command may not write to the (clean, absolute) path.
func writeTarget(c string) string {
	if under(c, "/proc") || under(c, "/sys") {
		return "writes " + c + " (the kernel's state: /proc and /sys are never a write target)"
	}
	if under(c, "/dev") && !slices.Contains(devSinks, c) && !under(c, "/dev/shm") {
		return "writes " + c + " (a device: disks, watchdogs and consoles are never a write target)"
	}
	return ""
}

// hasGlob says whether a word holds a shell pattern or a find/xargs placeholder: the path it names
// (/tmp/p/sys?q-trigger through a link to /proc) is not the one the judge reads.
func hasGlob(w string) bool {
	return strings.ContainsAny(w, "*?[") || strings.Contains(w, "{}")
}

// target judges a write target that may hold variables: an unknown variable or a pattern cannot be
// judged.
func (j judge) target(w string) string {
	x, ok := j.expand(w)
	if !ok {
		return "writes to " + w + ", a path set by a variable the unit does not define: cannot be judged"
	}
	if hasGlob(x) {
		return "writes to " + w + ", a path named by a pattern or placeholder: cannot be judged"
	}
	if why := j.pathWhy(x); why != "" {
		return why
	}
	if why := j.reach(x, true); why != "" {
		return why
	}
	if !strings.HasPrefix(x, "/") {
		if c := cleanPath("/" + x); under(c, "/proc") || under(c, "/sys") {
			return "writes " + x + " (relative to /proc or /sys)"
		}
	}
	return ""
}

// writers are programs whose operands are files they write.
var writers = []string{"tee", "dd", "cp", "mv", "install", "ln", "truncate", "sponge", "touch", "shred", "rsync",
	"tar", "cpio", "unzip", "ed", "ex", "vi", "vim", "printf", "echo"}

// writes judges the operands a writer program writes (every path operand: the judge does not
// tell sources from destinations).
func (j judge) writes(prog string, args []string) string {
	if prog == "echo" || prog == "printf" {
		return "" // they write standard output only; its redirection is judged where it is
	}
	// cp, mv, install, rsync and archivers read patterns (cp /etc/x/*.conf /etc/y/): only their last
	// operand, the destination, may not be one; ln's operands are all judged (a link is how a
	// pattern would reach /proc under another name).
	sources := slices.Contains([]string{"cp", "mv", "install", "rsync", "tar", "cpio", "unzip"}, prog)
	for i, a := range args {
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			continue
		}
		if !strings.ContainsAny(a, "/$*?[{") {
			continue
		}
		if sources && i < len(args)-1 && hasGlob(a) {
			if x, _ := j.expand(a); j.reach(x, true) != "" {
				return j.reach(x, true)
			}
			continue
		}
		if why := j.target(a); why != "" {
			return why
		}
	}
	return ""
}

// judgeFind refuses a find whose starting point is in the kernel's state (/proc, /sys, /dev): with
// -exec or -fprint it reaches what no argument may name (find /proc -name 'sys?q*' -exec ln -s …).
func (j judge) judgeFind(args []string) string {
	for _, a := range args[findOptionsEnd(args):] { // find -L /proc …: after its leading options
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		if !strings.HasPrefix(a, "/") {
			continue
		}
		names, ok := j.namedPaths(a) // find /pro? …, find /{proc,x} …: every start it may name
		if !ok {
			return "find in " + a + ": a brace expansion with more words than the judge lists cannot be judged"
		}
		for _, n := range names {
			if c := cleanPath(n); under(c, "/proc") || under(c, "/sys") || under(c, "/dev") {
				return "find in " + c + " (the kernel's state) cannot be judged"
			}
		}
	}
	return ""
}

// systemMounts are the mounts a command may not unmount, remount or mount over: the node's root,
// its OS and state trees, the kernel's file systems, the boot partition, and the kubelet's and
// the container runtime's storage.
var systemMounts = []string{"/", "/usr", "/etc", "/var", "/boot", "/sysroot", "/proc", "/sys", "/dev", "/run",
	"/var/lib", "/var/lib/containers", "/var/lib/kubelet", "/var/log", "/home", "/tmp", "/var/tmp", "/opt",
	"/root", "/srv", "/var/lib/etcd", "/run/containers", "/var/mnt", "/mnt", "/usr/local", "/var/home"}

// judgeMount refuses unmounting everything or a system mount, remounting or mounting over one,
// and a mount point the judge cannot resolve. A propagation change (mount --make-rshared /, what
// kubens.service runs) and a bind below /run of the unit's own directories are allowed.
func (j judge) judgeMount(prog string, args []string) string {
	valued := []string{"-t", "--types", "-o", "--options", "-O", "--test-opts", "-L", "--label", "-U", "--uuid",
		"-N", "--namespace", "--source", "--target", "--options-mode", "--options-source", "-T", "--fstab", "-X", "--target-prefix"}
	var operands []string
	propagationOnly, moves := true, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "-a" || a == "--all" || a == "-A" || a == "--all-targets" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2 && strings.ContainsAny(a[1:], "aA"):
			return prog + " " + a + " acts on every mount"
		case slices.Contains(valued, name):
			if !hasVal && i+1 < len(args) {
				i++
				val = args[i]
			}
			if name == "-o" || name == "--options" {
				if strings.Contains(val, "remount") || strings.Contains(val, "move") {
					moves = true
				}
			}
			if name == "--target" || name == "--source" {
				operands = append(operands, val)
			}
			propagationOnly = false
		case strings.HasPrefix(a, "--make-"):
		case strings.HasPrefix(a, "-"):
			if a == "--move" || a == "-M" || a == "--remount" {
				moves = true
			}
			if prog == "mount" {
				propagationOnly = false
			}
		default:
			operands = append(operands, a)
		}
	}
	if prog == "mount" && propagationOnly && !moves {
		return ""
	}
	if prog == "mount" && len(operands) == 0 {
		return "mount with no mount point (every fstab entry) cannot be judged"
	}
	for k, o := range operands {
		x, ok := j.expand(o)
		if !ok {
			return prog + " " + o + ": a mount point set by a variable the unit does not define cannot be judged"
		}
		if !strings.HasPrefix(x, "/") {
			if prog == "mount" && k == 0 && len(operands) > 1 {
				continue // a source: a device name, tmpfs, overlay
			}
			return prog + " " + x + ": a mount named by a label, device or relative path cannot be judged"
		}
		// A pattern or brace mount point is every one it may match (umount /v?r is umount /var).
		names, ok := j.namedPaths(x)
		if !ok {
			return prog + " " + x + ": a brace expansion with more words than the judge lists cannot be judged"
		}
		for _, n := range names {
			if why := mountPointWhy(prog, cleanPath(n), k == 0 && len(operands) > 1 && !moves); why != "" {
				if n != x {
					why += " (" + x + " may name it)"
				}
				return why
			}
		}
	}
	return ""
}

// mountPointWhy says why the command may not act on the (clean, literal) mount point c; source:
// c is the source of a new mount or a bind, which is only read.
func mountPointWhy(prog, c string, source bool) string {
	if prog == "mount" && source {
		if under(c, "/proc") || under(c, "/sys") {
			return prog + " " + c + ": a bind of the kernel's state under another name cannot be judged"
		}
		return ""
	}
	if slices.Contains(systemMounts, c) || under(c, "/proc") || under(c, "/sys") || under(c, "/dev") ||
		under(c, "/sysroot") || under(c, "/boot") || under(c, "/usr") {
		return prog + " " + c + ": the node's system mounts stay"
	}
	if nc := nodePath(c); noCommandWrites(nc) || prog == "mount" && aboveNodeCode(nc) {
		return prog + " " + c + ": mounts over where the node runs its programs or reads its code"
	}
	return ""
}

// judgeSed refuses a sed script that runs commands (the e command, the s///e flag) or writes files
// other than its operands (w, W, s///w); -i's operands are write targets.
func (j judge) judgeSed(args []string) string {
	if j.strict {
		if why := strictSed(args); why != "" {
			return why // a changed line's script: the whitelist grammar (execsed.go)
		}
	}
	scripts, files, inPlace := sedArgs(args)
	for _, s := range scripts {
		if why := sedRunsOrWrites(s); why != "" {
			return why
		}
	}
	if inPlace {
		for _, f := range files {
			// sed -i edits files it names by pattern too (/etc/yum.repos.d/*.repo, as the MCO does):
			// the pattern's fixed part is judged.
			if x, ok := j.expand(f); ok && hasGlob(x) {
				if why := j.reach(x, true); why != "" {
					return why
				}
				continue
			}
			if why := j.target(f); why != "" {
				return why
			}
		}
	}
	return ""
}

// sedArgs reads sed's arguments: its scripts, its files, and whether it edits them in place.
func sedArgs(args []string) (scripts, files []string, inPlace bool) {
	haveScript := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--expression":
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			haveScript = true
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts, haveScript = append(scripts, strings.TrimPrefix(a, "--expression=")), true
		case a == "-f" || a == "--file" || strings.HasPrefix(a, "--file="):
			haveScript = true
			if a == "-f" || a == "--file" {
				i++
			}
		case strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case a == "-l" || a == "--line-length":
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.Contains(a[1:], "i") && !strings.HasPrefix(a, "--") {
				inPlace = true
			}
		default:
			if !haveScript {
				scripts, haveScript = append(scripts, a), true
			} else {
				files = append(files, a)
			}
		}
	}
	return scripts, files, inPlace
}

// sedRunsOrWrites reads a sed script command by command: addresses, then the command letter; the
// s and y commands' fields are skipped with their delimiter; a, i, c, r, R, b, t, T, :, w, W, e
// take the rest of the line.
func sedRunsOrWrites(s string) string {
	i := 0
	skipDelimited := func(n int) bool {
		if i >= len(s) {
			return false
		}
		d := s[i]
		i++
		for f := 0; f < n; f++ {
			for i < len(s) && s[i] != d {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return false
			}
			i++
		}
		return true
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' || c == ',' ||
			c == '$' || c == '~' || c == '+' || (c >= '0' && c <= '9'):
			i++
		case c == '/':
			if !skipDelimited(1) {
				return "a sed script that cannot be read"
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '\\':
			i++
			if !skipDelimited(1) {
				return "a sed script that cannot be read"
			}
		case c == 's' || c == 'y':
			i++
			if !skipDelimited(2) {
				return "a sed script that cannot be read"
			}
			if c == 's' {
				for i < len(s) && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
					if s[i] == 'e' || s[i] == 'w' {
						return "a sed script whose s command runs its result or writes a file (e, w flags)"
					}
					i++
				}
			}
		case c == 'e' || c == 'w' || c == 'W':
			return "a sed script with the " + string(c) + " command (runs a command or writes a file)"
		case strings.IndexByte("aicrRbtT:", c) >= 0:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		default:
			i++
		}
	}
	return ""
}
