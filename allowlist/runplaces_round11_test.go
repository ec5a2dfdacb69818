package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 11 (exec 01): the configuration root-run programs read under /run (the /run twin of every
// /etc and /var/lib row of the audit) is no unit's own place, whatever the unit is called or its
// RuntimeDirectory= says: a changed line of NetworkManager.service writing
// /run/NetworkManager/system-connections/x.nmconnection was accepted as NetworkManager's /run/S.
func TestRunTwinsOfConfigAreNeverAUnitsOwnPlace(t *testing.T) {
	for _, c := range []struct {
		unit, runtimeDir, line, path string
	}{
		// The finding.
		{"NetworkManager.service", "", `ExecStartPre=/bin/sh -c 'printf "[connection]\ntype=ethernet\n" > /run/NetworkManager/system-connections/x.nmconnection'`, "/run/NetworkManager/system-connections/x.nmconnection"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/touch /run/NetworkManager/conf.d/x.conf`, "/run/NetworkManager/conf.d/x.conf"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/cp /tmp/x /run/NetworkManager/dispatcher.d/x`, "/run/NetworkManager/dispatcher.d/x"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/sh -c 'echo x >> /var/run/NetworkManager/conf.d/x.conf'`, "/run/NetworkManager/conf.d/x.conf"},
		{"NetworkManager-wait-online.service", "", `ExecStartPre=/bin/touch /run/NetworkManager/conf.d/x.conf`, "/run/NetworkManager/conf.d/x.conf"},
		// The same unit, the variants: a pattern, the directory itself, a rename into it, a link.
		{"NetworkManager.service", "", `ExecStartPre=/bin/rm -f /run/NetworkManager/conf.d/*.conf`, "/run/NetworkManager/conf.d/*.conf"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/rm -rf /run/NetworkManager`, "/run/NetworkManager"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/mv /run/NetworkManager-x /run/NetworkManager`, "/run/NetworkManager"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/mv /tmp/x.nmconnection /run/NetworkManager/system-connections/`, "/run/NetworkManager/system-connections/*"},
		{"NetworkManager.service", "", `ExecStartPre=/bin/ln -sf /tmp/x /run/NetworkManager/system-connections/x.nmconnection`, "/run/NetworkManager/system-connections/x.nmconnection"},
		// Contrived names whose /run/S is a root-run program's configuration.
		{"udev.service", "", `ExecStartPre=/bin/sh -c 'echo "RUN+=\"/tmp/x\"" > /run/udev/rules.d/99-x.rules'`, "/run/udev/rules.d/99-x.rules"},
		{"systemd.service", "", `ExecStartPre=/bin/cp /tmp/x.service /run/systemd/system/x.service`, "/run/systemd/system/x.service"},
		{"systemd.service", "", `ExecStartPre=/bin/mkdir -p /run/systemd/system.control/crio.service.d`, "/run/systemd/system.control/crio.service.d"},
		{"systemd.service", "", `ExecStartPre=/bin/touch /run/systemd/transient/x.service`, "/run/systemd/transient/x.service"},
		{"systemd.service", "", `ExecStartPre=/bin/touch /run/systemd/generator.late/x.service`, "/run/systemd/generator.late/x.service"},
		{"systemd.service", "", `ExecStartPre=/bin/touch /run/systemd/generator/x.service`, "/run/systemd/generator/x.service"},
		{"tmpfiles.service", "", `ExecStartPre=/bin/touch /run/tmpfiles.d/x.conf`, "/run/tmpfiles.d/x.conf"},
		{"modprobe.service", "", `ExecStartPre=/bin/touch /run/modprobe.d/x.conf`, "/run/modprobe.d/x.conf"},
		{"binfmt.service", "", `ExecStartPre=/bin/touch /run/binfmt.d/x.conf`, "/run/binfmt.d/x.conf"},
		{"sysctl.service", "", `ExecStartPre=/bin/touch /run/sysctl.d/x.conf`, "/run/sysctl.d/x.conf"},
		{"modules-load.service", "", `ExecStartPre=/bin/touch /run/modules-load.d/x.conf`, "/run/modules-load.d/x.conf"},
		{"sysusers.service", "", `ExecStartPre=/bin/touch /run/sysusers.d/x.conf`, "/run/sysusers.d/x.conf"},
		{"environment.service", "", `ExecStartPre=/bin/touch /run/environment.d/x.conf`, "/run/environment.d/x.conf"},
		{"credstore.service", "", `ExecStartPre=/bin/touch /run/credstore/x`, "/run/credstore/x"},
		{"credstore.service", "", `ExecStartPre=/bin/touch /run/credstore.encrypted/x`, "/run/credstore.encrypted/x"},
		{"containers.service", "", `ExecStartPre=/bin/touch /run/containers/0/auth.json`, "/run/containers/0/auth.json"},
		{"crio.service", "", `ExecStartPre=/bin/rm -f /run/crio/crio.sock`, "/run/crio/crio.sock"},
		{"kubelet.service", "", `ExecStartPre=/bin/touch /run/kubelet/x`, "/run/kubelet/x"},
		{"kubernetes.service", "", `ExecStartPre=/bin/touch /run/kubernetes/x`, "/run/kubernetes/x"},
		{"udev.service", "", `ExecStartPre=/bin/touch /run/udev/rules.d/x.rules`, "/run/udev/rules.d/x.rules"},
		// Round 12 (units, notes): /var/log/S is a unit's own, but not the journal's, the audit
		// trail's or the pods' logs, whatever the unit is called or its LogsDirectory= says.
		{"journal.service", "", `ExecStartPre=/bin/rm -rf /var/log/journal`, "/var/log/journal"},
		{"journal.service", "", `ExecStartPre=/bin/sh -c 'echo x > /var/log/journal/x.journal'`, "/var/log/journal/x.journal"},
		{"audit.service", "", `ExecStartPre=/bin/rm -f /var/log/audit/audit.log`, "/var/log/audit/audit.log"},
		{"pods.service", "", `ExecStartPre=/bin/rm -rf /var/log/pods/ns_pod_uid`, "/var/log/pods/ns_pod_uid"},
		{"containers.service", "", `ExecStartPre=/bin/rm -f /var/log/containers/x.log`, "/var/log/containers/x.log"},
		// RuntimeDirectory= names one: still never the unit's own.
		{"myapp.service", "systemd/system", `ExecStartPre=/bin/touch /run/systemd/system/x.service`, "/run/systemd/system/x.service"},
		{"myapp.service", "NetworkManager/conf.d", `ExecStartPre=/bin/touch /run/NetworkManager/conf.d/x.conf`, "/run/NetworkManager/conf.d/x.conf"},
		{"myapp.service", "udev/rules.d myapp", `ExecStartPre=/bin/touch /run/udev/rules.d/x.rules`, "/run/udev/rules.d/x.rules"},
		{"myapp.service", "tmpfiles.d", `ExecStartPre=/bin/touch /run/tmpfiles.d/x.conf`, "/run/tmpfiles.d/x.conf"},
	} {
		p := unitOfLines(t, true, c.line)
		p.ID, p.Names = c.unit, []string{c.unit}
		if c.runtimeDir != "" {
			p.RuntimeDirectory = []string{c.runtimeDir}
		}
		err := allowlist.JudgeUnit(p)
		if assert.Error(t, err, "%s: %s", c.unit, c.line) {
			assert.Contains(t, err.Error(), c.path+":", c.line)
			// systemd's unit dirs under /run were refused before, as the manager's units.
			assert.Regexp(t, `never a unit's own place|the manager's or the bus's sockets and units`, err.Error(), c.line)
		}
	}
	// Neighbours that are the unit's own stay accepted: /run/S-… names whose twin is no row, a
	// RuntimeDirectory= of the unit's, and the MCO's own runtime directories.
	for _, c := range []struct{ unit, runtimeDir, line string }{
		{"NetworkManager.service", "", `ExecStartPre=/bin/mkdir -p /run/NetworkManager-x/y`},
		{"myapp.service", "", `ExecStartPre=/bin/sh -c 'echo 1 > /run/myapp/state; rm -f /run/myapp.pid'`},
		{"myapp.service", "myapp/sub", `ExecStartPre=/bin/touch /run/myapp/sub/x`},
		{"myapp-helper.service", "", `ExecStartPre=/bin/mkdir -p /run/myapp-helper/x /var/lib/myapp-helper`},
		{"kubelet.service", "", `ExecStartPre=/bin/mkdir -p /run/kubelet-x`},
		{"myapp.service", "", `ExecStartPre=/bin/sh -c 'echo x >> /var/log/myapp/x.log; mkdir -p /var/log/myapp-journal'`},
	} {
		p := unitOfLines(t, true, c.line)
		p.ID, p.Names = c.unit, []string{c.unit}
		if c.runtimeDir != "" {
			p.RuntimeDirectory = []string{c.runtimeDir}
		}
		assert.NoError(t, allowlist.JudgeUnit(p), "%s: %s", c.unit, c.line)
	}
	// What the node's unit already writes stays its own (the same operand).
	line := `ExecStartPre=/bin/touch /run/NetworkManager/conf.d/x.conf`
	p := unitOfLines(t, true, line)
	p.ID, p.Names = "NetworkManager.service", []string{"NetworkManager.service"}
	p.OwnWrites = allowlist.OwnWrites(unitOfLines(t, false, line))
	assert.NoError(t, allowlist.JudgeUnit(p))
}

// NeverOwn names the row a /run path is the twin of.
func TestNeverOwnNamesTheTwin(t *testing.T) {
	for p, want := range map[string]string{
		"/run/NetworkManager/conf.d/x.conf": "/run/NetworkManager/conf.d/x.conf is the /run twin of /etc/NetworkManager/conf.d/x.conf",
		"/var/run/udev/rules.d/":            "/var/run/udev/rules.d is the /run twin of /etc/udev/rules.d",
		"/run/crio/crio.sock":               "/run/crio/crio.sock is the /run twin of /etc/crio/crio.sock",
		"/run/kubelet/x":                    "/run/kubelet/x is the /run twin of /var/lib/kubelet/x",
		"/etc/NetworkManager/conf.d/x":      "/etc/NetworkManager is node policy only",
		"/run/cdi/x.json":                   "/run/cdi is denied",
	} {
		assert.Contains(t, allowlist.NeverOwn(p), want, p)
	}
	for _, p := range []string{"/run", "/run/", "/var/run", "/run/myapp", "/run/myapp/x", "/run/NetworkManager-x", "/run/nodeip-configuration/primary-ip", "/tmp/x"} {
		assert.Empty(t, allowlist.NeverOwn(p), p)
	}
}
