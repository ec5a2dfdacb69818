package allowlist

import (
	"slices"
	"strings"
	"sync"
)

// A pattern or brace word names every name it may match (round 9, exec/07), for every rule that
// compares a word with a fixed path, not only reach: cp -RL /usr/loca[l] /tmp/ul (also /usr/*cal,
// /u?r/local, /usr/{local,}) named /usr/local, which the node's-code operand rule refuses for a
// writer, and cp F /usr/{local,x}/bin/y wrote the node's program dir in the node's own lines. The
// rules there (namedCode, nodeWrite, ln's link targets, judgeMount, judgeFind, cd's reach) read a
// word through namedPaths: its brace expansion word by word, and for each word with a pattern
// component, a literal stand-in for every fixed path the judge's rules name (nameRoots) that the
// pattern may be, be below or be above. Each rule then judges the stand-ins as it judges a literal
// path, so a pattern is refused wherever one of the names it may match would be.

// nameRoots are the fixed paths the judge's path rules compare words with: the audit's rows, the
// node's program and OS trees, their aliases, the units' state trees, reach's and the mount
// rule's paths.
var nameRoots = sync.OnceValue(func() [][]string {
	roots := []string{"/usr", "/usr/local", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/var", "/var/lib", "/run",
		"/var/run", "/dev", "/var/log", "/tmp", "/var/tmp", "/proc", "/sys", "/sysroot", "/boot", "/usr/local/bin",
		"/usr/local/sbin", "/usr/local/libexec"}
	roots = append(roots, writableCodeRoots...)
	for _, a := range nodeAliases {
		roots = append(roots, a[0], a[1])
	}
	roots = append(append(roots, reachDenied...), systemMounts...)
	for _, l := range Audit {
		roots = append(roots, strings.TrimSuffix(l.Prefix, "/"))
	}
	slices.Sort(roots)
	var out [][]string // each root's components
	for _, r := range slices.Compact(roots) {
		if r != "" && r != "/" {
			out = append(out, strings.Split(strings.TrimPrefix(r, "/"), "/"))
		}
	}
	return out
})

// rootsByFirst are nameRoots by their first component.
var rootsByFirst = sync.OnceValue(func() map[string][][]string {
	m := map[string][][]string{}
	for _, rc := range nameRoots() {
		m[rc[0]] = append(m[rc[0]], rc)
	}
	return m
})

// namedPaths are the literal paths the (absolute, expanded) word stands for: each word of its
// brace expansion, a pattern one as stand-ins for the fixed paths it may name (patternStandIns);
// ok is false for a brace expression with more words than the judge lists.
func (j judge) namedPaths(p string) (out []string, ok bool) {
	if !strings.ContainsAny(p, "*?[{") {
		return []string{p}, true
	}
	words := []string{p}
	if strings.Contains(p, "{") {
		if words, ok = braceWords(p, 64); !ok {
			return nil, false
		}
	}
	for _, w := range words {
		if !strings.ContainsAny(w, "*?[") {
			out = append(out, literalText(w))
			continue
		}
		stand := patternStandIns(w)
		if j.charge(len(stand)) {
			return nil, false
		}
		out = append(out, stand...)
	}
	return out, true
}

// literalText is a word the shell leaves as it is, with the characters plainPath reads as an
// expansion (an unclosed brace, a ~ past the start) made a name's: /usr/local/bin/{x is a file
// in /usr/local/bin.
func literalText(w string) string {
	return strings.NewReplacer("{", "_", "}", "_", "~", "_", "%", "_").Replace(w)
}

// patternStandIns are literal paths standing for the names the absolute pattern p may match: for
// each root it may be or lie below, the root with p's later components (a pattern one as "…": a
// name no rule names); for each root it may lie above, the root's ancestor with p's depth; and p
// with every pattern component "…".
func patternStandIns(p string) []string {
	pc := strings.Split(strings.TrimPrefix(cleanPath(p), "/"), "/")
	name := func(c string) string {
		if strings.ContainsAny(c, "*?[") {
			return "…"
		}
		return literalText(c)
	}
	rest := func(from int) string {
		var b strings.Builder
		for _, c := range pc[from:] {
			b.WriteString("/" + name(c))
		}
		return b.String()
	}
	out := []string{rest(0)}
	roots := nameRoots()
	if !strings.ContainsAny(pc[0], "*?[") {
		roots = rootsByFirst()[pc[0]] // a literal first name: only the roots below it
	}
	for _, rc := range roots {
		n := min(len(pc), len(rc))
		may := true
		for i := 0; i < n && may; i++ {
			if raw, star := strings.CutSuffix(rc[i], "*"); star && i == len(rc)-1 {
				may = componentMayStart(pc[i], raw)
			} else {
				may = componentMayBe(pc[i], rc[i])
			}
		}
		if !may {
			continue
		}
		if len(pc) < len(rc) {
			out = append(out, "/"+strings.Join(rc[:len(pc)], "/"))
			continue
		}
		head := "/" + strings.Join(rc, "/")
		if raw, star := strings.CutSuffix(rc[len(rc)-1], "*"); star {
			// /etc/ntp*: the component is the prefix and more (its literal self when it is one).
			last := raw + "…"
			if c := pc[len(rc)-1]; !strings.ContainsAny(c, "*?[") {
				last = literalText(c)
			}
			head = "/" + strings.Join(append(slices.Clone(rc[:len(rc)-1]), last), "/")
		}
		out = append(out, head+rest(len(rc)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// componentMayStart says whether the path component, perhaps a pattern, may be a name that starts
// with prefix (an audit row /etc/ntp* against /etc/nt?.conf): its fixed start and the prefix agree.
func componentMayStart(pc, prefix string) bool {
	k := strings.IndexAny(pc, "*?[")
	if k < 0 {
		return strings.HasPrefix(pc, prefix)
	}
	return strings.HasPrefix(prefix, pc[:k]) || strings.HasPrefix(pc[:k], prefix)
}

// namesKernelState says whether the absolute path (a pattern or brace word by every name it may
// match: cd /pro?, cd /{sys,x}) may lie in /proc or /sys, or cannot be judged.
func (j judge) namesKernelState(p string) bool {
	names, ok := j.namedPaths(p)
	if !ok {
		return true
	}
	for _, n := range names {
		if c := cleanPath(n); under(c, "/proc") || under(c, "/sys") {
			return true
		}
	}
	return false
}
