package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/memtest"
)

// Issue 27, class 1: a YAML MachineConfig's conversion costs at most the payload budget. The worst
// documents within the node bound (as many nodes as the budget allows, of each shape) are measured;
// anything over it is refused before parsing.
func TestYAMLConversionCostIsBounded(t *testing.T) {
	max := int(MaxPayloadSize / yamlNodeCost)
	shapes := map[string]func(n int) string{
		"block sequence": func(n int) string { return "spec:\n  x:\n" + strings.Repeat("  - a\n", n/2) },
		"flow sequence":  func(n int) string { return "spec: {x: [" + strings.Repeat("a,", n) + "a]}\n" },
		"block mapping": func(n int) string {
			var b strings.Builder
			b.WriteString("spec:\n")
			for i := 0; i < n/2; i++ {
				fmt.Fprintf(&b, "  k%d: v\n", i)
			}
			return b.String()
		},
		"nested flow": func(n int) string { return "spec: " + strings.Repeat("[", n/4) + strings.Repeat("]", n/4) + "\n" },
	}
	for name, gen := range shapes {
		t.Run(name, func(t *testing.T) {
			doc := gen(max - 8)
			var err error
			cost := memtest.Allocated(func() { _, err = yamlToJSON([]byte(doc)) })
			t.Logf("%d bytes, %d nodes: %d MiB allocated (err %v)", len(doc), countAny([]byte(doc), "\n-:,[{"), cost>>20, err)
			assert.Less(t, cost, uint64(MaxPayloadSize), "within the budget")
			_, err = yamlToJSON([]byte(gen(2 * max)))
			assert.Error(t, err, "over the node bound: refused")
		})
	}
}

// adv27 round 4, F2: a YAML document's bytes are charged too, not only its nodes. One long scalar
// (20 MiB cost 190 MiB, 60 MiB 405 MiB) or a double-quoted string of escapes is refused before
// parsing; the worst scalars at the bound allocate under 45 MiB at the default budget.
func TestYAMLScalarCostIsBounded(t *testing.T) {
	head := "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: x}\nspec:\n  config: {ignition: {version: 3.2.0}}\n"
	shapes := map[string]func(n int) string{
		"plain scalar":              func(n int) string { return head + "x: " + strings.Repeat("a", n) + "\n" },
		"double-quoted":             func(n int) string { return head + "x: \"" + strings.Repeat("a", n) + "\"\n" },
		"double-quoted \\u00e9":     func(n int) string { return head + "x: \"" + strings.Repeat(`\u00e9`, n/6) + "\"\n" },
		"double-quoted \\n":         func(n int) string { return head + "x: \"" + strings.Repeat(`\n`, n/2) + "\"\n" },
		"double-quoted \\t":         func(n int) string { return head + "x: \"" + strings.Repeat(`\t`, n/2) + "\"\n" },
		"double-quoted \\0":         func(n int) string { return head + "x: \"" + strings.Repeat(`\0`, n/2) + "\"\n" },
		"double-quoted \\L":         func(n int) string { return head + "x: \"" + strings.Repeat(`\L`, n/2) + "\"\n" },
		"single-quoted ''":          func(n int) string { return head + "x: '" + strings.Repeat("''", n/2) + "'\n" },
		"HTML characters":           func(n int) string { return head + "x: \"" + strings.Repeat("<", n) + "\"\n" },
		"HTML characters, plain":    func(n int) string { return head + "x: a" + strings.Repeat("&<>", n/3) + "\n" },
		"\\u2028 (escaped by JSON)": func(n int) string { return head + "x: \"" + strings.Repeat("\u2028", n/3) + "\"\n" },
		"a data URL":                func(n int) string { return head + "x: \"data:;base64," + strings.Repeat("QUJD", n/4) + "\"\n" },
	}
	for name, gen := range shapes {
		t.Run(name, func(t *testing.T) {
			// The largest document of the shape that the bound accepts.
			lo, hi := 0, int(MaxPayloadSize)
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if checkYAMLCost([]byte(gen(mid)), MaxPayloadSize) == nil {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			doc := gen(lo)
			var err error
			cost := memtest.Allocated(func() { _, err = yamlToJSON([]byte(doc)) })
			t.Logf("%d bytes at the bound: %d MiB allocated (%.1f a byte)", len(doc), cost>>20, float64(cost)/float64(len(doc)))
			require.NoError(t, err)
			assert.Greater(t, len(doc), 512<<10, "a MachineConfig of half a MiB is accepted")
			assert.Less(t, cost, uint64(45<<20))
			// Over it (and the adversary's 20 MiB): refused before parsing, naming the bound.
			for _, n := range []int{lo + 1024, 20 << 20} {
				over := []byte(gen(n))
				cost = memtest.Allocated(func() { _, err = yamlToJSON(over) })
				require.ErrorIs(t, err, ErrYAMLCost)
				assert.Contains(t, err.Error(), "--max-payload-bytes")
				assert.Less(t, cost, uint64(64<<10), "refused before parsing")
			}
		})
	}
}

// The payload and an embedded MachineConfig name what is refused.
func TestYAMLCostErrorsNameTheDocument(t *testing.T) {
	doc := "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nspec:\n  config: {ignition: {version: 3.2.0}}\nx: " + strings.Repeat("a", 20<<20) + "\n"
	_, err := Decode([]byte(doc))
	require.ErrorIs(t, err, ErrYAMLCost)
	assert.True(t, strings.HasPrefix(err.Error(), "payload: YAML too costly to parse: YAML of "), err.Error())
	_, err = newDecoder().parseMachineConfig([]byte(doc))
	require.ErrorIs(t, err, ErrYAMLCost)
	assert.Contains(t, err.Error(), "MachineConfig: YAML too costly")
}
