package apply_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Round 11 (core 01): with no agent record, the MCD's record and the MCS's content file are the
// current config; a 5 GB sparse one was read whole (5.2 GB RSS) before the decode's budget said
// no, and the error named the desired payload. Each is read up to the payload budget and refused
// naming itself.
func TestOversizedCurrentConfigFilesAreNeverReadWhole(t *testing.T) {
	for _, f := range []string{apply.MCDCurrentConfig, diff.MachineConfigContentPath} {
		t.Run(f, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, fixture.NodeRoot(dir))
			big := filepath.Join(dir, f)
			require.NoError(t, os.WriteFile(big, []byte(`{"kind":"MachineConfig"}`), 0o644))
			require.NoError(t, os.Truncate(big, 5<<30)) // sparse: costs no disk
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			var lerr error
			n := memtest.Allocated(func() { _, lerr = apply.LoadCurrent(root, filepath.Join(dir, "var/lib/refresh-agent")) })
			require.Error(t, lerr)
			assert.ErrorContains(t, lerr, f)
			assert.ErrorIs(t, lerr, actions.ErrTooLarge)
			assert.Less(t, n, uint64(2*diff.MaxPayloadSize+(64<<20)), "allocated %d bytes for a 5 GB file", n)
		})
	}
	// Just over the budget is over; at the budget it is read (and judged by the decoder).
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	p := filepath.Join(dir, "etc/x")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, diff.MaxPayloadSize+1))
	_, _, err = root.ReadFile("/etc/x")
	assert.ErrorIs(t, err, actions.ErrTooLarge)
	assert.ErrorContains(t, err, "/etc/x")
	require.NoError(t, os.Truncate(p, diff.MaxPayloadSize))
	data, _, err := root.ReadFile("/etc/x")
	require.NoError(t, err)
	assert.Len(t, data, int(diff.MaxPayloadSize))
}

// The MCD's record the refresh rewrites is only stat'ed for its owner and mode: a huge one on the
// node is not read into memory.
func TestTheMCDRecordIsReplacedWithoutBeingRead(t *testing.T) {
	n := newNode(t)
	mcd := filepath.Join(n.dir, "etc/mcd-currentconfig.json")
	require.NoError(t, os.WriteFile(mcd, nil, 0o600))
	// 1 GiB sparse (not 5: the original is still hashed, streamed, for its backup's proof).
	require.NoError(t, os.Truncate(mcd, 1<<30))
	var res *apply.Result
	used := memtest.Allocated(func() { res = n.run(t, v2().JSON(), "v2") })
	require.NotNil(t, res)
	assert.Less(t, used, uint64(1<<29), "allocated %d bytes", used)
	fi, err := os.Stat(mcd)
	require.NoError(t, err)
	assert.Less(t, fi.Size(), int64(1<<29), "the record was rewritten with the desired MachineConfig")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
