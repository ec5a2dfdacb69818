package allowlist

import (
	"fmt"
	"slices"
	"strings"
)

// What the judge cannot see is refused (adv27 round 2): the code a program loads or runs is judged
// only where the judge reads it. A variable that makes the loader, a shell or an interpreter load
// code or change how the program starts, a script or program file the payload could write, a
// program option that runs a command, and a shell word the shell would expand into another program
// (a pattern, a brace expansion, ~) are refused by class.

// codeVars are variable names (exact, or prefixes ending in "*") whose value the loader, a shell
// or an interpreter runs or loads as code, or that change how the program starts.
var codeVars = []string{"LD_*", "BASH_ENV", "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "PS4", "PS1", "PS0", "PS2", "PS3", "BASH_*", "HISTFILE", "FUNCNEST", "POSIXLY_CORRECT",
	"PROMPT_COMMAND", "IFS", "CDPATH", "GLOBIGNORE", "BASH_XTRACEFD", "EXECIGNORE", "PATH", "PYTHON*", "PERL5*",
	"PERLLIB", "PERL_*", "RUBY*", "GEM_*", "NODE_*", "GCONV_PATH", "GIT_*", "LUA_*", "TCL*", "PHPRC", "PHP_INI_*",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MALLOC_*", "GLIBC_TUNABLES", "HOSTALIASES",
	"LOCPATH", "NLSPATH", "RES_OPTIONS", "DBUS_*", "SSH_ASKPASS", "SUDO_ASKPASS",
	"EDITOR", "VISUAL", "PAGER", "GIT_PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER", "OPENSSL_CONF",
	"OPENSSL_ENGINES", "OPENSSL_MODULES", "SSLKEYLOGFILE", "KRB5_CONFIG", "CURL_HOME",
	"WGETRC", "ZDOTDIR", "INPUTRC", "MAILCAP*", "LIBVA_*", "GST_PLUGIN_*",
	"GIO_*", "GTK_*", "QT_*", "LUA_INIT*",
	// gawk: where -f/-i/@include and -l/@load find their files; GAWK_PERSIST_FILE loads a heap of
	// stored functions and variables (execawk.go).
	"AWKPATH", "AWKLIBPATH", "GAWK_*",
	// Options given by the environment, the refused command-line options' other spelling (round-6
	// adversary: TAR_OPTIONS=--to-command=…, RSYNC_RSH=, ZIPOPT=-TT, MODPROBE_OPTIONS=-C F).
	"TAR_OPTIONS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "ZIPOPT", "ZIP", "UNZIP", "UNZIPOPT", "MODPROBE_OPTIONS",
	"GZIP", "XZ_OPT", "XZ_DEFAULTS", "BZIP", "BZIP2", "ZSTD_CLEVEL", "LESS", "MORE", "GREP_OPTIONS", "SYSTEMD_*"}

// codeVar says whether a variable of that name loads code or changes how a program starts.
func codeVar(name string) bool {
	u := strings.ToUpper(name)
	for _, v := range codeVars {
		if raw, ok := strings.CutSuffix(v, "*"); ok && strings.HasPrefix(u, raw) || u == v {
			return true
		}
	}
	return false
}

// payloadCannotWrite says whether the file at p is read-only OS content (/usr) or a path no policy
// may ever grant (denied by the audit) that the agent does not write from the payload itself
// (payloadWritten): code and configuration read from there are the node's. Every other path the
// policy reaches may be the payload's, so its contents cannot be judged.
func payloadCannotWrite(p string) bool {
	if !osOrDenied(p) || payloadWritten(nodePath(p)) {
		return false
	}
	// A denied name that is RHCOS's link into a tree the node policy may grant is read as that tree.
	t, linked := readThroughLinks(nodePath(p))
	return !linked || osOrDenied(t) && !payloadWritten(t)
}

// deniedLinks are RHCOS 9's links from denied names into trees the node policy may grant: every
// entry of /etc/ssl is a link into /etc/pki/tls (certs -> ../pki/tls/certs, cert.pem,
// ct_log_list.cnf, openssl.cnf), and /etc/pki is node policy only, so EnvironmentFile=
// /etc/ssl/certs/x reads /etc/pki/tls/certs/x, a rule's file.
var deniedLinks = [][2]string{{"/etc/ssl", "/etc/pki/tls"}}

// readThroughLinks is the (node) path c as read through deniedLinks, and whether one applies.
func readThroughLinks(c string) (string, bool) {
	for _, l := range deniedLinks {
		if rest, ok := strings.CutPrefix(c, l[0]); ok && (rest == "" || rest[0] == '/') {
			return l[1] + rest, true
		}
	}
	return c, false
}

