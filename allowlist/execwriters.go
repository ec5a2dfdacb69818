package allowlist

import (
	"slices"
	"strconv"
	"strings"
)

// Round 8 (the writers' options): options of the modeled programs that make a changed line's write
// land outside the places its words name, set a program's environment, or set a mode the judge
// cannot see. Each is refused in a changed line (strictModeled); the abbreviations of the long
// options are rewritten to them first (execopts.go).

// shortCluster says whether the cluster of short options a (-al, -sr) holds the flag f, reading the
// options that take a value (valued) as ending the cluster.
func shortCluster(a string, f byte, valued string) bool {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return false
	}
	for k := 1; k < len(a); k++ {
		if a[k] == f {
			return true
		}
		if strings.IndexByte(valued, a[k]) >= 0 {
			return false
		}
	}
	return false
}

// anyShort says whether some option word before "--" holds the short flag f.
func anyShort(args []string, f byte, valued string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if shortCluster(a, f, valued) {
			return true
		}
	}
	return false
}

// longGiven says whether a long option (or its --opt=value form) is given before "--".
func longGiven(args []string, names ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(names, name) {
			return true
		}
	}
	return false
}

// longValues are the values of a long option (--opt=V or --opt V).
func longValues(args []string, name string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			out = append(out, v)
		} else if a == name && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

// writerOptions judges, in a changed line, the options of cp, rsync, xargs, tar, cpio, unzip, chmod,
// install and mkdir that the destination models do not cover.
func writerOptions(prog string, args []string) string {
	switch prog {
	case "cp":
		// cp -l and cp -s make links, as ln does: the source is written through the destination.
		if longGiven(args, "--link", "--symbolic-link") || anyShort(args, 'l', "St") || anyShort(args, 's', "St") {
			return "cp -l or -s makes links to its sources (as ln does: a later write to the link writes the source; refused in a changed line)"
		}
		// The mode cp keeps from its source (-p, -a, --preserve=mode|all, --attributes-only with them)
		// may be set-user-ID: the judge cannot see the source's mode.
		keeps := longGiven(args, "--archive") || anyShort(args, 'a', "St") || anyShort(args, 'p', "St")
		for _, v := range longValues(args, "--preserve") {
			keeps = keeps || v == "" || strings.Contains(v, "mode") || strings.Contains(v, "all")
		}
		if slices.Contains(args, "--preserve") {
			keeps = true
		}
		dropped := false
		for _, v := range longValues(args, "--no-preserve") {
			dropped = dropped || strings.Contains(v, "mode") || strings.Contains(v, "all")
		}
		if keeps && !dropped {
			return "cp -p, -a or --preserve keeps its source's mode, which may be set-user-ID (the judge cannot see it; --no-preserve=mode drops it; refused in a changed line)"
		}
	case "rsync":
		if longGiven(args, "--link-dest", "--copy-dest", "--compare-dest", "--hard-links") || anyShort(args, 'H', "eBfTM") {
			return "rsync --link-dest, --copy-dest, --compare-dest or -H links or copies files of another directory (refused in a changed line)"
		}
		for _, v := range longValues(args, "--chmod") {
			if slices.ContainsFunc(strings.Split(v, ","), func(c string) bool { return setID(strings.TrimLeft(c, "DF")) }) {
				return "rsync --chmod=" + v + " sets the set-user-ID or set-group-ID bit (refused in a changed line)"
			}
		}
		if (longGiven(args, "--archive", "--perms", "--executability") || anyShort(args, 'a', "eBfTM") || anyShort(args, 'p', "eBfTM")) &&
			!longGiven(args, "--no-perms", "--no-p") {
			return "rsync -a or -p keeps its sources' modes, which may be set-user-ID (the judge cannot see them; --no-perms drops them; refused in a changed line)"
		}
	case "xargs":
		if longGiven(args, "--process-slot-var") {
			return "xargs --process-slot-var sets a variable in its commands' environment (PATH=0: which program runs; refused in a changed line)"
		}
	case "tar":
		if longGiven(args, "--one-top-level", "--transform", "--xform", "--keep-directory-symlink", "--index-file", "--volno-file",
			"--listed-incremental", "--incremental", "--overwrite-dir", "--recursive-unlink") || anyShort(args, 'g', "bCfFgHIKLNTVX") {
			return "tar's --one-top-level, --transform, --keep-directory-symlink, --index-file, --volno-file, -g or --recursive-unlink chooses where it writes beyond -C (refused in a changed line)"
		}
		for _, v := range longValues(args, "--mode") {
			if setID(v) {
				return "tar --mode=" + v + " sets the set-user-ID or set-group-ID bit (refused in a changed line)"
			}
		}
		keeps := longGiven(args, "--same-permissions", "--preserve-permissions", "--preserve") || anyShort(args, 'p', "bCfFgHIKLNTVX") ||
			len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.Contains(args[0], "p") // tar xpf
		if extracts(prog, args) && (keeps || !longGiven(args, "--no-same-permissions")) {
			return "tar extracting as root keeps the archive's modes, set-user-ID ones too (--no-same-permissions drops them; refused in a changed line)"
		}
	case "cpio":
		if extracts(prog, args) {
			return "cpio -i or -p keeps the archive's modes, set-user-ID ones too (refused in a changed line)"
		}
	case "unzip":
		if anyShort(args, 'K', "dxP") {
			return "unzip -K keeps the archive's set-user-ID and set-group-ID bits (refused in a changed line)"
		}
	case "chmod":
		if longGiven(args, "--reference") {
			return "chmod --reference takes the mode of a file the judge cannot see, which may be set-user-ID (refused in a changed line)"
		}
	}
	return ""
}

// setID says whether a symbolic or octal mode sets the set-user-ID or set-group-ID bit: 4xxx,
// 2xxx, 04755; u+s, +s, g=s, a+rs; +4000, =6755 (coreutils' operator followed by octal digits). An
// empty mode (none given) sets nothing.
func setID(m string) bool {
	if n, err := strconv.ParseUint(m, 8, 32); err == nil {
		return n&0o6000 != 0
	}
	for _, clause := range strings.Split(m, ",") {
		for k := strings.IndexAny(clause, "+="); k >= 0; {
			rest := clause[k+1:]
			e := strings.IndexAny(rest, "+-=")
			if e < 0 {
				e = len(rest)
			}
			perm := rest[:e]
			if strings.Contains(perm, "s") {
				return true
			}
			if n, err := strconv.ParseUint(perm, 8, 32); err == nil && n&0o6000 != 0 {
				return true
			}
			if e == len(rest) {
				break
			}
			rest = rest[e:]
			clause = rest
			k = strings.IndexAny(clause, "+=")
		}
	}
	return false
}
