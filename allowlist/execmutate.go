package allowlist

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strings"
)

// A changed line changes the node's files only in the unit's own places (issue 27, class 3). The
// modeled programs a changed line may run (execmodel.go) still remove, write, chmod and relabel
// whatever their words name (rm -rf /var/lib/kubelet, chmod 666 /etc/shadow, sed -i … /etc/hosts,
// echo x >> /etc/hosts). So in a changed line every path a command mutates (creates, writes,
// appends, truncates, removes, renames, links, changes the mode, owner, ACL or label of) must lie
// in the unit's own places (ownPlace): /tmp, /var/tmp, for unit S /run/S, /var/lib/S,
// /var/cache/S, /var/log/S, /etc/S and the names S-… and S.… there, the directories its
// *Directory= settings name, /dev/null, /dev/stdout, /dev/stderr; or be what the node's current
// definition of the unit already mutates (Execution.OwnWrites, the same operand). Which words a
// program mutates is its model (mutated), exact for every modeled program; a command whose
// mutated paths come from its input (xargs rm, restorecon -f, tar -x) is refused in a changed
// line. The set-the-system programs among the inert ones (date -s, hostname NAME) are refused
// there too (systemState).
//
// In every line, changed or not, the operands of rm, rmdir, chmod, chown, chgrp, chcon, setfacl,
// touch and truncate are write targets for the node's-code rule (nodeWrite), as the writers'
// destinations already are. restorecon is not: it only restores the policy's own label (the MCS's
// kubelet.service runs it on /usr/local/bin/kubenswrapper and /usr/bin/kubensenter).

// unitPlaces are what a unit's changed lines may mutate, or, collecting, the paths the node's
// current unit mutates (OwnWrites).
type unitPlaces struct {
	stem    string          // S: the unit's name without its type, a template's prefix
	dirs    []string        // the *Directory= settings' directories
	writes  map[string]bool // Execution.OwnWrites
	never   []string        // Execution.NeverOwn: the agent's state dirs
	managed []string        // Execution.Managed: the node policy's rule paths
	reads   []NodeRead      // Execution.NodeReads and the unit's own environment and programs
	collect *[]string       // OwnWrites: record instead of judging
	secrets map[string]bool // Execution.OwnSecrets
}

// placesOf are the unit's own places.
func placesOf(p UnitProps) *unitPlaces {
	stem, _, _ := strings.Cut(unitStem(p.ID), "@")
	m := &unitPlaces{stem: stem, writes: map[string]bool{}}
	if strings.ContainsAny(stem, "/$%`*?[") || stem == "." || stem == ".." {
		m.stem = ""
	}
	for _, d := range []struct {
		base string
		v    []string
	}{{"/run", p.RuntimeDirectory}, {"/var/lib", p.StateDirectory}, {"/var/cache", p.CacheDirectory},
		{"/var/log", p.LogsDirectory}, {"/etc", p.ConfigurationDirectory}} {
		for _, w := range d.v {
			for _, n := range strings.Split(w, ":") {
				if n != "" && !strings.HasPrefix(n, "/") && !strings.Contains(n, "..") && !strings.ContainsAny(n, "$%`*?[") {
					m.dirs = append(m.dirs, cleanPath(d.base+"/"+n))
				}
			}
		}
	}
	for _, w := range p.OwnWrites {
		m.writes[w] = true
	}
	m.secrets = map[string]bool{}
	for _, w := range p.OwnSecrets {
		m.secrets[w] = true
	}
	m.never, m.managed = p.NeverOwn, p.Managed
	self := func(u string) bool { return canonUnit(u) == canonUnit(p.ID) || slices.Contains(p.Names, u) }
	for _, r := range p.NodeReads {
		r.self = self(r.Unit)
		m.reads = append(m.reads, r)
	}
	// The unit's own EnvironmentFile= and programs, as the payload defines it: a changed line
	// writing them gives the node's own lines of the unit their code at its next start.
	for _, f := range p.EnvironmentFiles {
		if f = strings.TrimPrefix(f, "-"); strings.HasPrefix(f, "/") {
			m.reads = append(m.reads, NodeRead{Path: nodePath(f), As: f, Unit: p.ID, Setting: "EnvironmentFile=", self: true})
		}
	}
	for i, argv := range p.Exec {
		key := cmp.Or(p.ExecKey(i), "Exec")
		if len(argv) > 0 {
			if prog := strings.TrimLeft(argv[0], "@-:+!|"); strings.HasPrefix(prog, "/") {
				m.reads = append(m.reads, NodeRead{Path: nodePath(prog), As: prog, Unit: p.ID, Setting: key + "=", self: true})
			}
		}
	}
	return m
}

