package allowlist

import (
	"slices"
	"strings"
)

// Round 9 (copied links): a changed line makes a symbolic link only where the judge reads its
// target (ln's judge, which refuses a link to the node's code). A copy that keeps its sources'
// links, or the extraction of an archive the payload may have written, makes links whose targets
// the judge cannot see, and a later write below the copy lands where one points: cp -R
// /etc/systemd /run/myapp/s copies multi-user.target.wants/kubelet.service, a link to
// /etc/systemd/system/kubelet.service, and `echo … > /run/myapp/s/system/multi-user.target.wants/
// kubelet.service` then rewrites kubelet's unit. As root an archive also makes its device nodes.

// copiedLinks says why, in a changed line, cp, rsync, tar or unzip makes links (or device nodes)
// the judge cannot see, or "".
func copiedLinks(prog string, args []string) string {
	switch prog {
	case "cp":
		if cpKeepsLinks(args) {
			return "cp -R, -r, -a, -P or -d copies its sources' symbolic links as links, whose targets the judge cannot see: a later write below the copy lands where one points (-L copies what they point to; refused in a changed line)"
		}
	case "rsync":
		if longGiven(args, "--keep-dirlinks") || anyShort(args, 'K', "eBfTM") {
			return "rsync -K writes through the destination's links to directories, whose targets the judge cannot see (refused in a changed line)"
		}
		if rsyncKeepsLinks(args) {
			return "rsync -l or -a copies its sources' symbolic links as links, whose targets the judge cannot see: a later write below the copy lands where one points (-L copies what they point to, --safe-links drops those leaving the tree; refused in a changed line)"
		}
	case "tar", "unzip":
		if !extracts(prog, args) {
			return ""
		}
		archives := tarValues(args, 'f', "--file")
		if prog == "unzip" {
			archives = unzipArchive(args)
		}
		if len(archives) == 0 {
			return prog + " extracts an archive from its input or $TAPE: its symbolic links and device nodes are ones the judge cannot see (refused in a changed line)"
		}
		for _, a := range archives {
			if !readOnlyOS(a) {
				return prog + " extracts " + a + ", which the payload or a command may write: its symbolic links (and, as root, device nodes) are ones the judge cannot see, and a later write below them lands where they point (an archive of read-only OS content, /usr but /usr/local, is the node's; refused in a changed line)"
			}
		}
	}
	return ""
}

// cpKeepsLinks says whether cp copies symbolic links as links: -P, -d, --no-dereference or -a
// (--archive), or -R/-r without -L, as the last choice among them (GNU cp: the last wins; -H
// follows only the command line's links).
func cpKeepsLinks(args []string) bool {
	// GNU getopt_long: these take the next word when given without "="; --backup, --preserve,
	// --reflink and --context take a value only after "=", so the reading is exact.
	recursive, deref := false, "" // deref: -L always, -P never, -H the operands only
	eachOption(args, "St", []string{"--suffix", "--target-directory", "--no-preserve", "--sparse"}, func(o string, _ int) {
		switch o {
		case "-L", "-P", "-H":
			deref = o
		case "--dereference":
			deref = "-L"
		case "-d", "--no-dereference":
			deref = "-P"
		case "-a", "--archive":
			deref, recursive = "-P", true
		case "-R", "-r", "--recursive":
			recursive = true
		}
	})
	return deref == "-P" || recursive && deref != "-L"
}

// rsyncKeepsLinks says whether rsync copies symbolic links as links: -l (--links) or -a, not undone
// by --no-links, and without -L (--copy-links), --safe-links, --copy-unsafe-links or --munge-links.
func rsyncKeepsLinks(args []string) bool {
	// rsync has many valued long options (--exclude PATTERN): a word after a long option given
	// without "=" may be its value, so a -L there (`--exclude -L`) does not count as one, unless
	// that option is one of rsyncFlags. Links count wherever they may be an option.
	links, safe := false, false
	eachOption(args, rsyncValued, nil, func(o string, i int) {
		switch o {
		case "-l", "-a", "--links", "--archive":
			links = true
		case "--no-links", "--no-l":
			links = false
		case "-L", "--copy-links", "--safe-links", "--copy-unsafe-links", "--munge-links":
			safe = safe || !rsyncMayBeValue(args, i)
		}
	})
	return links && !safe
}

// rsyncValued are rsync's short options that take a value; rsyncFlags long options that take none.
const rsyncValued = "eBfTM@"

var rsyncFlags = []string{"--archive", "--recursive", "--links", "--no-links", "--no-l", "--copy-links", "--safe-links",
	"--copy-unsafe-links", "--munge-links", "--perms", "--no-perms", "--no-p", "--times", "--verbose", "--delete"}

// rsyncMayBeValue says whether word i of args may be the value of the word before it: a long
// option without "=" that rsyncFlags does not list, or a short cluster ending in a valued option.
func rsyncMayBeValue(args []string, i int) bool {
	if i == 0 {
		return false
	}
	p := args[i-1]
	if strings.HasPrefix(p, "--") {
		return !strings.Contains(p, "=") && !slices.Contains(rsyncFlags, p)
	}
	return len(p) > 1 && p[0] == '-' && strings.IndexByte(rsyncValued, p[len(p)-1]) >= 0
}

// eachOption calls each with the options before "--" in their order: a long one by its name
// (--name of --name=value), each flag of a short cluster as -X, with the index of its word. A short
// option of valued, and a long one of valuedLong without "=", take the rest of the word or the
// next word as their value.
func eachOption(args []string, valued string, valuedLong []string, each func(o string, word int)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return
		}
		if name, _, has := strings.Cut(a, "="); strings.HasPrefix(a, "--") {
			each(name, i)
			if !has && slices.Contains(valuedLong, name) {
				i++
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		for k := 1; k < len(a); k++ {
			each("-"+a[k:k+1], i)
			if strings.IndexByte(valued, a[k]) >= 0 {
				if k == len(a)-1 {
					i++ // the next word is the option's value
				}
				break // the rest of the word is the option's value
			}
		}
	}
}

// unzipArchive is unzip's archive: its first operand (-d DIR, -x and -P PASSWORD's words aside).
func unzipArchive(args []string) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d" || a == "-P":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return []string{a}
		}
	}
	return nil
}