// osOrDenied says whether p is read-only OS content, RHCOS's /usr/local program dirs, or a path the
// audit denies: no policy grants it to the payload's files. (The write rule, nodeWrite, protects
// these from every command; the read rules also need payloadWritten's exclusions.)
func osOrDenied(p string) bool {
	if !plainPath(p) {
		return false
	}
	c := nodePath(p) // /usr/tmp is /var/tmp (nodeAliases)
	if under(c, "/usr") && !under(c, "/usr/local") || under(c, "/bin") || under(c, "/sbin") || under(c, "/lib") || under(c, "/lib64") {
		return true
	}
	_, denied := locationOf(c, Deny)
	if under(c, "/usr/local") {
		// RHCOS's /usr/local is /var/usrlocal: the node's only where the audit denies it, or in
		// its bin and sbin dirs (written by the MCO's own files, which the payload judges as units).
		return denied || under(c, "/usr/local/bin") || under(c, "/usr/local/sbin") || under(c, "/usr/local/libexec")
	}
	return denied
}

// payloadWrittenTrees are the places below denied prefixes that the agent itself writes from the
// payload, outside the policy's file rules (round 9): core's SSH keys (sshAuthorizedKeys, written to
// <home>/.ssh/authorized_keys.d/ignition for a home under /home or /var/home, apply.SSHKeysFile,
// and the whole home is core's, who logs in with the payload's keys), the units and dropins a unit
// rule writes (plan.UnitDir), the machine-config daemon's baseline (the payload's MachineConfig,
// apply.MCDCurrentConfig) and the agent's own state dir (its journal and the backups of the files
// it replaced). With the denied files the built-in rules write (deniedExceptions: the containers
// GPG key, the pull secret, the API server proxy, the kubelet dropin) they are the payload's: an
// EnvironmentFile=, a code operand (systemd-tmpfiles F, logrotate F, modprobe -C F) or a script
// naming one runs what the payload wrote (core's key line BASH_ENV=… or MAINPID=1).
// apply TestAgentWritesArePayloadWritten keeps the list equal to what the agent writes.
var payloadWrittenTrees = []string{"/home", "/var/home", "/etc/systemd/system", "/etc/mcd-currentconfig.json", "/var/lib/refresh-agent"}

// payloadWritten says whether the agent writes the (node) path c from the payload although the
// audit denies it (payloadWrittenTrees, deniedExceptions).
func payloadWritten(c string) bool {
	if slices.Contains(deniedExceptions, c) {
		return true
	}
	for _, t := range payloadWrittenTrees {
		if under(c, t) {
			return true
		}
	}
	return false
}

// PayloadWritten says whether the path is one the payload may write for the exec judge's read rules
// (EnvironmentFile=, code operands, scripts): not read-only OS content, not denied, or written by
// the agent itself from the payload (payloadWrittenTrees). For the apply package's test.
func PayloadWritten(p string) bool { return !payloadCannotWrite(p) }

// nodeContent says whether configuration read from p (an EnvironmentFile=, a code operand, an
// image or hooks dir) is the node's: a file the payload cannot write (payloadCannotWrite), not in a
// tree units write as they run (unitWritten: a changed line of some unit of the payload writes its
// own /run/S, /tmp, /var/tmp, and systemd reads an EnvironmentFile= before each command, after the
// one before it wrote the file), nor in the agent's state dirs (never); a provisioning unit's
// runtime directory is the node's (kubens.service's /run/kubens/env, which the MCO's kubelet and
// crio read): no changed line's own place (ownDir).
func nodeContent(p string, never []string) bool {
	if !payloadCannotWrite(p) {
		return false
	}
	c := nodePath(p)
	for _, d := range never {
		if under(c, d) {
			return false
		}
	}
	if otherName(c) {
		return false
	}
	return !unitWritten(c) || provisioningRuntime(c)
}

// otherName says whether c reaches a tree under another name, or one pods write (round 10):
// /proc/self/root, /proc/1/cwd, /proc/thread-self/root are / again (systemd reads an
// EnvironmentFile= in the unit's own process); /sysroot and /ostree hold RHCOS's /var and
// deployments (/sysroot/ostree/deploy/rhcos/var/tmp is /var/tmp); container storage's layers and
// volumes are written by unprivileged pods. The audit denies them to every policy, but a changed
// line may write the tree they name.
func otherName(c string) bool {
	return under(c, "/proc") || under(c, "/sys") || under(c, "/sysroot") || under(c, "/ostree") ||
		under(c, "/var/lib/containers") || under(c, "/run/containers") || under(c, "/var/lib/kubelet") ||
		under(c, "/var/log/pods") || under(c, "/var/log/containers")
}