// OwnWrites are the paths the unit's commands mutate (its Exec lines as the node's current
// definition has them): each resolved as the judge resolves a changed line's (absolute, cleaned,
// a relative one from each directory the line may be in; a pattern as written). A changed line of
// the same unit may mutate them too.
func OwnWrites(p UnitProps) []string {
	var out []string
	left := execBudget(p.Exec)
	wd := unitWorkingDirs(p.WorkingDirectory) // both readings of WorkingDirectory=-DIR: the node's unit may write from either
	j := judge{env: unitEnv(p.Execution), left: &left, wd: &wd, unitWD: len(wd), made: map[string]bool{},
		programs: OwnPrograms(p.Exec), strict: true, mut: &unitPlaces{collect: &out}}
	j.progSet = newProgramSet(j.programs)
	for _, line := range p.Exec {
		argv, _ := systemdArgv(line, j.env) // the words the program gets (execpaste.go)
		j.argv(argv, 0)
	}
	return out
}

// mutModel is how a program's words name what it mutates.
type mutModel struct {
	short string   // one-letter options that take a value (joined or the next word)
	long  []string // long options that take a value (--opt=V or --opt V)
	// skipFirst: the first operand is a mode, an owner or a context, not a path, unless one of
	// these options gives it.
	skipFirst []string
}

// mutModels are the programs whose operands are all mutated paths (but skipFirst's first).
var mutModels = map[string]mutModel{
	"rm": {}, "rmdir": {}, "sponge": {},
	"mkdir":    {short: "m", long: []string{"--mode"}},
	"touch":    {short: "drt", long: []string{"--date", "--reference", "--time"}},
	"truncate": {short: "sr", long: []string{"--size", "--reference"}},
	"shred":    {short: "ns", long: []string{"--iterations", "--size", "--random-source"}},
	"tee":      {},
	"chmod":    {long: []string{"--reference"}, skipFirst: []string{"--reference"}},
	"chown":    {long: []string{"--from", "--reference"}, skipFirst: []string{"--reference"}},
	"chgrp":    {long: []string{"--from", "--reference"}, skipFirst: []string{"--reference"}},
	"chcon": {short: "urtl", long: []string{"--user", "--role", "--type", "--range", "--reference"},
		skipFirst: []string{"-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range", "--reference"}},
	"restorecon": {short: "efoT"},
	"setfacl":    {short: "mMxX", long: []string{"--modify", "--modify-file", "--remove", "--remove-file", "--set", "--set-file", "--restore"}},
	// cp, install, mv and ln: their destination (-t DIR or the last operand), mv's and ln's every
	// operand, install -d's every operand (mutated).
	"cp":      {short: "St", long: []string{"--target-directory", "--suffix", "--no-preserve", "--sparse"}},
	"mv":      {short: "St", long: []string{"--target-directory", "--suffix"}},
	"ln":      {short: "St", long: []string{"--target-directory", "--suffix"}},
	"install": {short: "gmoSt", long: []string{"--group", "--mode", "--owner", "--suffix", "--target-directory", "--strip-program"}},
}

// nodeMutators are the programs whose operands are write targets for the node's-code rule in
// every line (their operands were not judged as writes before; the writers' already are).
var nodeMutators = []string{"rm", "rmdir", "chmod", "chown", "chgrp", "chcon", "setfacl"}

// readOpts parses a command's words by a model: its operands and each option's values (long
// options by the name given, a unique prefix of a model's option read as it, GNU getopt's way).
func readOpts(args []string, m mutModel) (ops []string, vals map[string][]string) {
	vals = map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(ops, args[i+1:]...), vals
		case strings.HasPrefix(a, "--"):
			name, v, has := strings.Cut(a, "=")
			for _, l := range m.long {
				if l != name && strings.HasPrefix(l, name) && len(name) > 3 {
					name = l
				}
			}
			if slices.Contains(m.long, name) && !has && i+1 < len(args) {
				i++
				v = args[i]
			}
			vals[name] = append(vals[name], v)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				o := "-" + a[k:k+1]
				if !strings.Contains(m.short, a[k:k+1]) {
					vals[o] = append(vals[o], "")
					continue
				}
				v := a[k+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				vals[o] = append(vals[o], v)
				break
			}
		default:
			ops = append(ops, a)
		}
	}
	return ops, vals
}

