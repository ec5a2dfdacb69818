package allowlist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Issue 27, class 1: the policy file (and the NodeDisruptionPolicy in it) is parsed at a bounded
// cost, under the payload budget: what would expand or nest without bound is an error naming the
// file, never an out-of-memory.
func TestPolicyParseCostIsBounded(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		laughs += string(i) + ": &" + string(i) + " [*" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + ", *" + string(i-1) + "]\n"
	}
	bad := map[string]string{
		"billion laughs":             laughs + "paths: []\n",
		"alias in the NDP":           "nodeDisruptionPolicy:\n  files: &f\n  - {path: /etc/a, actions: [{type: None}]}\nspec: {nodeDisruptionPolicy: {files: *f}}\n",
		"deep flow nesting":          "paths: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"too many nodes":             "allowedUnits:\n" + strings.Repeat("- crio.service\n", 70000),
		"larger than the file limit": "paths: []\n" + strings.Repeat("#", allowlist.MaxRulesSize),
		"a second document":          "paths: []\n---\nallowedUnits: [evil.service]\n",
	}
	dir := t.TempDir()
	for name, doc := range bad {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			require.NoError(t, os.WriteFile(file, []byte(doc), 0o644))
			var err error
			cost := memtest.Allocated(func() { _, err = allowlist.LoadPolicy(file) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), file, "the error names the file")
			assert.Less(t, cost, uint64(diff.MaxPayloadSize), "refused within the budget: %d bytes", cost)
		})
	}
	// The largest policy within the bounds parses, within the budget too.
	gen := func(n int) string {
		var b strings.Builder
		b.WriteString("configMapCeiling:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "- {prefix: /etc/app/x%d/, actions: [None]}\n", i)
		}
		return b.String()
	}
	lo, hi := 1, allowlist.MaxRulesSize/40
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, err := allowlist.ParsePolicy([]byte(gen(mid))); err == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	doc := gen(lo)
	var err error
	cost := memtest.Allocated(func() { _, err = allowlist.ParsePolicy([]byte(doc)) })
	require.NoError(t, err)
	t.Logf("%d entries, %d bytes of policy: %d MiB allocated", lo, len(doc), cost>>20)
	assert.Greater(t, lo, 1000)
	assert.Less(t, cost, uint64(diff.MaxPayloadSize))
}
