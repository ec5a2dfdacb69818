package allowlist_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// A unit is judged by its identity, both ways: what systemd, RHCOS and the MCO really ship or name.
// Every name on the left is refused wherever a policy names it; every name on the right is a unit
// an SRE legitimately reloads or restarts, and passes. A name that only shares a stem or a word with
// a power unit (init.service with init.scope, user.service with user.slice, app-shutdown-notifier
// with shutdown.target) is not that unit.
func TestUnitIdentityBothWays(t *testing.T) {
	refused := []string{
		// systemd.special(7) targets and the services behind them, with their runlevel aliases.
		"reboot.target", "runlevel6.target", "runlevel0.target", "ctrl-alt-del.target", "sigpwr.target",
		"poweroff.target", "halt.target", "kexec.target", "soft-reboot.target", "suspend.target",
		"systemd-poweroff.service", "systemd-halt.service", "systemd-reboot.service", "systemd-kexec.service",
		"systemd-soft-reboot.service", "systemd-suspend.service", "systemd-exit.service",
		// A service named after a power target is it (the short form ctrl-alt-del normalises to it).
		"reboot.service", "ctrl-alt-del.service", "suspend.service", "umount.service",
		// The socket, path or timer that starts a power service.
		"systemd-reboot.socket", "systemd-poweroff.path", "systemd-suspend.timer", "reboot.socket",
		"ctrl-alt-del.socket", "suspend.timer", "dbus-org.freedesktop.login1.socket",
		// D-Bus activation aliases of the manager's essentials.
		"dbus-org.freedesktop.login1.service", "dbus-org.freedesktop.hostname1.service",
		// What distributions ship to run as the system stops, or whose stop takes the disks down.
		"plymouth-poweroff.service", "plymouth-reboot.service", "plymouth-halt.service", "plymouth-kexec.service",
		"dracut-shutdown.service", "dracut-shutdown-onfailure.service", "iscsi-shutdown.service", "blk-availability.service",
		// Reboot and OS-update families, the MCD's own units.
		"greenboot-healthcheck.service", "redboot-auto-reboot.service", "kexec-load.service",
		"systemd-sysupdate.service", "rpm-ostreed.service", "ostree-finalize-staged.service",
		"machine-config-daemon-firstboot.service", "machine-config-daemon-revert.service",
		// The manager's essentials, the boot's targets, a root shell.
		"systemd-journald.service", "systemd-journald.socket", "systemd-logind.service", "dbus.service",
		"dbus.socket", "init.scope", "user.slice", "multi-user.target", "debug-shell.service",
		// Instances of templates that act on a whole session or the disks.
		"user@1000.service", "user-runtime-dir@0.service", "systemd-fsck@dev-sda1.service",
		// systemd's early-boot oneshots (round 7a F5; allowed before): systemd-sysctl resets every
		// kernel setting, systemd-udev-trigger replays every device's events.
		"systemd-sysctl.service", "systemd-udev-trigger.service",
		// Round 8: a D-Bus activation alias the judge cannot resolve (it was allowed before: an
		// unknown name is no evidence of safety), systemd's D-Bus aliases as the units they link to.
		"dbus-org.example.myapp.service", "dbus-org.freedesktop.portable1.service",
		"dbus-org.freedesktop.login1.service", "dbus-org.freedesktop.sysupdate1.service",
	}
	for _, u := range refused {
		assert.Error(t, allowlist.UnitIdentity(u), "%s is refused", u)
		assert.Error(t, allowlist.ActOn(u), "%s is never acted on", u)
	}
	allowed := []string{
		// What the MCO's default NodeDisruptionPolicy and RHCOS name.
		"crio.service", "kubelet.service", "coreos-update-ca-trust.service", "iri-registry.service",
		"sshd.service", "NetworkManager.service", "NetworkManager-dispatcher.service", "chronyd.service",
		"auditd.service", "rsyslog.service", "kdump.service", "multipathd.service", "iscsid.service",
		"ovs-vswitchd.service", "ovsdb-server.service", "systemd-resolved.service", "systemd-timesyncd.service",
		"systemd-networkd.service", "getty@tty1.service",
		// Names that only share a stem or a word with a unit that is refused.
		"init.service", "user.service", "system.service", "slice.service", "crio-shutdown.service",
		"app-shutdown-notifier.service", "graceful-shutdown.service", "gpu-poweroff.service",
		"myapp-poweroff-guard.service", "shutdown-exporter.service", "systemd-update-utmp-runlevel.service",
	}
	for _, u := range allowed {
		assert.NoError(t, allowlist.UnitIdentity(u), "%s is an ordinary unit", u)
		assert.NoError(t, allowlist.ActOn(u), "%s may be acted on", u)
		doc := fmt.Sprintf("allowedUnits: [%s]\npaths:\n- {path: /etc/a, action: Restart, services: [%s]}\n", u, u)
		_, err := allowlist.ParsePolicy([]byte(doc))
		assert.NoError(t, err, "a policy may restart %s", u)
		if !strings.Contains(u, "@") { // the API's serviceName pattern has no templates
			doc = fmt.Sprintf("nodeDisruptionPolicy:\n  files:\n  - path: /etc/a\n    actions: [{type: Restart, restart: {serviceName: %s}}]\n", u)
			_, err = allowlist.ParsePolicy([]byte(doc))
			assert.NoError(t, err, "a NodeDisruptionPolicy may restart %s", u)
		}
	}
}