// chmodMode says whether a word that looks like an option is chmod's mode (chmod -w F, chmod -R -x F).
func chmodMode(a string) bool {
	return len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "rwxXstugoa,+=-01234567") == "" && a != "-R" && a != "-c" && a != "-f" && a != "-v"
}

// mutated are the words the command mutates, by its program's model, or why the paths it mutates
// cannot be read from its words (they are its input's or an archive's): refused in a changed line.
func (j judge) mutated(prog string, args []string) (words []string, why string) {
	if o := followedTraversal(prog, args); o != "" && prog != "find" {
		return nil, prog + " " + o + ": it follows the symbolic links it meets as it walks its operands' trees: what it changes may lie outside them, where a link points (refused in a changed line)"
	}
	switch prog {
	case "chmod":
		var rest []string
		mode := false
		for _, a := range args {
			if !mode && chmodMode(a) {
				mode = true // -w is chmod's mode, not an option
				continue
			}
			rest = append(rest, a)
		}
		if mode {
			ops, _ := readOpts(rest, mutModels[prog])
			return ops, ""
		}
	case "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				words = append(words, v)
			}
		}
		return words, ""
	case "sed", "gsed":
		files := sedInPlace(args)
		if len(files) > 0 && slices.Contains(args, "--follow-symlinks") {
			// sed -i replaces a link with the edited file; --follow-symlinks edits where it points.
			return nil, prog + " -i --follow-symlinks edits the file a symbolic link points to, wherever that is (refused in a changed line)"
		}
		return files, ""
	case "rsync":
		return j.rsyncMutates(args)
	case "tar", "cpio", "unzip":
		return archiveMutates(prog, args)
	case "find":
		return j.findMutates(args)
	case "file":
		for _, a := range args {
			if a == "-C" || a == "--compile" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "C") {
				return []string{"."}, "" // file -C writes the compiled magic into the working directory
			}
		}
		return nil, ""
	}
	m, ok := mutModels[prog]
	if !ok {
		return nil, ""
	}
	ops, vals := readOpts(args, m)
	switch prog {
	case "restorecon":
		if len(vals["-f"]) > 0 {
			return nil, "restorecon -f relabels the files its input names (refused in a changed line: the paths are the input's)"
		}
		return append(ops, vals["-o"]...), ""
	case "setfacl":
		if len(vals["--restore"]) > 0 {
			return nil, "setfacl --restore changes the files its input names (refused in a changed line: the paths are the input's)"
		}
	case "cp", "install":
		if prog == "install" && (len(vals["-d"]) > 0 || len(vals["--directory"]) > 0) {
			return ops, "" // install -d creates every operand
		}
		if t := append(vals["-t"], vals["--target-directory"]...); len(t) > 0 {
			return intoDirs(t), ""
		}
		if len(ops) > 0 {
			return intoDirs(ops[len(ops)-1:]), ""
		}
		return nil, ""
	case "mv", "ln":
		if t := append(vals["-t"], vals["--target-directory"]...); len(t) > 0 {
			return append(ops, intoDirs(t)...), ""
		}
		if len(ops) > 1 {
			ops[len(ops)-1] = intoDirs(ops[len(ops)-1:])[0]
		} else if len(ops) == 1 && prog == "ln" {
			ops = append(ops, path.Base(ops[0])) // ln TARGET: a link named after it in the working directory
		}
		return ops, ""
	}
	if len(m.skipFirst) > 0 && len(ops) > 0 {
		given := false
		for _, o := range m.skipFirst {
			given = given || len(vals[o]) > 0
		}
		if !given {
			ops = ops[1:] // the mode, owner or context
		}
	}
	return ops, ""
}

// groupOnly says whether chown or chgrp only changes the files' group (chown -R :G, chgrp G): what
// the MCS's ovs-vswitchd.service does to /etc/openvswitch and /var/lib/openvswitch, which the node's
// own lines may do to the node's denied files (a changed line only in the unit's own places).
func groupOnly(prog string, args []string) bool {
	ops, vals := readOpts(args, mutModels[prog])
	if len(ops) == 0 || len(vals["--reference"]) > 0 {
		return false
	}
	return prog == "chgrp" || prog == "chown" && strings.HasPrefix(ops[0], ":")
}

