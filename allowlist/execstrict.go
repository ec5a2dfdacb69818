package allowlist

import (
	"path"
	"slices"
	"strings"
)

// No file the ConfigMap can turn into root (issue 27, round 4). Three mechanisms close the class of
// a unit whose own commands make the code it runs:
//
//   - A changed line (Execution.ExecChanged: the payload adds or changes it) is the ConfigMap's, not
//     the node's: it runs programs and hands script files to interpreters only from read-only OS
//     content and the node's own program dirs (nodeProgram), at every depth the judge follows (the line's program, every command of a
//     shell script, every wrapper's command, every interpreter's script), and runs no container or
//     machine image (judgeImages). A program named without its path is resolved through the
//     search path, whose /usr/local directories are the node's own (strictProgram).
//   - No command, changed or not, writes, links, copies or moves into what the judge trusts as the
//     node's code (payloadCannotWrite: /usr, RHCOS's /usr/local = /var/usrlocal, every path the audit
//     denies), nor into a directory above it where the names written are not the judge's to see
//     (tar -C, rsync, cp -T, ln over /var/usrlocal); and a script or a unit does not run a file one
//     of its own commands wrote (cp x /tmp/ok; /tmp/ok).
//   - Variables that move where programs read their code (HOME, XDG_*) must lead to the node's own
//     files (dirVars).

// readOnlyOS says whether p is read-only OS content: RHCOS's /usr (an ostree mount, read-only at run
// time) but /usr/local (/var/usrlocal), and /bin, /sbin, /lib, /lib64 (links into /usr).
func readOnlyOS(p string) bool {
	if !plainPath(p) {
		return false
	}
	c := nodePath(p)
	if under(c, "/usr/local") {
		return false
	}
	for _, d := range []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"} {
		if strings.HasPrefix(c, d) {
			return true // below the directory: the directory itself is no program
		}
	}
	return false
}

// nodeAliases are RHCOS 9's symbolic links, each as the name the judge reads it by: the links under
// /usr that leave the read-only tree (/usr/local -> ../var/usrlocal, /usr/tmp -> ../var/tmp, the
// filesystem package's), and the ostree layout's /var ones the judge names by their / path
// (/root -> var/roothome, /opt -> var/opt). Everything else under /usr (/usr/lib/debug's links,
// /usr/src) stays inside it. A path is mapped by its first matching entry.
var nodeAliases = [][2]string{{"/var/usrlocal", "/usr/local"}, {"/var/roothome", "/root"}, {"/var/opt", "/opt"},
	{"/usr/tmp", "/var/tmp"}}

// plainPath says whether p is an absolute path with nothing the shell or the manager would expand
// (a variable, specifier, pattern or ~): only such a path names one file the judge can place.
func plainPath(p string) bool {
	// A ".." is resolved after the links before it (execdotdot.go): such a path is placed nowhere.
	return strings.HasPrefix(p, "/") && !strings.ContainsAny(p, "$`%*?[{~") && !hasDotDot(p)
}

// nodePath is the path as RHCOS reaches it: cleanPath, then nodeAliases (/var/usrlocal is
// /usr/local, /var/roothome is /root, /var/opt is /opt, /usr/tmp is /var/tmp).
func nodePath(p string) string {
	c := cleanPath(p)
	for _, a := range nodeAliases {
		if under(c, a[0]) {
			return a[1] + strings.TrimPrefix(c, a[0])
		}
	}
	return c
}

const readOnlyDirs = "read-only OS content (/usr but /usr/local, /bin, /sbin, /lib, /lib64) and the node's own program dirs (/usr/local/bin, /usr/local/sbin, /usr/local/libexec)"

// nodeProgram says whether p is a program or script a changed line may run: read-only OS content,
// or the node's own program dirs under /usr/local. Those are RHCOS's /var/usrlocal, writable, but
// not by the payload or anything the judge lets run: the audit denies them to every policy (the
// MCO's own scripts there, kubenswrapper, configure-ovs.sh, come with the node's provisioning), and
// no command of a judged line, changed or not, may write, link, copy or move into them
// (writesNodeCode). So a changed line may run the node's own kubenswrapper as the MCS's kubelet
// unit does, and still nothing the payload made.
func nodeProgram(p string) bool {
	if readOnlyOS(p) {
		return true
	}
	if !plainPath(p) {
		return false
	}
	c := nodePath(p)
	for _, d := range []string{"/usr/local/bin/", "/usr/local/sbin/", "/usr/local/libexec/"} {
		if strings.HasPrefix(c, d) {
			return true
		}
	}
	return false
}

