package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// Round 11 (units 05), against the real user manager: a payload enables a unit the node provides
// (no contents) whose node file has [Install] Also=alsoother.service. systemctl enable would enable
// alsoother too; the plan reads the node's file under the root as the manager loads it, so the dry
// run and the real run refuse it with one reason, and nothing is enabled. The executor, asked to
// enable it anyway (a file the plan could not see), refuses the link EnableUnitFiles made for the
// other unit; an ordinary enable (a link into default.target.wants/) passes.
func TestEnablingAUnitWithAlsoIsRefusedByTheDryRunAndTheRealRun(t *testing.T) {
	const app, other, plain = "alsoapp.service", "alsoother.service", "alsoplain.service"
	mgr := systemdtest.Require(t)
	dir := unitRoot(t, mgr, func() {
		for _, u := range []string{app, other, plain} {
			_, _ = mgr.Systemctl("disable", u)
			_ = os.Remove(filepath.Join(mgr.UnitDir, u))
		}
		_, _ = mgr.Systemctl("daemon-reload")
	})
	const svc = "[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=default.target\n"
	for name, c := range map[string]string{app: svc + "Also=" + other + "\n", other: svc, plain: svc} {
		require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, name), []byte(c), 0o644))
	}
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	pol, err := allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  units:\n  - name: " + app + "\n    actions: [{type: Restart, restart: {serviceName: " + app + "}}]\n"))
	require.NoError(t, err)
	sd := userSystemd(t)
	n := hostAt(t, dir, sd, pol)
	entry := func(enabled bool) *fixture.Config {
		c := fixture.Ignition("3.2.0")
		c.Systemd.Units = []types.Unit{{Name: app, Enabled: &enabled}}
		return c
	}
	cur, err := diff.Decode(entry(false).JSON())
	require.NoError(t, err)
	var reasons []string
	for _, dry := range []bool{true, false} {
		res, err := apply.Run(context.Background(), n, apply.Request{Desired: entry(true).JSON(), Hash: "h", Current: cur, DryRun: dry})
		require.NoError(t, err)
		assert.Equal(t, api.OutcomeRefused, res.Outcome, "dry run %v: %s", dry, res.Reason)
		assert.Contains(t, res.Reason, "[Install] Also="+other+": to enable it would enable "+other+" too")
		assert.Empty(t, res.Actions)
		reasons = append(reasons, res.Reason)
	}
	assert.Equal(t, reasons[0], reasons[1], "the dry run shows the refusal the real run makes")
	for _, u := range []string{app, other} {
		assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", u), u)
	}

	// The executor's own check: the link of the other unit is refused (and the unit disabled again
	// by the rollback: here, by hand).
	ctx := context.Background()
	err = sd.Run(ctx, plan.UnitAction{Unit: app, Action: allowlist.ActionEnable})
	if assert.ErrorIs(t, err, actions.ErrUnitRefused) {
		assert.Contains(t, err.Error(), "default.target.wants/"+other)
		assert.Contains(t, err.Error(), "Also=")
	}
	require.NoError(t, sd.Run(ctx, plan.UnitAction{Unit: app, Action: allowlist.ActionDisable}))
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", other), "the disable follows Also= too")
	require.NoError(t, sd.Run(ctx, plan.UnitAction{Unit: plain, Action: allowlist.ActionEnable}))
	assert.Equal(t, "enabled", systemctl(t, mgr, "is-enabled", plain))
}
