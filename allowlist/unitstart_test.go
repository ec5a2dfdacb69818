package allowlist_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// fakeUnits is a manager's view for JudgeStartSet: the units it knows, which are active.
type fakeUnits map[string]allowlist.StartedUnit

func (f fakeUnits) load(name string) (allowlist.StartedUnit, error) { return f[name], nil }

func svc(id string, edit func(p *allowlist.UnitProps)) allowlist.StartedUnit {
	p := allowlist.UnitProps{ID: id, Names: []string{id}, DefaultDependencies: true,
		Exec: [][]string{{"/bin/true"}}, Execution: allowlist.Execution{ExecKeys: []string{"ExecStart"}}}
	if edit != nil {
		edit(&p)
	}
	return allowlist.StartedUnit{Props: p, Known: true}
}

// Round 9 (units/01): every unit a job on an acted-on unit reaches is judged by what it is, as
// the manager reports it (the executor) or the files define it (the plan): what its start pulls
// in (transitively), what follows its restart, stop or reload.
func TestJudgeStartSet(t *testing.T) {
	app := func(edit func(p *allowlist.UnitProps)) allowlist.UnitProps { return svc("myapp.service", edit).Props }
	helper := func(edit func(p *allowlist.UnitProps)) fakeUnits {
		return fakeUnits{"helper.service": svc("helper.service", edit)}
	}
	refused := []struct {
		name  string
		unit  allowlist.UnitProps
		units fakeUnits
		want  string
	}{
		{"Wants SuccessAction", app(func(p *allowlist.UnitProps) { p.Wants = []string{"helper.service"} }),
			helper(func(p *allowlist.UnitProps) { p.SuccessAction = "exit-force" }), "myapp.service: Wants=helper.service: helper.service SuccessAction=exit-force"},
		{"Requires FailureAction", app(func(p *allowlist.UnitProps) { p.Requires = []string{"helper.service"} }),
			helper(func(p *allowlist.UnitProps) { p.FailureAction = "reboot" }), "FailureAction=reboot"},
		{"BindsTo JobTimeoutAction", app(func(p *allowlist.UnitProps) { p.BindsTo = []string{"helper.service"} }),
			helper(func(p *allowlist.UnitProps) { p.JobTimeoutAction = "poweroff-force" }), "JobTimeoutAction=poweroff-force"},
		{"Upholds StartLimitAction", app(func(p *allowlist.UnitProps) { p.Upholds = []string{"helper.service"} }),
			helper(func(p *allowlist.UnitProps) { p.StartLimitAction = "reboot-immediate" }), "StartLimitAction=reboot-immediate"},
		{"OnSuccess", app(func(p *allowlist.UnitProps) { p.OnSuccess = []string{"helper.service"} }),
			helper(func(p *allowlist.UnitProps) { p.SuccessAction = "soft-reboot" }), "SuccessAction=soft-reboot"},
		{"an alias the manager reports", app(func(p *allowlist.UnitProps) { p.Wants = []string{"foo.service"} }),
			fakeUnits{"foo.service": svc("systemd-exit.service", func(p *allowlist.UnitProps) { p.Names = []string{"systemd-exit.service", "foo.service"} })},
			"Wants=foo.service: unit systemd-exit.service"},
		{"transitively", app(func(p *allowlist.UnitProps) { p.Wants = []string{"a.service"} }), fakeUnits{
			"a.service":      svc("a.service", func(p *allowlist.UnitProps) { p.Requires = []string{"b.socket"} }),
			"b.socket":       {Props: allowlist.UnitProps{ID: "b.socket", Names: []string{"b.socket"}, Triggers: []string{"helper.service"}}, Known: true},
			"helper.service": svc("helper.service", func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }),
		}, "Wants=a.service Requires=b.socket Triggers=helper.service: helper.service SuccessAction=reboot"},
		{"a helper whose start runs systemctl", app(func(p *allowlist.UnitProps) { p.Wants = []string{"helper.service"} }),
			helper(func(p *allowlist.UnitProps) { p.Exec = [][]string{{"/usr/bin/systemctl", "--user", "exit"}} }), "helper.service ExecStart=/usr/bin/systemctl --user exit"},
		{"unknown, by name", app(func(p *allowlist.UnitProps) { p.Wants = []string{"system-update-cleanup.service"} }), fakeUnits{},
			"system-update-cleanup.service"},
		// C: the restart try-restarts (the stop stops) every unit that Requires=/BindsTo=/PartOf= it.
		{"follower's ExecStop", app(func(p *allowlist.UnitProps) { p.Followers = []string{"boom.service"} }), fakeUnits{
			"boom.service": {Props: svc("boom.service", func(p *allowlist.UnitProps) {
				p.Exec = [][]string{{"/bin/true"}, {"/usr/bin/systemctl", "--user", "exit"}}
				p.ExecKeys = []string{"ExecStart", "ExecStop"}
			}).Props, Known: true, Active: true},
		}, "is followed by boom.service: boom.service ExecStop=/usr/bin/systemctl --user exit"},
		// D: the reload reloads PropagatesReloadTo= (a node unit's ReloadPropagatedFrom=).
		{"PropagatesReloadTo", app(func(p *allowlist.UnitProps) { p.PropagatesReloadTo = []string{"x.service"} }), fakeUnits{
			"x.service": {Props: svc("x.service", func(p *allowlist.UnitProps) {
				p.Exec = [][]string{{"/bin/true"}, {"/usr/bin/systemctl", "reboot"}}
				p.ExecKeys = []string{"ExecStart", "ExecReload"}
			}).Props, Known: true, Active: true},
		}, "PropagatesReloadTo x.service: x.service ExecReload=/usr/bin/systemctl reboot"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			refusal, err := allowlist.JudgeStartSet(tc.unit, tc.units.load)
			require.NoError(t, err)
			require.Error(t, refusal)
			assert.Contains(t, refusal.Error(), tc.want)
		})
	}
	t.Run("too many units", func(t *testing.T) {
		units := fakeUnits{}
		for i := range allowlist.MaxStartSet + 5 {
			n := fmt.Sprintf("u%d.service", i)
			next := fmt.Sprintf("u%d.service", i+1)
			units[n] = svc(n, func(p *allowlist.UnitProps) { p.Wants = []string{next} })
		}
		refusal, err := allowlist.JudgeStartSet(app(func(p *allowlist.UnitProps) { p.Wants = []string{"u0.service"} }), units.load)
		require.NoError(t, err)
		require.Error(t, refusal)
		assert.Contains(t, refusal.Error(), "too many to judge")
	})
	accepted := []struct {
		name  string
		unit  allowlist.UnitProps
		units fakeUnits
	}{
		{"an active unit's start pulls in nothing", app(func(p *allowlist.UnitProps) { p.Wants = []string{"t.target"} }), fakeUnits{
			"t.target":       {Props: allowlist.UnitProps{ID: "t.target", Names: []string{"t.target"}, Wants: []string{"helper.service"}}, Known: true, Active: true},
			"helper.service": svc("helper.service", func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }),
		}},
		{"a boot-reached target is not followed", app(func(p *allowlist.UnitProps) { p.Wants = []string{"network-online.target"} }), fakeUnits{
			"network-online.target": {Props: allowlist.UnitProps{ID: "network-online.target", Wants: []string{"helper.service"}}, Known: true},
			"helper.service":        svc("helper.service", func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }),
		}},
		{"the essentials are running", app(func(p *allowlist.UnitProps) { p.Requires = []string{"dbus.socket"} }), fakeUnits{
			"dbus.socket": {Props: allowlist.UnitProps{ID: "dbus.socket", Triggers: []string{"dbus.service"}}, Known: true},
			"dbus.service": svc("dbus.service", func(p *allowlist.UnitProps) {
				p.Exec = [][]string{{"/usr/bin/dbus-send", "--system", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.ReloadConfig"}}
			}),
		}},
		{"a masked unit runs nothing", app(func(p *allowlist.UnitProps) { p.Wants = []string{"helper.service"} }), fakeUnits{
			"helper.service": {Props: svc("helper.service", func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }).Props, Known: true, Masked: true},
		}},
		{"harmless helpers", app(func(p *allowlist.UnitProps) {
			p.Wants = []string{"helper.service", "gone.service"}
			p.Requires = []string{"sysinit.target"}
		}), fakeUnits{
			"helper.service": svc("helper.service", func(p *allowlist.UnitProps) {
				p.SuccessAction, p.Conflicts = "none", []string{"shutdown.target", "initrd-switch-root.target"}
			}),
		}},
	}
	for _, tc := range accepted {
		t.Run("accepted/"+tc.name, func(t *testing.T) {
			refusal, err := allowlist.JudgeStartSet(tc.unit, tc.units.load)
			require.NoError(t, err)
			assert.NoError(t, refusal)
		})
	}
	// A stock unit whose end reboots is refused by name, even unread (a diff without a root).
	for _, n := range []string{"system-update-cleanup.service", "packagekit-offline-update.service"} {
		err := allowlist.JudgeUnit(app(func(p *allowlist.UnitProps) { p.Wants = []string{n} }))
		require.Error(t, err, n)
		assert.True(t, strings.Contains(err.Error(), "Wants="+n), err.Error())
	}
}

// A lone [ is test's name, never a pattern (a bracket expression needs its ]): the MCO's on-prem
// kubelet drop-in (kubelet.service-wait-resolv) runs ExecCondition=/bin/bash -c '[ -f … ] || …',
// and kubelet follows every crio restart the built-in policy makes. A word that is a pattern in
// command position stays refused.
func TestLoneBracketIsTestNotAPattern(t *testing.T) {
	kubelet := svc("kubelet.service", func(p *allowlist.UnitProps) {
		p.Exec = [][]string{{"/bin/bash", "-c", `[ -f /run/resolv-prepender-kni-conf-done ] || { echo "NM resolv-prepender failed"; exit 255; }`}}
		p.ExecKeys = []string{"ExecCondition"}
	}).Props
	assert.NoError(t, allowlist.JudgeStarted(kubelet))
	kubelet.Exec = [][]string{{"/bin/bash", "-c", `/usr/bin/[a-z]* -f /run/x`}}
	assert.Error(t, allowlist.JudgeStarted(kubelet))
}
