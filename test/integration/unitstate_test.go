package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// Unit enable, disable, mask, unmask and removal under a unit rule, against the real user manager:
// applied as the machine-config daemon applies them, and rolled back like any other action when a
// later action fails.

const (
	stateUnit   = "mcdstate.service"
	failingUnit = "zzfailing.service" // after stateUnit in the plan's order
	// trigger is a file whose rule restarts failingUnit: a payload that changes it fails after every
	// state action ran, so the refresh rolls back.
	trigger = "/etc/mcdstate/trigger"
)

const stateUnitFile = "[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=default.target\n"

var statePolicy = `nodeDisruptionPolicy:
  files:
  - path: ` + trigger + `
    actions: [{type: Restart, restart: {serviceName: ` + failingUnit + `}}]
  units:
  - name: ` + stateUnit + `
    actions: [{type: Restart, restart: {serviceName: ` + stateUnit + `}}]
`

// stateHost is a node root whose /etc/systemd/system is the user manager's unit directory, with
// stateUnit installed from the payload's current contents (enabled as asked, running) and
// failingUnit, a oneshot whose start fails while the trigger file says "bad".
func stateHost(t *testing.T, enabled bool) (apply.Host, *systemdtest.Manager) {
	mgr := systemdtest.Require(t)
	dir := unitRoot(t, mgr, func() {
		_, _ = mgr.Systemctl("stop", stateUnit)
		_, _ = mgr.Systemctl("disable", stateUnit)
		_, _ = mgr.Systemctl("unmask", stateUnit)
		_ = os.Remove(filepath.Join(mgr.UnitDir, stateUnit))
		_ = os.Remove(filepath.Join(mgr.UnitDir, failingUnit))
		_, _ = mgr.Systemctl("daemon-reload")
		_, _ = mgr.Systemctl("reset-failed")
	})
	require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, stateUnit), []byte(stateUnitFile), 0o644))
	// It fails while the trigger says "bad": on the new files, not on the restored ones.
	failing := "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c 'test \"$(cat " + filepath.Join(dir, trigger) + " 2>/dev/null)\" != bad'\n"
	require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, failingUnit), []byte(failing), 0o644))
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	if enabled {
		_, err = mgr.Systemctl("enable", stateUnit)
		require.NoError(t, err)
	}
	_, err = mgr.Systemctl("start", stateUnit)
	require.NoError(t, err)
	pol, err := allowlist.ParsePolicy([]byte(statePolicy))
	require.NoError(t, err)
	return hostAt(t, dir, userSystemd(t), pol), mgr
}

// statePayload is a config with stateUnit as given, and the trigger file when fail is set.
func statePayload(u *types.Unit, fail bool) *fixture.Config {
	c := fixture.Ignition("3.2.0")
	if u != nil {
		c.Systemd.Units = []types.Unit{*u}
	}
	if fail {
		c.File(trigger, []byte("bad"), 0o644)
	}
	return c
}

func stateUnitEntry(enabled, mask *bool, contents *string) *types.Unit {
	return &types.Unit{Name: stateUnit, Enabled: enabled, Mask: mask, Contents: contents}
}

func bp(b bool) *bool     { return &b }
func sp(s string) *string { return &s }
func runState(t *testing.T, n apply.Host, cur, des *fixture.Config) *apply.Result {
	t.Helper()
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n, apply.Request{Desired: des.JSON(), Hash: "h", Current: c})
	require.NoError(t, err)
	return res
}

func systemctl(t *testing.T, mgr *systemdtest.Manager, args ...string) string {
	t.Helper()
	out, _ := mgr.Systemctl(args...) // is-enabled and is-active exit non-zero for "disabled" and "inactive"
	return strings.TrimSpace(out)
}