// What a unit is, from the properties its manager reports over D-Bus (the executor's view) or its
// unit file says (the plan's), both ways: the units RHCOS really runs pass; a unit that is a job of
// the system's stop is refused whatever its name.
func TestJudgeUnitShutdownIdentityBothWays(t *testing.T) {
	// crio.service as systemd reports it on RHCOS: default dependencies, pulled in by
	// multi-user.target and required by kubelet.service.
	crio := allowlist.UnitProps{ID: "crio.service", Names: []string{"crio.service"}, DefaultDependencies: true,
		Requires: []string{"sysinit.target", "system.slice"}, Wants: []string{"network-online.target", "crio-wipe.service"},
		Conflicts: []string{"shutdown.target"}, Before: []string{"shutdown.target", "kubelet-dependencies.target"},
		After:      []string{"network-online.target", "systemd-journald.socket", "basic.target", "crio-wipe.service"},
		PulledInBy: []string{"multi-user.target", "kubelet.service", "kubelet-dependencies.target"},
		Exec:       [][]string{{"/usr/bin/crio", "$CRIO_CONFIG_OPTIONS"}, {"/bin/kill", "-s", "HUP", "$MAINPID"}}}
	kubelet := allowlist.UnitProps{ID: "kubelet.service", Names: []string{"kubelet.service"}, DefaultDependencies: true,
		Requires: []string{"crio.service", "kubelet-dependencies.target"}, Conflicts: []string{"shutdown.target"},
		Before: []string{"shutdown.target"}, After: []string{"crio.service", "network-online.target"},
		PulledInBy: []string{"multi-user.target"},
		Exec:       [][]string{{"/bin/mkdir", "--parents", "/etc/kubernetes/manifests"}, {"/usr/bin/kubelet", "--config=/etc/kubernetes/kubelet.conf"}}}
	// An early-boot unit that is stopped when the system stops (auditd, lvm2-monitor).
	auditd := allowlist.UnitProps{ID: "auditd.service", Names: []string{"auditd.service"}, DefaultDependencies: false,
		Conflicts: []string{"shutdown.target"}, Before: []string{"sysinit.target", "shutdown.target"},
		PulledInBy: []string{"multi-user.target"}, Exec: [][]string{{"/sbin/auditd"}}}
	// The SRE's own unit named like a shutdown helper, doing nothing of the kind.
	notifier := allowlist.UnitProps{ID: "app-shutdown-notifier.service", Names: []string{"app-shutdown-notifier.service"},
		DefaultDependencies: true, Conflicts: []string{"shutdown.target"}, Before: []string{"shutdown.target"},
		PulledInBy: []string{"multi-user.target", "default.target"}, Exec: [][]string{{"/usr/local/bin/notify", "--on-stop"}}}
	for _, p := range []allowlist.UnitProps{crio, kubelet, auditd, notifier} {
		assert.NoError(t, allowlist.JudgeUnit(p), p.ID)
	}
	refused := map[string]allowlist.UnitProps{
		// plymouth-poweroff.service's shape under another name.
		"before the poweroff service": {ID: "splash.service", Names: []string{"splash.service"},
			Before: []string{"systemd-poweroff.service"}, PulledInBy: []string{"poweroff.target"}},
		"ordered before shutdown, not stopped by it": {ID: "late.service", Names: []string{"late.service"},
			Before: []string{"shutdown.target"}},
		"ordered before final.target": {ID: "late.service", Names: []string{"late.service"},
			Before: []string{"final.target", "umount.target"}},
		"pulled in by reboot.target": {ID: "late.service", Names: []string{"late.service"}, DefaultDependencies: true,
			Conflicts: []string{"shutdown.target"}, PulledInBy: []string{"reboot.target"}},
		"pulled in by an alias of poweroff": {ID: "late.service", Names: []string{"late.service"}, DefaultDependencies: true,
			PulledInBy: []string{"runlevel0.target"}},
		"pulled in by rescue.target": {ID: "late.service", Names: []string{"late.service"}, DefaultDependencies: true,
			PulledInBy: []string{"rescue.target"}},
	}
	for name, p := range refused {
		assert.Error(t, allowlist.JudgeUnit(p), name)
	}
}