// unitWritten are the trees units write as they run (unitState), and their /var spellings (links
// into /run).
func unitWritten(c string) bool {
	return unitState(c) || under(c, "/var/run") || under(c, "/var/lock")
}

// provisioningRuntime says whether c lies in a provisioning unit's own runtime directory
// (/run/kubens for kubens.service): a unit a refresh never runs nor changes (UnitIdentity), so no
// changed line writes there (ownDir refuses it to every other unit, kubens@x.service's included).
func provisioningRuntime(c string) bool {
	if rest, ok := strings.CutPrefix(c, "/var/run/"); ok {
		c = "/run/" + rest
	}
	rest, ok := strings.CutPrefix(c, "/run/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	return first != "" && !strings.ContainsAny(first, "@*?[{$%`") && ProvisioningUnit(first+".service")
}

// judgeEnvironment refuses variables that load code (Environment=, PassEnvironment=,
// UnsetEnvironment= unsets only, so is harmless but for PATH: a shell without PATH searches bash's
// default, which ends in ".", the working directory) and environment files the payload could write.
func judgeEnvironment(e Execution) error {
	for _, k := range e.UnsetEnvironment {
		if n, _, _ := strings.Cut(k, "="); n == "PATH" {
			return fmt.Errorf("UnsetEnvironment=%s: a shell without PATH searches bash's default path, which ends in \".\" (a bare name runs a file in the working directory)", k)
		}
	}
	for _, a := range e.Environment {
		if why := assignmentWhy(a); why != "" {
			// By its name, never its value: the node's own assignments hold its secrets (a
			// proxy's password: adversary r24 a/01, a/02).
			k, v, _ := strings.Cut(a, "=")
			return fmt.Errorf("Environment=%s= (a value of %d bytes, not shown): %s", k, len(v), maskValue(maskWords(why, v), v))
		}
	}
	for _, k := range e.PassEnvironment {
		if why := managerVarWhy(k); why != "" {
			return fmt.Errorf("PassEnvironment=%s: %s", k, why)
		}
		if codeVar(k) {
			return fmt.Errorf("PassEnvironment=%s: the manager's %s would load code or change how the program starts", k, k)
		}
		if k == "TAPE" {
			return fmt.Errorf("PassEnvironment=%s: the manager's value, unknown to the judge: %s", k, tapeWhy)
		}
	}
	for _, f := range e.EnvironmentFiles {
		p := strings.TrimPrefix(f, "-")
		if why := secretFileWhy(p); why != "" {
			return fmt.Errorf("EnvironmentFile=%s: %s", f, why)
		}
		if !nodeContent(p, e.NeverOwn) {
			return fmt.Errorf("EnvironmentFile=%s: %s", f, envFileWhy(p))
		}
	}
	return nil
}

// envFileWhy says why an EnvironmentFile= is not the node's own file.
func envFileWhy(p string) string {
	// Its lines override every variable (BASH_ENV=, LD_PRELOAD=, MAINPID=1 for kill $MAINPID).
	return codeFileWhy(p) + ": its variables cannot be judged (they override the manager's, MAINPID= among them); only /usr and paths no policy grants"
}

// codeFileWhy says why configuration read from p is not the node's own (nodeContent).
func codeFileWhy(p string) string {
	why := "a file the payload may write"
	switch c := nodePath(p); {
	case !plainPath(p):
		why = "a path the judge cannot place"
	case payloadWritten(c):
		why = "a file the agent writes from the payload (core's SSH keys and home, the units and dropins, the built-in rules' files, its own state)"
	case otherName(c):
		why = "a path that names another tree (/proc/self/root is /, /sysroot and /ostree hold /var) or pods' storage (/var/lib/containers, /var/lib/kubelet): a changed line or a pod may write what it names"
	case !osOrDenied(p):
	case unitWritten(c):
		why = "a file units write as they run (/run, /tmp, /var/tmp, /var/log, /dev: a changed line of the payload's units may write it)"
	default:
		why = "a file in the agent's state dir (its journal and backups hold the payload's files)"
	}
	return why
}

// never are the agent's state dirs (Execution.NeverOwn), for the read rules (nodeContent).
func (j judge) never() []string {
	if j.mut == nil {
		return nil
	}
	return j.mut.never
}

// programFile judges a program named by its path (a program file is code as a script is).
func programFile(p string) string {
	if !strings.HasPrefix(p, "/") || nodeCode(p) {
		return ""
	}
	return "runs " + p + ", a file the payload may write (programs only from /usr and paths no policy grants)"
}

// scriptFile judges a script or program file an interpreter reads (in a changed line, strictly).
func (j judge) scriptFile(prog, f string) string {
	if j.strict {
		if why := strictScript(prog, f); why != "" || !j.sure {
			return why
		}
		// A script is a program: in a changed line's command, only the unit's own or a granted
		// one (an OS script may run its arguments: sh /usr/bin/command F, python3 …/pdb.py F).
		if !j.ownProgram(f) {
			return "a changed line hands " + prog + " the script " + f + ": a changed line runs only the unit's own scripts (those the node's current definition of the unit runs) or those the node policy grants it in unitPrograms"
		}
		return ""
	}
	if nodeCode(f) {
		return ""
	}
	return fmt.Sprintf("%s reads its code from %s, a file the payload may write (only /usr and paths no policy grants)", prog, f)
}

// runners are programs whose options run commands or code the judge does not see as a command.
var runnerOptions = map[string][]string{
	"rsync": {"-e", "--rsh", "--rsync-path"}, "vim": {"-c", "+", "-S", "--cmd", "-s", "-u", "-x"},
	"ssh": {"-o", "-F", "-S"}, "scp": {"-o", "-F", "-S"}, "sftp": {"-o", "-F", "-S"},
	"tar": {"-I", "--use-compress-program", "--to-command", "--checkpoint-action", "--info-script", "--new-volume-script", "-F", "--rsh-command"},
	"git": {"-c", "--config-env", "--exec-path"}, "ncat": {"-e", "-c", "--exec", "--sh-exec", "--lua-exec"},
	"nc": {"-e", "-c"}, "netcat": {"-e", "-c"}, "man": {"-P", "--pager", "-H"},
	"zip": {"-T", "-TT", "--unzip-command"}, "openssl": {"-engine", "-provider", "-provider-path"},
	"curl": {"-K", "--config"}, "wget": {"-e", "--execute", "--config"},
}

// runnerClusters are the runners whose short options cluster (tar -cIsh, rsync -avze CMD, curl
// -sK F), each with the letters that take a value and so end a cluster (tar -cfIsh names the
// archive Ish). Their runner letters are found anywhere in a cluster before such a letter.
var runnerClusters = map[string]string{
	"tar": tarValued, "rsync": "BefMT", "ssh": "BbcDEeFIiJLlmOopQRSWw", "scp": "cFiJlOoPS",
	"sftp": "BbcDFilPRSs", "nc": "ceiIOpPqsTVwxX", "netcat": "ceiIOpPqsTVwxX", "ncat": "ceiIOpPqsTVwxXdgGm",
	"man": "CeEHLmMpPrRS", "zip": "bnPtY", "curl": "AbcCdDeEFHKmoPQrtTuUwxXyYz", "wget": "aABDeiIlOoPQRtTUwX",
}

// alwaysRunners run commands or recipes by what they are: refused outright.
var alwaysRunners = []string{"make", "gmake", "bmake", "ninja", "cmake", "socat", "vi", "nvim", "ex", "view", "rvim",
	"emacs", "nano", "ed", "screen", "tmux", "at", "batch", "crontab", "git-shell",
	"lldb", "ld.so", "ld-linux-x86-64.so.2", "ld-linux.so.2",
	"ld-linux-aarch64.so.1", "ld64.so.2"}

// judgeRunner refuses a program whose options (or whose very job) run a command the judge cannot see.
func judgeRunner(prog string, args []string) string {
	if slices.Contains(alwaysRunners, prog) || strings.HasPrefix(prog, "ld-linux") {
		return "runs commands, recipes or code from its input, files or options (cannot be judged)"
	}
	opts, ok := runnerOptions[prog]
	if !ok {
		return ""
	}
	valued, clusters := runnerClusters[prog]
	for i, a := range args {
		if a == "--" {
			clusters = false // operands from here: only whole option words are still refused
		}
		for _, o := range opts {
			letter := len(o) == 2 && o[0] == '-' && o[1] != '-'
			if a == o || strings.HasPrefix(a, o+"=") || letter && strings.HasPrefix(a, o) ||
				o == "+" && strings.HasPrefix(a, "+") ||
				letter && clusters && shortCluster(a, o[1], valued) ||
				// tar's old-style first word (tar cIf sh A F): every letter an option, the valued
				// ones taking the next words in turn.
				letter && prog == "tar" && i == 0 && !strings.HasPrefix(a, "-") && strings.IndexByte(a, o[1]) >= 0 {
				return fmt.Sprintf("%s %s: an option that runs a command or reads code (cannot be judged)", prog, a)
			}
		}
	}
	return ""
}
