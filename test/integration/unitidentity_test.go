package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// Issue 27, class 2, against a real systemd user manager: units whose names look harmless but whose
// job would stop the manager (exit.target is the user manager's shutdown). The policy names each one;
// the plan cannot see what it is; the dry run and the real run ask the manager and refuse it,
// writing nothing, and the executor refuses it too when asked directly. The manager is one of its
// own (Another), so that a failure here cannot stop the manager other tests use.
func TestUnitIdentityAgainstRealSystemd(t *testing.T) {
	mgr := systemdtest.Another(t, "identity")
	exitService := "/usr/lib/systemd/user/systemd-exit.service"
	exitTarget := "/usr/lib/systemd/user/exit.target"
	for _, f := range []string{exitService, exitTarget} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s not installed: %v", f, err)
		}
	}
	sleep := "[Service]\nExecStart=/bin/sleep infinity\n"
	// Each case: the unit the policy names, and what is installed under that name.
	install := map[string]func(dir string) error{
		// An alias of the service behind exit.target (what systemctl link / an Alias= makes).
		"alias-of-exit.service": func(dir string) error { return os.Symlink(exitService, filepath.Join(dir, "alias-of-exit.service")) },
		// A unit that pulls in an alias of exit.target: the manager reports the alias's real id.
		"pulls-exit.service": func(dir string) error {
			if err := os.Symlink(exitTarget, filepath.Join(dir, "myapp-done.target")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "pulls-exit.service"), []byte("[Unit]\nRequires=myapp-done.target\n"+sleep), 0o644)
		},
		// A unit whose failure ends the manager.
		"fails-exit.service": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "fails-exit.service"), []byte("[Unit]\nFailureAction=exit-force\n"+sleep), 0o644)
		},
		// A unit ordered into the manager's stop without being stopped by it (plymouth-poweroff's
		// shape): the manager reports Before=exit.target and no Conflicts=shutdown.target.
		"ordered-into-exit.service": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "ordered-into-exit.service"), []byte("[Unit]\nDefaultDependencies=no\nBefore=exit.target\n"+sleep), 0o644)
		},
		// A unit that runs systemctl to stop the manager.
		"runs-exit.service": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "runs-exit.service"), []byte("[Service]\nExecStart=/bin/sleep infinity\nExecStartPost=/bin/systemctl --user exit\n"), 0o644)
		},
	}
	for u, f := range install {
		require.NoError(t, f(mgr.UnitDir), u)
	}
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	ctx := context.Background()
	sd, err := actions.DialSystemd(ctx, mgr.Socket())
	require.NoError(t, err)
	t.Cleanup(sd.Close)

	for u := range install {
		t.Run(u, func(t *testing.T) {
			// The plan alone sees an ordinary service name: eligible.
			pol, err := allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  files:\n  - path: /etc/myapp/a.conf\n" +
				"    actions: [{type: Restart, restart: {serviceName: " + u + "}}]\n"))
			require.NoError(t, err)
			cur := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine())
			des := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File("/etc/myapp/a.conf", []byte("new"), 0o644)
			p := buildPlan(t, pol, cur, des)
			require.True(t, p.Eligible, "by name alone the plan cannot tell: %+v", p.Refused)

			reasons := refusedBothRuns(t, sd, pol, cur, des.JSON(), u, "etc/myapp/a.conf")
			t.Log(reasons[0])
			// The executor, asked directly (a journal replayed by recovery), refuses it too.
			err = sd.Run(ctx, plan.UnitAction{Unit: u, Action: allowlist.ActionRestart})
			require.Error(t, err)
			assert.ErrorIs(t, err, actions.ErrUnitRefused)
			// And the manager is still there.
			_, err = mgr.Systemctl("show-environment")
			require.NoError(t, err, "the manager must not have exited")
			state, _ := mgr.Systemctl("show", "-p", "ActiveState", "--value", "exit.target")
			assert.Equal(t, "inactive", state)
		})
	}

	// An ordinary unit under the same manager still runs: the check refuses by what a unit is, not
	// by a word of its name (an SRE's app-shutdown-notifier is judged by its properties).
	require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, "ordinary.service"), []byte(sleep), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, "app-shutdown-notifier.service"),
		[]byte("[Unit]\nBefore=shutdown.target\n"+sleep), 0o644))
	_, err = mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	require.NoError(t, sd.CheckUnit(ctx, "ordinary.service"))
	require.NoError(t, sd.CheckUnit(ctx, "app-shutdown-notifier.service"))
	require.NoError(t, sd.Run(ctx, plan.UnitAction{Unit: "ordinary.service", Action: allowlist.ActionRestart}))
}
