package allowlist_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Issue 27, class 2: a unit is judged by what it is. Each of these names, wherever a policy puts
// it (allowedUnits, a paths rule's services, a NodeDisruptionPolicy Reload/Restart serviceName, a
// NodeDisruptionPolicy units rule), is a policy error that names it.
var unsafeUnitNames = []string{
	// systemd's aliases of the power targets.
	"runlevel0.target", "runlevel1.target", "runlevel6.target", "runlevel3.target", "ctrl-alt-del.target",
	// Special targets.
	"reboot.target", "poweroff.target", "halt.target", "kexec.target", "soft-reboot.target", "suspend.target",
	"hibernate.target", "hybrid-sleep.target", "suspend-then-hibernate.target", "sleep.target", "umount.target",
	"shutdown.target", "rescue.target", "emergency.target", "final.target", "exit.target", "default.target",
	"initrd-switch-root.target", "system-update.target",
	// The services behind them.
	"systemd-reboot.service", "systemd-poweroff.service", "systemd-halt.service", "systemd-kexec.service",
	"systemd-suspend.service", "systemd-hibernate.service", "systemd-hybrid-sleep.service",
	"systemd-suspend-then-hibernate.service", "systemd-soft-reboot.service", "systemd-exit.service",
	"emergency.service", "rescue.service",
	// The machine-config daemon's own and the OS updater's.
	"machine-config-daemon-firstboot.service", "machine-config-daemon-pull.service",
	"machine-config-daemon-host.service", "rpm-ostreed.service", "ostree-finalize-staged.service",
	"rpm-ostree-fix-shadow-mode.service", "zincati.service",
	// Instances of unsafe templates, and of power units.
	"user@0.service", "systemd-fsck@dev-sda1.service", "systemd-cryptsetup@luks.service",
	// The manager's essentials.
	"dbus.service", "dbus-broker.service", "systemd-journald.service", "systemd-logind.service",
	// The node's provisioning: run once at boot, never again by a refresh (configure-ovs.sh
	// rebuilds br-ex under the pods, crio-wipe empties the image store).
	"ovs-configuration.service", "nodeip-configuration.service", "crio-wipe.service", "kubens.service",
	"kubelet-cleanup.service", "NetworkManager-clean-initrd-state.service", "node-valid-hostname.service",
	"mtu-migration.service", "ignition-firstboot-complete.service", "coreos-ignition-firstboot-complete.service",
	"coreos-boot-edit.service", "systemd-firstboot.service", "systemd-tmpfiles-setup.service",
	"afterburn-firstboot-checkin.service", "Crio-Wipe.service", "ovs-configuration.socket",
}

func TestUnsafeUnitsAreRefusedAtPolicyLoad(t *testing.T) {
	for _, u := range unsafeUnitNames {
		docs := map[string]string{
			"ndp restart": fmt.Sprintf("nodeDisruptionPolicy:\n  files:\n  - path: /etc/a\n    actions: [{type: Restart, restart: {serviceName: %s}}]\n", u),
			"ndp reload":  fmt.Sprintf("nodeDisruptionPolicy:\n  files:\n  - path: /etc/a\n    actions: [{type: Reload, reload: {serviceName: %s}}]\n", u),
			"ndp unit":    fmt.Sprintf("nodeDisruptionPolicy:\n  units:\n  - name: %s\n    actions: [{type: None}]\n", u),
			"status":      fmt.Sprintf("status:\n  nodeDisruptionPolicyStatus:\n    clusterPolicies:\n      units:\n      - name: %s\n        actions: [{type: None}]\n", u),
			"allowed":     fmt.Sprintf("allowedUnits: [crio.service, kubelet.service, coreos-update-ca-trust.service, %s]\n", u),
			"paths":       fmt.Sprintf("paths:\n- {path: /etc/a, action: Restart, services: [%s]}\n", u),
		}
		for name, doc := range docs {
			_, err := allowlist.ParsePolicy([]byte(doc))
			if assert.Error(t, err, "%s: %s", name, u) {
				assert.Contains(t, err.Error(), u, "%s: the error names the unit", name)
			}
		}
		assert.Error(t, allowlist.UnitIdentity(u), u)
		assert.Error(t, allowlist.ActOn(u), u)
	}
	// Templates are never acted on; their instances are judged by their template.
	for _, u := range []string{"myapp@.service", "getty@.service"} {
		assert.NoError(t, allowlist.UnitIdentity(u), "a template's file may change under a unit rule: %s", u)
		assert.ErrorContains(t, allowlist.ActOn(u), "template", u)
	}
	for _, u := range []string{"crio.service", "kubelet.service", "myapp@blue.service", "getty@tty1.service", "NetworkManager.service"} {
		assert.NoError(t, allowlist.ActOn(u), u)
	}
}

