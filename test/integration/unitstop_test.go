package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// Round 14 (c/01-03), against a real systemd user manager: the stops the judge models are the
// manager's. For each dependency (Conflicts= either way, BindsTo=, PartOf=, Requisite=, and a
// StopWhenUnneeded=yes unit whose last Wants= the refresh drops), the manager really stops (or
// restarts) foo.service when the job on myapp.service runs, running its ExecStopPost= (a marker
// file); with SuccessAction=exit instead, the executor refuses the job as the manager reports the
// units (but for the dropped Wants=, which only the plan sees before the daemon-reload), and the
// plan refuses it from the same files under a node root, naming foo and the dependency.
func TestStopSideEffectsAreSystemdsJobSemantics(t *testing.T) {
	const sleep = "[Service]\nExecStart=/bin/sleep infinity\n"
	ctx := context.Background()
	for _, tc := range []struct {
		name, app, foo string
		job            string // the job on myapp.service: restart, stop; "drop": the Wants= goes
		restarted      bool   // the manager restarts foo (a new main PID) rather than stops it
		want           string // what the refusals say of the dependency
	}{
		{"Conflicts= of myapp", "[Unit]\nConflicts=foo.service\n", "", "restart", false, "stops foo.service (Conflicts=foo.service)"},
		{"Conflicts= of foo", "", "[Unit]\nConflicts=myapp.service\n", "restart", false, "stops foo.service (Conflicts=myapp.service)"},
		{"BindsTo=, stop", "", "[Unit]\nBindsTo=myapp.service\n", "stop", false, "stops foo.service (BindsTo=myapp.service)"},
		{"PartOf=, stop", "", "[Unit]\nPartOf=myapp.service\n", "stop", false, "stops foo.service (PartOf=myapp.service)"},
		{"Requisite=, stop", "", "[Unit]\nRequisite=myapp.service\nAfter=myapp.service\n", "stop", false, "stops foo.service (Requisite=myapp.service)"},
		{"BindsTo=, restart", "", "[Unit]\nBindsTo=myapp.service\n", "restart", true, "restarts foo.service (BindsTo=myapp.service)"},
		{"Requisite=, restart", "", "[Unit]\nRequisite=myapp.service\nAfter=myapp.service\n", "restart", true, "restarts foo.service (Requisite=myapp.service)"},
		{"StopWhenUnneeded=, the Wants= dropped", "[Unit]\nWants=foo.service\n", "[Unit]\nStopWhenUnneeded=yes\n", "drop", false,
			"stops foo.service (Wants=foo.service, if it has StopWhenUnneeded=yes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mgr := systemdtest.Another(t, "unitstop")
			marker := filepath.Join(t.TempDir(), "foo-stopped")
			write := func(name, text string) {
				require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, name), []byte(text), 0o644))
			}
			run := func(args ...string) {
				_, err := mgr.Systemctl(args...)
				require.NoError(t, err)
			}
			state := func(u string) string { s, _ := mgr.Systemctl("show", "-p", "ActiveState", "--value", u); return s }

			// The manager's stop: a harmless foo, its ExecStopPost= leaving a marker.
			write("myapp.service", tc.app+sleep)
			write("foo.service", tc.foo+sleep+"ExecStopPost=/bin/touch "+marker+"\n")
			run("daemon-reload")
			run("start", "myapp.service")
			run("start", "foo.service")
			pid := mgr.MainPID(t, "foo.service")
			switch tc.job {
			case "drop":
				write("myapp.service", sleep)
				run("daemon-reload") // the refresh's daemon-reload, before any job
			default:
				run(tc.job, "myapp.service")
			}
			require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, 5*time.Second, 20*time.Millisecond,
				"the manager ran foo's ExecStopPost=: the job stopped it")
			// The marker is written as foo deactivates: its job ends a moment later.
			want := "inactive"
			if tc.restarted {
				want = "active"
			}
			assert.Eventually(t, func() bool { return state("foo.service") == want }, 5*time.Second, 20*time.Millisecond,
				"foo.service %s (it is %s)", want, state("foo.service"))
			if tc.restarted {
				assert.NotEqual(t, pid, mgr.MainPID(t, "foo.service"), "restarted")
			}

			// The judge's refusal, with foo's SuccessAction=exit (the manager would exit).
			run("stop", "myapp.service", "foo.service")
			foo := tc.foo
			if foo == "" {
				foo = "[Unit]\n"
			}
			foo += "SuccessAction=exit\n" + sleep
			write("myapp.service", tc.app+sleep)
			write("foo.service", foo)
			run("daemon-reload")
			run("start", "myapp.service")
			run("start", "foo.service")
			if tc.job != "drop" {
				sd, err := actions.DialSystemd(ctx, mgr.Socket())
				require.NoError(t, err)
				t.Cleanup(sd.Close)
				// The executor judges every job as a restart (a stop's followers restarted: judged in full).
				err = sd.CheckUnit(ctx, "myapp.service")
				require.ErrorIs(t, err, actions.ErrUnitRefused)
				assert.Contains(t, err.Error(), strings.SplitN(tc.want, " ", 2)[1])
				assert.Contains(t, err.Error(), "SuccessAction=exit")
			}
			// The plan, from the same files under a node root.
			root := t.TempDir()
			etc := filepath.Join(root, "etc/systemd/system")
			require.NoError(t, os.MkdirAll(etc, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(etc, "foo.service"), []byte(foo), 0o644))
			pol, err := allowlist.ParsePolicy([]byte(stopRulePolicy))
			require.NoError(t, err)
			pol = pol.WithNodeUnitFiles(plan.NodeUnitsAt(root))
			app, app2 := tc.app+sleep, tc.app+sleep+"Environment=V=2\n"
			cur, des := fixture.Ignition("3.2.0"), fixture.Ignition("3.2.0")
			cur.Systemd.Units = []types.Unit{{Name: myapp, Contents: &app}}
			switch tc.job {
			case "restart":
				des.Systemd.Units = []types.Unit{{Name: myapp, Contents: &app2}}
			case "drop":
				app2 = sleep
				des.Systemd.Units = []types.Unit{{Name: myapp, Contents: &app2}}
			}
			p := buildPlan(t, pol, cur, des)
			require.False(t, p.Eligible)
			assert.Contains(t, p.Refused[0].Reason, "unit "+myapp)
			assert.Contains(t, p.Refused[0].Reason, tc.want)
			assert.Contains(t, p.Refused[0].Reason, "SuccessAction=exit")
		})
	}
}

// stopRulePolicy lets a payload change, remove and restart myapp.service.
const stopRulePolicy = `nodeDisruptionPolicy:
  units:
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
`
