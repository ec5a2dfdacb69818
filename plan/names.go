package plan

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The names the transaction can handle: the one rule the plan (and so `diff` and `apply --dry-run`)
// and the transaction's node checks (actions) both apply, so that no name is planned that the real
// apply cannot write. The transaction keeps its side files (the new contents, the original's backup,
// its restore name) beside the target, named SidePrefix + 24 hex digits + "-" + the kind, whatever
// the target's name: a target may have any name a filesystem holds, and its side files fit too.

// SidePrefix starts every side file's name; SideNameLen is the longest one's length.
const (
	SidePrefix  = ".refresh-agent-"
	SideNameLen = len(SidePrefix) + 24 + len("-restore")
)

// SideDirName is the hidden directory that holds the side files of the targets in a directory
// whose reader takes every entry but directories, whatever its name (sideDirs).
const SideDirName = ".refresh-agent-sides"

// sideDirs are the directories whose reader takes every entry that is not a directory, dot files
// and any suffix included: p11-kit's trust sources (trust/token.c loader_load_directory loads every
// non-directory of source/, anchors/ and blocklist/). A removed CA's backup beside it there stayed
// trusted by the update-ca-trust the refresh ran (adversary r23 d/02); in a hidden subdirectory it
// is skipped. Readers that pick files by suffix (crio's *.conf, registries.d's *.yaml, certs.d's
// *.crt) never take a side file's name.
var sideDirs = []string{"/etc/pki/ca-trust/source", "/etc/pki/ca-trust/source/anchors", "/etc/pki/ca-trust/source/blocklist", "/etc/pki/ca-trust/source/blacklist"}

// SideDir is the directory that holds the side files of the targets in dir: dir itself, or its
// SideDirName subdirectory where dir's reader takes every entry.
func SideDir(dir string) string {
	for _, d := range sideDirs {
		if dir == d {
			return dir + "/" + SideDirName
		}
	}
	return dir
}

// Linux's limits: a name of at most 255 bytes, a path of at most 4095 (PATH_MAX less the NUL).
const (
	NameMax = 255
	PathMax = 4095
)

// MaxPathComponents is the most components a managed path may have, and MaxDirs the most distinct
// parent directories a plan's writes may have (every one a directory a node may have to create and
// journal): bounds of the plan's and the transaction's work per path, checked before anything per
// directory is built. A real payload's paths have fewer than 12 components (adversary r13 c/05: 200
// paths of 1 900 missing directories each made the transaction build a 1.5 GB would-be journal).
const (
	MaxPathComponents = 128
	MaxDirs           = 10000
)

// MaxComponentsTogether bounds the components of all of a plan's managed paths together: every
// node check walks each path one component at a time from the root (no symlink on the way), some
// fifteen walks a file, so the checks cost the paths' total depth. 700 files 120 directories deep
// (a 3.6 KB ConfigMap) took 38 s of CPU to plan on every node that had them, 9 000 over 12 minutes
// (adversary r15 d/02); the walks are linear now, and this bounds their sum near a few seconds. A
// real payload's few hundred files have a few thousand components.
const MaxComponentsTogether = 100_000

// Ancestors calls fn with each parent directory of p (absolute and clean), innermost first, "/"
// excluded, until fn returns false. Each is a substring of p: no path is built or cleaned, so a
// walk costs the path's length, not its length times its depth.
func Ancestors(p string, fn func(dir string) bool) {
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		if !fn(p[:i]) {
			return
		}
	}
}

// ErrName marks a managed path the transaction cannot handle: a name or path longer than the
// filesystem holds (the target's, or its side files'), or side files it would share with another
// target.
var ErrName = errors.New("a name the transaction cannot handle")

// ErrReserved marks a managed path named like the agent's own side files.
var ErrReserved = errors.New("the name is reserved for the agent's temp and backup files")

// sideKinds are the side files' kinds; legacy (journal version 2) side files were the target's name
// with ".refresh-agent-" and the kind appended.
var (
	sideKinds = []string{"tmp", "backup", "restore"}
	sideRE    = regexp.MustCompile(`^\.refresh-agent-[0-9a-f]{24}-(tmp|backup|restore)$`)
)

