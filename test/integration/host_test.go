package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
)

// hostAt is the Host on the node root dir (opened here, closed at cleanup), its state dir where the
// agent keeps it, its units and policy as given (a nil policy: the default).
func hostAt(t *testing.T, dir string, units actions.Units, pol *allowlist.Policy) apply.Host {
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	return apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: units, Policy: pol}
}

// userSystemd is the test's user systemd manager over D-Bus (closed at cleanup).
func userSystemd(t *testing.T) *actions.Systemd {
	sd, err := actions.DialSystemd(context.Background(), actions.UserSocket())
	require.NoError(t, err)
	t.Cleanup(sd.Close)
	return sd
}
