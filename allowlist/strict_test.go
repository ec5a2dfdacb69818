package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// What encoding/json would silently resolve (the last duplicate wins, keys match whatever their
// case) is invalid in the ConfigMap's rules and in the policy file, naming the key (adversarial run).
func TestAmbiguousKeysAreInvalid(t *testing.T) {
	for in, want := range map[string]string{
		`[{"path":"/etc/foo/a","action":"None","action":"Reload","services":["crio"]}]`: `duplicate field "[0].action"`,
		`[{"path":"/etc/foo/a","Path":"/etc/cron.d/x","action":"None"}]`:                `unknown field "[0].Path"`,
		`[{"path":"/etc/foo/a","action":"None","extra":1}]`:                             `unknown field "[0].extra"`,
	} {
		_, err := allowlist.ParseRules([]byte(in))
		assert.ErrorContains(t, err, want, in)
	}
	for in, want := range map[string]string{
		"configMapCeiling:\n- prefix: /etc/foo/\n  actions: [None]\n  actions: [Reload]\n": "already set",
		`{"configMapCeiling":[{"prefix":"/etc/foo/","Actions":["Reload"]}]}`:               `unknown field "configMapCeiling[0].Actions"`,
		`{"coreSSHKeys":true,"CoreSSHKeys":false}`:                                         `unknown field "CoreSSHKeys"`,
	} {
		_, err := allowlist.ParsePolicy([]byte(in))
		assert.ErrorContains(t, err, want, in)
		if err != nil {
			assert.NotContains(t, err.Error(), "\n", "one line")
		}
	}
}

// Whatever a policy says, the agent acts on services only, and never on one that reboots, halts or
// replaces the running system (adversarial run: a policy allowed reboot.target).
func TestRebootUnitsAreNeverAllowed(t *testing.T) {
	for _, u := range []string{"reboot.target", "poweroff.target", "kexec.target", "var.mount", "crio.socket",
		"systemd-reboot.service", "systemd-reboot", "systemd-soft-reboot", "rpm-ostreed"} {
		_, err := allowlist.NormalizeUnit(u)
		assert.Error(t, err, u)
		_, err = allowlist.ParsePolicy([]byte("allowedUnits: [crio.service, kubelet.service, coreos-update-ca-trust.service, " + u + "]\n"))
		assert.Error(t, err, u)
	}
	for _, u := range []string{"crio", "crio.service", "update-ca-trust", "kubelet.service"} {
		_, err := allowlist.NormalizeUnit(u)
		assert.NoError(t, err, u)
	}
}

// An entry for a wide prefix does not carry its action into a narrower ceiling below it
// (adversarial run: /etc/foo/ Reload crio reached /etc/foo/bar/x, whose ceiling allows None only).
func TestCeilingIsCheckedForThePathItself(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte(`configMapCeiling:
- {prefix: /etc/foo/, actions: [None, Reload], units: [crio.service]}
- {prefix: /etc/foo/bar/, actions: [None]}
`))
	if !assert.NoError(t, err) {
		return
	}
	rules, err := allowlist.ParseRules([]byte(`[{"path":"/etc/foo/","action":"Reload","services":["crio"]}]`))
	assert.NoError(t, err)
	extra, _ := pol.Extra(rules)
	assert.True(t, pol.Resolve("/etc/foo/a.conf", extra).Allowed)
	d := pol.Resolve("/etc/foo/bar/x", extra)
	assert.False(t, d.Allowed, "%+v", d)
}

// Even under the widest ceiling, paths that are root on the node stay denied (adversarial run 2).
func TestWideCeilingStillDenies(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte("configMapCeiling:\n- {prefix: /etc/, actions: [None]}\n- {prefix: /var/, actions: [None]}\n"))
	if !assert.NoError(t, err) {
		return
	}
	rules, err := allowlist.ParseRules([]byte(`[{"path":"/etc/","action":"None"},{"path":"/var/","action":"None"}]`))
	assert.NoError(t, err)
	extra, _ := pol.Extra(rules)
	for _, p := range []string{"/etc/logrotate.d/x", "/etc/sudo.conf", "/etc/dbus-1/system.d/x.conf", "/var/lib/polkit-1/localauthority/x.pkla",
		"/etc/containers/mounts.conf", "/etc/rsyslog.d/x.conf", "/etc/sssd/sssd.conf", "/etc/sysusers.d/x.conf", "/etc/zincati/config.d/x.toml"} {
		assert.False(t, pol.Resolve(p, extra).Allowed, p)
	}
	assert.True(t, pol.Resolve("/etc/foo.conf", extra).Allowed)
}