// strictProgram says why a changed line may not run word as a program: a path outside read-only
// OS content. A name without a path is resolved through the search path
// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin, systemd's and the unit's shell's): its first
// directories are the node's own, which neither a refresh nor a judged command writes (PATH itself
// is a variable no line may set), so a name resolves to the node's or the OS's program.
func strictProgram(word string) string {
	if !strings.Contains(word, "/") || nodeProgram(word) {
		return ""
	}
	return "a changed line runs " + word + ": programs only from " + readOnlyDirs
}

// strictScript says why a changed line may not hand the file to an interpreter.
func strictScript(prog, f string) string {
	if nodeProgram(f) {
		return ""
	}
	return "a changed line hands " + prog + " the script " + f + ": script files only from " + readOnlyDirs
}

// wrapperPathValues are options of wrappers whose value, in the next word, is a file the wrapper
// opens, not the program it runs (xargs -a, env -C, strace -o, start-stop-daemon --pidfile).
var wrapperPathValues = []string{"-a", "--arg-file", "-C", "--chdir", "-o", "--output", "--pidfile", "--pid-file",
	"-p", "--log-file", "-E", "--conflict-exit-code", "-w", "--timeout", "-s", "--shell", "-t"}

// wrapperFirstOperand are the wrappers whose first operand is a file they open (flock's lock file)
// or the root they change to (chroot: judged on its own).
var wrapperFirstOperand = []string{"flock", "chroot"}

// imageRunners run code from a container image, a machine or disk image, or a tree they mount: code
// the judge cannot read. A changed line may run none of them; an unchanged line (the node's own
// unit) may not hand them an image the payload may write.
var imageRunners = []string{"systemd-nspawn", "systemd-vmspawn", "systemd-dissect", "importctl", "machinectl",
	"portablectl", "systemd-sysext", "systemd-confext", "systemd-repart", "bwrap", "firejail", "lxc-start",
	"lxc-execute", "lxc-attach", "lxc-create", "qemu-kvm", "qemu-system-x86_64", "qemu-system-aarch64",
	"virt-install", "virsh", "conmon", "toolbox", "distrobox"}

// containerEngines run images from a registry or a file, as root; their read-only and stop
// subcommands (ps, inspect, stop, rm: what a podman-run unit's ExecStop= does) are allowed in a
// changed line, every other subcommand is code from an image.
var containerEngines = map[string][]string{
	"podman":  {"ps", "inspect", "images", "version", "info", "logs", "stop", "rm", "kill", "wait", "healthcheck", "pod", "container"},
	"docker":  {"ps", "inspect", "images", "version", "info", "logs", "stop", "rm", "kill", "wait"},
	"nerdctl": {"ps", "inspect", "images", "version", "info", "logs", "stop", "rm", "kill", "wait"},
	"buildah": {}, "skopeo": {"inspect", "list-tags"}, "ctr": {}, "crictl": {"ps", "pods", "images", "img",
		"inspect", "inspectp", "inspecti", "info", "version", "stats", "statsp", "logs", "stop", "stopp", "rm", "rmp", "rmi"},
	"runc": {"list", "state", "ps", "events", "kill", "delete"}, "crun": {"list", "state", "ps", "kill", "delete"},
	"ctr-enhanced": {}}

// criDaemons are CRI-O, the node's container runtime: a daemon that runs the pods kubelet asks
// for, not an image its command line names, so no subcommand rule reads its words (crio config,
// crio version run no image; crio wipe is a disruptive class, execprocs.go; a word of
// $CRIO_CONFIG_OPTIONS that EnvironmentFile= leaves unset is no subcommand: adversary r16 c/01).
// The engines' code options (engineCodeOptions) are judged in every line; in a changed line it
// runs only as the unit's own program (it is no modeled one), given only the paths the node's
// definition of the unit gives it by the same option, or /usr (execgiven.go).
var criDaemons = []string{"crio", "cri-o"}