// ReservedName reports whether any component of p is named like a side file of some other target
// (of this version or of a version 2 journal still to recover): the name itself, or a directory on
// the way (adversary round 9, 09: /etc/docker/certs.d/.refresh-agent-<x's hash>-tmp/ca.crt beside
// /etc/docker/certs.d/x made the directory where x's temp goes: planned, then failing x's refresh
// for good). Names are compared as a case-insensitive (casefold) directory compares them: by
// Unicode case folding, with default-ignorable code points dropped (older kernels' casefolding
// ignores them), so .REFRESH-AGENT-…-TMP is reserved too.
func ReservedName(p string) bool {
	_, ok := reservedPart(p)
	return ok
}

// reservedPart returns the first component of p named like a side file.
func reservedPart(p string) (string, bool) {
	for _, part := range strings.Split(p, "/") {
		if reservedComponent(part) {
			return part, true
		}
	}
	return "", false
}

// reservedComponent reports whether one name is a side file's, as a casefold directory sees it.
func reservedComponent(name string) bool {
	if !strings.Contains(strings.ToLower(name), "refresh-agent-") && isASCII(name) {
		return false // the common case, decided without folding
	}
	f := foldName(name)
	if sideRE.MatchString(f) || f == SideDirName {
		return true
	}
	for _, k := range sideKinds {
		if strings.HasSuffix(f, ".refresh-agent-"+k) {
			return true
		}
	}
	return false
}

// foldName maps each rune of name to the lowercase ASCII letter its case-folding orbit holds
// (K, the Kelvin sign, to k; ſ, the long s, to s), or else to the smallest rune of that orbit, and
// drops the default-ignorable code points (format characters such as U+200D, variation selectors,
// the other default ignorables).
func foldName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			continue
		}
		least, ascii := r, rune(-1)
		for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
			if f < least {
				least = f
			}
			if f < utf8.RuneSelf {
				ascii = unicode.ToLower(f)
			}
			if f == r {
				break
			}
		}
		if ascii >= 0 {
			least = ascii
		}
		b.WriteRune(least)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// CheckName says why the transaction cannot handle a managed file at p (absolute and clean), or
// nil: a name over NameMax bytes, a path (its own or a side file's) over PathMax, or a name reserved
// for side files. The error names the path (shortened when it is too long to print) and wraps
// ErrName or ErrReserved.
func CheckName(p string) error {
	if len(p) > PathMax {
		return fmt.Errorf("%s: %w: the path is %d bytes long (at most %d)", shorten(p), ErrName, len(p), PathMax)
	}
	if n := strings.Count(p, "/"); n > MaxPathComponents {
		return fmt.Errorf("%s: %w: more than %d path components (%d)", shorten(p), ErrName, MaxPathComponents, n)
	}
	if n := len(SideDir(path.Dir(p))) + 1 + SideNameLen; n > PathMax {
		return fmt.Errorf("%s: %w: its side files' paths would be %d bytes long (at most %d)", shorten(p), ErrName, n, PathMax)
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > NameMax {
			return fmt.Errorf("%s: %w: a name is %d bytes long (at most %d)", shorten(p), ErrName, len(part), NameMax)
		}
	}
	if part, ok := reservedPart(p); ok {
		// A managed file named like another's backup could overwrite it and a rollback would
		// restore the wrong bytes; a directory named like another's temp takes its place.
		if part == path.Base(p) {
			return fmt.Errorf("%s: %w", p, ErrReserved)
		}
		dir := p[:strings.Index(p, "/"+part+"/")+1+len(part)]
		return fmt.Errorf("%s: %w: its directory %s is named like one, where the agent keeps the side files of the files in %s", p, ErrReserved, dir, path.Dir(dir))
	}
	return nil
}

// shorten keeps an over-long path printable: its start and its end.
func shorten(p string) string {
	if len(p) <= 512 {
		return p
	}
	return strings.ToValidUTF8(p[:240], "") + "..." + strings.ToValidUTF8(p[len(p)-240:], "")
}
