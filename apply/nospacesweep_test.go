package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

// dryThenReal runs the dry run, then the real run, of desired on n and checks the promise the dry
// run makes: planned means the real run applies (never an ENOSPC half way and a rollback), and
// a refusal for room writes nothing. It returns whether the real run applied.
func dryThenReal(t *testing.T, n *node, desired []byte, trial string) bool {
	t.Helper()
	req := apply.Request{Desired: desired, Hash: "v2"}
	dryReq := req
	dryReq.DryRun = true
	dry, err := apply.Run(context.Background(), n.Host, dryReq)
	require.NoError(t, err, trial)
	before := n.treeHash(t)
	res, err := apply.Run(context.Background(), n.Host, req)
	require.NoError(t, err, trial)
	if dry.Outcome == api.OutcomePlanned {
		require.Equal(t, api.OutcomeApplied, res.Outcome, "%s: the dry run planned it; the real run: %s", trial, res.Reason)
		require.False(t, res.CleanupPending, "%s: %s", trial, res.Reason)
		return true
	}
	require.Contains(t, dry.Reason, actions.ErrNoSpace.Error(), trial)
	if res.Outcome != api.OutcomeApplied {
		require.Contains(t, res.Reason, actions.ErrNoSpace.Error(), "%s: the real run fails for room before anything is written", trial)
		require.Equal(t, before, n.treeHash(t), "%s: nothing written", trial)
	}
	return res.Outcome == api.OutcomeApplied
}

// Swept over every inode count from none spare to plenty on a real tmpfs, where each backup's hard
// link takes an inode too: whenever the dry run plans the refresh the real run applies it
// (adversary r21 d/01: the dry run planned, the real run's link failed with ENOSPC).
func TestDryRunInodesHoldOnTmpfs(t *testing.T) {
	desired := v2().File("/etc/containers/registries.d/big.conf", []byte(strings.Repeat("r", 40000)), 0o644).JSON()
	applied := 0
	for extra := 0; extra < 40 && applied < 2; extra++ {
		dir := t.TempDir()
		fixture.Tmpfs(t, dir, "size=16m")
		require.NoError(t, fixture.NodeRoot(dir))
		root, err := actions.OpenRoot(dir)
		require.NoError(t, err)
		n := &node{dir: dir, units: &fakeUnits{fail: map[string]int{}}}
		n.Host = apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: n.units}
		require.Equal(t, api.OutcomeApplied, n.run(t, v1().JSON(), "v1").Outcome)
		var st unix.Statfs_t
		require.NoError(t, unix.Statfs(dir, &st))
		fixture.RemountTmpfs(t, dir, fmt.Sprintf("nr_inodes=%d", st.Files-st.Ffree+uint64(extra)))
		if dryThenReal(t, n, desired, fmt.Sprintf("%d inodes spare", extra)) {
			applied++
		}
		root.Close()
	}
	require.NotZero(t, applied, "with room it applies")
}

// Swept over the upper layer's size on an overlayfs whose lower layer holds the originals (each
// backup copies one up, then copies it again): whenever the dry run plans the refresh the real run
// applies it (adversary r21 d/03: the copy-up was not charged).
func TestDryRunSpaceHoldsOnOverlay(t *testing.T) {
	big := "/etc/containers/registries.d/big.conf"
	v1big := v1().File(big, []byte(strings.Repeat("o", 300<<10)), 0o644)
	desired := v2().File(big, []byte(strings.Repeat("n", 300<<10)), 0o644).JSON()
	applied := 0
	for kib := 64; kib < 4096 && applied < 2; kib += 64 {
		lower := newNode(t)
		r1 := lower.run(t, v1big.JSON(), "v1")
		require.Equal(t, api.OutcomeApplied, r1.Outcome, r1.Reason)
		lower.Root.Close()
		merged := t.TempDir()
		fixture.Overlay(t, lower.dir, merged, fmt.Sprintf("size=%dk", kib))
		root, err := actions.OpenRoot(merged)
		require.NoError(t, err)
		n := &node{dir: merged, units: &fakeUnits{fail: map[string]int{}}}
		n.Host = apply.Host{Root: root, StateDir: filepath.Join(merged, "var/lib/refresh-agent"), Units: n.units}
		if dryThenReal(t, n, desired, fmt.Sprintf("upper layer of %d KiB", kib)) {
			applied++
		}
		root.Close()
		_ = os.RemoveAll(filepath.Join(merged, "unused"))
	}
	require.NotZero(t, applied, "with room it applies")
}