// sedInPlace are the files sed -i edits and the backups it writes (-i.bak: F.bak; a suffix with a
// / or * names the backup's path, * the file's name: -i'/etc/cron.d/*').
func sedInPlace(args []string) []string {
	var files, suffixes []string
	inPlace, script := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for _, f := range args[i+1:] {
				if !script {
					script = true
					continue
				}
				files = append(files, f)
			}
			i = len(args)
		case a == "-e" || a == "--expression" || a == "-f" || a == "--file" || a == "-l" || a == "--line-length":
			script = script || a != "-l" && a != "--line-length"
			i++
		case strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
			script = true
		case strings.HasPrefix(a, "--in-place"):
			inPlace = true
			if s, ok := strings.CutPrefix(a, "--in-place="); ok {
				suffixes = append(suffixes, s)
			}
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 'i':
					inPlace = true
					if a[k+1:] != "" {
						suffixes = append(suffixes, a[k+1:])
					}
				case 'e', 'f', 'l':
					script = script || a[k] != 'l'
					if k+1 == len(a) {
						i++
					}
				default:
					continue
				}
				break
			}
		default:
			if !script {
				script = true
				continue
			}
			files = append(files, a)
		}
	}
	if !inPlace {
		return nil
	}
	out := slices.Clone(files)
	for _, s := range suffixes {
		for _, f := range files {
			switch {
			case strings.Contains(s, "*") && strings.Contains(s, "/"):
				out = append(out, strings.ReplaceAll(s, "*", path.Base(f)))
			case strings.Contains(s, "*"):
				out = append(out, path.Join(path.Dir(f), strings.ReplaceAll(s, "*", path.Base(f))))
			default:
				out = append(out, f+s)
			}
		}
	}
	return out
}

// rsyncValues are rsync's options that name a file or directory it writes.
var rsyncValues = []string{"--log-file", "--write-batch", "--only-write-batch", "--backup-dir", "--partial-dir", "--temp-dir", "-T"}

// rsyncMutates: rsync's destination (its last operand), the files its options name for writing,
// and with --remove-source-files its sources too. A remote destination (host:path, which may be
// this node) cannot be placed.
func (j judge) rsyncMutates(args []string) ([]string, string) {
	var ops, out []string
	remove := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, v, has := strings.Cut(a, "=")
		switch {
		case slices.Contains(rsyncValues, name):
			if !has && i+1 < len(args) {
				i++
				v = args[i]
			}
			out = append(out, v)
		case a == "--remove-source-files" || a == "--remove-sent-files":
			remove = true
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) == 0 {
		return out, ""
	}
	dest := ops[len(ops)-1]
	if k := strings.IndexByte(dest, ':'); k >= 0 && !strings.Contains(dest[:k], "/") {
		return nil, "rsync to " + dest + ": a remote destination (it may be this node) cannot be placed in the unit's own places"
	}
	if remove {
		out = append(out, ops...)
	}
	return append(out, intoDirs([]string{dest})...), ""
}

// intoDirs are a writer's destinations as what it writes: into a directory (one named with a
// trailing /, or /tmp and /var/tmp, which always are) a name below it.
func intoDirs(dests []string) []string {
	var out []string
	for _, d := range dests {
		if c := nodePath(d); strings.HasSuffix(d, "/") || c == "/tmp" || c == "/var/tmp" {
			d = strings.TrimSuffix(d, "/") + "/*"
		}
		out = append(out, d)
	}
	return out
}

// archiveMutates: an extraction writes the archive's names (cpio's absolute ones too): refused in a
// changed line; a creation writes its -f (tar), -F or -O (cpio) output and tar's snapshot files.
func archiveMutates(prog string, args []string) ([]string, string) {
	if extracts(prog, args) {
		// The names are the archive's, below the directory it extracts into (tar without -P, cpio
		// with --no-absolute-filenames, unzip without -:, strictModeled): that directory is what
		// it changes, every name below it.
		var dirs []string
		switch prog {
		case "cpio":
			_, vals := readOpts(args, mutModel{short: "DFOIECHMR", long: []string{"--directory", "--file", "--format", "--owner", "--message", "--pattern-file"}})
			dirs = append(vals["-D"], vals["--directory"]...)
		case "unzip":
			for i, a := range args {
				if a == "-d" && i+1 < len(args) {
					dirs = append(dirs, args[i+1])
				} else if strings.HasPrefix(a, "-d") && len(a) > 2 {
					dirs = append(dirs, a[2:])
				}
			}
		case "tar":
			dirs = tarValues(args, 'C', "--directory")
		}
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		var out []string
		for _, d := range dirs {
			out = append(out, strings.TrimSuffix(d, "/")+"/*")
		}
		return out, ""
	}
	var out []string
	if prog == "cpio" {
		_, vals := readOpts(args, mutModel{short: "FOIECHMR", long: []string{"--file", "--format", "--owner", "--message", "--pattern-file"}})
		return append(append(vals["-F"], vals["-O"]...), vals["--file"]...), ""
	}
	if prog != "tar" {
		return nil, ""
	}
	for _, a := range args {
		if a == "--remove-files" {
			return nil, "tar --remove-files removes the files it archives (refused in a changed line)"
		}
	}
	out = append(append(append(tarValues(args, 'f', "--file"), tarValues(args, 'g', "--listed-incremental")...),
		tarValues(args, 0, "--index-file")...), out...)
	var files []string
	for _, f := range out {
		if f != "-" {
			files = append(files, f)
		}
	}
	return files, ""
}

