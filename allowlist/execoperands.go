package allowlist

import (
	"slices"
	"strings"
)

// The node's writable program code as an operand (round-5 adversary F3). A list of writers cannot
// be complete (sort -o, uniq IN OUT, find -fprintf, split, xxd -r, iconv -o, openssl -out, gpg -o,
// alternatives --install, sed -i, chmod/chown/setfacl, …), so the rule is a mechanism: in every
// judged line, a word naming the node's program dirs that nodeProgram trusts although they are
// writable at run time (/usr/local/{bin,sbin,libexec}, RHCOS's /var/usrlocal, and root's home
// /root = /var/roothome), or a directory above them (/, /usr, /usr/local, /var, /var/usrlocal), is
// refused unless the program only reads its operands (operandReaders), or the word is the program
// a wrapper, shell or interpreter runs (timeout 5 /usr/local/bin/x, bash /usr/local/bin/x.sh).
// The other paths the audit denies (the kubelet's /etc/kubernetes/kubelet.conf, which the MCS's
// kubelet line hands to kubenswrapper) stay under the writers list (writesNodeCode) and the
// table of programs whose file operands are code (codeOperands): the kubelet reads them, and a
// changed kubelet line is one the judge must accept.

// writableCodeRoots are the node's program dirs (and root's home) that are writable at run time.
var writableCodeRoots = []string{"/usr/local/bin", "/usr/local/sbin", "/usr/local/libexec", "/root"}

// operandReaders only read their operands (or print them): they may name the node's program dirs.
var operandReaders = []string{"cat", "head", "tail", "grep", "egrep", "fgrep", "zgrep", "wc", "cmp", "diff", "stat",
	"ls", "test", "[", "[[", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "md5sum", "b2sum",
	"cksum", "sum", "file", "readlink", "realpath", "basename", "dirname", "echo", "printf", "true", "false",
	"which", "type", "logger", "sleep", "systemd-notify", "kill", "cd", "pushd", "popd",
	// judged on their own: mount points by judgeMount; restorecon sets only the policy's default
	// labels (the MCS's kubelet line: restorecon -ri … /usr/local/bin/kubenswrapper).
	"mount", "umount", "restorecon"}

// wrapperValueOptions are wrapper options whose value is the next word (nice -n 5, runuser -u core,
// timeout -s KILL): never the program the wrapper runs.
var wrapperValueOptions = []string{"-n", "-u", "-g", "-c", "-p", "-s", "-k", "-t", "-C", "-S", "-w", "-E", "-o", "-a",
	"--adjustment", "--user", "--group", "--signal", "--kill-after", "--chdir", "--unset", "--pid", "--cpu-list",
	"--class", "--classdata", "--output", "--arg-file", "--setenv", "--nice", "--propagation", "--setgroups",
	"--map-user", "--map-group", "--map-users", "--map-groups", "-G", "--setuid", "--setgid", "-R", "--root", "--wd"}

// interpreterValueOptions are an interpreter's options whose value is the next word (python -W
// ignore, -X dev).
var interpreterValueOptions = []string{"-W", "-X", "-Q"}

