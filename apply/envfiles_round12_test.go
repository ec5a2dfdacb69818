package apply_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

const ovsRulePolicy = "nodeDisruptionPolicy:\n  units:\n  - name: openvswitch.service\n    actions: [{type: Restart, restart: {serviceName: openvswitch.service}}]\n"

// ovsRun is apply (dry when dry) of a payload giving openvswitch.service a drop-in with line, on a
// node root holding RHCOS's openvswitch units.
func ovsRun(t *testing.T, line string, dry bool) (*apply.Result, *fakeUnits, string, string) {
	t.Helper()
	dir := linkNode(t, map[string]string{
		"/usr/lib/systemd/system/openvswitch.service":  "[Unit]\nRequires=ovsdb-server.service ovs-vswitchd.service\n[Service]\nType=oneshot\nExecStart=/bin/true\nRemainAfterExit=yes\n",
		"/usr/lib/systemd/system/ovsdb-server.service": "[Unit]\nPartOf=openvswitch.service\n[Service]\nType=forking\nEnvironmentFile=-/run/openvswitch.useropts\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovs-vswitchd start\n",
		"/usr/lib/systemd/system/ovs-vswitchd.service": "[Unit]\nPartOf=openvswitch.service\n[Service]\nType=forking\nEnvironmentFile=-/run/openvswitch.useropts\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovsdb-server start\n",
	})
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	pol, err := allowlist.ParsePolicy([]byte(ovsRulePolicy))
	require.NoError(t, err)
	cur, err := decode(fixture.Ignition("3.2.0").JSON())
	require.NoError(t, err)
	des := fixture.Ignition("3.2.0")
	text := "[Service]\n" + line + "\n"
	des.Systemd.Units = append(des.Systemd.Units, types.Unit{Name: "openvswitch.service", Dropins: []types.Dropin{{Name: "50-x.conf", Contents: &text}}})
	before, err := fixture.TreeHash(dir)
	require.NoError(t, err)
	units := &fakeUnits{fail: map[string]int{}}
	h := apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Policy: pol, Units: units}
	res, err := apply.Run(context.Background(), h, apply.Request{Desired: des.JSON(), Hash: "h", Current: cur, DryRun: dry})
	require.NoError(t, err)
	return res, units, dir, before
}

// Round 12 (environment files): the dry run refuses what the real run refuses, with the same
// reason, from the one plan: a changed line of openvswitch.service writing ovsdb-server's and
// ovs-vswitchd's environment file. The real run writes nothing and runs nothing; a line writing the
// unit's own file no unit reads is planned by the dry run and applied by the real run.
func TestTheDryRunRefusesAWriteOfAnotherUnitsEnvironmentFileAsTheRealRunDoes(t *testing.T) {
	for _, line := range []string{
		`ExecStartPre=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > /run/openvswitch.useropts'`,
		`ExecStartPre=/usr/bin/cp /tmp/x /var/run/openvswitch.useropts`,
	} {
		t.Run(line, func(t *testing.T) {
			dry, _, _, _ := ovsRun(t, line, true)
			real, units, dir, before := ovsRun(t, line, false)
			for _, res := range []*apply.Result{dry, real} {
				assert.Equal(t, api.OutcomeRefused, res.Outcome)
				for _, want := range []string{"unit openvswitch.service: ", "/run/openvswitch.useropts", "ovsdb-server.service", "EnvironmentFile="} {
					assert.Contains(t, res.Reason, want)
				}
			}
			assert.Equal(t, dry.Reason, real.Reason)
			assert.Empty(t, units.ran)
			after, err := fixture.TreeHash(dir)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the real run wrote nothing")
		})
	}
	const benign = `ExecStartPre=/bin/sh -c 'echo ok > /run/openvswitch.stamp'`
	dry, _, _, _ := ovsRun(t, benign, true)
	assert.Equal(t, api.OutcomePlanned, dry.Outcome, "%s %+v", dry.Reason, dry.Refused)
	real, units, _, _ := ovsRun(t, benign, false)
	assert.Equal(t, api.OutcomeApplied, real.Outcome, "%s %+v", real.Reason, real.Refused)
	assert.NotEmpty(t, units.ran)
}
