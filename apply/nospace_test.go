package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

// The dry run is the whole truth on the node, its free space too (adversary r13 a/02: --dry-run
// said planned on a full filesystem, the real run failed with ENOSPC writing the temp file and
// rolled back). On a real tmpfs: with the root full, with too few inodes, and with the state dir
// on another, full, filesystem, the dry run and the real run both fail (a node condition the
// agent retries, exit 1) with one reason naming the filesystem, the bytes and inodes needed and
// free, and the real run writes nothing; with room, the dry run plans and the real run applies.
func TestDryRunSaysWhenTheNodeHasNoRoom(t *testing.T) {
	big := "/etc/containers/registries.d/big.conf"
	desired := v2().File(big, []byte(strings.Repeat("r", 40000)), 0o644)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, n *node)
		names string // in the reason; "" when it fits
	}{
		{"room", func(t *testing.T, n *node) {}, ""},
		{"root full", func(t *testing.T, n *node) { fixture.Fill(t, n.dir) }, "the filesystem of /etc/containers"},
		{"root without inodes", func(t *testing.T, n *node) {
			var st unix.Statfs_t
			require.NoError(t, unix.Statfs(n.dir, &st))
			fixture.RemountTmpfs(t, n.dir, fmt.Sprintf("nr_inodes=%d", st.Files-st.Ffree+2))
		}, "inodes free"},
		{"state dir on another filesystem, full", func(t *testing.T, n *node) {
			n.StateDir = filepath.Join(t.TempDir(), "state")
			require.NoError(t, os.Mkdir(n.StateDir, 0o700))
			fixture.Tmpfs(t, n.StateDir, "size=64k,mode=0700")
			fixture.Fill(t, n.StateDir)
		}, "holding the state dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fixture.Tmpfs(t, dir, "size=16m")
			require.NoError(t, fixture.NodeRoot(dir))
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			t.Cleanup(func() { root.Close() })
			n := &node{dir: dir, units: &fakeUnits{fail: map[string]int{}}}
			n.Host = apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: n.units}
			require.Equal(t, api.OutcomeApplied, n.run(t, v1().JSON(), "v1").Outcome)
			tc.setup(t, n)
			req := apply.Request{Desired: desired.JSON(), Hash: "v2"}
			if apply.CurrentHash(n.StateDir) == "" {
				cur, err := decode(v1().JSON())
				require.NoError(t, err)
				req.Current = cur
			}
			before := n.treeHash(t)
			dryReq := req
			dryReq.DryRun = true
			dry, err := apply.Run(context.Background(), n.Host, dryReq)
			require.NoError(t, err)
			if tc.names == "" {
				assert.Equal(t, api.OutcomePlanned, dry.Outcome, dry.Reason)
				res, err := apply.Run(context.Background(), n.Host, req)
				require.NoError(t, err)
				assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
				return
			}
			assert.Equal(t, api.OutcomeFailed, dry.Outcome, dry.Reason)
			assert.Contains(t, dry.Reason, actions.ErrNoSpace.Error())
			assert.Contains(t, dry.Reason, tc.names)
			res, err := apply.Run(context.Background(), n.Host, req)
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the same reason")
			assert.False(t, res.RolledBack || res.CleanupPending || res.Applied, "no transaction started")
			assert.Equal(t, before, n.treeHash(t), "nothing written")
			t.Log(res.Reason)
		})
	}
}