// tarValued are tar's short options that take a value (and so end a cluster: -cfIsh names the
// archive Ish).
const tarValued = "bfgCKLNTVXHIF"

// tarValues are the values tar's option letter (or long option) takes: -fF, -f F, --file=F,
// --file F, and an old-style first word's letters, whose values are the next words in order.
func tarValues(args []string, letter byte, long string) []string {
	var out []string
	var pending []byte
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, v, has := strings.Cut(a, "=")
		switch {
		case name == long:
			if !has && i+1 < len(args) {
				i++
				v = args[i]
			}
			out = append(out, v)
		case strings.HasPrefix(a, "--"):
		case i == 0 && !strings.HasPrefix(a, "-"):
			for k := 0; k < len(a); k++ {
				if strings.IndexByte(tarValued, a[k]) >= 0 {
					pending = append(pending, a[k])
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				if strings.IndexByte(tarValued, a[k]) < 0 {
					continue
				}
				v := a[k+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				if a[k] == letter {
					out = append(out, v)
				}
				break
			}
		case len(pending) > 0:
			if pending[0] == letter {
				out = append(out, a)
			}
			pending = pending[1:]
		}
	}
	return out
}

// findMutates: -delete removes find's start paths and below; -fprint, -fprint0, -fprintf and -fls
// write their file; -exec, -execdir, -ok, -okdir with a command that mutates what find hands it
// (a mutated word holding {}, a relative one under -execdir, {} handed to a program that is no
// reader) mutate the start paths and below.
func (j judge) findMutates(args []string) ([]string, string) {
	var starts, out []string
	i := findOptionsEnd(args)
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "," {
			break
		}
		starts = append(starts, a)
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	below := false
	for ; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-delete":
			below = true
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				out = append(out, args[i+1])
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			end := len(args)
			for k := i + 1; k < len(args); k++ {
				if args[k] == ";" || args[k] == "+" || args[k] == `\;` {
					end = k
					break
				}
			}
			cmd := args[i+1 : end]
			i = end
			if len(cmd) == 0 {
				continue
			}
			p := cmdName(cmd[0])
			w, why := j.mutated(p, cmd[1:])
			if why != "" {
				return nil, why
			}
			for _, x := range w {
				below = below || strings.Contains(x, "{}") || strings.HasSuffix(a, "dir") && !strings.HasPrefix(x, "/")
			}
			if len(w) == 0 && !(slices.Contains(inertPrograms, p) || slices.Contains(xargsReaders, p)) {
				// A shell or an interpreter handed the files: what it does with them is not in its words.
				for _, x := range cmd[1:] {
					below = below || strings.Contains(x, "{}")
				}
			}
		}
	}
	if below {
		o := followedTraversal("find", args)
		if o == "" {
			o = trailingSlash(starts)
		}
		if o != "" {
			// Only a find that changes what it finds (-delete, a command that mutates {}): a
			// reader's -exec cat {} reads what -print would.
			return nil, "find " + o + ": it follows the symbolic links it meets as it walks its start paths' trees: what it changes may lie outside them, where a link points (refused in a changed line)"
		}
		for _, s := range starts {
			out = append(out, s, strings.TrimSuffix(s, "/")+"/*") // the start path and every file below it
		}
	}
	return out, ""
}