// wrapperPositionals are how many operands a wrapper takes before its program (timeout DURATION,
// chrt PRIORITY, taskset MASK, flock FILE).
var wrapperPositionals = map[string]int{"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1}

// codePath says whether the clean, node-mapped path is the node's writable program code or a
// directory above it.
func codePath(c string) bool {
	for _, r := range writableCodeRoots {
		if under(c, r) || under(r, c) {
			return true
		}
	}
	return false
}

// homeDir is the directory the shell's ~ and a bare cd reach: the unit's HOME, or root's.
func (j judge) homeDir() string {
	if h := j.env["HOME"]; h != "" {
		return h
	}
	return "/root"
}

// withHome is w with its references to HOME ($HOME, ${HOME}, nothing else: not $HOMEX, which the
// shell reads as another variable) the manager's HOME=/root.
func (j judge) withHome(w string) string {
	return varRef.ReplaceAllStringFunc(w, func(m string) string {
		if refName(m) == "HOME" {
			return j.homeDir()
		}
		return m
	})
}

// namedCode is the node's code a word names: an absolute path in it (after = : ,), ~ as HOME, or
// a relative path from each directory the script changed to; "" if none.
func (j judge) namedCode(w string) string {
	if _, set := j.env["HOME"]; !set && strings.Contains(w, "HOME") {
		// The manager gives a system unit HOME=/root: $HOME is root's home, not an unknown.
		w = j.withHome(w)
	}
	x, ok := j.expand(w)
	if !ok {
		return ""
	}
	if x == "~" || strings.HasPrefix(x, "~/") {
		x = j.homeDir() + strings.TrimPrefix(x, "~")
	} else if strings.HasPrefix(x, "~") {
		return x // ~user: a home the judge does not resolve (~root is /root)
	}
	words := []string{x}
	if strings.Contains(x, "{") {
		// /usr/{local,}: the brace's words, before pathsIn reads its comma as a list's.
		bw, ok := braceWords(x, 64)
		if !ok {
			return x
		}
		words = append(words, bw...)
	}
	for _, w := range words {
		for _, p := range pathsIn(w) {
			if c := j.codeNamed(p); c != "" {
				return c
			}
		}
	}
	if strings.HasPrefix(x, "/") || strings.HasPrefix(x, "-") || strings.ContainsAny(x, "=: \t\n") || j.wd == nil {
		return ""
	}
	for i, d := range *j.wd {
		if !j.strict && i < j.unitWD && nodePath(d) == nodePath(j.homeDir()) {
			// The node's own unit run in its home (a user manager reports its home as the working
			// directory): any word of any program would be a file below it (date +%s%N).
			continue
		}
		if c := j.codeNamed(d + "/" + x); c != "" {
			return c
		}
	}
	return ""
}

// codeNamed is the node's code (or a directory above it) the absolute path names, a pattern or
// brace word by every name it may match (namedPaths: /usr/loca[l], /u?r/local), or "".
func (j judge) codeNamed(p string) string {
	paths, ok := j.namedPaths(p)
	if !ok {
		return p // more brace words than the judge lists, or too costly: named as code, refused
	}
	for _, n := range paths {
		if c := nodePath(n); codePath(c) {
			if n != p {
				return c + " (" + p + " may name it)"
			}
			return c
		}
	}
	return ""
}

// operandsNameCode says why the command names the node's program dirs as an operand of a program
// that may write them, or "".
func (j judge) operandsNameCode(prog string, args []string) string {
	if runsContainers(prog) || slices.Contains(operandReaders, prog) || slices.Contains(imageRunners, prog) {
		// Container engines and image runners are judged by judgeImages: a changed line runs none,
		// an unchanged one is the node's own (the MCO's firstboot unit: podman run -v /:/rootfs).
		return ""
	}
	runs := slices.Contains(wrappers, prog) && prog != "find" || slices.Contains(shells, prog) || interpreterName(prog) != ""
	prev := ""
	inline := false // an interpreter given code inline (perl -pi -e …): its operands are files it reads or writes
	positionals := wrapperPositionals[prog]
	if prog == "taskset" && (slices.Contains(args, "-c") || slices.Contains(args, "--cpu-list")) {
		positionals = 0
	}
	for i, a := range args {
		last := prev
		prev = a
		if n := interpreterName(prog); n != "" && strings.HasPrefix(a, "-") {
			for _, f := range interpreters[n] {
				if len(f) == 1 && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], f) || a == f || a == "-"+f {
					inline = true
				}
			}
		}
		if runs && strings.ContainsAny(a, " \t\n") {
			continue // a script (sh -c, su -c, env -S): its commands are judged as commands
		}
		if runs && isAssignment(a) {
			continue
		}
		value := strings.HasPrefix(a, "-")
		switch {
		case slices.Contains(wrappers, prog):
			value = value || slices.Contains(wrapperPathValues, last) || slices.Contains(wrapperValueOptions, last)
		case interpreterName(prog) != "":
			value = value || slices.Contains(interpreterValueOptions, last)
		}
		if runs && !value && positionals > 0 {
			positionals-- // timeout's duration, flock's lock file: judged as an operand below
			value = true
		} else if runs && !value && !inline {
			// The program (or script) the wrapper runs: the words after it are its operands,
			// judged as that program's (unshare … mount --make-rshared /, timeout 5 sort -o …).
			return j.operandsNameCode(cmdName(a), args[i+1:])
		}
		if c := j.namedCode(a); c != "" {
			return "names the node's program dir " + c + " as an operand of " + prog + ", which may write it (only the program run, or an operand of a program that only reads: cat, grep, ls, test, sha256sum, …)"
		}
	}
	return ""
}
