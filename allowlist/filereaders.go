package allowlist

import (
	"sort"
	"strings"
)

// A file a unit reads as root is denied to every writer, the node policy's rules as much as the
// ConfigMap's, as the audit's denied rows are (round 23, d/04-d/06): the audit lists what RHCOS's
// own units read, but a node's other units (a vendor's, an operator's) and the payload's read
// files the audit cannot name. A refresh writing myapp's EnvironmentFile= gives myapp's root
// commands LD_PRELOAD= (or any option their $VARIABLES take) at its next start, whoever starts it
// and whatever action the rule says; writing the script a unit runs is running code as root;
// writing a path a .path unit watches starts its unit, a job the plan did not judge. The plan
// judges every file it writes or removes against every read of the node's units and the
// payload's (NodeReadsOf), by the same meeting of paths as a changed unit line's writes.

// ReadIndex finds the reads a file write reaches: literal reads by path (the file, a directory
// above it, a file below it), pattern reads (a template's %i, a type drop-in's %n) one by one.
type ReadIndex struct {
	reads    []NodeRead
	exact    map[string][]int
	sorted   []string // the literal paths, sorted: those below a written path are a range
	patterns []int
}

// maxPatternChecks bounds the pattern reads times the written paths a plan compares (each
// comparison is a pattern match): past it every write is refused as too many to judge.
const maxPatternChecks = 1 << 22

// IndexReads indexes reads for ReadersOf.
func IndexReads(reads []NodeRead) *ReadIndex {
	x := &ReadIndex{reads: reads, exact: map[string][]int{}}
	for i, r := range reads {
		if literalPrefix(r.Path) != r.Path {
			x.patterns = append(x.patterns, i)
			continue
		}
		p := dirKey(r.Path)
		if _, ok := x.exact[p]; !ok {
			x.sorted = append(x.sorted, p)
		}
		x.exact[p] = append(x.exact[p], i)
	}
	sort.Strings(x.sorted)
	return x
}

// Judgeable says whether writes paths can be compared with the index's pattern reads within the
// bound.
func (x *ReadIndex) Judgeable(writes int) bool {
	return len(x.patterns)*writes <= maxPatternChecks
}

// ReadersOf are the reads a write (or removal) of the file p reaches: p itself, a directory above
// it (ExecSearchPath=, a bound directory), a file below it.
func (x *ReadIndex) ReadersOf(p string) []*NodeRead {
	c := strings.TrimSuffix(nodePath(p), "/")
	k := dirKey(c)
	var out []*NodeRead
	add := func(is []int) {
		for _, i := range is {
			out = append(out, &x.reads[i])
		}
	}
	for a := k; ; a = parentDir(a) {
		add(x.exact[a])
		if a == "/" {
			break
		}
	}
	below := strings.TrimSuffix(k, "/") + "/"
	for i := sort.SearchStrings(x.sorted, below); i < len(x.sorted) && strings.HasPrefix(x.sorted[i], below); i++ {
		if x.sorted[i] != k {
			add(x.exact[x.sorted[i]])
		}
	}
	lit := globEscape(c) // a written path is a name, never a pattern
	for _, i := range x.patterns {
		if pathsMeet(lit, x.reads[i].Path) {
			out = append(out, &x.reads[i])
		}
	}
	return out
}

// globEscape escapes p's pattern characters: the pattern that matches p alone.
func globEscape(p string) string {
	if !strings.ContainsAny(p, "*?[{\\") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte("*?[{\\", p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// dirKey is p without a trailing "/", the root as "/".
func dirKey(p string) string {
	if p = strings.TrimSuffix(p, "/"); p == "" {
		return "/"
	}
	return p
}

func parentDir(p string) string {
	k := strings.LastIndexByte(p, '/')
	if k <= 0 {
		return "/"
	}
	return p[:k]
}

// FileReadWhy says why writing (or removing) the file p, which the reads rs reach, is refused,
// naming every reader (up to maxNamedReads of them).
func FileReadWhy(p string, rs []*NodeRead) string {
	return "file " + p + ": " + readersSaid(rs) +
		": a file a unit reads as root (its environment, a program or script it runs, a path it watches, its credentials) is denied to every rule, as the audit's denied rows are"
}
