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
			"t.target":       {Props: allowlist.UnitProps{ID: "t.target", Names: []string{"t.target"}, Wants: []string{"helper.service"}}, Known: true, Active: true, StateKnown: true},
			"helper.service": svc("helper.service", func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }),
		}},
		{"a boot-reached target the manager reports active is not followed", app(func(p *allowlist.UnitProps) { p.Wants = []string{"network-online.target"} }), fakeUnits{
			"network-online.target": {Props: allowlist.UnitProps{ID: "network-online.target", Wants: []string{"helper.service"}}, Known: true, Active: true, StateKnown: true},
			"helper.service":        svc("helper.service", func(p *allowlist.UnitProps) { p.SuccessAction = "reboot" }),
		}},
		{"the essentials' own commands are the node's", app(func(p *allowlist.UnitProps) { p.Requires = []string{"dbus.socket"} }), fakeUnits{
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

// Round 13 (units/01, 03): the walk ends at a unit by its state, never by its name. A reader that
// knows no state (the plan) follows the boot's targets and the essentials; what it reaches through
// them is judged by what it does (JudgeStarted), its identity (a provisioning unit, which runs
// again only if the target is not active) by the reader that knows the state. An Accept=yes
// socket's template instance is what it triggers.
func TestStartSetEndsByStateNotName(t *testing.T) {
	app := func(key, dep string) allowlist.UnitProps {
		return svc("myapp.service", func(p *allowlist.UnitProps) {
			switch key {
			case "Wants":
				p.Wants = []string{dep}
			case "Requires":
				p.Requires = []string{dep}
			}
		}).Props
	}
	target := func(id string, wants ...string) allowlist.StartedUnit {
		return allowlist.StartedUnit{Props: allowlist.UnitProps{ID: id, Names: []string{id}, Wants: wants}, Known: true}
	}
	boom := svc("vendor-boom.service", func(p *allowlist.UnitProps) { p.SuccessAction = "exit-force" })
	names := []string{"graphical.target", "multi-user.target", "basic.target", "getty.target", "getty-pre.target",
		"time-set.target", "time-sync.target", "nss-lookup.target", "nss-user-lookup.target", "swap.target", "cryptsetup.target",
		"cryptsetup-pre.target", "integritysetup.target", "veritysetup.target", "remote-fs.target", "remote-fs-pre.target",
		"remote-cryptsetup.target", "remote-veritysetup.target", "local-fs-pre.target", "network.target", "network-pre.target",
		"network-online.target", "paths.target", "sockets.target", "slices.target", "timers.target", "kubelet-dependencies.target",
		"sshd.service", "chronyd.service", "NetworkManager.service", "crio.service", "kubelet.service", "ovs-vswitchd.service"}
	for _, n := range names {
		for _, known := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/state known %v", n, known), func(t *testing.T) {
				u := target(n, "vendor-boom.service")
				u.StateKnown = known // inactive
				units := fakeUnits{n: u, "vendor-boom.service": boom}
				refusal, err := allowlist.JudgeStartSet(app("Wants", n), units.load)
				require.NoError(t, err)
				require.Error(t, refusal, "%s is followed: its state says so, not its name", n)
				assert.Contains(t, refusal.Error(), "Wants="+n+" Wants=vendor-boom.service: vendor-boom.service SuccessAction=exit-force")
				u.Active = true
				units[n] = u
				refusal, err = allowlist.JudgeStartSet(app("Wants", n), units.load)
				require.NoError(t, err)
				if known {
					assert.NoError(t, refusal, "the manager reports %s active: its start pulls in nothing", n)
				} else {
					assert.Error(t, refusal, "a reader that knows no state does not take Active from a file")
				}
			})
		}
	}
	// What a node's boot targets pull in on RHCOS (network-online.target.wants: the MCO's
	// nmstate-configuration.service, crio's Wants=crio-wipe.service) is the node's provisioning:
	// behind a target the plan presumes running it is judged by what it does, and plans; the
	// manager's walk follows the target only when it is not active, and then refuses it.
	t.Run("provisioning behind a presumed-running target", func(t *testing.T) {
		units := fakeUnits{
			"network-online.target":         target("network-online.target", "nmstate-configuration.service", "NetworkManager-wait-online.service"),
			"nmstate-configuration.service": svc("nmstate-configuration.service", nil),
			"NetworkManager-wait-online.service": svc("NetworkManager-wait-online.service", func(p *allowlist.UnitProps) {
				p.Requires = []string{"NetworkManager.service"}
			}),
			"NetworkManager.service": svc("NetworkManager.service", func(p *allowlist.UnitProps) {
				p.Wants = []string{"network.target"}
				p.Exec = [][]string{{"/usr/sbin/NetworkManager", "--no-daemon"}, {"/usr/bin/busctl", "call", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Reload", "u", "0"}}
			}),
			"crio.service":        svc("crio.service", func(p *allowlist.UnitProps) { p.Wants = []string{"network-online.target", "crio-wipe.service"} }),
			"crio-wipe.service":   svc("crio-wipe.service", nil),
			"sysinit.target":      target("sysinit.target", "local-fs.target", "vendor-boom.service"),
			"vendor-boom.service": boom,
		}
		for _, dep := range []struct{ key, unit string }{{"Wants", "network-online.target"}, {"Requires", "crio.service"}, {"Requires", "sysinit.target"}} {
			refusal, err := allowlist.JudgeStartSet(app(dep.key, dep.unit), units.load)
			require.NoError(t, err)
			assert.NoError(t, refusal, "%s=%s", dep.key, dep.unit)
		}
		// The manager reports network-online.target inactive: followed, its provisioning refused.
		u := units["network-online.target"]
		u.StateKnown = true
		units["network-online.target"] = u
		refusal, err := allowlist.JudgeStartSet(app("Wants", "network-online.target"), units.load)
		require.NoError(t, err)
		require.Error(t, refusal)
		assert.Contains(t, refusal.Error(), "Wants=network-online.target Wants=nmstate-configuration.service: unit nmstate-configuration.service sets the node up once")
		// sysinit.target the manager reports inactive (a user manager): followed.
		s := units["sysinit.target"]
		s.StateKnown = true
		units["sysinit.target"] = s
		refusal, err = allowlist.JudgeStartSet(app("Requires", "sysinit.target"), units.load)
		require.NoError(t, err)
		require.Error(t, refusal)
		assert.Contains(t, refusal.Error(), "Requires=sysinit.target Wants=vendor-boom.service")
	})
	t.Run("the bound refuses, never cuts", func(t *testing.T) {
		units := fakeUnits{"graphical.target": target("graphical.target", "u0.service")}
		for i := range allowlist.MaxStartSet + 5 {
			n := fmt.Sprintf("u%d.service", i)
			units[n] = svc(n, func(p *allowlist.UnitProps) { p.Wants = []string{fmt.Sprintf("u%d.service", i+1)} })
		}
		refusal, err := allowlist.JudgeStartSet(app("Wants", "graphical.target"), units.load)
		require.NoError(t, err)
		require.Error(t, refusal)
		assert.Contains(t, refusal.Error(), "too many to judge, refused rather than judged in part")
	})
	t.Run("Accept=yes", func(t *testing.T) {
		assert.Equal(t, "helper@0.service", allowlist.AcceptInstance("helper.socket"))
		assert.Equal(t, "helper@0.service", allowlist.AcceptInstance("helper@x.socket"))
	})
}
