package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round 11 (exec 01): a *Directory= named after the unit is still no unit's own when it is a
// root-run program's configuration under /run (the /run twin of an audit row) or an audit row
// itself: systemd creates it, hands it to the unit's user and, for RuntimeDirectory=, removes it.
func TestOwnDirectoriesAreNeverRootRunConfiguration(t *testing.T) {
	for _, c := range []struct{ unit, key, value, want string }{
		{"NetworkManager.service", "RuntimeDirectory", "NetworkManager", "/run/NetworkManager is the /run twin of /etc/NetworkManager"},
		{"NetworkManager.service", "RuntimeDirectory", "NetworkManager/conf.d", "/run/NetworkManager/conf.d is the /run twin of /etc/NetworkManager/conf.d"},
		{"NetworkManager.service", "RuntimeDirectory", "NetworkManager-x NetworkManager/system-connections", "NetworkManager/system-connections: /run/NetworkManager/system-connections is the /run twin"},
		{"systemd.service", "RuntimeDirectory", "systemd/system", "/run/systemd/system is the /run twin of /etc/systemd/system"},
		{"udev.service", "RuntimeDirectory", "udev/rules.d", "/run/udev/rules.d is the /run twin of /etc/udev/rules.d"},
		{"crio.service", "RuntimeDirectory", "crio", "/run/crio is the /run twin of /etc/crio"},
		{"kubelet.service", "StateDirectory", "kubelet", "/var/lib/kubelet is denied"},
		{"NetworkManager.service", "ConfigurationDirectory", "NetworkManager", "/etc/NetworkManager is node policy only"},
		{"NetworkManager.service", "StateDirectory", "NetworkManager", "/var/lib/NetworkManager is node policy only"},
	} {
		got := checkOwnDirectories(keyCtx{unit: c.unit, key: optKey{"Service", c.key}, values: []string{c.value}})
		assert.Contains(t, got, c.want, "%s %s=%s", c.unit, c.key, c.value)
		assert.Contains(t, got, "never a unit's own directory", "%s %s=%s", c.unit, c.key, c.value)
	}
	for _, c := range []struct{ unit, key, value string }{
		{"NetworkManager.service", "RuntimeDirectory", "NetworkManager-x"},
		{"myapp.service", "RuntimeDirectory", "myapp myapp/sub myapp-sock"},
		{"myapp.service", "StateDirectory", "myapp/db"},
		{"myapp.service", "ConfigurationDirectory", "myapp"},
		{"myapp.service", "LogsDirectory", "myapp"},
		{"myapp.service", "CacheDirectory", "myapp"},
	} {
		assert.Empty(t, checkOwnDirectories(keyCtx{unit: c.unit, key: optKey{"Service", c.key}, values: []string{c.value}}), "%s %s=%s", c.unit, c.key, c.value)
	}
	// The node's own value stays.
	k := optKey{"Service", "RuntimeDirectory"}
	assert.Empty(t, checkOwnDirectories(keyCtx{unit: "NetworkManager.service", key: k, values: []string{"NetworkManager"},
		old: map[optKey][]string{k: {"NetworkManager"}}}))
}
