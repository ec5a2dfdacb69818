package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
