package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// buildPlan is the plan from cur to des under the policy.
func buildPlan(t *testing.T, pol *allowlist.Policy, cur, des *fixture.Config) *plan.Plan {
	t.Helper()
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol})
	require.NoError(t, err)
	return p
}

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
