package plan

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/openshift/refresh-agent/allowlist"
)

// The system manager's unit search path, in its order (systemd.unit(5), "Unit File Load Path"):
// a unit's fragment is the first file of its name found, its drop-ins are gathered from every
// directory. /lib/systemd/system is /usr/lib/systemd/system on RHCOS; read in case it is not.
var unitSearchPath = []string{
	"/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
	"/run/systemd/generator.early", UnitDir, "/etc/systemd/system.attached", "/run/systemd/system",
	"/run/systemd/system.attached", "/run/systemd/generator", "/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system", "/lib/systemd/system", "/run/systemd/generator.late",
}

// UnitSearchPath is the system manager's unit search path, in its order: every reader of the
// node's units (NodeUnitsAt, apply.NodeUnitAliases) reads these directories, so a link in one the
// plan does not read cannot make a unit another unit to the manager only (round 11, units 01).
func UnitSearchPath() []string { return slices.Clone(unitSearchPath) }

const (
	// maxNodeUnitFile bounds the bytes read of one unit file or drop-in on the node.
	maxNodeUnitFile = 1 << 20
	// maxNodeDirEntries bounds the entries read of one drop-in or .wants/ directory.
	maxNodeDirEntries = 1000
	// maxNodeLinkHops bounds the links followed from a unit's name to its file.
	maxNodeLinkHops = 8
	// maxNodeUnitReads bounds the distinct unit names one reader (one plan) reads: a payload naming
	// 40 000 instances as dependencies made every node read the unit directories 40 000 times,
	// minutes per node before any pacing slot (round 10). A name past it is not read: judged as
	// one the judge cannot read (an instance refused, a unit by its name).
	maxNodeUnitReads = 2048
)

// NodeUnitsAt reads the node's unit files under root (apply's --root, the host's / in the pod),
// as the system manager loads them: allowlist.NodeUnitReader. Reads are cached for the reader's life.
func NodeUnitsAt(root string) allowlist.NodeUnitReader {
	return &nodeUnits{root: root, cache: map[string]nodeUnitRead{}}
}

type nodeUnits struct {
	root  string
	mu    sync.Mutex
	cache map[string]nodeUnitRead
	// what every unit file and drop-in of the node reads (nodeReads), once read.
	readsDone bool
	reads     []allowlist.NodeRead
	readsErr  error
	// deps: who names whom in the node's files (dependents), once read.
	deps *nodeDependents
	// fs is the root opened for one read: nothing is read outside it, through any link.
	fs *os.Root
}

type nodeUnitRead struct {
	u   allowlist.NodeUnitDef
	ok  bool
	err error
}

func (n *nodeUnits) ReadUnit(name string) (allowlist.NodeUnitDef, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, seen := n.cache[name]; seen {
		return r.u, r.ok, r.err
	}
	if len(n.cache) >= maxNodeUnitReads {
		return allowlist.NodeUnitDef{}, false, fmt.Errorf("unit %s: more than %d unit names read for one plan: too costly to judge", name, maxNodeUnitReads)
	}
	r, err := os.OpenRoot(n.root)
	if err != nil {
		return allowlist.NodeUnitDef{}, false, err
	}
	n.fs = r
	u, ok, err := n.read(name, 0)
	r.Close()
	n.fs = nil
	n.cache[name] = nodeUnitRead{u, ok, err}
	return u, ok, err
}

