package allowlist

import (
	"slices"
	"strings"
)

// Programs whose file operands are code (round-5 adversary F2): a file they execute, load, or read
// as configuration that runs commands or writes any path as root. In every line, changed or not,
// such a file may not be one the payload may write (payloadCannotWrite), nor a path the judge
// cannot resolve; the refusal names the program, the option and the path.

// codeOperand is what a program reads as code: the values of opts, and with operands every word
// that is no option (and no option's value).
type codeOperand struct {
	opts     []string
	operands bool
	what     string // what the file is to the program
}

// valueOptions are options whose value, in the next word, is no code file (tmpfiles' --prefix,
// logrotate's state file, ldconfig's cache): skipped with it.
var valueOptions = map[string][]string{
	"systemd-tmpfiles": {"--prefix", "--exclude-prefix"}, "systemd-sysctl": {"--prefix"},
	"logrotate": {"-s", "--state", "-l", "--log"}, "ldconfig": {"-C"}, "insmod": {},
}

// codeOperands is the table: one row a program (names as cmdName gives them).
var codeOperands = map[string]codeOperand{
	// kernel.core_pattern=|CMD and kernel.modprobe run a program as root.
	"systemd-sysctl": {nil, true, "kernel settings (core_pattern runs a program as root)"},
	// A tmpfiles.d file writes, links, copies and chmods any path as root.
	"systemd-tmpfiles": {[]string{"--replace", "--root", "--image"}, true, "a tmpfiles.d file (writes, links and chmods any path as root)"},
	"systemd-sysusers": {[]string{"--replace", "--root", "--image"}, true, "a sysusers.d file (users and groups, uid 0 included)"},
	// An install line runs its command through sh.
	"modprobe": {[]string{"-C", "--config", "-d", "--dirname"}, false, "module configuration (install lines run commands as root)"},
	"depmod":   {[]string{"-C", "--config", "-b", "--basedir"}, false, "where kernel modules are found"},
	"insmod":   {nil, true, "a kernel module"},
	// postrotate/prerotate/firstaction scripts.
	"logrotate": {[]string{"-m", "--mail"}, true, "logrotate configuration or mail command (its scripts run as root)"},
	// sed's e command runs a shell; gawk's -E/-f/-i/-l files are programs and extensions.
	"sed":  {[]string{"-f", "--file"}, false, "a sed script (its e command runs a shell)"},
	"gsed": {[]string{"-f", "--file"}, false, "a sed script (its e command runs a shell)"},
	"awk":  {[]string{"-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"}, false, "an awk program or extension"},
	"gawk": {[]string{"-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"}, false, "an awk program or extension"},
	"mawk": {[]string{"-f"}, false, "an awk program"}, "nawk": {[]string{"-f"}, false, "an awk program"},
	// A PKCS#11 provider is a shared library dlopen()ed into the program.
	"ssh-keygen": {[]string{"-D"}, false, "a PKCS#11 library (loaded as code)"},
	"ssh-add":    {[]string{"-s", "-S", "-e"}, false, "a PKCS#11 library or security key provider (loaded as code)"},
	// run-parts runs every executable of the directory.
	"run-parts": {nil, true, "a directory of programs it runs"},
	// ldconfig -f's file and its directory operands decide which libraries every process loads.
	"ldconfig": {[]string{"-f", "-r"}, true, "the loader's library directories (every process's libraries)"},
	// The loader runs its operand as a program.
	"ld.so": {nil, true, "a program (the loader runs it)"}, "ld-linux-x86-64.so.2": {nil, true, "a program (the loader runs it)"},
	"ld-linux-aarch64.so.1": {nil, true, "a program (the loader runs it)"}, "ld64.so.2": {nil, true, "a program (the loader runs it)"},
	// make's recipes, keepalived's and haproxy's check and notify scripts run as root.
	"make":       {[]string{"-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir"}, false, "a makefile (its recipes run commands)"},
	"keepalived": {[]string{"-f", "--use-file"}, false, "keepalived configuration (notify and check scripts run as root)"},
	"haproxy":    {[]string{"-f"}, false, "haproxy configuration (external checks and lua run code)"},
	"openssl":    {[]string{"-engine", "-provider-path", "-config"}, false, "an engine, provider or configuration (loaded as code)"},
	// Round-6 adversary F3: macro and query languages that run a shell, tracing scripts that run
	// as root in the kernel's view, and root daemons whose configuration grants root.
	"m4":          {nil, true, "an m4 program (syscmd and esyscmd run a shell)"},
	"sqlite3":     {[]string{"-init", "-cmd"}, false, "sqlite3 commands (.shell and .system run a shell)"},
	"bpftrace":    {nil, true, "a bpftrace program (system() runs a command as root)"},
	"stap":        {nil, true, "a SystemTap script (embedded C and system() as root)"},
	"dbus-daemon": {[]string{"--config-file"}, false, "a bus configuration (it names the programs the bus activates as root)"},
	"sshd":        {[]string{"-f", "-o"}, false, "sshd configuration (who may log in as root, with what key)"},
}

