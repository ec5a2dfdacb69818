package apply_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

// overlayNode is a node root at v1 whose files all sit in the lower layer of an overlayfs (the
// upper on a tmpfs of upperOpts): every original the refresh replaces is copied up by its backup's
// link.
func overlayNode(t *testing.T, upperOpts string) *node {
	t.Helper()
	lower := newNode(t) // v1 applied and recorded on the plain filesystem
	lower.Root.Close()
	merged := t.TempDir()
	fixture.Overlay(t, lower.dir, merged, upperOpts)
	root, err := actions.OpenRoot(merged)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	n := &node{dir: merged, units: &fakeUnits{fail: map[string]int{}}}
	n.Host = apply.Host{Root: root, StateDir: filepath.Join(merged, "var/lib/refresh-agent"), Units: n.units}
	require.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	return n
}

// On an overlayfs whose layers are on different filesystems, a backup's hard link reports another
// device and inode than the original's name (the lower's): that is no symlink swapped in, and the
// refresh applies, and rolls back byte for byte (adversary r21 d/02: refused every time).
func TestOverlayRootAppliesAndRollsBack(t *testing.T) {
	n := overlayNode(t, "size=16m")
	before := n.treeHash(t)
	n.units.fail["crio.service"] = 1
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
	require.True(t, res.RolledBack, res.Reason)
	assert.Equal(t, before, n.treeHash(t), "every original back, nothing left")

	res = n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, "# v2 mirrors", n.read(t, registries))
	assert.Equal(t, `{"auths":{"v2":{}}}`, n.read(t, pullSecret))
	assert.False(t, res.CleanupPending, res.Reason)
	for _, p := range []string{registries, pullSecret} {
		matches, _ := filepath.Glob(filepath.Join(n.dir, filepath.Dir(p), ".*refresh-agent*"))
		assert.Empty(t, matches, "side files of %s", p)
	}
	fi, err := os.Stat(filepath.Join(n.dir, pullSecret))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