// JudgeUnit refuses what a unit does, from its properties: the executor reads them over D-Bus, the
// plan from the unit file in a payload.
func TestJudgeUnitByWhatItDoes(t *testing.T) {
	ordinary := allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"}, DefaultDependencies: true,
		Requires: []string{"sysinit.target", "basic.target", "dbus.socket"}, Wants: []string{"network-online.target"},
		Conflicts: []string{"shutdown.target"}, After: []string{"basic.target", "network-online.target"},
		SuccessAction: "none", FailureAction: "none", Exec: [][]string{{"/usr/bin/myapp", "--config", "/etc/myapp.conf"}}}
	require.NoError(t, allowlist.JudgeUnit(ordinary))
	bad := map[string]func(p *allowlist.UnitProps){
		"alias of the reboot service": func(p *allowlist.UnitProps) { p.ID = "systemd-reboot.service" },
		"answers to an alias":         func(p *allowlist.UnitProps) { p.Names = append(p.Names, "systemd-exit.service") },
		"a target":                    func(p *allowlist.UnitProps) { p.ID = "myapp.target" },
		"SuccessAction":               func(p *allowlist.UnitProps) { p.SuccessAction = "reboot-force" },
		"FailureAction":               func(p *allowlist.UnitProps) { p.FailureAction = "exit" },
		"JobTimeoutAction":            func(p *allowlist.UnitProps) { p.JobTimeoutAction = "poweroff" },
		"StartLimitAction":            func(p *allowlist.UnitProps) { p.StartLimitAction = "reboot" },
		"Requires shutdown":           func(p *allowlist.UnitProps) { p.Requires = append(p.Requires, "shutdown.target") },
		"Wants runlevel6":             func(p *allowlist.UnitProps) { p.Wants = append(p.Wants, "runlevel6.target") },
		"BindsTo exit":                func(p *allowlist.UnitProps) { p.BindsTo = []string{"exit.target"} },
		"OnFailure reboot":            func(p *allowlist.UnitProps) { p.OnFailure = []string{"reboot.target"} },
		"OnSuccess poweroff":          func(p *allowlist.UnitProps) { p.OnSuccess = []string{"systemd-poweroff.service"} },
		"After shutdown":              func(p *allowlist.UnitProps) { p.DefaultDependencies = false; p.After = []string{"shutdown.target"} },
		"Conflicts multi-user":        func(p *allowlist.UnitProps) { p.Conflicts = append(p.Conflicts, "multi-user.target") },
		"Conflicts kubelet":           func(p *allowlist.UnitProps) { p.Conflicts = append(p.Conflicts, "kubelet.service") },
		"systemctl reboot": func(p *allowlist.UnitProps) {
			p.Exec = append(p.Exec, []string{"/usr/bin/systemctl", "--force", "reboot"})
		},
		"systemctl start poweroff": func(p *allowlist.UnitProps) { p.Exec = [][]string{{"systemctl", "start", "poweroff.target"}} },
		"systemctl isolate":        func(p *allowlist.UnitProps) { p.Exec = [][]string{{"systemctl", "isolate", "rescue"}} },
		"shutdown":                 func(p *allowlist.UnitProps) { p.Exec = [][]string{{"/sbin/shutdown", "-r", "now"}} },
		"busctl PowerOff": func(p *allowlist.UnitProps) {
			p.Exec = [][]string{{"busctl", "call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PowerOff", "b", "false"}}
		},
	}
	for name, mutate := range bad {
		p := ordinary
		p.Names = append([]string{}, ordinary.Names...)
		p.Requires = append([]string{}, ordinary.Requires...)
		p.Conflicts = append([]string{}, ordinary.Conflicts...)
		mutate(&p)
		assert.Error(t, allowlist.JudgeUnit(p), name)
	}
}
