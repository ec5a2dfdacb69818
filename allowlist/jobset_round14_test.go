package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 14 (c/01-03): the walk models the job systemd runs on each unit it reaches. A start or
// restart stops what the unit Conflicts= with and what Conflicts= with it (ConflictedBy); a stop
// stops what Requires=, Requisite=, BindsTo=, PartOf= it (a restart restarts them) and the units
// it pulled in that have StopWhenUnneeded=yes; each stopped unit is judged by what its stop does;
// a unit the manager reports inactive is not stopped (nor try-restarted), so nothing of it runs.
func TestJudgeJobSetStops(t *testing.T) {
	app := func(edit func(p *allowlist.UnitProps)) allowlist.UnitProps { return svc("myapp.service", edit).Props }
	foo := func(edit func(p *allowlist.UnitProps)) allowlist.StartedUnit {
		u := svc("foo.service", edit)
		u.Active, u.StateKnown = true, true
		return u
	}
	reboots := func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }
	stopLine := func(p *allowlist.UnitProps) {
		p.Exec = [][]string{{"/bin/true"}, {"/usr/bin/systemctl", "poweroff"}}
		p.ExecKeys = []string{"ExecStart", "ExecStopPost"}
	}
	for _, tc := range []struct {
		name  string
		job   allowlist.Job
		unit  allowlist.UnitProps
		units fakeUnits
		want  string
	}{
		{"Conflicts=, the restart", allowlist.JobRestart, app(func(p *allowlist.UnitProps) { p.Conflicts = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(reboots)}, "restarting myapp.service stops foo.service (Conflicts=foo.service), whose SuccessAction=reboot"},
		{"ConflictedBy, the restart", allowlist.JobRestart, app(func(p *allowlist.UnitProps) { p.ConflictedBy = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(reboots)}, "restarting myapp.service stops foo.service (Conflicts=myapp.service), whose SuccessAction=reboot"},
		{"BoundBy, the stop", allowlist.JobStop, app(func(p *allowlist.UnitProps) { p.BoundBy = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(stopLine)}, "stopping myapp.service stops foo.service (BindsTo=myapp.service), whose stop runs what the judge refuses: ExecStopPost=/usr/bin/systemctl poweroff"},
		{"ConsistsOf, the stop", allowlist.JobStop, app(func(p *allowlist.UnitProps) { p.ConsistsOf = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(func(p *allowlist.UnitProps) { p.FailureAction = "poweroff" })}, "stops foo.service (PartOf=myapp.service), whose FailureAction=poweroff"},
		{"RequisiteOf, the stop", allowlist.JobStop, app(func(p *allowlist.UnitProps) { p.RequisiteOf = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(reboots)}, "stops foo.service (Requisite=myapp.service), whose SuccessAction=reboot"},
		{"RequisiteOf, the restart", allowlist.JobRestart, app(func(p *allowlist.UnitProps) { p.RequisiteOf = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(reboots)}, "restarting myapp.service restarts foo.service (Requisite=myapp.service): foo.service SuccessAction=reboot"},
		{"a stop's StopWhenUnneeded=", allowlist.JobStop, app(func(p *allowlist.UnitProps) { p.Wants = []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(func(p *allowlist.UnitProps) { p.StopWhenUnneeded, p.SuccessAction = true, "exit" })},
			"stopping myapp.service stops foo.service (Wants=foo.service, if it has StopWhenUnneeded=yes), whose SuccessAction=exit"},
		{"a dropped dependency's StopWhenUnneeded=", allowlist.JobUnneed, app(func(p *allowlist.UnitProps) { p.Exec, p.Requires = nil, []string{"foo.service"} }),
			fakeUnits{"foo.service": foo(func(p *allowlist.UnitProps) { p.StopWhenUnneeded, p.SuccessAction = true, "exit" })},
			"dropping a dependency of myapp.service stops foo.service (Requires=foo.service, if it has StopWhenUnneeded=yes), whose SuccessAction=exit"},
		{"transitively: a stopped unit's followers", allowlist.JobRestart, app(func(p *allowlist.UnitProps) { p.ConflictedBy = []string{"a.service"} }),
			fakeUnits{"a.service": foo(func(p *allowlist.UnitProps) {
				p.ID, p.Names, p.BoundBy = "a.service", []string{"a.service"}, []string{"foo.service"}
			}), "foo.service": foo(reboots)},
			"restarting myapp.service stops a.service (Conflicts=myapp.service) stopping a.service stops foo.service (BindsTo=a.service), whose SuccessAction=reboot"},
		{"the stop of an essential", allowlist.JobRestart, app(func(p *allowlist.UnitProps) { p.ConflictedBy = []string{"kubelet.service"} }),
			fakeUnits{"kubelet.service": svc("kubelet.service", nil)}, "stops kubelet.service (Conflicts=myapp.service), whose stop would stop kubelet.service, which keeps the node running"},
		{"the stop of a mount", allowlist.JobStop, app(func(p *allowlist.UnitProps) { p.BoundBy = []string{"var.mount"} }),
			fakeUnits{"var.mount": {Props: allowlist.UnitProps{ID: "var.mount", Names: []string{"var.mount"}}, Known: true}}, "whose stop would stop var.mount, a mount unit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusal, err := allowlist.JudgeJobSet(tc.unit, tc.job, tc.units.load)
			require.NoError(t, err)
			require.Error(t, refusal)
			assert.Contains(t, refusal.Error(), tc.want)
			// Not running, as the manager reports it: its stop (or try-restart) does nothing.
			for n, u := range tc.units {
				if u.StateKnown {
					u.Active = false
					tc.units[n] = u
				}
			}
			if tc.name != "the stop of an essential" && tc.name != "the stop of a mount" {
				refusal, err = allowlist.JudgeJobSet(tc.unit, tc.job, tc.units.load)
				require.NoError(t, err)
				assert.NoError(t, refusal)
			}
		})
	}
	t.Run("a harmless stop, a needed unit, what every unit conflicts with", func(t *testing.T) {
		units := fakeUnits{"foo.service": foo(func(p *allowlist.UnitProps) { p.Exec = append(p.Exec, []string{"/bin/kill", "-TERM", "$MAINPID"}) }),
			"needed.service": foo(reboots), "rescue.service": foo(reboots)}
		refusal, err := allowlist.JudgeJobSet(app(func(p *allowlist.UnitProps) {
			p.BoundBy, p.Wants, p.Conflicts = []string{"foo.service"}, []string{"needed.service"}, []string{"rescue.service"}
		}), allowlist.JobStop, units.load)
		require.NoError(t, err)
		assert.NoError(t, refusal, "needed.service has no StopWhenUnneeded=; a stop does not start the unit's Conflicts=")
	})
}
