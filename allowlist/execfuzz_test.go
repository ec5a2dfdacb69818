package allowlist_test

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openshift/refresh-agent/allowlist"
)

// judgeExecLine judges one Exec line as the plan does (systemd's splitting, then JudgeUnit).
func judgeExecLine(line string) (split bool, err error) {
	return judgeExecLineAs(line, false)
}

// judgeExecLineAs judges the line as one the payload changed (strict) or the node's own.
func judgeExecLineAs(line string, changed bool) (split bool, err error) {
	argvs, serr := allowlist.SplitExec(line)
	if serr != nil {
		return false, serr
	}
	marks := make([]bool, len(argvs))
	for i := range marks {
		marks[i] = changed
	}
	return true, allowlist.JudgeUnit(allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"},
		DefaultDependencies: true, Exec: argvs, Execution: allowlist.Execution{ExecChanged: marks}})
}

// judgeGranted judges the commands as a changed line of a unit granted every program they run
// (Execution.Programs: OwnPrograms, the most a unitPrograms grant gives).
func judgeGranted(argvs [][]string) error {
	marks := make([]bool, len(argvs))
	for i := range marks {
		marks[i] = true
	}
	return allowlist.JudgeUnit(allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"},
		DefaultDependencies: true, Exec: argvs, Execution: allowlist.Execution{ExecChanged: marks, Programs: allowlist.OwnPrograms(argvs)}})
}

// readOnlyProgram is, independently of the judge's tables, whether a program path is the node's:
// read-only OS content on RHCOS (under /usr but /usr/local, or /bin, /sbin, /lib, /lib64) or the
// node's own program dirs /usr/local/{bin,sbin,libexec}, with no pattern.
func readOnlyProgram(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "*?[{~$`%") {
		return false
	}
	c := path.Clean(p) + "/"
	if strings.HasPrefix(c, "/var/usrlocal/") {
		c = "/usr/local/" + strings.TrimPrefix(c, "/var/usrlocal/")
	}
	for _, d := range []string{"/usr/local/bin/", "/usr/local/sbin/", "/usr/local/libexec/"} {
		if strings.HasPrefix(c, d) && c != d {
			return true // the node's own program dirs: denied to every policy, written by no judged line
		}
	}
	if strings.HasPrefix(c, "/usr/local/") {
		return false
	}
	for _, d := range []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"} {
		if strings.HasPrefix(c, d) && c != d {
			return true
		}
	}
	return false
}