// onNode is p, a clean absolute path on the node, as a name inside the opened root.
func (n *nodeUnits) onNode(p string) string {
	rel := strings.TrimPrefix(path.Clean("/"+p), "/")
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

func (n *nodeUnits) read(name string, hops int) (allowlist.NodeUnitDef, bool, error) {
	if !allowlist.IsUnitName(name) || strings.ContainsAny(name, "/\x00") {
		return allowlist.NodeUnitDef{}, false, fmt.Errorf("unit %q: not a unit name", name)
	}
	u := allowlist.NodeUnitDef{Name: name}
	found := false
	names := []string{name}
	if tmpl, ok := templateOf(name); ok {
		names = append(names, tmpl)
	}
	// The name's own files first, in every directory, then its template's (unit_file_find_fragment).
	for _, nm := range names {
		for _, dir := range unitSearchPath {
			p := path.Join(dir, nm)
			fi, err := n.fs.Lstat(n.onNode(p))
			if err != nil {
				continue
			}
			found = true
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, err := n.fs.Readlink(n.onNode(p))
				if err != nil {
					return u, true, fmt.Errorf("%s: %w", p, err)
				}
				if target == "/dev/null" {
					u.Fragments = append(u.Fragments, allowlist.NodeUnitFile{Path: p, Name: nm, Masked: true})
					continue
				}
				if real, ok := linkedUnit(name, nm, path.Base(target)); ok && len(u.Fragments) == 0 {
					// An alias: the unit is the one linked to, with its own files.
					if hops >= maxNodeLinkHops {
						return u, true, fmt.Errorf("%s: more than %d links", p, maxNodeLinkHops)
					}
					return n.read(real, hops+1)
				}
				target = n.resolve(p, target)
				text, err := n.readFile(target)
				if err != nil {
					return u, true, fmt.Errorf("%s: %w", p, err)
				}
				u.Fragments = append(u.Fragments, allowlist.NodeUnitFile{Path: p, Name: nm, Contents: text})
				continue
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			text, err := n.readFile(p)
			if err != nil {
				return u, true, fmt.Errorf("%s: %w", p, err)
			}
			u.Fragments = append(u.Fragments, allowlist.NodeUnitFile{Path: p, Name: nm, Contents: text})
		}
	}
	dropins, err := n.dropins(dropinDirNames(names))
	if err != nil {
		return u, true, err
	}
	u.Dropins = dropins
	found = found || len(dropins) > 0
	for _, d := range []struct {
		suffix string
		list   *[]string
	}{{".wants", &u.Wants}, {".requires", &u.Requires}, {".upholds", &u.Upholds}} {
		for _, dir := range unitSearchPath {
			for _, nm := range names {
				entries, err := n.readDir(path.Join(dir, nm+d.suffix))
				if err != nil {
					continue
				}
				for _, e := range entries {
					if allowlist.IsUnitName(e.Name()) && !slices.Contains(*d.list, e.Name()) {
						*d.list = append(*d.list, e.Name())
						found = true
					}
				}
			}
		}
	}
	return u, found, nil
}

// realPath is the node path p names once every link on the way is followed (inside the root, at
// most maxNodeLinkHops of them; past that, p).
func (n *nodeUnits) realPath(p string) string {
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	cur, hops := "/", 0
	for i := 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		fi, err := n.fs.Lstat(n.onNode(next))
		if err != nil {
			return path.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		t, err := n.fs.Readlink(n.onNode(next))
		if hops++; err != nil || hops > maxNodeLinkHops {
			return p
		}
		parts = append(strings.Split(strings.TrimPrefix(n.resolve(next, t), "/"), "/"), parts[i+1:]...)
		cur, i = "/", -1
	}
	return cur
}

// unitOptionsOf are systemd's reading of a text as the lexer's options.
func unitOptionsOf(opts []sysOption) []*unit.UnitOption {
	out := make([]*unit.UnitOption, len(opts))
	for i, o := range opts {
		out[i] = &unit.UnitOption{Section: o.section, Name: o.key, Value: o.value}
	}
	return out
}

// resolve is the node path a link at p (on the node) to target points to.
func (n *nodeUnits) resolve(p, target string) string {
	if !path.IsAbs(target) {
		target = path.Join(path.Dir(p), target)
	}
	return path.Clean(target)
}

var (
	errNotRegular     = errors.New("not a regular file")
	errTooManyEntries = errors.New("more entries than the judge reads")
)

// readFile reads a node file (following links inside the root, as the node would), bounded.
func (n *nodeUnits) readFile(p string) (string, error) {
	p = n.realPath(p) // a directory on the way may be an absolute link, which the root's own resolution refuses
	for range maxNodeLinkHops {
		fi, err := n.fs.Lstat(n.onNode(p))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		t, err := n.fs.Readlink(n.onNode(p))
		if err != nil {
			return "", err
		}
		p = n.resolve(p, t)
	}
	f, err := n.fs.OpenFile(n.onNode(p), os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO never blocks the plan (r21 c/04)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", errNotRegular
	}
	b, err := io.ReadAll(io.LimitReader(f, maxNodeUnitFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxNodeUnitFile {
		return "", fmt.Errorf("larger than %d bytes", maxNodeUnitFile)
	}
	return string(b), nil
}

func (n *nodeUnits) readDir(p string) ([]os.DirEntry, error) {
	f, err := n.fs.OpenFile(n.onNode(n.realPath(p)), os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO never blocks the plan (r21 c/04)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(maxNodeDirEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// dropins gathers the .conf files of the drop-in directories (names, most specific first) in every
// directory of the search path: a file name seen first (an earlier directory of the search path,
// then a more specific drop-in directory) hides the same name later; the result is in file name
// order, as systemd applies them.
func (n *nodeUnits) dropins(dirNames []string) ([]allowlist.NodeUnitFile, error) {
	seen := map[string]bool{}
	var out []allowlist.NodeUnitFile
	for _, dir := range unitSearchPath {
		for _, dn := range dirNames {
			d := path.Join(dir, dn)
			entries, err := n.readDir(d)
			if err != nil {
				continue
			}
			for _, e := range entries {
				name := e.Name()
				if !strings.HasSuffix(name, ".conf") || seen[name] {
					continue
				}
				seen[name] = true
				p := path.Join(d, name)
				if e.Type()&fs.ModeSymlink != 0 {
					if t, err := n.fs.Readlink(n.onNode(p)); err == nil && t == "/dev/null" {
						out = append(out, allowlist.NodeUnitFile{Path: p, Name: name, Masked: true})
						continue
					}
				}
				text, err := n.readFile(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
				out = append(out, allowlist.NodeUnitFile{Path: p, Name: name, Contents: text})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b allowlist.NodeUnitFile) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// linkedUnit is the unit name loads when its file nm (name itself, or its template) is a link to
// the unit file base, and whether it is an alias at all. systemd aliases templates: a link
// foo@.service -> bar@.service makes foo@x.service bar@x.service, and an instance's own link to a
// template (foo@x.service -> bar@.service) is that template's instance (round 11, units 02). A
// template's link to a unit that is no template is judged by the linked file's text (systemd
// loads nothing of it: the instance is not found).
func linkedUnit(name, nm, base string) (string, bool) {
	if base == nm || !allowlist.IsUnitName(base) {
		return "", false
	}
	if _, inst, ok := allowlist.Instance(name); ok && isTemplate(base) {
		real := strings.TrimSuffix(base, path.Ext(base)) + inst + path.Ext(base)
		return real, real != name // foo@x.service -> foo@.service: the instance of its own template
	}
	if nm != name {
		return "", false
	}
	return base, true
}

// isTemplate says whether the unit name is a template (foo@.service).
func isTemplate(name string) bool {
	return strings.HasSuffix(strings.TrimSuffix(name, path.Ext(name)), "@")
}

// templateOf is the template of an instance name (getty@tty1.service: getty@.service).
func templateOf(name string) (string, bool) {
	at := strings.IndexByte(name, '@')
	if at < 0 {
		return "", false
	}
	ext := path.Ext(name)
	tmpl := name[:at+1] + ext
	return tmpl, tmpl != name
}

// dropinDirNames are the drop-in directories systemd reads for a unit answering to names (its
// name, then its template): NAME.d, then every prefix of the name cut after a "-"
// (foo-bar-baz.service: foo-bar-.service.d, foo-.service.d), then the type's (service.d).
func dropinDirNames(names []string) []string {
	var out []string
	add := func(d string) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, nm := range names {
		add(nm + ".d")
	}
	for _, nm := range names {
		ext := path.Ext(nm)
		stem := strings.TrimSuffix(nm, ext)
		for i := len(stem) - 1; i > 0; i-- {
			if stem[i] == '-' && i < len(stem)-1 {
				add(stem[:i+1] + ext + ".d")
			}
		}
		add(strings.TrimPrefix(ext, ".") + ".d")
	}
	return out
}

const (
	// maxNodeReadEntries bounds the entries of one unit directory or drop-in directory the scan
	// of what units read (nodeReads) lists; maxNodeReadFiles the files it reads, maxNodeReadBytes
	// their bytes, maxNodeReadPaths the paths it gathers. Past one the scan fails: a changed line
	// that writes anything is then refused (the readers cannot all be known).
	maxNodeReadEntries = 10000
	maxNodeReadFiles   = 20000
	maxNodeReadBytes   = 64 << 20
	maxNodeReadPaths   = 100000
)

// nodeReads are the files the node's units read as root (allowlist.NodeReadsOf of every unit file
// and drop-in in every directory of the unit search path, generators' output included: a unit's
// fragment or link by its name, a template by its, NAME.d, prefix and type drop-in directories by
// the units they apply to), read once for the reader's life. A reader that is not the node's
// (a test's) has none.
func nodeReads(r allowlist.NodeUnitReader) ([]allowlist.NodeRead, error) {
	n, ok := r.(*nodeUnits)
	if !ok {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.readsDone {
		n.reads, n.readsErr = n.scanReads()
		n.readsDone = true
	}
	return n.reads, n.readsErr
}

func (n *nodeUnits) scanReads() ([]allowlist.NodeRead, error) {
	var out []allowlist.NodeRead
	err := n.walkUnitFiles(func(owner, p, text string) error {
		if strings.HasSuffix(owner, ".d") {
			owner = allowlist.ReaderName(owner)
		}
		// Read as systemd reads it, not as go-systemd's lexer does: the lexer refuses a comment in a
		// continued line, and reads "# comment \" as continuing (adversary r24 d/08, a/07: the
		// unit's EnvironmentFile= was writable). A text neither reads fails the scan: its reads
		// cannot be known.
		var reads []allowlist.NodeRead
		ok := true
		if opts, err := readSystemdUnit(text); err == nil {
			reads, ok = allowlist.NodeReadsOfOptions(owner, p, unitOptionsOf(opts), maxNodeReadPaths-len(out))
		} else if reads, ok, err = allowlist.NodeReadsOf(owner, p, text, maxNodeReadPaths-len(out)); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if real := n.realPath(p); real != p {
			// A unit file or drop-in reached through a link: the file it names is the unit's
			// (adversary r24 d/05: a systemctl-linked unit in /var/lib was rewritten).
			reads = append(reads, allowlist.NodeRead{Path: real, Unit: owner, File: p, Setting: "unit file"})
		}
		out = append(out, reads...)
		if !ok {
			return fmt.Errorf("more than %d paths read", maxNodeReadPaths)
		}
		return nil
	}, func(name, d string, links []os.DirEntry) error {
		if strings.HasSuffix(name, ".d") {
			// A drop-in directory that is a link: every file there is a drop-in, new ones too
			// (adversary r24 a/05).
			if real := n.realPath(d); real != d && len(out) < maxNodeReadPaths {
				out = append(out, allowlist.NodeRead{Path: real, Unit: allowlist.ReaderName(name), File: d, Setting: "unit file"})
			}
			return nil
		}
		// A .wants/.requires/.upholds link names a unit the manager may load from its target.
		for _, l := range links {
			p := path.Join(d, l.Name())
			if real := n.realPath(p); real != p && len(out) < maxNodeReadPaths {
				out = append(out, allowlist.NodeRead{Path: real, Unit: l.Name(), File: p, Setting: "unit file"})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// walkUnitFiles calls file with every unit file of the unit search path (owner: its name) and every
// drop-in (owner: its directory's name, NAME.d), each read bounded (maxNodeReadFiles,
// maxNodeReadBytes in all), and dir, when not nil, with every NAME.wants, NAME.requires and
// NAME.upholds directory's name and entries. A broken link and a mask load nothing: skipped.
func (n *nodeUnits) walkUnitFiles(file func(owner, p, text string) error, dir func(name, p string, entries []os.DirEntry) error) error {
	root, err := os.OpenRoot(n.root)
	if err != nil {
		return err
	}
	n.fs = root
	defer func() { root.Close(); n.fs = nil }()
	files, bytes := 0, 0
	read := func(owner, p string) error {
		if files++; files > maxNodeReadFiles {
			return fmt.Errorf("more than %d unit files and drop-ins", maxNodeReadFiles)
		}
		text, err := n.readFile(p)
		if errors.Is(err, fs.ErrNotExist) && n.realPath(p) != p {
			// A link whose target is missing loads nothing now, and the unit file a write there
			// would make (adversary r25 a/08): read as empty, so that its target is the unit's.
			return file(owner, p, "")
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) {
			return nil // a mask (/dev/null), a missing file: the manager loads nothing of it
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if bytes += len(text); bytes > maxNodeReadBytes {
			return fmt.Errorf("more than %d bytes of unit files and drop-ins", maxNodeReadBytes)
		}
		return file(owner, p, text)
	}
	for _, d := range unitSearchPath {
		entries, err := n.listAll(d)
		if err != nil && !errors.Is(err, errTooManyEntries) {
			continue // a search directory the view cannot open (ReadUnit reads none of it either)
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			name, p := e.Name(), path.Join(d, e.Name())
			isDir := func() bool { fi, err := n.fs.Stat(n.onNode(n.realPath(p))); return err == nil && fi.IsDir() }
			switch {
			case allowlist.IsUnitName(name):
				if err := read(name, p); err != nil {
					return err
				}
			case strings.HasSuffix(name, ".d"):
				if !isDir() {
					continue
				}
				confs, err := n.listAll(p)
				if err != nil {
					return err
				}
				for _, c := range confs {
					if strings.HasSuffix(c.Name(), ".conf") {
						if err := read(name, path.Join(p, c.Name())); err != nil {
							return err
						}
					}
				}
				if dir != nil {
					if err := dir(name, p, confs); err != nil {
						return err
					}
				}
			case dir != nil && (strings.HasSuffix(name, ".wants") || strings.HasSuffix(name, ".requires") || strings.HasSuffix(name, ".upholds")):
				if !isDir() {
					continue
				}
				links, err := n.listAll(p)
				if err != nil {
					return err
				}
				if err := dir(name, p, links); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dependentKeys are the [Unit] settings that make a unit follow the unit they name (its restart or
// stop restarts or stops this one: Requires=, Requisite=, BindsTo=, PartOf=, StopPropagatedFrom=)
// or be stopped by its start (Conflicts=, which systemd makes symmetric).
var dependentKeys = []string{"Requires", "Requisite", "BindsTo", "PartOf", "StopPropagatedFrom", "Conflicts"}

// nodeDependents is what the node's files say of who names whom (dependents): for a unit name, the
// owners of the files that name it in a dependentKeys setting or link it in NAME.requires/ (a unit
// name, or a drop-in directory's NAME.d, which may apply to many: foo-.service.d, service.d), and
// every unit name the search path has a file of.
type nodeDependents struct {
	named map[string][]string
	units []string
	err   error
}

// dependents reads, once for the reader's life and within walkUnitFiles' bounds, which node files
// name which units in a setting that makes them follow or conflict: the candidates a unit's
// reverse dependencies are read from (the view then loads each as the manager will, and keeps
// those whose merged definition names the unit). A reader that is not the node's has none.
func dependents(r allowlist.NodeUnitReader) *nodeDependents {
	n, ok := r.(*nodeUnits)
	if !ok {
		return &nodeDependents{}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.deps != nil {
		return n.deps
	}
	d := &nodeDependents{named: map[string][]string{}}
	add := func(named, owner string) {
		if !slices.Contains(d.named[named], owner) {
			d.named[named] = append(d.named[named], owner)
		}
	}
	d.err = n.walkUnitFiles(func(owner, p, text string) error {
		if !strings.HasSuffix(owner, ".d") && !slices.Contains(d.units, owner) {
			d.units = append(d.units, owner)
		}
		opts, err := allowlist.UnitOptions(text)
		if err != nil {
			return nil // a file the lexer refuses: the view refuses to judge its unit when it loads it
		}
		unitName := strings.TrimSuffix(owner, ".d")
		for _, o := range opts {
			if o.Section == "Unit" && slices.Contains(dependentKeys, o.Name) {
				for _, f := range strings.Fields(strings.ReplaceAll(o.Value, "\\\n", " ")) {
					add(allowlist.ResolveSpecifiers(unitName, f), owner)
				}
			}
		}
		return nil
	}, func(name, _ string, links []os.DirEntry) error {
		if owner, ok := strings.CutSuffix(name, ".requires"); ok {
			for _, l := range links {
				add(l.Name(), owner)
			}
		}
		return nil
	})
	n.deps = d
	return d
}

// listAll lists a directory of the node whole (none: no entries), or fails past maxNodeReadEntries.
func (n *nodeUnits) listAll(p string) ([]os.DirEntry, error) {
	f, err := n.fs.OpenFile(n.onNode(n.realPath(p)), os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO never blocks the plan (r21 c/04)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, nil
	}
	entries, err := f.ReadDir(maxNodeReadEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(entries) > maxNodeReadEntries {
		return nil, fmt.Errorf("%s: %w (%d)", p, errTooManyEntries, maxNodeReadEntries)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}