// codeOperandWhy says why the command hands a program a file it runs as code that the payload may
// write, or "".
func (j judge) codeOperandWhy(prog string, args []string) string {
	if n := interpreterName(prog); n == "python" || n == "pypy" {
		return j.pythonModule(prog, args)
	}
	if prog == "sqlite3" {
		for _, a := range args {
			if t := strings.TrimSpace(a); strings.HasPrefix(t, ".") && hasPrefixAny(t, ".read", ".shell", ".system", ".load", ".once", ".output") {
				return prog + " " + short(a) + ": a dot command that reads a file as commands, runs a shell, loads code or writes a file (cannot be judged)"
			}
		}
	}
	if prog == "awk" || prog == "gawk" {
		for _, a := range args {
			if strings.Contains(a, "@include") || strings.Contains(a, "@load") {
				return prog + " " + short(a) + ": the program includes or loads a file as code (@include, @load), which the judge cannot see"
			}
		}
	}
	row, ok := codeOperands[prog]
	if !ok {
		return ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		opt := ""
		switch {
		case a == "--":
			if row.operands {
				for _, o := range args[i+1:] {
					if why := j.codeFile(prog, "", o, row.what); why != "" {
						return why
					}
				}
			}
			return ""
		case slices.Contains(row.opts, name) && hasVal:
			opt = name
		case slices.Contains(row.opts, a) && i+1 < len(args):
			opt, val = a, args[i+1]
			i++
		case len(a) > 2 && a[0] == '-' && a[1] != '-' && slices.Contains(row.opts, a[:2]):
			opt, val = a[:2], a[2:] // -C/etc/x: the value in the option's word
		case slices.Contains(valueOptions[prog], a):
			i++ // the option's value, no code
			continue
		case strings.HasPrefix(a, "-"):
			continue
		case row.operands:
			opt, val = "", a
		default:
			continue
		}
		if why := j.codeFile(prog, opt, val, row.what); why != "" {
			return why
		}
	}
	return ""
}

// codeFile judges one file a program reads as code.
func (j judge) codeFile(prog, opt, f, what string) string {
	x, ok := j.expand(f)
	named := strings.TrimSpace(prog + " " + opt)
	if !ok || hasGlob(x) || strings.HasPrefix(x, "~") {
		return named + " " + f + ": reads " + what + " from a path the judge cannot resolve"
	}
	if !strings.HasPrefix(x, "/") {
		return named + " " + f + ": reads " + what + " from a relative path (the unit's or a script's working directory) the judge does not pin to the node's own files"
	}
	if !nodeContent(x, j.never()) {
		return named + " " + f + ": reads " + what + " from " + cleanPath(x) + ", " + codeFileWhy(x)
	}
	return ""
}

// pythonRunners are the modules that run a file as a script or inline code as a program: refused
// with -m in every line.
var pythonRunners = []string{"pdb", "cprofile", "profile", "trace", "runpy", "timeit", "code", "doctest", "unittest",
	"pydoc", "idlelib", "test", "venv", "ensurepip", "pip", "zipapp", "site"}

// pythonModule judges python's -m: pdb, cProfile, profile, trace, runpy run a file as a script,
// timeit and code run inline code (pythonRunners, refused in every line). In a changed line no
// module runs at all (noModule, execlocal.go: json.tool IN OUT writes OUT).
func (j judge) pythonModule(prog string, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return "" // the script: judged as one
		}
		if strings.HasPrefix(a, "--") {
			continue
		}
		// python's one-letter options: -c, -m, -W and -X take a value, the rest of the word or
		// the next word (python3 -W ignore -m pdb F: ignore is -W's).
		for k := 1; k < len(a); k++ {
			switch a[k] {
			case 'c':
				return "" // inline code (judgeInterpreter)
			case 'm':
				mod := a[k+1:]
				if mod == "" && i+1 < len(args) {
					mod = args[i+1]
				}
				if slices.Contains(pythonRunners, strings.ToLower(strings.SplitN(mod, ".", 2)[0])) {
					return prog + " -m " + mod + ": the module runs a file as a script or inline code the judge cannot see"
				}
				return ""
			case 'W', 'X':
				if k+1 == len(a) {
					i++
				}
				k = len(a)
			}
		}
	}
	return ""
}
