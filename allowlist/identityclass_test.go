package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Issue 27 F8: the units the adversary could name, and the class behind each, are refused wherever a
// policy names them (here a NodeDisruptionPolicy Restart serviceName) and as a dependency; units that
// only share a word elsewhere in their name are not.
func TestUnitClassesRefusedBothWays(t *testing.T) {
	refused := map[string]string{
		"debug-shell.service":               "root shell",
		"Debug-Shell.service":               "root shell",
		"debug-shell.socket":                "root shell",
		"systemd-sysext.service":            "merges images",
		"systemd-sysext@x.service":          "merges images",
		"systemd-confext.service":           "merges images",
		"systemd-portabled.service":         "merges images",
		"systemd-boot-update.service":       "merges images",
		"blk-availability.service":          "",
		"halt-local.service":                "",
		"systemd-initctl.service":           "sysvinit",
		"systemd-initctl.socket":            "sysvinit",
		"pivot.service":                     "deployment switch",
		"mcd-pivot.service":                 "deployment switch",
		"bootc-fetch-apply-updates.service": "deployment switch",
		"plymouth-halt.service":             "",
		"plymouth-halt-wait.service":        "",
		"myapp-halt.service":                "halt",
		"systemd-repart.service":            "repartitions",
		"systemd-growfs-root.service":       "repartitions",
		"systemd-pcrphase-shutdown.service": "boot phases",
		"systemd-veritysetup@root.service":  "",
	}
	for u, why := range refused {
		err := allowlist.UnitIdentity(u)
		require.Error(t, err, u)
		assert.Contains(t, err.Error(), why, u)
		_, err = allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  files:\n  - path: /etc/myapp/a.conf\n" +
			"    actions: [{type: Restart, restart: {serviceName: \"" + u + "\"}}]\n"))
		assert.Error(t, err, "policy naming %s", u)
		// As what a unit's end or start pulls in.
		err = allowlist.JudgeUnit(allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"}, DefaultDependencies: true, Wants: []string{u}})
		assert.Error(t, err, "Wants=%s", u)
	}
	for _, u := range []string{"myapp.service", "nohalt-monitor.service", "pivotal-app.service", "myapp-shellcheck.service",
		"sysextra.service", "crio.service", "kubelet.service", "init.service", "user.service", "app-shutdown-notifier.service",
		"console-getty.service", "rc-local.service", "kdump.service", "iri-registry.service"} {
		assert.NoError(t, allowlist.UnitIdentity(u), u)
	}
}