func TestUnitEnableAndItsRollback(t *testing.T) {
	n, mgr := stateHost(t, false)
	cur := statePayload(stateUnitEntry(bp(false), nil, sp(stateUnitFile)), false)
	require.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", stateUnit))

	// Enabled, then a later action fails: the rollback disables it again.
	res := runState(t, n, cur, statePayload(stateUnitEntry(bp(true), nil, sp(stateUnitFile)), true))
	require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Contains(t, res.Reason, "Restart "+failingUnit)
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", stateUnit), "the enable is undone")

	res = runState(t, n, cur, statePayload(stateUnitEntry(bp(true), nil, sp(stateUnitFile)), false))
	require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
	assert.Equal(t, []plan.UnitAction{{Unit: stateUnit, Action: allowlist.ActionEnable, Undo: allowlist.ActionDisable},
		{Action: allowlist.ActionDaemonReload}, {Unit: stateUnit, Action: allowlist.ActionRestart}}, res.Actions)
	assert.Equal(t, "enabled", systemctl(t, mgr, "is-enabled", stateUnit))
	_, err := os.Lstat(filepath.Join(mgr.UnitDir, "default.target.wants", stateUnit))
	assert.NoError(t, err, "the [Install] link is made")

	// Disabled again by the next payload.
	res = runState(t, n, statePayload(stateUnitEntry(bp(true), nil, sp(stateUnitFile)), false), cur)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", stateUnit))
}

func TestUnitRemovalStopsDisablesAndRollsBack(t *testing.T) {
	n, mgr := stateHost(t, true)
	cur := statePayload(stateUnitEntry(bp(true), nil, sp(stateUnitFile)), false)
	unitPath := filepath.Join(mgr.UnitDir, stateUnit)
	before := mgr.MainPID(t, stateUnit)
	require.NotZero(t, before)

	// Removed, then a later action fails: the file is back, the unit enabled and running again.
	res := runState(t, n, cur, statePayload(nil, true))
	require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
	assert.True(t, res.RolledBack, res.Reason)
	b, err := os.ReadFile(unitPath)
	require.NoError(t, err)
	assert.Equal(t, stateUnitFile, string(b), "the unit file is restored")
	assert.Equal(t, "enabled", systemctl(t, mgr, "is-enabled", stateUnit), "the disable is undone")
	assert.Equal(t, "active", systemctl(t, mgr, "is-active", stateUnit), "the stop is undone")
	assert.NotEqual(t, before, mgr.MainPID(t, stateUnit), "it was stopped, then started again")

	res = runState(t, n, cur, statePayload(nil, false))
	require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
	assert.Equal(t, []plan.UnitAction{{Unit: stateUnit, Action: allowlist.ActionStop, Undo: allowlist.ActionStart},
		{Unit: stateUnit, Action: allowlist.ActionDisable, Undo: allowlist.ActionEnable}, {Action: allowlist.ActionDaemonReload}}, res.Actions)
	_, err = os.Lstat(unitPath)
	assert.True(t, os.IsNotExist(err), "the unit file is removed")
	_, err = os.Lstat(filepath.Join(mgr.UnitDir, "default.target.wants", stateUnit))
	assert.True(t, os.IsNotExist(err), "its [Install] link is removed")
	assert.NotEqual(t, "active", systemctl(t, mgr, "is-active", stateUnit), "it was stopped")
}

func TestUnitMaskUnmaskAndRollback(t *testing.T) {
	n, mgr := stateHost(t, false)
	cur := statePayload(stateUnitEntry(nil, nil, sp(stateUnitFile)), false)
	masked := statePayload(stateUnitEntry(nil, bp(true), nil), false)
	unitPath := filepath.Join(mgr.UnitDir, stateUnit)

	// Masked, then a later action fails: unmasked, the file back.
	res := runState(t, n, cur, statePayload(stateUnitEntry(nil, bp(true), nil), true))
	require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
	assert.True(t, res.RolledBack, res.Reason)
	b, err := os.ReadFile(unitPath)
	require.NoError(t, err)
	assert.Equal(t, stateUnitFile, string(b), "the unit file is restored over the mask")
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", stateUnit), "not masked")

	res = runState(t, n, cur, masked)
	require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
	target, err := os.Readlink(unitPath)
	require.NoError(t, err, "the unit is a link now")
	assert.Equal(t, "/dev/null", target)
	assert.Equal(t, "masked", systemctl(t, mgr, "is-enabled", stateUnit))

	// Unmasked (no contents in the payload: the link goes), and the unit the OS provides runs again.
	// $XDG_RUNTIME_DIR/systemd/user stands in for /usr/lib/systemd/system: below the unit directory.
	vendor := filepath.Join(mgr.RuntimeDir, "systemd/user", stateUnit)
	require.NoError(t, os.MkdirAll(filepath.Dir(vendor), 0o755))
	require.NoError(t, os.WriteFile(vendor, []byte(stateUnitFile), 0o644))
	t.Cleanup(func() { _ = os.Remove(vendor) })
	res = runState(t, n, masked, statePayload(stateUnitEntry(nil, bp(false), nil), false))
	require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
	_, err = os.Lstat(unitPath)
	assert.True(t, os.IsNotExist(err), "the mask is removed")
	assert.Equal(t, "active", systemctl(t, mgr, "is-active", stateUnit), "the rule restarted the unit")

	// Unmasking and writing the file in one refresh is refused, nothing changed.
	_, err = mgr.Systemctl("mask", stateUnit)
	require.NoError(t, err)
	res = runState(t, n, masked, cur)
	require.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Contains(t, res.Reason, "unmasking a unit and writing its file in one refresh")
	assert.Equal(t, "masked", systemctl(t, mgr, "is-enabled", stateUnit))
}

