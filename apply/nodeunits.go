package apply

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/openshift/refresh-agent/allowlist"
)

// loadDirs are the directories the system manager loads units and dropins from, in its order of
// priority (systemd.unit(5), systemd 252's lookup paths; /lib for a root that does not merge /usr).
var loadDirs = []string{"/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
	"/run/systemd/generator.early", "/etc/systemd/system", "/etc/systemd/system.attached", "/run/systemd/system",
	"/run/systemd/system.attached", "/run/systemd/generator", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
	"/lib/systemd/system", "/run/systemd/generator.late"}

// Bounds of what ReadNodeUnit reads: a unit with more, or larger, files is one the judge cannot read.
const (
	maxNodeUnitBytes   = 1 << 20
	maxNodeUnitDropins = 64
	maxDropinDirFiles  = 256
)

// ReadNodeUnit reads the node's definition of the unit under rootDir, as the system manager loads
// it: the first file of that name in its load directories (for an instance without a file of its
// own, its template's; a mask, a link to /dev/null, is an empty unit), then the *.conf dropins of
// NAME.d, the template's, the dash-prefix ones (foo-.service.d for foo-bar.service) and the type's
// (service.d), a name in a directory of higher priority hiding the same name below it, applied in
// the order of their names. false: the node has no such unit, the file is a link to another unit
// (an alias: judged as the unit it links to), or the judge cannot read it within the root and its
// bounds.
func ReadNodeUnit(rootDir, name string) (allowlist.NodeUnit, bool) {
	if !allowlist.IsUnitName(name) || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return allowlist.NodeUnit{}, false
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return allowlist.NodeUnit{}, false
	}
	defer root.Close()
	names := []string{name}
	tmpl, _, instance := allowlist.Instance(name)
	if instance {
		names = append(names, tmpl)
	}
	var out allowlist.NodeUnit
	found := false
	for _, n := range names {
		for _, d := range loadDirs {
			text, ok, err := readUnitFile(root, path.Join(d, n), n)
			if err != nil {
				return allowlist.NodeUnit{}, false
			}
			if ok {
				out.Path, out.Contents, found = path.Join(d, n), text, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return allowlist.NodeUnit{}, false
	}
	dropins, ok := readDropins(root, dropinDirNames(name, tmpl, instance))
	if !ok {
		return allowlist.NodeUnit{}, false
	}
	out.Dropins = dropins
	return out, true
}

// dropinDirNames are the names of the dropin directories systemd reads for the unit, most specific
// first (src/shared/dropin.c: the unit's, the template's, each dash prefix, the type's).
func dropinDirNames(name, tmpl string, instance bool) []string {
	out := []string{name + ".d"}
	if instance {
		out = append(out, tmpl+".d")
	}
	ext := path.Ext(name)
	base, _, _ := strings.Cut(strings.TrimSuffix(name, ext), "@")
	for i := len(base) - 1; i > 0; i-- {
		if base[i] == '-' {
			out = append(out, base[:i+1]+ext+".d")
		}
	}
	return append(out, strings.TrimPrefix(ext, ".")+".d")
}

// readUnitFile reads a unit file of the given name at p (a path on the node): false when there is
// none or it is a link to a unit of another name; a mask reads as an empty unit.
func readUnitFile(root *os.Root, p, name string) (string, bool, error) {
	rp := strings.TrimPrefix(p, "/")
	target, err := linkAt(root, rp)
	switch {
	case os.IsNotExist(err) || isNotDir(err):
		return "", false, nil
	case err != nil:
		return "", false, err
	case target == "/dev/null":
		return "", true, nil
	case target != "" && path.Base(filepath.ToSlash(target)) != name:
		return "", false, nil // an alias: the unit it links to (NodeUnitAliases)
	}
	data, err := readBounded(root, followed(rp, target), maxNodeUnitBytes)
	if err != nil {
		return "", false, err
	}
	return string(data), true, nil
}

// readDropin reads a dropin at p (a path on the node), following a link as systemd does (false:
// a link to /dev/null, which masks it).
func readDropin(root *os.Root, p string) (string, bool, error) {
	rp := strings.TrimPrefix(p, "/")
	target, err := linkAt(root, rp)
	if err != nil || target == "/dev/null" {
		return "", false, err
	}
	data, err := readBounded(root, followed(rp, target), maxNodeUnitBytes)
	return string(data), err == nil, err
}

// linkAt is the target of the link at rp inside the root, "" when it is no link.
func linkAt(root *os.Root, rp string) (string, error) {
	fi, err := root.Lstat(rp)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", err
	}
	return root.Readlink(rp)
}

// followed is the path inside the root to read for rp, a link to target: an absolute target is
// read inside the root (a relative one, or none, is rp itself: the root follows it).
func followed(rp, target string) string {
	if path.IsAbs(target) {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return rp
}

// readDropins reads the *.conf files of the dropin directories named, in every load directory.
func readDropins(root *os.Root, dirNames []string) ([]allowlist.NodeDropin, bool) {
	seen := map[string]bool{}
	var out []allowlist.NodeDropin
	for _, d := range loadDirs {
		for _, dn := range dirNames {
			dir := path.Join(d, dn)
			f, err := root.Open(strings.TrimPrefix(dir, "/"))
			if err != nil {
				if os.IsNotExist(err) || isNotDir(err) {
					continue
				}
				return nil, false
			}
			entries, err := f.ReadDir(maxDropinDirFiles + 1)
			f.Close()
			if err != nil && len(entries) == 0 {
				continue // not a directory
			}
			if len(entries) > maxDropinDirFiles {
				return nil, false
			}
			for _, e := range entries {
				n := e.Name()
				if !strings.HasSuffix(n, ".conf") || seen[n] {
					continue
				}
				seen[n] = true
				p := path.Join(dir, n)
				text, ok, err := readDropin(root, p)
				if err != nil {
					return nil, false
				}
				if !ok {
					continue // a link to /dev/null: masked, nothing read
				}
				if len(out) >= maxNodeUnitDropins {
					return nil, false
				}
				out = append(out, allowlist.NodeDropin{Name: n, Path: p, Contents: text})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, true
}

// readBounded reads a regular file of at most max bytes inside the root.
func readBounded(root *os.Root, rp string, max int64) ([]byte, error) {
	f, err := root.Open(rp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, fs.ErrInvalid
	}
	buf := make([]byte, fi.Size())
	n, err := f.ReadAt(buf, 0)
	if int64(n) != fi.Size() {
		return nil, err
	}
	return buf, nil
}

// isNotDir says whether the error is ENOTDIR (a component of the path is a file).
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
