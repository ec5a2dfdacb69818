package apply

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// maxUnitDirEntries bounds the entries read of each unit directory.
const maxUnitDirEntries = 20000

// NodeUnitAliases reads the node's unit links under rootDir: every entry of a directory of the
// manager's unit search path (plan.UnitSearchPath, the one NodeUnitsAt reads: /etc/systemd/system.control,
// /run/systemd/transient, /usr/local/lib/systemd/system and the generators' too, round 11 units 01)
// named like a unit that is a symlink to a unit of another name (a mask, a link to /dev/null, is
// none), a template's link too (foo@.service -> bar@.service: every instance is bar@'s). The first
// link of a name in search order is the one kept. The directories are read inside the root (a
// directory link leaving it is not followed). An unreadable directory is skipped: its links are
// judged by name, as without a root.
func NodeUnitAliases(rootDir string) map[string]string {
	out := map[string]string{}
	r, err := os.OpenRoot(rootDir)
	if err != nil {
		return out
	}
	defer r.Close()
	for _, d := range plan.UnitSearchPath() {
		rel := filepath.FromSlash(strings.TrimPrefix(d, "/"))
		f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO never blocks (r21 c/04)
		if err != nil {
			continue
		}
		entries, _ := f.ReadDir(maxUnitDirEntries) // what was read, even if the rest fails
		f.Close()
		for _, e := range entries {
			name := e.Name()
			if e.Type()&os.ModeSymlink == 0 || !allowlist.IsUnitName(name) {
				continue
			}
			target, err := r.Readlink(filepath.Join(rel, name))
			if err != nil || target == "/dev/null" {
				continue
			}
			base := path.Base(filepath.ToSlash(target))
			if base != name && allowlist.IsUnitName(base) {
				if _, seen := out[name]; !seen { // the first in search order, as systemd reads them
					out[name] = base
				}
			}
		}
	}
	return out
}
