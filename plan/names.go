package plan

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
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

// Linux's limits: a name of at most 255 bytes, a path of at most 4095 (PATH_MAX less the NUL).
const (
	NameMax = 255
	PathMax = 4095
)

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

// ReservedName reports whether p could be a side file of some other target (of this version or of
// a version 2 journal still to recover).
func ReservedName(p string) bool {
	if sideRE.MatchString(path.Base(p)) {
		return true
	}
	for _, k := range sideKinds {
		if strings.HasSuffix(p, ".refresh-agent-"+k) {
			return true
		}
	}
	return false
}

// CheckName says why the transaction cannot handle a managed file at p (absolute and clean), or
// nil: a name over NameMax bytes, a path (its own or a side file's) over PathMax, or a name reserved
// for side files. The error names the path (shortened when it is too long to print) and wraps
// ErrName or ErrReserved.
func CheckName(p string) error {
	if len(p) > PathMax {
		return fmt.Errorf("%s: %w: the path is %d bytes long (at most %d)", shorten(p), ErrName, len(p), PathMax)
	}
	if n := len(path.Dir(p)) + 1 + SideNameLen; n > PathMax {
		return fmt.Errorf("%s: %w: its side files' paths would be %d bytes long (at most %d)", shorten(p), ErrName, n, PathMax)
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > NameMax {
			return fmt.Errorf("%s: %w: a name is %d bytes long (at most %d)", shorten(p), ErrName, len(part), NameMax)
		}
	}
	if ReservedName(p) {
		// A managed file named like another's backup could overwrite it and a rollback would
		// restore the wrong bytes.
		return fmt.Errorf("%s: %w", p, ErrReserved)
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