// runsContainers says whether the program (a name as cmdName gives it) is a container engine or
// crio, whose words judgeImages reads.
func runsContainers(n string) bool {
	_, engine := containerEngines[n]
	return engine || slices.Contains(criDaemons, n)
}

// engineCodeOptions are a container engine's options naming programs or hooks it runs as root (in
// every line, changed or not: a file the payload may write there is code the judge never sees).
var engineCodeOptions = []string{"--runtime", "--conmon", "--hooks-dir", "--module", "--network-cmd-path",
	"--runtime-flag", "--storage-opt", "--root", "--runroot", "--cni-config-dir", "--volumepath", "--config"}

// imageOptions are the options that name an image or a tree a runner runs code from.
var imageOptions = []string{"-i", "--image", "-D", "--directory", "--template", "--root", "-R", "--bundle", "-b", "--wd", "-w"}

// judgeImages judges a program that runs code from images. strict: a changed line.
func (j judge) judgeImages(prog string, args []string) string {
	n := prog
	if strings.HasPrefix(n, "qemu-") || strings.HasPrefix(n, "lxc-") {
		n = imageRunners[0]
	}
	allowed, engine := containerEngines[n]
	runner := slices.Contains(imageRunners, n)
	cri := slices.Contains(criDaemons, n)
	if !engine && !runner && !cri && n != "unshare" && n != "nsenter" && n != "chroot" {
		return ""
	}
	for i, a := range args {
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		opts := imageOptions
		if engine || cri {
			opts = engineCodeOptions
		}
		if !slices.Contains(opts, name) {
			continue
		}
		for _, p := range pathsIn(val) {
			if j.strict && !readOnlyOS(p) || !nodeContent(p, j.never()) {
				return prog + " " + name + " " + val + ": runs code from " + p + ", a file or tree the payload may write"
			}
		}
	}
	if !j.strict {
		return ""
	}
	switch {
	case runner:
		return prog + " runs a container, a machine or an image: code the judge cannot read (refused in a changed line)"
	case engine:
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if !slices.Contains(allowed, a) {
				return prog + " " + a + ": runs code from a container image or a bundle the judge cannot read, as root (refused in a changed line)"
			}
			// pod and container take a subcommand of their own: judged the same way.
			if a != "pod" && a != "container" {
				return ""
			}
		}
	case n == "chroot":
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if nodePath(a) != "/" {
				return "chroot " + a + ": the program is read from another root (refused in a changed line)"
			}
			return ""
		}
	}
	return ""
}

// nodeCode says whether the path is where the judge trusts the node's code (a program, a script, a
// directory code is read from): a path the payload cannot write (payloadCannotWrite) that is not the
// state units write as they run (unitWritten).
func nodeCode(p string) bool {
	return payloadCannotWrite(p) && !unitWritten(nodePath(p))
}

// noCommandWrites says whether no command may write the (node) path: read-only OS content, the
// node's program dirs and every path the audit denies (osOrDenied), the files the agent writes from
// the payload there included (core's keys, the units: their writer is the agent, never a unit's
// command), but the state units write as they run (unitState).
func noCommandWrites(c string) bool {
	return osOrDenied(c) && !unitState(c)
}

// unitState are the denied trees that units write as they run (runtime files, logs, devices): no
// policy grants them to the payload, but a unit's own commands write there, so what is there is not
// the node's code.
func unitState(c string) bool {
	return under(c, "/run") || under(c, "/dev") || under(c, "/var/log") || under(c, "/tmp") || under(c, "/var/tmp")
}

// aboveNodeCode says whether c is a directory above the node's code (a write of names the judge
// does not see there may create or replace it).
func aboveNodeCode(c string) bool {
	for _, r := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"} {
		if under(r, c) {
			return true
		}
	}
	for _, l := range Audit {
		if r := strings.TrimSuffix(strings.TrimSuffix(l.Prefix, "*"), "/"); l.Class == Deny && !unitState(r) && under(r, c) {
			return true
		}
	}
	return false
}

