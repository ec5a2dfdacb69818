package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/memtest"
)

func repeatLines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// Issue 27, class 1: the registries.conf the plan parses has a bounded cost. Inputs an adversary
// writes (each a few tens of KB that cost gigabytes unbounded) are refused before parsing, naming
// the file; the worst inputs within the bounds cost less than the payload budget.
func TestRegistriesParseCostIsBounded(t *testing.T) {
	over := map[string]string{
		"nested inline tables": "a = " + strings.Repeat("{b = ", 5000) + "1" + strings.Repeat("}", 5000) + "\n",
		"nested arrays":        "a = " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
		"dotted header":        "[" + strings.Repeat("a.", 10000) + "a]\n",
		"dotted array header":  "[[" + strings.Repeat("a.", 100) + "a]]\n",
		"dotted key":           strings.Repeat("a.", 20) + "k = 1\n",
		"quoted dotted key":    strings.Repeat(`"a".`, 20) + "k = 1\n",
		"inline dotted key":    "a = {" + strings.Repeat("b.", 20) + "c = 1}\n",
		"many keys":            repeatLines(30000, func(i int) string { return fmt.Sprintf("k%d = 1", i) }),
		"long array":           "a = [" + strings.Repeat("1,", 30000) + "1]\n",
		"over the budget":      strings.Repeat("# a comment line that costs nothing but its bytes\n", 30000),
		// Round 17: one long name over many short keys, each key's full name a copy of it.
		"long header, many keys": "[\"" + strings.Repeat("A", 500000) + "\"]\n" + repeatLines(2000, func(i int) string { return fmt.Sprintf("k%d = 1", i) }),
		"long inline key":        "x = { \"" + strings.Repeat("A", 500000) + "\" = {" + strings.Repeat("k = 1, ", 1999) + "k = 1} }\n",
		"long array key":         "\"" + strings.Repeat("A", 500000) + "\" = [" + strings.Repeat("{k = 1}, ", 1999) + "{k = 1}]\n",
	}
	for name, doc := range over {
		t.Run("refused/"+name, func(t *testing.T) {
			var why string
			var err error
			cost := memtest.Allocated(func() { why, err = registriesSafe([]byte("# current\n"), []byte(doc)) })
			require.Error(t, err, "the desired file over a bound is refused")
			assert.Empty(t, why)
			assert.Contains(t, err.Error(), "desired registries.conf is not parsed")
			assert.Less(t, cost, uint64(4*len(doc)+1<<20), "refused before parsing: %d bytes allocated", cost)
			// The same file as the current one is not judged: the cautious path, a drain.
			why, err = registriesSafe([]byte(doc), []byte("# desired\n"))
			require.NoError(t, err)
			assert.Contains(t, why, "the current file is not judged")
		})
	}
	// The worst inputs within the bounds: every bound at its limit, as large as the file may be.
	limit := int(diff.MaxPayloadSize / tomlByteCost)
	fill := func(unit string) string { return strings.Repeat(unit, limit/len(unit)) }
	within := map[string]string{
		"nested inline tables": repeatLines(limit/60, func(i int) string { return fmt.Sprintf("k%d = {a = {b = {c = {d = {e = {f = {g = 1}}}}}}}", i) }),
		"nested arrays":        fill("k = [[[[[[[[1]]]]]]]]\n"),
		"dotted headers":       repeatLines(limit/40, func(i int) string { return fmt.Sprintf("[a.b.c.h%d]", i) }),
		"dotted keys":          repeatLines(limit/40, func(i int) string { return fmt.Sprintf("a.b.c.k%d = 1", i) }),
		"array tables":         fill("[[registry]]\n[[registry.mirror]]\n"),
		"long dotted keys":     repeatLines(limit/200, func(i int) string { return fmt.Sprintf("%s.b.c.k%d = 1", strings.Repeat("a", 200), i) }),
		"long dotted headers":  repeatLines(limit/200, func(i int) string { return fmt.Sprintf("[%s.b.c.h%d]", strings.Repeat("a", 200), i) }),
		"long dotted inline":   repeatLines(limit/200, func(i int) string { return fmt.Sprintf("k%d = {%s.b.c.h = 1}", i, strings.Repeat("a", 200)) }),
		"registries": repeatLines(limit/120, func(i int) string {
			return fmt.Sprintf("[[registry]]\nprefix = \"r%d.io\"\nmirror = [{location = \"m%d.io\"}]", i, i)
		}),
	}
	for name, doc := range within {
		t.Run("within/"+name, func(t *testing.T) {
			doc = largestWithin(doc)
			require.NoError(t, checkTOMLBounds([]byte(doc)), "%d bytes", len(doc))
			require.Greater(t, len(doc), 10<<10)
			cost := memtest.Allocated(func() { _, _ = registriesSafe([]byte(doc), []byte(doc)) })
			t.Logf("%d bytes, parsed twice on each side: %d MiB allocated", len(doc), cost>>20)
			assert.Less(t, cost, uint64(diff.MaxPayloadSize), "the parse stays within the payload budget")
		})
	}
}

