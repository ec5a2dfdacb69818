package actions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Side files no journal accounts for (issue 20 item 3, the adversary's sweep case): a temp file
// (new contents: payload bytes) is removed, new name or a version 2 one; a backup or a restore's
// copy that is its file under a second name (same inode, or same bytes) is removed; one that is not,
// or whose file is gone, may be an original and is kept, reported, untouched. Only regular files go.
func TestSweepSidesKeepsWhatMayBeAnOriginal(t *testing.T) {
	r, dir := newRoot(t)
	const reg, pol, gone = "/etc/containers/registries.conf", "/etc/containers/policy.json", "/etc/containers/gone.conf"
	write := func(p, s string) { require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)) }
	write(reg, "live")
	write(pol, "{}")
	rt, rb, rr := actions.SideFiles(reg)
	pt, pb, _ := actions.SideFiles(pol)
	_, gb, _ := actions.SideFiles(gone)
	write(rt, "SECRET new contents")
	write(rb, "an older original")
	write(rr, "live") // same bytes: a copy of the file
	require.NoError(t, os.Link(filepath.Join(dir, pol), filepath.Join(dir, pb)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, pt), 0o700)) // not a regular file: never removed
	write(gb, "the only copy of gone.conf")
	write("/etc/containers/.registries.conf.refresh-agent-tmp", "SECRET v2 temp")
	write("/etc/containers/.policy.json.refresh-agent-backup", "{}")
	write("/etc/containers/.refresh-agent-0123456789abcdef01234567-backup", "whose?")
	write("/etc/containers/unrelated.conf", "x")

	kept, err := actions.SweepSides(r, []string{reg, pol, gone})
	require.NoError(t, err)
	var left []string
	entries, err := os.ReadDir(filepath.Join(dir, "etc/containers"))
	require.NoError(t, err)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	assert.ElementsMatch(t, []string{"registries.conf", "policy.json", "unrelated.conf", filepath.Base(rb), filepath.Base(pt), filepath.Base(gb),
		".refresh-agent-0123456789abcdef01234567-backup"}, left)
	require.Len(t, kept, 4, "%v", kept)
	for _, k := range kept {
		if strings.Contains(k, filepath.Base(pt)) {
			assert.Contains(t, k, "is a directory at the agent's side file name of "+pol, "named, never removed")
			continue
		}
		assert.Contains(t, k, "may be an original")
	}
	assert.True(t, strings.HasPrefix(kept[0], "/etc/containers/.refresh-agent-"), kept[0])
	data, _ := os.ReadFile(filepath.Join(dir, rb))
	assert.Equal(t, "an older original", string(data), "kept untouched")

	// The plan refuses a refresh of a file whose stale backup is kept; the dry run's Check too.
	err = actions.Check(r, t.TempDir(), []actions.Op{{Path: reg, Data: []byte("new"), Mode: 0o644}}, actions.Meta{})
	require.ErrorIs(t, err, actions.ErrSideTaken)
	assert.True(t, actions.IsRefusal(err))
	assert.Contains(t, err.Error(), rb)
	_, err = actions.Prepare(r, filepath.Join(t.TempDir(), "state"), []actions.Op{{Path: reg, Data: []byte("new"), Mode: 0o644}}, actions.Meta{})
	require.ErrorIs(t, err, actions.ErrSideTaken)
	data, _ = os.ReadFile(filepath.Join(dir, rb))
	assert.Equal(t, "an older original", string(data), "never replaced by the next apply")
}