// targetOptions are, for each writer, the options whose value is where it writes, and whether the
// names written there are unknown (an archive's, a URL's).
var targetOptions = map[string]map[string]bool{
	"cp": {"-t": false, "--target-directory": false}, "mv": {"-t": false, "--target-directory": false},
	"install": {"-t": false, "--target-directory": false}, "ln": {"-t": false, "--target-directory": false},
	"tar": {"-C": true, "--directory": true}, "unzip": {"-d": true}, "cpio": {"-D": true, "--directory": true},
	"curl": {"-o": false, "--output": false, "--output-dir": true},
	"wget": {"-O": false, "--output-document": false, "-P": true, "--directory-prefix": true},
}

// destinations are the paths a writer writes: dests (each maybe a directory receiving the sources'
// base names), the sources, and opaque when the names written below a dest are not in its words
// (an archive, rsync, cp -T or a directory's contents, a URL's name).
func destinations(prog string, args []string) (dests, srcs []string, opaque bool) {
	var ops []string
	target := ""
	opts := targetOptions[prog]
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		op, isTarget := opts[name]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case prog == "dd":
			if name == "of" {
				dests = append(dests, val)
			}
		case isTarget:
			if !hasVal && i+1 < len(args) {
				i++
				val = args[i]
			}
			target, opaque = val, opaque || op
		case (prog == "cp" || prog == "mv" || prog == "install" || prog == "ln") && (a == "-T" || a == "--no-target-directory"):
			opaque = true // the source's contents into the destination itself
		case prog == "curl" && (a == "-O" || a == "--remote-name" || a == "--remote-name-all"),
			prog == "wget" && !strings.HasPrefix(a, "-"):
			opaque = true // a name from the URL, in the working directory
			if target == "" {
				target = "."
			}
		case strings.HasPrefix(a, "-"):
			if prog == "tar" && !strings.HasPrefix(a, "--") && strings.Contains(a, "C") && i+1 < len(args) {
				i++
				target, opaque = args[i], true
			}
		default:
			ops = append(ops, a)
		}
	}
	switch prog {
	case "tee", "truncate", "touch", "shred", "sponge":
		// Every operand, not an option's value (touch -r F, truncate -r F: read; -d, -s, -n).
		ops, _ := readOpts(args, mutModels[prog])
		return ops, nil, false
	case "cp", "mv", "install", "ln", "rsync":
		if prog == "rsync" {
			opaque = true
		}
		if target != "" {
			return []string{target}, ops, opaque
		}
		if len(ops) == 0 {
			return nil, nil, false
		}
		if prog == "ln" && len(ops) == 1 {
			return []string{"."}, ops, opaque // ln -s TARGET: a link named after it in the working directory
		}
		for _, s := range ops[:len(ops)-1] {
			if b := path.Base(s); b == "." || b == "/" || strings.HasSuffix(s, "/") {
				opaque = true // a directory's contents (cp -r x/. dest, rsync x/ dest)
			}
		}
		return ops[len(ops)-1:], ops[:len(ops)-1], opaque
	case "tar", "unzip", "cpio":
		if !extracts(prog, args) {
			return nil, nil, false
		}
		if target == "" {
			target = "."
		}
		return []string{target}, nil, true
	}
	if target != "" {
		dests = append(dests, target)
	}
	return dests, nil, opaque
}

