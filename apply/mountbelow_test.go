package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Below what the node policy names (/etc/myapp/), the name is the payload's: a directory there
// that is a mount point reaches another place than the name says, and the write is refused by the
// dry run and the real run alike, writing nothing (adversary r22 d/01: an overlay whose upper layer
// is the state dir let a payload replace the lock; d/03: a bind of /etc/cron.d below the prefix
// took a cron line; d/02, d/06, d/07: the dry run planned what the real run failed on). A mount at
// the prefix itself is the node's own, and the refresh applies through it.
func TestAMountBelowThePolicysPrefixIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounts need root")
	}
	pol, err := allowlist.ParsePolicy([]byte("paths:\n- {path: /etc/myapp/, action: None}\n"))
	require.NoError(t, err)
	bind := func(t *testing.T, src, dst string) {
		require.NoError(t, os.MkdirAll(dst, 0o755))
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("mount --bind: %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
	}
	for _, tc := range []struct {
		name, target string
		mount        func(t *testing.T, dir, state string)
		applies      bool
	}{
		{"a bind of /etc/cron.d below it", "/etc/myapp/sub/evil", func(t *testing.T, dir, state string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/cron.d"), 0o755))
			bind(t, filepath.Join(dir, "etc/cron.d"), filepath.Join(dir, "etc/myapp/sub"))
		}, false},
		{"a bind of /var/lib, the state dir not made yet", "/etc/myapp/lib/refresh-agent/current.json", func(t *testing.T, dir, state string) {
			bind(t, filepath.Join(dir, "var/lib"), filepath.Join(dir, "etc/myapp/lib"))
		}, false},
		{"an overlay whose upper layer is the state dir", "/etc/myapp/ov/lock", func(t *testing.T, dir, state string) {
			lower, work := t.TempDir(), t.TempDir()
			require.NoError(t, os.MkdirAll(state, 0o700))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/myapp/ov"), 0o755))
			opts := "lowerdir=" + lower + ",upperdir=" + state + ",workdir=" + work
			if err := unix.Mount("overlay", filepath.Join(dir, "etc/myapp/ov"), "overlay", 0, opts); err != nil {
				t.Skipf("mount -t overlay: %v", err)
			}
			t.Cleanup(func() { _ = unix.Unmount(filepath.Join(dir, "etc/myapp/ov"), unix.MNT_DETACH) })
		}, false},
		{"a mount at the prefix itself", "/etc/myapp/sub/app.conf", func(t *testing.T, dir, state string) {
			bind(t, t.TempDir(), filepath.Join(dir, "etc/myapp"))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, fixture.NodeRoot(dir))
			state := filepath.Join(dir, "var/lib/refresh-agent")
			tc.mount(t, dir, state)
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			h := apply.Host{Root: root, StateDir: state, Policy: pol}
			empty, err := decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
			require.NoError(t, err)
			req := apply.Request{Desired: fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File(tc.target, []byte("* * * * * root id > /tmp/pwned\n"), 0o644).JSON(), Hash: "v2", Current: empty}
			dry := req
			dry.DryRun = true
			// What is compared: the node's tree, and the state dir (an overlay's merged view of its
			// upper layer, changed beneath it, is not one to walk).
			hashed := dir
			if tc.name == "an overlay whose upper layer is the state dir" {
				hashed = state
				// The real run takes the node lock (makes the lock file) before it plans.
				require.NoError(t, os.WriteFile(filepath.Join(state, actions.LockFile), nil, 0o600))
			}
			before, err := fixture.TreeHash(hashed)
			require.NoError(t, err)
			d, err := apply.Run(context.Background(), h, dry)
			require.NoError(t, err)
			if tc.applies {
				require.Equal(t, api.OutcomePlanned, d.Outcome, d.Reason)
				res, err := apply.Run(context.Background(), h, req)
				require.NoError(t, err)
				require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
				return
			}
			assert.Equal(t, api.OutcomeRefused, d.Outcome, d.Reason)
			assert.Contains(t, d.Reason, "is a mount point below /etc/myapp/")
			res, err := apply.Run(context.Background(), h, req)
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, d.Reason, res.Reason, "the same reason")
			after, err := fixture.TreeHash(hashed)
			require.NoError(t, err)
			if tc.name != "a bind of /var/lib, the state dir not made yet" {
				assert.Equal(t, before, after, "nothing written")
			}
		})
	}
}
