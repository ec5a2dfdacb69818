package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// Issue 27 F2, against a real systemd user manager: a unit's commands and job settings are judged
// by class, from what the manager reports (the unit on disk, which the plan cannot see) and from the
// unit file a payload carries (which the plan judges first). The dry run and the real run refuse
// the same way, writing nothing, and the executor refuses when asked directly. Every command here
// is harmless if it ever ran (kill -0 1 only probes), so that a judge failure cannot hurt the
// machine; the manager is one of its own (Another).
func TestUnitCommandsJudgedAgainstRealSystemd(t *testing.T) {
	mgr := systemdtest.Another(t, "unitjudge")
	out := filepath.Join(t.TempDir(), "out")
	sleep := "[Service]\nExecStart=/bin/sleep infinity\n"
	units := map[string]struct{ contents, why string }{
		"signals-init.service":   {sleep + "ExecStartPost=/bin/kill -0 1\n", "PID 1"},
		"isolates.service":       {"[Unit]\nOnFailure=judge-helper.service\nOnFailureJobMode=isolate\n" + sleep, "OnFailureJobMode=isolate"},
		"stdout-file.service":    {sleep + "StandardOutput=file:" + out + "\n", "StandardOutput=file"},
		"pipes-to-sh.service":    {sleep + "ExecStartPost=/bin/sh -c 'echo true | sh'\n", "standard input"},
		"drives-manager.service": {sleep + "ExecStartPost=/bin/systemctl --user --job-mode isolate show-environment\n", "service manager"},
		"workdir-proc.service":   {sleep + "WorkingDirectory=/proc\n", "WorkingDirectory=/proc"},
		// adv27 round 2: the legacy [Service] action, an environment file the payload may write, a
		// loader variable passed on, a program named by a pattern in a script.
		"svc-failureaction.service": {sleep + "FailureAction=exit\n", "FailureAction=exit"},
		"envfile.service":           {sleep + "EnvironmentFile=-" + out + ".env\n", "EnvironmentFile=-" + out + ".env"},
		"passenv.service":           {sleep + "PassEnvironment=LD_PRELOAD\n", "PassEnvironment=LD_PRELOAD"},
		"glob-sh.service":           {sleep + "ExecStartPost=/bin/sh -c '/bin/tru?'\n", "pattern"},
	}
	for u, c := range units {
		require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, u), []byte(c.contents), 0o644), u)
	}
	// An ordinary unit with the reload idiom, judged and restarted.
	require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, "ordinary-judge.service"),
		[]byte(sleep+"ExecReload=/bin/kill -HUP $MAINPID\nEnvironment=D=%t/x\nExecStartPre=/bin/sh -c 'echo start > $D'\n"), 0o644))
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	ctx := context.Background()
	sd, err := actions.DialSystemd(ctx, mgr.Socket())
	require.NoError(t, err)
	t.Cleanup(sd.Close)

	for u, c := range units {
		t.Run("on disk/"+u, func(t *testing.T) {
			pol, err := allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  files:\n  - path: /etc/myapp/a.conf\n" +
				"    actions: [{type: Restart, restart: {serviceName: " + u + "}}]\n"))
			require.NoError(t, err)
			cur := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine())
			des := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File("/etc/myapp/a.conf", []byte("new"), 0o644)
			reasons := refusedBothRuns(t, sd, pol, cur, des.JSON(), u, "etc/myapp/a.conf")
			assert.Contains(t, reasons[0], u)
			assert.Contains(t, reasons[0], c.why)
			err = sd.Run(ctx, plan.UnitAction{Unit: u, Action: allowlist.ActionRestart})
			require.Error(t, err)
			assert.ErrorIs(t, err, actions.ErrUnitRefused)
			assert.Contains(t, err.Error(), c.why)
			state, _ := mgr.Systemctl("show", "-p", "ActiveState", "--value", u)
			assert.Equal(t, "inactive", state, "never started")
		})
		t.Run("in the payload/"+u, func(t *testing.T) {
			// The same contents under a unit rule: the plan refuses first (diff off the node too),
			// the same way in the dry run and the real run.
			pol, err := allowlist.ParsePolicy([]byte(unitRulePolicy))
			require.NoError(t, err)
			cur := fixture.Ignition("3.2.0")
			cur.Systemd.Units = []types.Unit{{Name: myapp, Contents: &sleep}}
			des := fixture.Ignition("3.2.0")
			contents := c.contents
			des.Systemd.Units = []types.Unit{{Name: myapp, Contents: &contents}}
			p := buildPlan(t, pol, cur, des)
			require.False(t, p.Eligible)
			assert.Contains(t, p.Refused[0].Reason, "unit "+myapp)
			assert.Contains(t, p.Refused[0].Reason, c.why)
			reasons := refusedBothRuns(t, sd, pol, cur, des.JSON(), myapp, "etc/myapp/a.conf", "etc/systemd/system/"+myapp)
			assert.True(t, strings.Contains(reasons[0], p.Refused[0].Reason), "the node's refusal is the plan's: %s", reasons[0])
		})
	}

	require.NoError(t, sd.CheckUnit(ctx, "ordinary-judge.service"))
	require.NoError(t, sd.Run(ctx, plan.UnitAction{Unit: "ordinary-judge.service", Action: allowlist.ActionRestart}))
	_, err = mgr.Systemctl("show-environment")
	require.NoError(t, err, "the manager is still there")
}

// refusedBothRuns applies des as a dry run and for real on a fresh node root, and asserts both are
// refused the same way, naming unit last, acting on nothing and writing none of the files; it
// returns both reasons.
func refusedBothRuns(t *testing.T, units actions.Units, pol *allowlist.Policy, cur *fixture.Config, des []byte, unit string, files ...string) []string {
	t.Helper()
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	n := hostAt(t, dir, units, pol)
	var reasons []string
	for _, dry := range []bool{true, false} {
		res, err := apply.Run(context.Background(), n, apply.Request{Desired: des, Hash: "h", Current: c, DryRun: dry})
		require.NoError(t, err)
		assert.Equal(t, api.OutcomeRefused, res.Outcome, "dry run %v: %s", dry, res.Reason)
		require.NotEmpty(t, res.Refused)
		assert.Equal(t, unit, res.Refused[len(res.Refused)-1].Unit)
		assert.Empty(t, res.Actions)
		reasons = append(reasons, res.Reason)
		for _, f := range files {
			_, statErr := os.Stat(filepath.Join(dir, f))
			assert.True(t, errors.Is(statErr, os.ErrNotExist), "%s written (dry run %v)", f, dry)
		}
	}
	assert.Equal(t, reasons[0], reasons[1], "the dry run shows the refusal the real run makes")
	return reasons
}