// mutations judges what the command mutates: in every line the node's-code rule for the
// nodeMutators' operands; in a changed line's command, the system state the inert programs set
// and every mutated path against the unit's own places. Collecting (OwnWrites), it records them.
func (j judge) mutations(prog string, argv []string) string {
	m := j.mut
	args := argv[1:]
	if m == nil {
		return ""
	}
	if m.collect == nil && slices.Contains(nodeMutators, prog) && !groupOnly(prog, args) {
		ops, _ := j.mutated(prog, args)
		for _, o := range ops {
			if x, ok := j.expand(o); !ok || strings.HasPrefix(x, "/") && under(nodePath(x), "/var/lib") {
				continue // the node's own line: a variable it knows, units' state (kubelet-cleanup's rm -f /var/lib/kubelet/cpu_manager_state)
			}
			if why := j.nodeWrite(o, false); why != "" {
				return why
			}
		}
	}
	if !j.sure {
		return ""
	}
	if m.collect == nil {
		if why := systemState(prog, args); why != "" {
			return why
		}
	}
	words, why := j.mutated(prog, args)
	if why != "" && m.collect == nil {
		return why
	}
	for _, w := range words {
		if j.found && strings.Contains(w, "{}") {
			continue // a file find hands the command: judged as find's start paths (findMutates)
		}
		if hasDotDot(w) && slices.Contains(argv, w) && m.collect == nil {
			continue // a word with "..": refused as one in a changed line (argvPaths), saying why
		}
		if why := j.ownMutation(prog, w); why != "" {
			return why
		}
	}
	return ""
}

// redirection judges a shell redirection's target in a changed line's script (cmd: the target
// stands where the shell runs it) as a write, or records it (OwnWrites).
func (j judge) redirection(t string, cmd bool) string {
	if j.mut == nil || !j.sure || !cmd {
		return ""
	}
	return j.ownMutation("the shell", t)
}

