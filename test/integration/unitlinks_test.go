package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// Round 11 (units/01, 02), against a real systemd 252 user manager: links the plan cannot see (in
// the manager's unit directory, not under the node root the plan reads; on a node, a link made after
// the policy was loaded, or in a directory the root does not show). The manager names the loaded
// unit in Id and Names (vendor-wipe.service is crio-wipe.service; foo@x.service, a template's link,
// is bar@x.service); the executor judges a unit a job reaches by those as DependencyIdentity judges
// a name (allowlist.JudgeStartSet), so the dry run and the real run refuse the payload's
// Wants=vendor-wipe.service before writing anything, and no stand-in runs. Links to ordinary units pass.
func TestNodeLinksAreJudgedAsTheUnitsTheManagerLoads(t *testing.T) {
	mgr := systemdtest.Another(t, "links")
	ran := filepath.Join(mgr.MarkerDir, "ran")
	oneshot := fmt.Sprintf("[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo %%n >> %s'\n", ran)
	files := map[string]string{
		"crio-wipe.service": oneshot, "kubelet-cleanup.service": oneshot, "sshd-keygen@.service": oneshot,
		"helper.service": oneshot, "bar@.service": oneshot,
		"vendor-wipe.service": "->crio-wipe.service", "cleanup.service": "->kubelet-cleanup.service",
		"keys@.service": "->sshd-keygen@.service", "helper-alias.service": "->helper.service", "foo@.service": "->bar@.service",
	}
	for name, c := range files {
		p := filepath.Join(mgr.UnitDir, name)
		if c[0] == '-' {
			require.NoError(t, os.Symlink(c[2:], p))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
	}
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	id, err := mgr.Systemctl("show", "-p", "Id", "--value", "keys@rsa.service")
	require.NoError(t, err)
	require.Equal(t, "sshd-keygen@rsa.service", id, "systemd aliases templates")
	ctx := context.Background()
	sd, err := actions.DialSystemd(ctx, mgr.Socket())
	require.NoError(t, err)
	t.Cleanup(sd.Close)
	app := func(dep string) allowlist.UnitProps {
		return allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"}, Wants: []string{dep}, DefaultDependencies: true,
			Exec: [][]string{{"/bin/sleep", "infinity"}}, Execution: allowlist.Execution{ExecKeys: []string{"ExecStart"}}}
	}

	// The executor, asked about the planned unit (the dry run's and the pre-write check's question).
	for dep, is := range map[string]string{"vendor-wipe.service": "crio-wipe.service", "cleanup.service": "kubelet-cleanup.service",
		"keys@rsa.service": "sshd-keygen@rsa.service"} {
		err := sd.CheckStartSet(ctx, app(dep))
		if assert.ErrorIs(t, err, actions.ErrUnitRefused, dep) {
			assert.Contains(t, err.Error(), "Wants="+dep+": unit "+is, dep)
		}
	}
	for _, dep := range []string{"helper-alias.service", "foo@x.service"} {
		assert.NoError(t, sd.CheckStartSet(ctx, app(dep)), dep)
	}

	// The whole run: the plan alone sees an ordinary name (eligible); the dry run and the real run
	// ask the manager and refuse, writing nothing.
	pol, err := allowlist.ParsePolicy([]byte(unitRulePolicy))
	require.NoError(t, err)
	cur := fixture.Ignition("3.2.0")
	des := fixture.Ignition("3.2.0").Unit(myapp, "[Unit]\nDescription=x\nWants=vendor-wipe.service\n[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=default.target\n")
	p := buildPlan(t, pol, cur, des)
	require.True(t, p.Eligible, "by name alone the plan cannot tell: %+v", p.Refused)
	reasons := refusedBothRuns(t, sd, pol, cur, des.JSON(), myapp, "etc/systemd/system/"+myapp)
	assert.Contains(t, reasons[0], "Wants=vendor-wipe.service: unit crio-wipe.service sets the node up once")

	_, err = os.Stat(ran)
	assert.ErrorIs(t, err, os.ErrNotExist, "no stand-in ran")
}