// FuzzExecJudge: no Exec line panics the judge; and, by rules that do not reuse the judge's tables:
// a line running a program named for power or the manager, or naming the SysRq trigger or
// /sys/power, is refused; a refused line stays refused behind a wrapper (env, nohup, nice,
// timeout) or after another command; and a line followed by a signal to PID 1 is refused.
func FuzzExecJudge(f *testing.F) {
	for _, s := range []string{
		"/usr/bin/myapp --config /etc/myapp/a.conf", "/bin/kill -HUP $MAINPID", "/bin/kill -INT 1",
		`/bin/sh -c "echo b > /proc/sysrq-trigger"`, `/bin/sh -c 'echo reboot | sh'`, "/usr/bin/systemctl --job-mode isolate start basic.target",
		`/bin/bash -c "echo cmVib290 | base64 -d | bash"`, "-@/usr/bin/systemctl argv0 reboot", `/bin/sh -c "x=$(reboot)"`,
		"/usr/bin/busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager StartUnit ss basic.target isolate",
		`/bin/sh -c '${A}${B}'`, `/bin/sh -c "cd /sys/power; echo mem > state"`, "/usr/bin/env -S 'kill -s INT 1'",
		`/usr/bin/awk 'BEGIN{system("x")}'`, `/usr/bin/sed -n '1e x' /etc/hostname`, `/bin/sh -c "a <<EOF` + "\n" + `b` + "\n" + `EOF"`,
		`/bin/sh -c "echo \"$(printf '%s' \"$(id)\")\" > /tmp/x"`, `/bin/sh -c '"'`, "\\x2fsbin\\x2freboot", `/bin/sh -c "$((1+2))"`,
		"podman run --rm -v /:/rootfs quay.io/x", "/usr/bin/mount --make-rshared /", "umount -R ${RUNTIME_DIRECTORY}",
		"/usr/local/bin/kubenswrapper /usr/bin/kubelet", "/usr/bin/sh -c 'cp /etc/x /usr/local/bin/ok; /usr/local/bin/ok'",
		"/usr/bin/rm -rf /run/myapp/x", "/usr/bin/chmod 0700 /var/lib/myapp", "/bin/sh -c echo>/run/myapp/x", "/usr/bin/rm -f /etc/x",
		"/usr/bin/env /tmp/x", "/usr/lib/../local/bin/x", "/usr/bin/podman run quay.io/x", "myapp", "/bin/sh -c '/usr/bin/true'",
		// round 12: the node's secrets (execsecrets.go)
		`/bin/sh -c "cat /etc/shadow > /tmp/iri-shadow-copy"`, "/bin/grep -q ^GUESS /etc/shadow", "/bin/cat /etc/sha*",
		`/bin/sh -c 'cd /etc && cat shadow'`, `/bin/sh -c 'cat "$(printf /etc/sha%sow d)"'`, "/usr/bin/tar -C /etc -cf /tmp/x shadow",
		`/bin/sh -c 'printf /etc/shadow | xargs cat'`, "/usr/bin/grep -r x /etc", "/bin/cat //etc/./gshadow-",
		`/bin/sh -c 'for f in /etc/myapp/*.conf; do cat "$f"; done'`,
		// round 13 c/04: nesting past MaxShellNesting, literal arithmetic nested and in a row
		`/bin/sh -c 'sh -c "sh -c \'` + strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70) + `\'"'`,
		`/bin/sh -c 'echo $((((1)))); ((2)); ((((3))))'`,
		// round 14 c/04: programs that attach to or act on other processes
		"/usr/bin/strace -p 1 -e inject=all:signal=INT", "/usr/bin/strace -fp1 -e inject=all:signal=INT",
		"/usr/bin/env /usr/bin/strace --attach=1", "/usr/bin/gdb -p 1", "/usr/bin/perf trace -p 1", "/usr/bin/ltrace -p 1",
		"/usr/bin/nsenter -t 1 -m /bin/true", "/usr/bin/prlimit --pid 1 --nofile=1:1", "/usr/bin/renice -n 19 -p 1",
		"/usr/bin/ionice -c 3 -p 1", "/usr/bin/chrt -o -p 0 1", "/usr/bin/taskset -cp 0 1", "/usr/bin/udevadm trigger --action=remove",
		"/usr/bin/strace -o /tmp/x /usr/bin/myapp",
	} {
		f.Add(s)
	}
	powerNames := []string{"reboot", "poweroff", "halt", "shutdown", "systemctl", "kexec", "busctl", "loginctl", "telinit"}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 4096 {
			return
		}
		ok, err := judgeExecLine(line)
		if !ok {
			return
		}
		argvs, _ := allowlist.SplitExec(line)
		for _, argv := range argvs {
			if len(argv) > 0 && slices.Contains(powerNames, path.Base(argv[0])) && err == nil {
				t.Fatalf("%q runs %s and was accepted", line, argv[0])
			}
			for _, a := range argv {
				c := path.Clean(a)
				if (c == "/proc/sysrq-trigger" || strings.HasPrefix(c, "/sys/power")) && err == nil {
					t.Fatalf("%q names %s and was accepted", line, c)
				}
			}
		}
		if strings.ContainsAny(line, "\\\"'") {
			return // wrapping a line with quotes or escapes would change how it splits
		}
		// (A first word with "=" is an assignment to env, not a command.)
		if tl := strings.TrimSpace(line); err != nil && tl != "" && !strings.ContainsRune("-@:+!|;", rune(tl[0])) &&
			!strings.Contains(strings.Fields(tl)[0], "=") {
			for _, w := range []string{"/usr/bin/env ", "/usr/bin/nohup ", "/usr/bin/nice -n 5 ", "/usr/bin/timeout 10 "} {
				if ok, werr := judgeExecLine(w + tl); ok && werr == nil {
					t.Fatalf("%q refused (%v) but accepted behind %q", line, err, w)
				}
			}
		}
		if ok, werr := judgeExecLine("/bin/true ; " + line); ok && werr == nil && err != nil {
			t.Fatalf("%q refused (%v) but accepted after another command", line, err)
		}
		if ok, werr := judgeExecLine(line + " ; /bin/kill -INT 1"); ok && werr == nil {
			t.Fatalf("%q followed by kill -INT 1 accepted", line)
		}
		// Round 14 c/04: a tracer whose first argument attaches it to a process (strace -p N) is
		// refused in the node's line and in a changed one whose unit runs (or is granted) every
		// program the line runs.
		for _, argv := range argvs {
			if len(argv) > 1 && slices.Contains([]string{"strace", "ltrace", "gdb"}, path.Base(argv[0])) && argv[1] == "-p" {
				if err == nil {
					t.Fatalf("%q attaches %s to a process and was accepted", line, argv[0])
				}
				if gerr := judgeGranted(argvs); gerr == nil {
					t.Fatalf("%q attaches %s to a process and was accepted as a changed line with its programs granted", line, argv[0])
				}
			}
		}
		// A changed line is judged strictly: never accepted with a program path outside read-only OS
		// content, and never accepted where the node's own line is refused.
		_, serr := judgeExecLineAs(line, true)
		if err != nil && serr == nil {
			t.Fatalf("%q refused as the node's (%v) but accepted as a changed line", line, err)
		}
		for _, argv := range argvs {
			// (A name without a path resolves through the search path: the node's own programs.)
			if len(argv) > 0 && serr == nil && strings.Contains(argv[0], "/") && !readOnlyProgram(argv[0]) {
				t.Fatalf("%q runs %s, outside read-only OS content, and was accepted as a changed line", line, argv[0])
			}
			// Issue 27 class 3: with no own or granted programs, a changed line runs at depth 0
			// only programs of the documented modeled set (docs/security.md).
			if len(argv) > 0 && serr == nil && !documentedModeled(argv[0]) {
				t.Fatalf("%q runs %s, no modeled program, and was accepted as a changed line of a unit with no own programs", line, argv[0])
			}
			// Issue 27 class 3: an accepted changed line's rm, rmdir and chmod operands and its
			// shell's redirections lie in myapp.service's own places.
			if serr == nil {
				for _, p := range mutatedForFuzz(argv) {
					if !ownPlaceForFuzz(p) {
						t.Fatalf("%q changes %s, outside myapp.service's own places, and was accepted as a changed line", line, p)
					}
				}
			}
		}
	})
}

