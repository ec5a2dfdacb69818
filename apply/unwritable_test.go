package apply_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

func chattr(t *testing.T, flag, p string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("chattr needs root")
	}
	out, err := exec.Command("chattr", flag, p).CombinedOutput()
	if err != nil {
		t.Skipf("chattr %s %s: %v %s", flag, p, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", "-a", p).Run() })
}

// What the real run would fail on half way, the dry run refuses first (issue 27 item 7, adversary
// F5 and adv20 #8): a target that is a directory or a FIFO, a target or its directory immutable or
// append-only, a missing parent under an immutable directory, an immutable state dir, an immutable
// /var/lib where the state dir would be created. Both refuse (exit 3) with the same reason naming
// the path, and nothing is written.
func TestDryRunRefusesWhatTheWriteWouldFailOn(t *testing.T) {
	newConf := "/etc/containers/registries.d/new.conf"
	for _, tc := range []struct {
		name    string
		desired *fixture.Config
		setup   func(t *testing.T, n *node)
		names   string
	}{
		{"target is a directory", v2(), func(t *testing.T, n *node) {
			require.NoError(t, os.Remove(filepath.Join(n.dir, registries)))
			require.NoError(t, os.Mkdir(filepath.Join(n.dir, registries), 0o755))
		}, registries},
		{"target is a fifo", v2(), func(t *testing.T, n *node) {
			require.NoError(t, os.Remove(filepath.Join(n.dir, registries)))
			require.NoError(t, syscall.Mkfifo(filepath.Join(n.dir, registries), 0o644))
		}, registries},
		{"target immutable", v2(), func(t *testing.T, n *node) { chattr(t, "+i", filepath.Join(n.dir, pullSecret)) }, pullSecret},
		{"target append-only", v2(), func(t *testing.T, n *node) { chattr(t, "+a", filepath.Join(n.dir, pullSecret)) }, pullSecret},
		{"target dir immutable", v2(), func(t *testing.T, n *node) { chattr(t, "+i", filepath.Join(n.dir, "etc/containers")) }, registries},
		{"ancestor immutable", v2().File(newConf, []byte("x"), 0o644), func(t *testing.T, n *node) {
			chattr(t, "+i", filepath.Join(n.dir, "etc/containers"))
		}, "/etc/containers"},
		{"state dir immutable", v2(), func(t *testing.T, n *node) { chattr(t, "+i", n.StateDir) }, "var/lib/refresh-agent"},
		{"state dir immutable, no lock file yet", v2(), func(t *testing.T, n *node) {
			require.NoError(t, os.Remove(filepath.Join(n.StateDir, "lock")))
			chattr(t, "+i", n.StateDir)
		}, "var/lib/refresh-agent"},
		{"var/lib immutable, no state dir", v2(), func(t *testing.T, n *node) {
			n.StateDir = filepath.Join(n.dir, "var/lib/refresh-agent-new")
			chattr(t, "+i", filepath.Join(n.dir, "var/lib"))
		}, "var/lib"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			tc.setup(t, n)
			before := n.treeHash(t)
			req := apply.Request{Desired: tc.desired.JSON(), Hash: "v2"}
			if apply.CurrentHash(n.StateDir) == "" {
				cur, err := diff.Decode(v1().JSON())
				require.NoError(t, err)
				req.Current = cur
			}
			dryReq := req
			dryReq.DryRun = true
			dry, err := apply.Run(context.Background(), n.Host, dryReq)
			require.NoError(t, err)
			res, err := apply.Run(context.Background(), n.Host, req)
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the same reason")
			assert.Contains(t, res.Reason, tc.names)
			assert.Equal(t, before, n.treeHash(t), "nothing written")
		})
	}
}

// The daemon's record a directory: the plan keeps it coherent and reads it, and the refresh is a
// refusal naming it in both runs (the adversary's g_dry "mcd record is a dir": failed, exit 1).
func TestDaemonRecordTakenIsARefusal(t *testing.T) {
	n := newNode(t)
	mcd := filepath.Join(n.dir, apply.MCDCurrentConfig)
	_ = os.Remove(mcd)
	require.NoError(t, os.MkdirAll(filepath.Join(mcd, "x"), 0o755))
	dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
	require.NoError(t, err)
	res := n.run(t, v2().JSON(), "v2")
	if dry.Outcome == api.OutcomePlanned {
		t.Skip("this payload does not touch the daemon's record")
	}
	assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
	assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Equal(t, dry.Reason, res.Reason)
	assert.Contains(t, res.Reason, apply.MCDCurrentConfig)
}
