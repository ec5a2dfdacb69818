package allowlist

import (
	"os"
	"path"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// A file a unit of the node reads as root is no changed line's own place, whatever it is called
// (round 12, environment files). RHCOS's ovsdb-server.service and ovs-vswitchd.service read
// /run/openvswitch.useropts as their EnvironmentFile= and run ovs-ctl as root with it: a changed
// line of openvswitch.service writing its "own" /run/openvswitch.* name wrote LD_PRELOAD= or
// BASH_ENV= into another unit's root environment. The plan reads every unit file and drop-in the
// node's manager loads (plan.NodeUnitsAt: the unit search path, generators' output, NAME.d, prefix
// and type drop-in directories) and the payload's units, and passes what they read
// (Execution.NodeReads); the judge refuses a changed line's write that is, lies under or above
// one of them (ownMutation: the one place every writer's resolved path is judged: redirections,
// tee, cp, install, mv, ln, sed -i, dd of=, patterns).

// NodeRead is a file a unit reads: its environment, a credential, a program it runs, the PID file
// its manager reads.
type NodeRead struct {
	// Path is the node path (cleaned, /var/run as /run), a pattern where the unit's name is unknown
	// to the file (a template's %i, a type or prefix drop-in's %n): "**" there matches any names,
	// "/" included.
	Path string
	// As is the path as the setting spells it, when not Path (/usr/tmp/x, /var/run/x).
	As string
	// Unit is the unit that reads it (ovsdb-server.service, a template, "every service" for a
	// type drop-in); File the unit file or drop-in that says so.
	Unit, File string
	// Setting is the setting that reads it (EnvironmentFile=, LoadCredential=, PIDFile=, ExecStart=).
	Setting string
	// Self: the unit is the one judged (Execution.NodeReads of a unit holds its own: NodeReadsOf
	// does not know which unit is judged; JudgeUnit marks them).
	self bool
}

// namedSetting is the setting of a read a shell string only names (namedMark).
const namedSetting = "a shell string"

// conditionPaths are the Condition*=/Assert*= tests of a path.
var conditionPaths = map[string]bool{"PathExists": true, "PathExistsGlob": true, "PathIsDirectory": true, "PathIsSymbolicLink": true,
	"PathIsMountPoint": true, "PathIsReadWrite": true, "PathIsEncrypted": true, "DirectoryNotEmpty": true, "FileNotEmpty": true, "FileIsExecutable": true}

// pathWatches are a .path unit's settings naming what it watches.
var pathWatches = map[string]bool{"PathExists": true, "PathExistsGlob": true, "PathChanged": true, "PathModified": true, "DirectoryNotEmpty": true}

// ReaderName is the unit a drop-in directory's files apply to, for NodeRead.Unit: NAME.d is NAME's,
// a prefix directory foo-.service.d every foo-… service, a type directory service.d every service.
func ReaderName(dropinDir string) string {
	n := strings.TrimSuffix(path.Base(dropinDir), ".d")
	switch {
	case !strings.Contains(n, "."):
		return "every " + n + " unit (" + n + ".d)"
	case strings.HasSuffix(unitStem(n), "-"):
		return "every " + unitStem(n) + "… unit (" + n + ".d)"
	}
	return n
}

// NodeReadsOf are the files a unit file or drop-in's text says its unit (name, or ReaderName's
// description of a drop-in directory's units) reads: EnvironmentFile= (every word of a continued
// line too, "-" dropped), LoadCredential=/LoadCredentialEncrypted= paths, PIDFile= (a relative one
// under /run), what every Exec*= command runs as code (lineCode: its program, a shell's or
// interpreter's script, wrapped or not, a -c string's commands and sourced files), the code its
// Environment= names (LD_PRELOAD=, PATH= …), ExecSearchPath= directories, StandardInput=file:, a
// .path unit's watched paths, the trees its processes see and a mount's or swap's What=. A text
// the lexer refuses is an error (the caller reads it as systemd does: NodeReadsOfOptions). At most
// limit reads.
func NodeReadsOf(name, file, text string, limit int) ([]NodeRead, bool, error) {
	opts, err := UnitOptions(text)
	if err != nil {
		return nil, true, err
	}
	reads, ok := NodeReadsOfOptions(name, file, opts, limit)
	return reads, ok, nil
}

// NodeReadsOfOptions is NodeReadsOf of a text already read into opts.
func NodeReadsOfOptions(name, file string, opts []*unit.UnitOption, limit int) ([]NodeRead, bool) {
	var out []NodeRead
	add := func(setting, p string) bool {
		p = readerPath(name, strings.TrimSpace(p))
		for _, r := range []string{"/proc/self/root", "/proc/thread-self/root", "/proc/1/root"} {
			if q, ok := strings.CutPrefix(p, r); ok && (q == "" || strings.HasPrefix(q, "/")) {
				p = "/" + strings.TrimPrefix(q, "/") // the root, through the process's view of it (r25 a/12)
			}
		}
		if strings.HasPrefix(p, "**") {
			p = "/" + p // a specifier the reader cannot fix (%f, %y, %Y): any absolute path
		}
		if !strings.HasPrefix(p, "/") {
			return true
		}
		if len(out) >= limit {
			return false
		}
		out = append(out, NodeRead{Path: nodePath(p), As: p, Unit: name, File: file, Setting: setting + "="})
		return true
	}
	wd := ""
	env := map[string]string{} // the file's own Environment= values, for its command lines' $VAR
	for _, o := range opts {
		if o.Name == "Environment" {
			if words, err := SplitExec(o.Value); err == nil && len(words) > 0 {
				for _, w := range words[0] {
					if k, v, ok := strings.Cut(w, "="); ok {
						env[k] = v
					}
				}
			}
		}
		if o.Name == "WorkingDirectory" {
			wd = strings.TrimPrefix(strings.TrimSpace(o.Value), "-")
			if !strings.HasPrefix(wd, "/") {
				wd = "" // ~ or unset: relative operands are not resolved
			}
		}
	}
	for _, o := range opts {
		v := strings.TrimSpace(strings.ReplaceAll(o.Value, "\\\n", " "))
		ok := true
		code := func(p string) bool {
			// A variable the file does not set (the manager's, an EnvironmentFile='s): what it
			// names cannot be known past the literal directory before it.
			if named, ok := strings.CutPrefix(p, namedMark); ok {
				return add(namedSetting, literalDir(expandVars(named, env)))
			}
			return add(o.Name, literalDir(expandVars(p, env)))
		}
		switch {
		case o.Name == "EnvironmentFile":
			// systemd reads the value as one path; a judge reading every word too misses none.
			ok = add(o.Name, strings.TrimPrefix(v, "-"))
			if f := strings.Fields(v); len(f) > 1 {
				for _, w := range f {
					ok = ok && add(o.Name, strings.TrimPrefix(w, "-"))
				}
			}
		case o.Name == "LoadCredential" || o.Name == "LoadCredentialEncrypted":
			if _, p, has := strings.Cut(v, ":"); has {
				ok = add(o.Name, p)
			}
		case o.Name == "PIDFile":
			if v != "" && !strings.HasPrefix(v, "/") {
				v = "/run/" + v
			}
			ok = add(o.Name, v)
		case o.Name == "ExecSearchPath":
			for _, d := range strings.Split(v, ":") {
				ok = ok && add(o.Name, d)
			}
		case o.Name == "StandardInput":
			if p, has := strings.CutPrefix(v, "file:"); has {
				ok = add(o.Name, p)
			}
		case strings.HasPrefix(o.Name, "Exec") && v != "":
			argvs, err := SplitExec(expandVars(v, env)) // the file's own variables, before systemd's word splitting
			if err != nil {
				continue
			}
			for _, argv := range argvs {
				ok = ok && lineCode(argv, wd, 0, code)
			}
		case o.Name == "Environment":
			ok = envCode(v, wd, code)
		case o.Name == "Options" && o.Section == "Mount":
			// An overlay's layers: lowerdir=a:b, upperdir=, workdir= (adversary r25 a/09).
			for _, opt := range strings.Split(v, ",") {
				k, dirs, valued := strings.Cut(opt, "=")
				if valued && (k == "lowerdir" || k == "upperdir" || k == "workdir" || k == "lowerdir+" || k == "datadir+") {
					for _, d := range strings.Split(dirs, ":") {
						ok = ok && add("What", d)
					}
				}
			}
		case o.Name == "What" && (o.Section == "Mount" || o.Section == "Swap"):
			// The tree a mount unit mounts (a bind's source, an image file), the file a swap uses.
			ok = add(o.Name, v)
		case conditionPaths[strings.TrimPrefix(strings.TrimPrefix(o.Name, "Condition"), "Assert")] && (strings.HasPrefix(o.Name, "Condition") || strings.HasPrefix(o.Name, "Assert")):
			// Whether the unit's root commands run at all (adversary r25 d/08: a write of
			// ConditionPathExists='s file ran its wipefs).
			ok = add(o.Name, strings.TrimLeft(v, "|!"))
		case pathWatches[o.Name]:
			// A .path unit: a change of the path starts its unit (round 23, d/06).
			ok = add(o.Name, v)
		case o.Name == "RootDirectory" || o.Name == "RootImage" || o.Name == "ExtensionDirectories" || o.Name == "ExtensionImages" ||
			o.Name == "MountImages" || o.Name == "BindPaths" || o.Name == "BindReadOnlyPaths":
			// The tree the unit's processes see: its programs and libraries come from there (a
			// bind's source, before its ":").
			for _, w := range strings.Fields(v) {
				src, _, _ := strings.Cut(strings.TrimLeft(w, "-+"), ":")
				ok = ok && add(o.Name, src)
			}
		}
		if !ok {
			return out, false
		}
	}
	return out, true
}

// readerPath resolves a value's specifiers as the manager would for the unit name (ReaderName's
// description of many units: none known): a name specifier the file's unit does not fix (a
// template's %i, %n; every one of a drop-in directory shared by many units) and one the judge
// does not know (%H, %m, %b) are "**", any names.
func readerPath(name, v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	known := IsUnitName(name)
	tmpl := false
	if known {
		_, inst, _ := strings.Cut(unitStem(name), "@")
		tmpl = strings.Contains(name, "@") && inst == ""
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' || i+1 >= len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		c := v[i]
		switch {
		case specifiers[c] != "":
			b.WriteString(specifiers[c])
		case known && strings.IndexByte("pPjJ", c) >= 0, known && !tmpl && strings.IndexByte("nNiIf", c) >= 0:
			b.WriteString(ResolveSpecifiers(name, "%"+string(c)))
		default:
			b.WriteString("**")
		}
	}
	return b.String()
}

// readsBy returns the reads of reads a changed line's write of c (a node path or pattern) reaches:
// the file itself, a file below it (a credential directory) or a directory above it (rm -rf,
// mv of the directory holding it). The judged unit's own PID file stays its own.
func readsBy(c string, reads []NodeRead) []*NodeRead {
	c = strings.TrimSuffix(c, "/")
	var out []*NodeRead
	for i := range reads {
		r := &reads[i]
		if (r.self && r.Setting == "PIDFile=") || r.Setting == namedSetting+"=" {
			continue // its own PID file; a path a shell string only names (the file writes' rule)
		}
		if pathsMeet(c, r.Path) {
			out = append(out, r)
		}
	}
	return out
}

// pathsMeet says whether a write of c (a path or pattern) reaches r (one too): c is r, lies below
// it or above it, for some names the patterns match.
func pathsMeet(c, r string) bool {
	// Fixed parts that differ before either's first pattern character never meet (most reads).
	pc, pr := literalPrefix(c), literalPrefix(r)
	if n := min(len(pc), len(pr)); pc[:n] != pr[:n] {
		return false
	}
	if len(pc) == len(c) && len(pr) == len(r) {
		return under(c, r) || under(r, c)
	}
	return globsMeet(c, r) || globsMeet(c, r+"/**") || globsMeet(c+"/**", r)
}

// literalPrefix is p up to its first pattern character.
func literalPrefix(p string) string {
	if k := strings.IndexAny(p, "*?[{\\"); k >= 0 {
		return p[:k]
	}
	return p
}

// globsMeet says whether some path matches both patterns a and b: "*" and "?" any one name's
// characters, "[…]" taken as any one character, "**" and everything from a "{" on any characters
// ("/" too).
func globsMeet(a, b string) bool {
	ta, tb := globTokens(a), globTokens(b)
	if len(ta)*len(tb) > 1<<16 {
		return true // too long to compare: taken as meeting
	}
	memo := map[[2]int]bool{}
	var meet func(i, j int) bool
	meet = func(i, j int) bool {
		if i == len(ta) && j == len(tb) {
			return true
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		memo[k] = false
		r := false
		switch {
		case i < len(ta) && ta[i].star():
			// The star ends here, or takes b's next character (b's star: that one ends first).
			r = meet(i+1, j) || j < len(tb) && (tb[j].star() || ta[i].takes(tb[j])) && meet(i, j+1)
		case j < len(tb) && tb[j].star():
			r = meet(i, j+1) || i < len(ta) && tb[j].takes(ta[i]) && meet(i+1, j)
		case i < len(ta) && j < len(tb):
			r = ta[i].meets(tb[j]) && meet(i+1, j+1)
		}
		memo[k] = r
		return r
	}
	return meet(0, 0)
}

// globToken is one character of a pattern: a literal, one of any ("?", "[…]"), or a star ("*":
// within a name; any: "**", "{…", across names).
type globToken struct {
	lit       byte
	one, many bool
	any       bool
}

func (t globToken) star() bool { return t.many }

// takes says whether the star t matches the one character u: "*" any but "/".
func (t globToken) takes(u globToken) bool { return t.any || u.one || u.lit != '/' }

func (t globToken) meets(u globToken) bool {
	switch {
	case !t.one && !u.one:
		return t.lit == u.lit
	case t.one && u.one:
		return true
	case t.one:
		return u.lit != '/'
	}
	return t.lit != '/'
}

func globTokens(p string) []globToken {
	var out []globToken
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if i+1 < len(p) && p[i+1] == '*' {
				out = append(out, globToken{many: true, any: true})
				i++
				continue
			}
			out = append(out, globToken{many: true})
		case '?':
			out = append(out, globToken{one: true})
		case '[':
			if k := strings.IndexByte(p[i+1:], ']'); k >= 0 {
				out = append(out, globToken{one: true})
				i += k + 1
				continue
			}
			out = append(out, globToken{lit: c})
		case '{':
			return append(out, globToken{many: true, any: true})
		case '\\':
			if i+1 < len(p) {
				i++
			}
			out = append(out, globToken{lit: p[i]})
		default:
			out = append(out, globToken{lit: c})
		}
	}
	return out
}