// fuzzRedirection is a shell redirection to an absolute path (>, >>, >|, <>, &>, >&).
var fuzzRedirection = regexp.MustCompile(`(?:>>?\|?|<>|&>>?|>&)\s*(/[^\s;&|()<>]+)`)

// mutatedForFuzz are, read independently of the judge, the plain absolute paths a command surely
// mutates: rm's and rmdir's operands, chmod's after its mode, the redirections of sh -c's script.
func mutatedForFuzz(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	plain := func(w string) bool { return strings.HasPrefix(w, "/") && !strings.ContainsAny(w, "$`%*?[{~\\") }
	var out []string
	switch n := path.Base(argv[0]); n {
	case "rm", "rmdir", "chmod":
		mode := n != "chmod"
		for _, a := range argv[1:] {
			if a == "--" || strings.HasPrefix(a, "-") {
				if a == "--" || strings.HasPrefix(a, "--reference") {
					return out // what follows is not read here
				}
				continue
			}
			if !mode {
				mode = true
				continue
			}
			if plain(a) {
				out = append(out, a)
			}
		}
	case "sh", "bash":
		if len(argv) > 2 && argv[1] == "-c" && !strings.ContainsAny(argv[2], "#$`\\") {
			for _, m := range fuzzRedirection.FindAllStringSubmatch(argv[2], -1) {
				if plain(m[1]) {
					out = append(out, m[1])
				}
			}
		}
	}
	return out
}