// A unit no rule names stays refused, enabling included.
func TestUnitStateWithoutRuleRefused(t *testing.T) {
	n, mgr := stateHost(t, false)
	other := func(enabled bool) *fixture.Config {
		c := fixture.Ignition("3.2.0")
		c.Systemd.Units = []types.Unit{{Name: "other.service", Enabled: bp(enabled), Contents: sp(stateUnitFile)}}
		return c
	}
	res := runState(t, n, other(false), other(true))
	require.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Contains(t, res.Reason, "systemd units and dropins are not changed by a refresh")
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", stateUnit))
}

// A unit the refresh adds, enables and restarts, then a later action fails: the rollback removes
// it and disables it, and does not fail restarting a unit that no longer exists.
func TestAddedUnitRollsBackCompletely(t *testing.T) {
	n, mgr := stateHost(t, false)
	_, err := mgr.Systemctl("stop", stateUnit)
	require.NoError(t, err)
	unitPath := filepath.Join(mgr.UnitDir, stateUnit)
	require.NoError(t, os.Remove(unitPath))
	_, err = mgr.Systemctl("daemon-reload")
	require.NoError(t, err)

	res := runState(t, n, statePayload(nil, false), statePayload(stateUnitEntry(bp(true), nil, sp(stateUnitFile)), true))
	require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
	assert.True(t, res.RolledBack, res.Reason)
	assert.False(t, res.RollbackIncomplete)
	_, err = os.Lstat(unitPath)
	assert.True(t, os.IsNotExist(err), "the added unit file is removed again")
	_, err = os.Lstat(filepath.Join(mgr.UnitDir, "default.target.wants", stateUnit))
	assert.True(t, os.IsNotExist(err), "its [Install] link is removed again")
	assert.NotEqual(t, "active", systemctl(t, mgr, "is-active", stateUnit), "started by the refresh, stopped by its rollback")
	assert.Contains(t, strings.Join(actionNames(res.Actions), " "), "Restart "+stateUnit, "it was restarted before the failure")
}

func actionNames(list []plan.UnitAction) []string {
	var out []string
	for _, a := range list {
		out = append(out, string(a.Action)+" "+a.Unit)
	}
	return out
}

// Enabling a unit the OS provides whose [Install] Also= names another unit would enable a unit no
// rule names: the executor refuses it, and the rollback's disable takes both links away again.
func TestEnableWithAlsoIsRolledBack(t *testing.T) {
	n, mgr := stateHost(t, false)
	// The unit the OS provides ($XDG_RUNTIME_DIR/systemd/user stands in for /usr/lib/systemd/system).
	vendorDir := filepath.Join(mgr.RuntimeDir, "systemd/user")
	require.NoError(t, os.MkdirAll(vendorDir, 0o755))
	require.NoError(t, os.Remove(filepath.Join(mgr.UnitDir, stateUnit)))
	for name, contents := range map[string]string{stateUnit: stateUnitFile + "Also=mcdother.service\n", "mcdother.service": stateUnitFile} {
		require.NoError(t, os.WriteFile(filepath.Join(vendorDir, name), []byte(contents), 0o644))
		t.Cleanup(func() { _ = os.Remove(filepath.Join(vendorDir, name)) })
	}
	t.Cleanup(func() { _, _ = mgr.Systemctl("disable", "mcdother.service") })
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	res := runState(t, n, statePayload(stateUnitEntry(bp(false), nil, nil), false), statePayload(stateUnitEntry(bp(true), nil, nil), false))
	require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Contains(t, res.Reason, "Also=")
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", stateUnit))
	assert.Equal(t, "disabled", systemctl(t, mgr, "is-enabled", "mcdother.service"), "the unit no rule names is not left enabled")
}
