package allowlist_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// A judged file that nests thousands deep within the node bound (16 KiB, 8000 nodes) is refused,
// naming why, at the cost of its parse: the walk that looked for dispatch built a path at every
// level, the square of the depth (adversary r21 c/03: 129 MB for 16 KB).
func TestNMStateDeepNestingIsRefusedCheaply(t *testing.T) {
	judge := allowlist.ContentJudge("/etc/nmstate/openshift/cluster.yml")
	require.NotNil(t, judge)
	for name, doc := range map[string]string{
		"flow sequences":  "interfaces: " + strings.Repeat("[", 7900) + strings.Repeat("]", 7900) + "\n",
		"block sequences": "interfaces:\n" + strings.Repeat("- ", 7900) + "x\n",
		"flow mappings":   "interfaces: " + strings.Repeat("{a: ", 3900) + "x" + strings.Repeat("}", 3900) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := judge([]byte(doc))
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "nested")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(48<<20), "what the judge allocated")
		})
	}
	// Nesting at the bound is judged, and a dispatch found there is named by its path.
	deep := "interfaces:\n- name: eth1\n  bridge:\n    port:\n    - " + strings.Repeat("[", 50) + "{dispatch: x}" + strings.Repeat("]", 50) + "\n"
	err := judge([]byte(deep))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interfaces[0].bridge.port[0]"+strings.Repeat("[0]", 50)+".dispatch")
	assert.NotContains(t, err.Error(), "nested")
}