// ownPlaceForFuzz is, from docs/security.md and not the judge's code, whether a path lies in
// myapp.service's own places.
func ownPlaceForFuzz(p string) bool {
	c := path.Clean(p)
	for _, a := range [][2]string{{"/var/run", "/run"}, {"/usr/tmp", "/var/tmp"}} {
		if c == a[0] || strings.HasPrefix(c, a[0]+"/") {
			c = a[1] + strings.TrimPrefix(c, a[0])
		}
	}
	if c == "/dev/null" || c == "/dev/stdout" || c == "/dev/stderr" || strings.HasPrefix(c, "/tmp/") || strings.HasPrefix(c, "/var/tmp/") {
		return true
	}
	for _, base := range []string{"/run/", "/var/lib/", "/var/cache/", "/var/log/", "/etc/"} {
		if rest, ok := strings.CutPrefix(c, base); ok {
			first, _, _ := strings.Cut(rest, "/")
			if first == "myapp" || strings.HasPrefix(first, "myapp-") || strings.HasPrefix(first, "myapp.") {
				return true
			}
		}
	}
	return false
}

// documentedModeled is, from docs/security.md's list and not the judge's tables, whether a program
// is one a changed line may run without the unit running it or the policy granting it.
func documentedModeled(argv0 string) bool {
	n := strings.ToLower(path.Base(argv0))
	if argv0 == "kubenswrapper" || path.Clean(argv0) == "/usr/local/bin/kubenswrapper" || path.Clean(argv0) == "/var/usrlocal/bin/kubenswrapper" {
		return true
	}
	for _, p := range []string{"python", "pypy", "perl", "ruby", "node", "lua", "php", "tclsh", "wish", "expect", "rscript",
		"pwsh", "guile", "gdb", "jrunscript", "osascript", "julia", "deno", "bc", "dc", "platform-python"} {
		if n == p || strings.HasPrefix(n, p) && strings.Trim(strings.TrimPrefix(n, p), "0123456789.-") == "" {
			return true
		}
	}
	return slices.Contains([]string{
		// inert
		"echo", "printf", "logger", "sleep", "true", "false", "test", "[", "cat", "ls", "stat", "mkdir", "rmdir", "rm",
		"chmod", "chown", "chgrp", "grep", "egrep", "fgrep", "head", "tail", "wc", "date", "hostname", "id", "sha256sum",
		"sha1sum", "md5sum", "restorecon", "readlink", "realpath", "basename", "dirname", "which", "file", "du",
		"df", "sync", "usleep", "printenv", "pidof", "uname", "nproc", "whoami", "tr", "cut",
		// writers
		"tee", "dd", "cp", "mv", "install", "ln", "truncate", "sponge", "touch", "shred", "rsync", "tar", "cpio", "unzip",
		// judged
		"sed", "gsed", "awk", "gawk", "mawk", "nawk", "find", "xargs", "kill", "systemd-notify", "systemd-run",
		// shells and their words
		"sh", "bash", "dash", "ksh", "mksh", "ash", "yash", "lksh", "posh", "rbash",
		"for", "in", "case", "esac", "fi", "done", "[[", "]]", ":", "cd", "pushd", "popd", "exit", "return", "shift", "break",
		"continue", "read", "wait", "umask", "ulimit", "unset", "set", "export", "local", "declare", "typeset", "readonly",
		"trap", "pwd", "times", "getopts", "let", "mapfile", "readarray", "type", "{", "}",
		// container engines (read-only and stop commands)
		"podman", "docker", "nerdctl", "buildah", "skopeo", "ctr", "crictl", "runc", "crun", "ctr-enhanced", "cri-o", "crio",
		// modeled wrappers
		"env", "nice", "ionice", "timeout", "nohup", "setsid", "stdbuf", "chrt", "taskset", "exec", "command",
	}, n)
}
