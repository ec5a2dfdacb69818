package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 10 (adversary other/04): one plan reads at most maxNodeUnitReads distinct unit names from
// the node: a payload naming tens of thousands of instances as dependencies made every node of a
// pool read its unit directories once per instance (minutes a node). Past the bound a name is an
// error (judged as unreadable: an instance refused), and names read before stay cached.
func TestNodeUnitReadsAreBoundedPerPlan(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "usr/lib/systemd/system")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app@.service"), []byte("[Service]\nExecStart=/bin/echo %i\n"), 0o644))
	r := NodeUnitsAt(root)
	for i := 0; i < maxNodeUnitReads; i++ {
		_, _, err := r.ReadUnit(fmt.Sprintf("app@x%d.service", i))
		require.NoError(t, err, i)
	}
	_, ok, err := r.ReadUnit("app@over.service")
	assert.False(t, ok)
	assert.ErrorContains(t, err, "too costly to judge")
	_, ok, err = r.ReadUnit("app@x0.service")
	assert.NoError(t, err, "a name read before is cached")
	assert.True(t, ok)
}
