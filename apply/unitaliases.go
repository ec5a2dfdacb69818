package apply

import (
	"os"
	"path"
	"path/filepath"

	"github.com/openshift/refresh-agent/allowlist"
)

// unitDirs are the directories systemd loads system units from whose links the judge reads (the
// generator directories hold what generators write at boot, not links a package or enable makes).
var unitDirs = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

// maxUnitDirEntries bounds the entries read of each unit directory.
const maxUnitDirEntries = 20000

// NodeUnitAliases reads the node's unit links under rootDir: every entry of a unit directory named
// like a unit that is a symlink to a unit of another name (a mask, a link to /dev/null, is none). An
// unreadable directory is skipped: its links are judged by name, as without a root.
func NodeUnitAliases(rootDir string) map[string]string {
	out := map[string]string{}
	for _, d := range unitDirs {
		dir := filepath.Join(rootDir, d)
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		entries, _ := f.ReadDir(maxUnitDirEntries)
		f.Close()
		for _, e := range entries {
			name := e.Name()
			if e.Type()&os.ModeSymlink == 0 || !allowlist.IsUnitName(name) {
				continue
			}
			target, err := os.Readlink(filepath.Join(dir, name))
			if err != nil || target == "/dev/null" {
				continue
			}
			base := path.Base(filepath.ToSlash(target))
			if base != name && allowlist.IsUnitName(base) {
				if _, seen := out[name]; !seen { // /etc before /run before /usr/lib, as systemd reads them
					out[name] = base
				}
			}
		}
	}
	return out
}