// nodeReadWhy says why a changed line's write of c, which reaches rs (one or more), is refused,
// naming every reader (up to maxNamedReads of them).
func nodeReadWhy(who, c string, rs []*NodeRead) string {
	return who + " changes " + c + ": " + readersSaid(rs) +
		": a file a unit of the node reads as root is never a unit's own place, whatever its name"
}

// readersSaid says what reads rs, each read once (the same read in another file: the node's, the
// payload's, the judged unit's), up to maxNamedReads of them.
func readersSaid(rs []*NodeRead) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range rs {
		k := r.Unit + "\x00" + r.Path + "\x00" + r.Setting
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(parts) == maxNamedReads {
			parts = append(parts, "and more")
			break
		}
		parts = append(parts, nodeReadSays(r))
	}
	return strings.Join(parts, "; ")
}

const maxNamedReads = 4

// nodeReadSays says what reads r: the unit, the path, how, and the file that says so.
func nodeReadSays(r *NodeRead) string {
	if strings.HasPrefix(r.Setting, "Condition") || strings.HasPrefix(r.Setting, "Assert") {
		return r.Unit + " reads " + r.Path + " as a test of whether its commands run (" + r.Setting + ")" + readWhere(r)
	}
	what := map[string]string{
		"EnvironmentFile=":         "as its environment (EnvironmentFile=: its variables, LD_PRELOAD= and BASH_ENV= among them, reach the unit's root commands)",
		"LoadCredential=":          "as a credential it loads (LoadCredential=)",
		"LoadCredentialEncrypted=": "as a credential it loads (LoadCredentialEncrypted=)",
		"PIDFile=":                 "as its PID file (PIDFile=: the manager signals and kills the process it names)",
		"ExecSearchPath=":          "as the directory its programs are found in (ExecSearchPath=)",
		"StandardInput=":           "as its standard input (StandardInput=file:)",
		"PathExists=":              "as a path it watches (PathExists=: a change starts its unit)",
		"PathExistsGlob=":          "as a path it watches (PathExistsGlob=: a change starts its unit)",
		"PathChanged=":             "as a path it watches (PathChanged=: a change starts its unit)",
		"PathModified=":            "as a path it watches (PathModified=: a change starts its unit)",
		"DirectoryNotEmpty=":       "as a path it watches (DirectoryNotEmpty=: a change starts its unit)",
		"RootDirectory=":           "as the root of its processes (RootDirectory=: their programs and libraries)",
		"RootImage=":               "as the root of its processes (RootImage=: their programs and libraries)",
		"ExtensionDirectories=":    "as an extension of its processes' tree (ExtensionDirectories=)",
		"ExtensionImages=":         "as an extension of its processes' tree (ExtensionImages=)",
		"MountImages=":             "as an image mounted into its processes' tree (MountImages=)",
		"BindPaths=":               "as a directory bound into its processes' tree (BindPaths=)",
		"BindReadOnlyPaths=":       "as a directory bound into its processes' tree (BindReadOnlyPaths=)",
		"Environment=":             "as code its Environment= names (LD_PRELOAD=, BASH_ENV=, PATH= …: loaded or run by its processes)",
		"What=":                    "as what it mounts (What=: the tree its mount point shows, or the file it swaps to)",
		"unit file":                "as a unit file or drop-in its manager loads, through a link",
		namedSetting + "=":         "as a path a shell string of its names (it may run, source or feed it to a shell: a command computed at run time cannot be followed)",
	}[r.Setting]
	if what == "" {
		what = "as a program it runs (" + r.Setting + ")"
	}
	unit := r.Unit
	if r.self {
		unit = "the unit itself (" + r.Unit + ") at its next start"
	}
	as := ""
	if r.As != "" && r.As != r.Path {
		as = " (" + r.As + ")"
	}
	return unit + " reads " + r.Path + as + " " + what + readWhere(r)
}

// expandVars replaces ${NAME} and $NAME in w with env's values (once: a value is not expanded
// again); an unknown one stays.
func expandVars(w string, env map[string]string) string {
	if !strings.Contains(w, "$") || len(env) == 0 {
		return w
	}
	return os.Expand(w, func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return "${" + k + "}"
	})
}

// readWhere is ", FILE" for the file that says r, or "".
func readWhere(r *NodeRead) string {
	if r.File != "" {
		return ", " + r.File
	}
	return ""
}