// The worst full names within the bounds: one long name over as many keys as the names' bound
// lets through (found by bisection on the key count), parsed within the payload budget.
func TestRegistriesLongNamesCostIsBounded(t *testing.T) {
	long := strings.Repeat("h", 2000)
	keys := func(n int, sep string, key func(int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(key(i))
		}
		return b.String()
	}
	shapes := map[string]func(n int) string{
		"header": func(n int) string {
			return "[" + long + "]\n" + keys(n, "\n", func(i int) string { return fmt.Sprintf("k%d = 1", i) }) + "\n"
		},
		"inline key": func(n int) string {
			return "x = { " + long + " = {" + keys(n, ", ", func(i int) string { return fmt.Sprintf("k%d = 1", i) }) + "} }\n"
		},
		"array key": func(n int) string {
			return long + " = [" + keys(n, ", ", func(int) string { return "{k = 1}" }) + "]\n"
		},
		"array of tables": func(n int) string {
			return keys(n, "\n", func(i int) string { return "[[\"" + long + "\"]]\nk = 1" }) + "\n"
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			lo, hi := 1, tomlMaxKeys
			require.NoError(t, checkTOMLBounds([]byte(shape(lo))))
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if checkTOMLBounds([]byte(shape(mid))) == nil {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			doc := shape(lo)
			require.Greater(t, lo, 100, "a long name over a hundred keys is a registries.conf the agent judges")
			cost := memtest.Allocated(func() { _, _ = registriesSafe([]byte(doc), []byte(doc)) })
			t.Logf("%d keys, %d bytes, parsed twice on each side: %d MiB allocated", lo, len(doc), cost>>20)
			assert.Less(t, cost, uint64(diff.MaxPayloadSize), "the parse stays within the payload budget")
			require.Error(t, checkTOMLBounds([]byte(shape(lo+1))), "one key more is over a bound")
		})
	}
}

// largestWithin cuts doc to its longest prefix of whole lines within the bounds.
func largestWithin(doc string) string {
	lines := strings.SplitAfter(doc, "\n")
	lo, hi := 0, len(lines)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if checkTOMLBounds([]byte(strings.Join(lines[:mid], ""))) == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.Join(lines[:lo], "")
}

// The scan reads TOML as its lexer does: brackets, dots and equals signs inside strings and
// comments count for nothing, and real registries.conf files pass.
func TestTOMLBoundsScanLikeTheLexer(t *testing.T) {
	ok := []string{
		"unqualified-search-registries = [\"registry.access.redhat.com\", \"docker.io\"]\n" +
			"short-name-mode = \"enforcing\"\n[[registry]]\nprefix = \"\"\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n" +
			"mirror-by-digest-only = true\n\n[[registry.mirror]]\nlocation = \"mirror.example.com:5000/ocp/release\"\npull-from-mirror = \"digest-only\"\n",
		"a = \"[[[[[[[[[[{{{{{{{{{a.b.c.d.e.f.g.h.i.j\" # [[[[[[[[[[[ a.b.c.d.e.f.g.h.i.j\n",
		"a = '''\n[[[[[[[[[[[[[[\na.b.c.d.e.f.g.h.i.j.k = 1\n'''\n",
		"a = \"\"\"\n\\\"\"\" still inside [[[[[[[[[[ a.b.c.d.e.f.g.h.i.j\"\"\"\n",
		"[registry.\"quay.io\".mirror]\nx = 1\n",
		"a = [\n  [1, 2],\n  [3, 4],\n]\n",
		"aliases = {\"a.b.c.d.e.f.g.h.i.j\" = \"x\"}\n",
		"x = 1.5\ny = [1.5, 2.5, 3.5]\n",
	}
	for _, doc := range ok {
		assert.NoError(t, checkTOMLBounds([]byte(doc)), doc)
	}
	for doc, want := range map[string]string{
		"a = \"unterminated\n":          "unterminated string",
		"a = '''never closed\n":         "unterminated multi-line string",
		"a = ]\n":                       "unbalanced",
		"[a.b.c.d.e]\n":                 "more than 4 parts",
		"a = [[[[[[[[[1]]]]]]]]]\n":     "nested more than 8 deep",
		"\"a\".\"b\".c.d.e = 1\n":       "more than 4 parts",
		"[[a]]\n[[a.b.c.d.e]]\nx = 1\n": "line 2",
	} {
		err := checkTOMLBounds([]byte(doc))
		if assert.Error(t, err, doc) {
			assert.Contains(t, err.Error(), want, doc)
		}
	}
}

// FuzzTOMLBounds: the scan never panics, and whatever it accepts the parser reads within the cost
// the bounds promise (TotalAlloc is an upper bound of the peak).
func FuzzTOMLBounds(f *testing.F) {
	for _, s := range []string{"[[registry]]\nprefix = \"a\"\nmirror = [{location = \"b\"}]\n", "a = {b = {c = 1}}\n",
		"[a.b.c]\nx = '''\n]]]\n'''\n", "a = \"\\\"[\"\n", "\"a\".b = 1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkTOMLBounds(data) != nil {
			return
		}
		cost := memtest.Allocated(func() { _, _ = registriesSafe(data, data) })
		if limit := uint64(diff.MaxPayloadSize); cost > limit {
			t.Fatalf("%d bytes within the bounds allocated %d (more than %d)", len(data), cost, limit)
		}
	})
}
