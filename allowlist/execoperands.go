package allowlist

import (
	"regexp"
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

// numericWord is a wrapper's value that is surely no program (timeout 5s, nice 10, chrt 99).
var numericWord = regexp.MustCompile(`^[0-9][0-9.:,-]*[a-z]{0,3}$`)

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

// namedCode is the node's code a word names: an absolute path in it (after = : ,), ~ as HOME, or
// a relative path from each directory the script changed to; "" if none.
func (j judge) namedCode(w string) string {
	x, ok := j.expand(w)
	if !ok {
		return ""
	}
	if x == "~" || strings.HasPrefix(x, "~/") {
		x = j.homeDir() + strings.TrimPrefix(x, "~")
	}
	for _, p := range pathsIn(x) {
		if c := nodePath(p); codePath(c) {
			return c
		}
	}
	if strings.HasPrefix(x, "/") || strings.HasPrefix(x, "-") || strings.ContainsAny(x, "=: \t\n") || j.wd == nil {
		return ""
	}
	for _, d := range *j.wd {
		if c := nodePath(d + "/" + x); codePath(c) {
			return c
		}
	}
	return ""
}

// operandsNameCode says why the command names the node's program dirs as an operand of a program
// that may write them, or "".
func (j judge) operandsNameCode(prog string, args []string) string {
	if slices.Contains(operandReaders, prog) {
		return ""
	}
	runs := slices.Contains(wrappers, prog) && prog != "find" || slices.Contains(shells, prog) || interpreterName(prog) != ""
	prev := ""
	for i, a := range args {
		last := prev
		prev = a
		if runs && strings.ContainsAny(a, " \t\n") {
			continue // a script (sh -c, su -c, env -S): its commands are judged as commands
		}
		if runs && isAssignment(a) {
			continue
		}
		value := strings.HasPrefix(a, "-") || slices.Contains(wrapperPathValues, last) ||
			numericWord.MatchString(a) || strings.HasPrefix(last, "-") && !strings.Contains(last, "=")
		if runs && !value {
			// The program (or script) the wrapper runs: the words after it are its operands,
			// judged as that program's (unshare … mount --make-rshared /, timeout 5 sort -o …).
			return j.operandsNameCode(cmdName(a), args[i+1:])
		}
		if c := j.namedCode(a); c != "" {
			if runs && !strings.HasPrefix(a, "-") && !slices.Contains(wrapperPathValues, last) {
				return j.operandsNameCode(cmdName(a), args[i+1:]) // nice -n 5 /usr/local/bin/x
			}
			return "names the node's program dir " + c + " as an operand of " + prog + ", which may write it (only the program run, or an operand of a program that only reads: cat, grep, ls, test, sha256sum, …)"
		}
	}
	return ""
}