// unresolvedExpansion matches a parameter expansion with an operator (${X/a/b}, ${X%y}): the value
// is not the variable's.
var unresolvedExpansion = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*[^A-Za-z0-9_}]`)

// ownMutation says why the command may not mutate the word in a changed line: unless the node's
// unit already mutates it, every path it may name (from each directory the line may be in; a
// pattern by its fixed directory) must be one of the unit's own places.
func (j judge) ownMutation(who, w string) string {
	m := j.mut
	x, ok := j.expand(w)
	if !ok || unresolvedExpansion.MatchString(w) {
		if m.collect != nil {
			return ""
		}
		return who + " changes " + w + ", a path set by a variable the unit does not define: cannot be judged"
	}
	if x == "~" || strings.HasPrefix(x, "~/") {
		home := j.env["HOME"]
		if home == "" {
			home = "/root"
		}
		x = home + strings.TrimPrefix(x, "~")
	}
	var paths []string
	if strings.HasPrefix(x, "/") {
		paths = []string{nodePath(x)}
	} else {
		for _, d := range j.placeDirs() {
			paths = append(paths, nodePath(d+"/"+x))
		}
	}
	if j.charge(len(paths)) {
		return tooCostly
	}
	// Before the unit's own places and its node lines' writes, from every directory the path may
	// be from: a file a unit reads as root is no unit's own, whatever its name (round 12).
	// restorecon only restores the policy's label (the MCS's kubelet relabels its kubenswrapper).
	for _, c := range paths {
		if m.collect == nil && who != "restorecon" {
			if rs := readsBy(c, m.reads); len(rs) > 0 {
				return nodeReadWhy(who, c, rs)
			}
		}
	}
	for _, c := range paths {
		if m.collect != nil {
			*m.collect = append(*m.collect, c)
			continue
		}
		if m.writes[c] || m.ownPlace(c) {
			continue
		}
		if d := m.stateDir(c); d != "" {
			return who + " changes " + c + ": " + m.rule() + "; " + d + " is the agent's state dir (its journal, record and payloads), never a unit's own place"
		}
		if d := inOrAbove(c, m.managed); d != "" {
			return who + " changes " + c + ": " + m.rule() + "; the node policy manages " + d + " (its mode and owner are the policy's: a unit may not change them), never a unit's own place"
		}
		if why := NeverOwn(c); why != "" {
			return who + " changes " + c + ": " + m.rule() + "; " + why + ", never a unit's own place"
		}
		return who + " changes " + c + ": " + m.rule()
	}
	return ""
}

// placeDirs are the directories a relative path of the line may be from: the unit's
// WorkingDirectory= (/ without one) and every one a script changed to.
func (j judge) placeDirs() []string {
	if j.wd == nil {
		return []string{"/"}
	}
	if j.unitWD > 0 {
		return *j.wd
	}
	return append([]string{"/"}, *j.wd...)
}

// ownPlace says whether the (node) path lies in the unit's own places. A pattern lies there when
// its fixed directory does, and nothing after it climbs (..).
func (m *unitPlaces) ownPlace(c string) bool {
	if k := strings.IndexAny(c, "*?[{"); k >= 0 {
		if strings.Contains(c[k:], "..") {
			return false
		}
		return m.ownDir(c[:strings.LastIndexByte(c[:k], '/')+1]) || m.stemPattern(c, k)
	}
	return slices.Contains([]string{"/dev/null", "/dev/stdout", "/dev/stderr"}, c) || m.ownDir(c)
}

// stemPattern says whether the pattern c (its first pattern character at k) names only the unit's
// S-… or S.… names at a base (/run/S.x*, /var/log/S-*.log: its fixed part already holds the name's
// "S." or "S-"), none of them the agent's state dir or the node policy's (round 12: rm -f
// /run/openvswitch.x* is openvswitch.service's own).
func (m *unitPlaces) stemPattern(c string, k int) bool {
	if m.stem == "" || m.collect != nil || !m.ownDir(c[:k]) {
		return false
	}
	for _, base := range []string{"/run/", "/var/lib/", "/var/cache/", "/var/log/", "/etc/"} {
		fixed, ok := strings.CutPrefix(c[:k], base)
		if !ok || strings.Contains(fixed, "/") || !strings.HasPrefix(fixed, m.stem+"-") && !strings.HasPrefix(fixed, m.stem+".") {
			continue
		}
		for _, d := range append(slices.Clone(m.never), m.managed...) {
			if d = strings.TrimSuffix(d, "/"); globsMeet(c, d) || globsMeet(c, d+"/**") || globsMeet(c+"/**", d) {
				return false
			}
		}
		return true
	}
	return false
}

// ownDir says whether c (a path, or a directory ending in /: every name below it) is the unit's own.
func (m *unitPlaces) ownDir(c string) bool {
	if m.stateDir(c) != "" || inOrAbove(c, m.managed) != "" {
		return false
	}
	for _, t := range []string{"/tmp/", "/var/tmp/"} {
		if strings.HasPrefix(c, t) && len(c) > len(t) || c == t {
			return true
		}
	}
	c = strings.TrimSuffix(c, "/")
	if provisioningRuntime(c) {
		// A provisioning unit's runtime directory is the node's (kubens.service's /run/kubens/env,
		// kubelet's and crio's EnvironmentFile=): no other unit's (kubens@x.service's) own place.
		return false
	}
	// A unit's own places never include what the ConfigMap may never reach (denied or node policy
	// only, whatever the unit: NetworkManager's /etc/NetworkManager, nftables' /etc/nftables), nor
	// its /run twin (NetworkManager's /run/NetworkManager/conf.d, a udev.service's /run/udev/rules.d,
	// RuntimeDirectory=systemd/system: round 11, exec 01).
	if NeverOwn(c) != "" {
		return false
	}
	for _, d := range m.dirs {
		if under(c, d) {
			return true
		}
	}
	if m.stem == "" {
		return false
	}
	for _, base := range []string{"/run/", "/var/lib/", "/var/cache/", "/var/log/", "/etc/"} {
		rest, ok := strings.CutPrefix(c, base)
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(rest, "/")
		if first == m.stem || strings.HasPrefix(first, m.stem+"-") || strings.HasPrefix(first, m.stem+".") {
			return true
		}
	}
	return false
}

// stateDir returns the agent's state dir c (a path, or a directory ending in /) lies in or is an
// ancestor of, or "": a write there forges the journal recovery acts on, or takes its place.
func (m *unitPlaces) stateDir(c string) string { return inOrAbove(c, m.never) }

// inOrAbove returns the path of dirs (paths, or prefixes ending in "/") that c (a path, or a
// directory ending in /) lies in, is, or is an ancestor of, or "".
func inOrAbove(c string, dirs []string) string {
	c = strings.TrimSuffix(c, "/")
	for _, d := range dirs {
		if t := strings.TrimSuffix(d, "/"); under(c, t) || c != "" && under(t, c) {
			return d
		}
	}
	return ""
}

func (m *unitPlaces) rule() string {
	s := m.stem
	if s == "" {
		s = "S"
	}
	return "a changed line changes the node's files only in the unit's own places (/tmp, /var/tmp, /run/" + s + ", /var/lib/" + s +
		", /var/cache/" + s + ", /var/log/" + s + ", /etc/" + s + " and their " + s + "-… and " + s + ".… names, its *Directory= dirs, /dev/null, or what the node's unit already writes)"
}

// systemState says why, in a changed line, an inert program sets the system's state: date's clock
// (-s, or an operand not a +FORMAT: date MMDDhhmm), hostname's kernel host name (kubelet's node name).
func systemState(prog string, args []string) string {
	switch prog {
	case "date":
		ops, vals := readOpts(args, mutModel{short: "dfrs", long: []string{"--date", "--file", "--reference", "--set", "--rfc-3339"}})
		if len(vals["-s"]) > 0 || len(vals["--set"]) > 0 {
			return "date --set sets the node's clock (certificates, leases): refused in a changed line"
		}
		for _, o := range ops {
			if !strings.HasPrefix(o, "+") {
				return "date " + o + " sets the node's clock (certificates, leases): a changed line's date only prints (+FORMAT)"
			}
		}
	case "hostname":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") || a == "--file" || a == "--boot" || strings.HasPrefix(a, "--file=") ||
				!strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "Fb") {
				return "hostname " + a + " sets the kernel's host name (kubelet's node name): a changed line's hostname only prints"
			}
		}
	}
	return ""
}

// inFind is j judging find's -exec command (found).
func (j judge) inFind() judge {
	j.found = true
	return j
}

// Round 9 (exec/08): a traversal that follows symbolic links leaves its start. find -L, -H or
// -follow, and chown, chgrp, chmod, chcon -R with -L or -H (the last of -H, -L, -P counts), and
// setfacl -R -L (--logical), walk into whatever a link below the start (or the start itself)
// points at: find /tmp/x -follow -delete, chown -R -L nobody /tmp/x with /tmp/x/vr -> /run. In a
// changed line such a mutating traversal is refused (mutated). Traversals that do not follow
// links (rm -r, restorecon -R, the default -P), and reading ones (cp -L's and rsync -L's sources,
// du, ls), stay as they are.

// followedTraversal is the option that makes the mutating traversal of the command follow
// symbolic links (find's -L, -H, -follow; -R's -L, -H, --logical), or "".
func followedTraversal(prog string, args []string) string {
	switch prog {
	case "find":
		follow := ""
		end := findOptionsEnd(args)
		for _, a := range args[:end] {
			switch a {
			case "-L", "-H":
				follow = a
			case "-P":
				follow = ""
			}
		}
		for _, a := range args[end:] {
			if a == "-follow" {
				follow = a
			}
		}
		return follow // refused by findMutates when find changes what it finds
	case "chown", "chgrp", "chmod", "chcon", "setfacl", "rm":
	default:
		return ""
	}
	values := mutModels[prog].short // options whose value follows: their letters end a cluster
	recursive, follow := false, ""
	mode := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case a == "--recursive":
			recursive = true
		case a == "--logical" && prog == "setfacl":
			follow = a
		case a == "--physical" && prog == "setfacl":
			follow = ""
		case strings.HasPrefix(a, "--"):
			if n, _, has := strings.Cut(a, "="); !has && slices.Contains(mutModels[prog].long, n) {
				i++ // --reference F, --from O
			}
		case prog == "chmod" && !mode && chmodMode(a):
			mode = true // -w is chmod's mode
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				c := a[k]
				if strings.IndexByte(values, c) >= 0 {
					if k+1 == len(a) {
						i++
					}
					break
				}
				switch c {
				case 'R':
					recursive = true
				case 'r':
					recursive = recursive || prog == "rm"
				case 'L', 'H':
					follow = "-" + string(c)
				case 'P':
					follow = ""
				}
			}
		}
	}
	if !recursive {
		return ""
	}
	if follow == "" {
		ops, _ := readOpts(args, mutModels[prog])
		return trailingSlash(ops)
	}
	return follow
}

// trailingSlash is the first operand of a walker that ends in "/" or "/." (rm -rf /tmp/x/link/):
// the kernel resolves its last name, a symbolic link perhaps, and the walk starts where it points.
func trailingSlash(ops []string) string {
	for _, o := range ops {
		if len(o) > 1 && (strings.HasSuffix(o, "/") || strings.HasSuffix(o, "/.")) {
			return o + " (a trailing / or /. resolves its last name, which may be a symbolic link)"
		}
	}
	return ""
}

// findOptionsEnd is the index of find's first word after its leading options (-H, -L, -P, -D
// DEBUGOPTS, -O LEVEL): where its start paths begin.
func findOptionsEnd(args []string) int {
	i := 0
	for i < len(args) {
		switch a := args[i]; {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O"):
			i++
		case a == "-D":
			i += 2
		case strings.HasPrefix(a, "-D") && len(a) > 2:
			i++
		default:
			return min(i, len(args))
		}
	}
	return min(i, len(args))
}
