package apply

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// unitDirs are the directories systemd loads system units from whose links the judge reads (the
// generator directories hold what generators write at boot, not links a package or enable makes).
var unitDirs = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

// maxUnitDirEntries bounds the entries read of each unit directory.
const maxUnitDirEntries = 20000

// unitSuffixes are systemd's unit types.
var unitSuffixes = []string{".service", ".socket", ".target", ".path", ".timer", ".device", ".mount",
	".automount", ".swap", ".slice", ".scope"}

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
			if e.Type()&os.ModeSymlink == 0 || !isUnitName(name) {
				continue
			}
			target, err := os.Readlink(filepath.Join(dir, name))
			if err != nil || target == "/dev/null" {
				continue
			}
			base := path.Base(filepath.ToSlash(target))
			if base != name && isUnitName(base) {
				if _, seen := out[name]; !seen { // /etc before /run before /usr/lib, as systemd reads them
					out[name] = base
				}
			}
		}
	}
	return out
}

func isUnitName(n string) bool {
	for _, s := range unitSuffixes {
		if strings.HasSuffix(n, s) && len(n) > len(s) {
			return true
		}
	}
	return false
}