// writesNodeCode says why a writer's destinations reach the node's code, or "". The sources of mv
// are written too (they are removed).
func (j judge) writesNodeCode(prog string, args []string) string {
	if !slices.Contains(writers, prog) && prog != "curl" && prog != "wget" {
		return ""
	}
	dests, srcs, opaque := destinations(prog, args)
	if prog == "mv" {
		for _, s := range srcs {
			if why := j.nodeWrite(s, true); why != "" {
				return why
			}
		}
	}
	if prog == "ln" {
		// A symbolic link to the node's code (or above it) is a name through which later writes land there.
		for _, s := range srcs {
			x, ok := j.expand(s)
			if !ok || !strings.HasPrefix(x, "/") {
				continue
			}
			paths, ok := j.namedPaths(x) // ln -s /usr/{local,x} /tmp/ul: every name it may match
			if !ok {
				return "links to " + x + ": a brace expansion with more words than the judge lists, or too costly to judge"
			}
			for _, n := range paths {
				if !readOnlyOS(n) && (noCommandWrites(nodePath(n)) || aboveNodeCode(nodePath(n))) {
					if n != x {
						n += " (" + x + " may name it)"
					}
					return "links to " + n + ", the node's code: writes through the link would land there"
				}
			}
		}
	}
	for _, d := range dests {
		if j.charge(1 + len(srcs)) {
			return tooCostly
		}
		if why := j.nodeWrite(d, opaque || prog == "ln"); why != "" {
			return why
		}
		for _, s := range srcs {
			if b := path.Base(s); b != "." && b != "/" && !hasGlob(b) {
				if why := j.nodeWrite(strings.TrimSuffix(d, "/")+"/"+b, false); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// nodeWrite says why writing the path (relative ones from every directory the line may be in)
// reaches the node's code. above: the names written below it are not known (or it is a link that
// would replace a directory), so a directory above the node's code is refused too.
func (j judge) nodeWrite(w string, above bool) string {
	x, ok := j.expand(w)
	if !ok {
		return "writes to " + w + ", a path set by a variable the unit does not define: cannot be judged"
	}
	if strings.HasPrefix(x, "~") {
		// The shell's ~ is $HOME (root's, /root, unless the unit sets it); ~user is that user's.
		rest, found := strings.CutPrefix(x, "~/")
		if !found && x != "~" {
			return "writes to " + w + ", a user's home the judge cannot resolve"
		}
		home := j.env["HOME"]
		if home == "" {
			home = "/root"
		}
		x = home + "/" + rest
	}
	if why := j.pathWhy(x); why != "" {
		return why
	}
	dirs := []string{""}
	if !strings.HasPrefix(x, "/") {
		dirs = j.dirs()
	}
	if j.charge(len(dirs)) {
		return tooCostly
	}
	for _, d := range dirs {
		// A pattern or brace word writes every name it may match (namedPaths: /usr/loca?/bin/y,
		// /usr/{local,x}/bin/y, from cd /usr/loca? a relative bin/y).
		p := x
		if d != "" {
			p = d + "/" + x
		}
		paths, ok := j.namedPaths(p)
		if !ok {
			return "writes to " + w + ": a brace expansion with more words than the judge lists, or too costly to judge"
		}
		for _, n := range paths {
			c := nodePath(n)
			may := ""
			if n != p {
				may = " (" + p + " may name it)"
			}
			if noCommandWrites(c) {
				return "writes " + c + may + ", where the node runs its programs or reads its code (no command may write there)"
			}
			if above && aboveNodeCode(c) {
				return "writes names the judge cannot see into " + c + may + ", above where the node runs its programs or reads its code"
			}
		}
	}
	return ""
}

// dirs are the working directories a command of the line may run in: the unit's, and every one a
// script changed to.
func (j judge) dirs() []string {
	out := []string{"/"}
	if j.wd != nil {
		out = append(out, *j.wd...)
	}
	return out
}

// written are the files a command writes (its destinations and, in a directory, the sources' base
// names): a later command running one runs what the unit made.
func (j judge) written(argv []string) []string {
	for i, a := range argv {
		prog := cmdName(a)
		if !slices.Contains(writers, prog) && prog != "curl" && prog != "wget" {
			continue
		}
		dests, srcs, _ := destinations(prog, argv[i+1:])
		var out []string
		for _, d := range dests {
			x, _ := j.expand(d)
			out = append(out, cleanPath(x))
			for _, s := range srcs {
				out = append(out, cleanPath(x+"/"+path.Base(s)))
			}
		}
		return out
	}
	return nil
}

// dirVars are variables naming where programs read code (a login shell's ~/.bash_profile, python's
// ~/.local site-packages, XDG autostart and config): they must lead to the node's own files
// (payloadCannotWrite: HOME=/root, the default, or /usr).
var dirVars = []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	"XDG_STATE_HOME", "XDG_CACHE_HOME", "GNUPGHOME", "KUBECONFIG", "DOCKER_CONFIG", "CONTAINERS_CONF",
	"CONTAINERS_REGISTRIES_CONF", "CONTAINERS_STORAGE_CONF", "REGISTRIES_CONFIG_PATH", "AWS_CONFIG_FILE",
	"BOTO_CONFIG", "NPM_CONFIG_USERCONFIG", "PIP_CONFIG_FILE", "TERMINFO", "TERMINFO_DIRS", "MAGIC", "MANPATH"}

// configVars are variable families (exact, "PREFIX*", "*SUFFIX" or "*WORD*", upper-cased) that move
// where a root program reads its configuration or whom it trusts (adversary r13 e/05:
// CONTAINERS_CONF_OVERRIDE makes the unit's own podman load the payload's containers.conf, whose
// hooks_dir runs the payload's hook as root): containers/common's and containers/storage's,
// podman's and the registries', the TLS trust (CA bundles), the resolver's, the proxies, and, since
// a list of names is never complete, every name that says it holds a configuration or a search path
// (*CONF*, *PATH*). A changed line may set one only to the node's own files (nodeCode: read-only OS
// content, denied paths), never to a place the payload may write or to a value that is no path.
var configVars = []string{"CONTAINERS_*", "CONTAINER_*", "PODMAN_*", "BUILDAH_*", "STORAGE_OPTS", "STORAGE_DRIVER",
	"REGISTRY_*", "REGISTRIES_*", "DOCKER_*", "CRI_*", "CRIO_*", "SSL_*", "*_CA_BUNDLE", "*CA_CERT*", "*_CAFILE", "*_CAPATH",
	"GNUTLS_*", "NSS_*", "XDG_*", "TZDIR", "LOCALDOMAIN", "RES_*", "RESOLV_*", "*_PROXY", "*CONF*", "*PATH*"}

// inertConfigVars are the names of configVars' families a unit sets that move no configuration:
// podman's record of the unit it runs for (the MCO's iri-registry.service: PODMAN_SYSTEMD_UNIT=%n).
var inertConfigVars = []string{"PODMAN_SYSTEMD_UNIT"}

// configVar says whether the variable moves where a root program reads its configuration or trust.
func configVar(name string) bool {
	u := strings.ToUpper(name)
	if slices.Contains(inertConfigVars, u) {
		return false
	}
	for _, v := range configVars {
		switch {
		case strings.HasPrefix(v, "*") && strings.HasSuffix(v, "*"):
			if strings.Contains(u, strings.Trim(v, "*")) {
				return true
			}
		case strings.HasPrefix(v, "*"):
			if strings.HasSuffix(u, v[1:]) {
				return true
			}
		case strings.HasSuffix(v, "*"):
			if strings.HasPrefix(u, strings.TrimSuffix(v, "*")) {
				return true
			}
		case u == v:
			return true
		}
	}
	return false
}

// writeDirVars name where programs write their temporary files: never into the node's code.
var writeDirVars = []string{"TMPDIR", "TMP", "TEMP"}

// assignmentWhy says why setting the variable (NAME=VALUE) makes a program load code, or "".
func assignmentWhy(a string) string {
	k, v, hasVal := strings.Cut(a, "=")
	u := strings.ToUpper(k)
	if why := managerVarWhy(k); why != "" && hasVal {
		return why
	}
	if !hasVal {
		if codeVar(k) {
			return k + " makes the loader, a shell or an interpreter load code or changes how the program starts"
		}
		return "" // exported as it is
	}
	if k == "TAPE" {
		return tapeWhy
	}
	if u == "GODEBUG" {
		return godebugWhy(k, v)
	}
	switch {
	case codeVar(k):
		return k + " makes the loader, a shell or an interpreter load code or changes how the program starts"
	case u == "HOME" && !readOnlyOS(v) && !under(nodePath(v), "/root"):
		// A bare cd, cd ~ and ~/x follow HOME (homeDir): only root's home or read-only OS content,
		// never the node's program dirs (HOME=/usr/local/bin; cd; cp F ok).
		return k + "=" + short(v) + " moves root's home (where a bare cd and ~ lead, a login shell's profile) to " + v + ": only /root or read-only OS content"
	case slices.Contains(dirVars, u):
		for _, p := range strings.Split(v, ":") {
			if !nodeCode(p) {
				return k + "=" + short(v) + " moves where programs read their code (a login shell's profile, python's site-packages, config that runs commands) to " + p + ", which the payload may write (only the node's own files: /root, /usr)"
			}
		}
	case slices.Contains(writeDirVars, u):
		if c := nodePath(v); strings.HasPrefix(v, "/") && (noCommandWrites(c) || aboveNodeCode(c)) {
			return k + "=" + short(v) + " makes programs write their files where the node runs its programs"
		}
	case configVar(k):
		for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
			if !strings.HasPrefix(p, "/") || !nodeCode(p) {
				return k + "=" + short(v) + " moves where a root program reads its configuration or whom it trusts (containers' and registries' configuration, CA bundles, the resolver, proxies, a search path) to " + short(p) + ", which is not the node's own file (only read-only OS content or a path no policy grants)"
			}
		}
	}
	return ""
}

// godebugInert are the Go runtime's GODEBUG switches that only tune or trace the runtime (its
// memory, scheduler and garbage collector); x509ignoreCN is the MCO's own drop-in's
// (10-mco-default-madv.conf: x509ignoreCN=0,madvdontneed=1), a switch Go removed in 1.17.
var godebugInert = []string{"madvdontneed", "gctrace", "gcpacertrace", "scavtrace", "schedtrace", "scheddetail",
	"inittrace", "asyncpreemptoff", "harddecommit", "adaptivestackstart", "tracebackancestors", "invalidptr",
	"disablethp", "decoratemappings", "tracefpunwindoff", "profstackdepth", "runtimecontentionstacks", "x509ignorecn"}

// godebugWhy says why a GODEBUG value changes what a Go daemon trusts, or "" (adversary r19 c/03:
// x509sha1=1 made the kubelet and CRI-O verify SHA-1-signed certificates, tlsrsakex=1, tls3des=1 and
// tls10server=1 turned on the legacy key exchange, ciphers and TLS 1.0). Go's list of switches grows
// with each release and most of them move a default of crypto/tls, crypto/x509, net or net/http, so
// only the runtime's own tuning and tracing switches may be set in a changed line.
func godebugWhy(k, v string) string {
	for _, kv := range strings.Split(v, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if name == "" || slices.Contains(godebugInert, strings.ToLower(name)) {
			continue
		}
		return k + "=" + short(v) + " sets " + short(name) + ", a Go switch that may change what a daemon's crypto/tls, crypto/x509, net or net/http accept (only the runtime's tuning and tracing switches may change: " + strings.Join(godebugInert, ", ") + ")"
	}
	return ""
}

// strictCandidate judges, in a changed line, a word of a wrapper before its program's path: the
// program it may run. prev is the word before it, operands how many non-option words came before.
func strictCandidate(prog, a, prev string, operands int) string {
	switch {
	case operands == 0 && slices.Contains(wrapperFirstOperand, prog) || slices.Contains(wrapperPathValues, prev) && prev != "--":
		return "" // a file the wrapper opens (flock's lock, xargs -a), or chroot's root (judgeImages)
	}
	return strictProgram(a)
}

// changeDir records a directory a script changes to: relative writes after it are judged from it.
func (j judge) changeDir(x string) string {
	if j.wd == nil {
		return ""
	}
	if len(*j.wd) > 64 {
		return tooCostly
	}
	x, why := j.changeDirTo("cd", x, true)
	if why != "" || x == unknownDir {
		if why == "" {
			*j.wd = append(*j.wd, unknownDir)
		}
		return why
	}
	if strings.HasPrefix(x, "/") {
		*j.wd = append(*j.wd, cleanPath(x))
		return ""
	}
	// Relative to any directory the script may be in.
	for _, d := range j.dirs() {
		*j.wd = append(*j.wd, cleanPath(d+"/"+x))
	}
	return ""
}

// extracts says whether an archiver writes the archive's files (tar -x, cpio -i or -p, unzip but -l).
func extracts(prog string, args []string) bool {
	for i, a := range args {
		switch prog {
		case "tar":
			if a == "--extract" || a == "--get" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "x") ||
				i == 0 && !strings.HasPrefix(a, "-") && strings.Contains(a, "x") {
				return true
			}
		case "cpio":
			if a == "--extract" || a == "--pass-through" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "ip") {
				return true
			}
		case "unzip":
			if a == "-l" || a == "-t" || a == "-Z" {
				return false
			}
		}
	}
	return prog == "unzip"
}
