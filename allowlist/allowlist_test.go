package allowlist_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

func TestBuiltInPathMap(t *testing.T) {
	pol := allowlist.Default()
	cases := []struct {
		path     string
		action   allowlist.Action
		services []string
	}{
		{"/var/lib/kubelet/config.json", allowlist.ActionNone, nil},
		{"/etc/kubernetes/kubelet-ca.crt", allowlist.ActionNone, nil},
		{"/etc/mco/internal-registry-pull-secret.json", allowlist.ActionNone, nil},
		{"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", allowlist.ActionNone, nil},
		{"/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", allowlist.ActionRestart, nil},
		{"/etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem", allowlist.ActionNone, nil},
		{"/etc/docker/certs.d/quay.io/ca.crt", allowlist.ActionNone, nil},
		{"/etc/docker/certs.d/registry.example.com:5000/ca.crt", allowlist.ActionNone, nil},
		{"/etc/nmstate/openshift/cluster.yml", allowlist.ActionNone, nil},
		{"/etc/containers/registries.conf", allowlist.ActionReload, []string{"crio.service"}},
		{"/etc/containers/policy.json", allowlist.ActionReload, []string{"crio.service"}},
		{"/etc/containers/registries.d/mirror.yaml", allowlist.ActionReload, []string{"crio.service"}},
		{"/etc/machine-config-daemon/no-reboot/containers-gpg.pub", allowlist.ActionReload, []string{"crio.service"}},
		{"/etc/crio/policies/default.json", allowlist.ActionReload, []string{"crio.service"}},
		{"/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", allowlist.ActionRestart, []string{"coreos-update-ca-trust.service", "crio.service"}},
		{"/etc/kubernetes/credential-providers/ecr.yaml", allowlist.ActionRestart, []string{"kubelet.service"}},
	}
	for _, tc := range cases {
		d := pol.Resolve(tc.path, nil)
		require.True(t, d.Allowed, tc.path)
		assert.Equal(t, tc.action, d.Action, tc.path)
		assert.Equal(t, tc.services, d.Services, tc.path)
		assert.Equal(t, "policy", d.Source)
	}
	assert.Equal(t, []string{allowlist.PodAPIServerProxy}, pol.Resolve("/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", nil).Pods)
}

func TestPodsOnlyFromTheNodePolicy(t *testing.T) {
	rules, err := allowlist.ParseRules([]byte(`[{"path":"/etc/foo.cfg","action":"Restart","pods":["kube-system/x"]}]`))
	require.NoError(t, err)
	extra, warnings := allowlist.Default().Extra(rules)
	assert.Empty(t, extra)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "pods are named by the node policy only")
	for _, bad := range []string{`"kube-system"`, `"a/b/c"`, `"/x"`, `"KUBE/x"`, `"ns/x;reboot"`} {
		_, err := allowlist.ParseRules([]byte(`[{"path":"/etc/foo.cfg","action":"Restart","pods":[` + bad + `]}]`))
		assert.Error(t, err, bad)
	}
	_, err = allowlist.ParseRules([]byte(`[{"path":"/etc/foo.cfg","action":"Reload","services":["crio"],"pods":["kube-system/x"]}]`))
	assert.ErrorContains(t, err, "pods can only be restarted")
}

func TestFirstBootOnly(t *testing.T) {
	assert.Contains(t, allowlist.FirstBootOnly("/etc/kubernetes/kubeconfig"), "first boot only")
	assert.Empty(t, allowlist.FirstBootOnly("/var/lib/kubelet/kubeconfig"))
}

func TestPrefixMatchingIsComponentWise(t *testing.T) {
	pol := allowlist.Default()
	for _, p := range []string{
		"/etc/containers/registries.dx/a.yaml", // not under registries.d/
		"/etc/containers/registries.conf.bak",  // exact entries are exact
		"/etc/nmstate/openshiftx",
		"/etc/hosts",
	} {
		d := pol.Resolve(p, nil)
		assert.False(t, d.Allowed, p)
		assert.Equal(t, "path is not in the node allowlist", d.Reason, p)
	}
	assert.True(t, pol.Resolve("/etc/containers/registries.d/sub/dir/x.yaml", nil).Allowed)
	// The MCO's rule for the directory matches the path itself too (FindClosestFilePolicyPathMatch).
	assert.True(t, pol.Resolve("/etc/containers/registries.d", nil).Allowed)
}

func TestLongestMatchWins(t *testing.T) {
	pol := &allowlist.Policy{AllowedUnits: []string{"crio.service", "kubelet.service"}, Rules: []allowlist.Rule{
		{Path: "/etc/x/", Action: allowlist.ActionRestart, Services: []string{"kubelet.service"}},
		{Path: "/etc/x/y/", Action: allowlist.ActionReload, Services: []string{"crio.service"}},
		{Path: "/etc/x/y/z", Action: allowlist.ActionNone},
	}}
	assert.Equal(t, allowlist.ActionRestart, pol.Resolve("/etc/x/a", nil).Action)
	assert.Equal(t, allowlist.ActionReload, pol.Resolve("/etc/x/y/a", nil).Action)
	assert.Equal(t, allowlist.ActionNone, pol.Resolve("/etc/x/y/z", nil).Action)
}

func TestDeniedPrefixes(t *testing.T) {
	for _, p := range []string{"/boot/loader/entries/x.conf", "/usr/bin/crio", "/etc/ssh/sshd_config", "/etc/ssh",
		"/etc/systemd/system/evil.service", "/etc/sysctl.d/99.conf", "/etc/passwd", "/etc/shadow", "/etc/sudoers.d/x",
		"/etc/machine-config-daemon/currentconfig", "/etc/mcd-currentconfig.json", "/etc/mcs-machine-config-content.json",
		"/etc/ignition-machine-config-encapsulated.json", "/run/x", "/proc/sys/kernel/x", "/etc/kernel/cmdline",
		// Issue 11's classes: each one is root on every node.
		"/etc/cron.d/evil", "/etc/crontab", "/etc/cron.hourly/x", "/etc/cron.daily/x", "/etc/cron.allow", "/etc/anacrontab",
		"/var/spool/cron/root", "/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d/x.conf", "/etc/pam.d/sshd",
		"/etc/security/limits.conf", "/etc/NetworkManager/dispatcher.d/99-x", "/etc/NetworkManager/dispatcher.d/pre-up.d/x",
		"/etc/containers/oci/hooks.d/x.json", "/usr/share/containers/oci/hooks.d/x.json", "/etc/kubernetes/manifests/evil.yaml",
		"/etc/sysctl.conf", "/etc/dracut.conf", "/etc/dracut.conf.d/x.conf", "/etc/containers/systemd/x.container",
		"/var/lib/kubelet/kubeconfig", "/var/lib/kubelet/pki/kubelet-client-current.pem", "/etc/profile", "/etc/profile.d/x.sh",
		"/etc/environment", "/etc/sysconfig/crio", "/etc/udev/rules.d/99-x.rules", "/etc/tmpfiles.d/x.conf",
		"/etc/audit/rules.d/x.rules", "/etc/polkit-1/rules.d/x.rules", "/etc/xdg/systemd/user/x.service", "/root/.ssh/authorized_keys",
		"/var/home/core/.bashrc", "/home/core/.ssh/authorized_keys", "/etc/hosts.allow", "/etc/hosts.deny", "/etc/bashrc",
		"/etc/crio/crio.conf.d/00-default", "/etc/containers/containers.conf", "/etc/cni/net.d/x.conflist",
		"/etc/kubernetes/cni/net.d/x", "/var/lib/cni/bin/x", "/var/lib/containers/storage/x", "/var/usrlocal/bin/x",
		"/etc/kubernetes/kubeconfig", "/var/lib/refresh-agent/journal.json", "/etc/udev", "/etc/kubernetes/manifests",
		// Round 17: libraries' own rc files (popt aliases rewrite rpm's options; libssh's ProxyCommand).
		"/etc/popt", "/etc/popt.d/zz.popt", "/etc/popt.d", "/etc/libssh/libssh_client.config"} {
		prefix, denied := allowlist.Denied(p)
		assert.True(t, denied, p)
		assert.NotEmpty(t, prefix)
		assert.Contains(t, allowlist.Default().Resolve(p, nil).Reason, "denied prefix", p)
	}
	for _, p := range []string{"/etc/sshd", "/etc/sudoersx", "/usrx", "/etc/machine-config-daemon/no-reboot/containers-gpg.pub",
		"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", "/etc/kubernetes/kubelet-ca.crt", "/etc/hosts",
		"/var/lib/kubelet/config.json", "/etc/containers/registries.conf", "/etc/homeland"} {
		_, denied := allowlist.Denied(p)
		assert.False(t, denied, p)
	}
	// The exceptions are exact: a sibling, a prefix rule over them, or a path below them is denied.
	for _, p := range []string{"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml.bak", "/etc/kubernetes/manifests/",
		"/etc/machine-config-daemon/no-reboot/", "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml/x"} {
		_, denied := allowlist.Denied(p)
		assert.True(t, denied, p)
	}
	for _, p := range []string{"/etc/", "/var/lib/kubelet/", "/etc/kubernetes/", "/var/spool/"} {
		_, denied := allowlist.Denied(p)
		assert.True(t, denied, "a prefix rule covering denied paths is itself denied: %s", p)
	}
	// Every built-in rule stays writable.
	for _, r := range allowlist.Default().Rules {
		_, denied := allowlist.Denied(r.Path)
		assert.False(t, denied, r.Path)
	}
}

func TestNormalizeUnit(t *testing.T) {
	good := map[string]string{
		"crio":                           "crio.service",
		"crio.service":                   "crio.service",
		" kubelet ":                      "kubelet.service",
		"update-ca-trust":                "coreos-update-ca-trust.service",
		"update-ca-trust.service":        "coreos-update-ca-trust.service",
		"coreos-update-ca-trust":         "coreos-update-ca-trust.service",
		"coreos-update-ca-trust.service": "coreos-update-ca-trust.service",
		"getty@tty1.service":             "getty@tty1.service",
	}
	for in, want := range good {
		got, err := allowlist.NormalizeUnit(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "crio; reboot", "../../x.service", "a/b", "$(reboot)", "crio\nreboot", "..service", ".hidden"} {
		_, err := allowlist.NormalizeUnit(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseRules(t *testing.T) {
	rules, err := allowlist.ParseRules([]byte(`[
		{"path": "/etc/containers/registries.conf", "action": "Reload", "services": ["crio"]},
		{"path": "/etc/foo/", "action": "None"}]`))
	require.NoError(t, err)
	require.Len(t, rules, 2)
	assert.Equal(t, "/etc/foo/", rules[1].Path)

	for _, empty := range []string{"", "null", "  ", "[]"} {
		rules, err := allowlist.ParseRules([]byte(empty))
		require.NoError(t, err)
		assert.Empty(t, rules)
	}

	bad := map[string]string{
		`[{"path": "/etc/a", "action": "None"}, {"path": "/etc/b", "action": "Reboot"}]`:  `entry 1: path "/etc/b": action "Reboot" is not one of None, Restart, Reload`,
		`[{"path": "", "action": "None"}]`:                                                "entry 0: path is empty",
		`[{"path": "etc/a", "action": "None"}]`:                                           "entry 0: path \"etc/a\" is not absolute",
		`[{"path": "/etc/../boot/x", "action": "None"}]`:                                  "entry 0: path \"/etc/../boot/x\" is not clean",
		`[{"path": "/etc//x", "action": "None"}]`:                                         "is not clean",
		`[{"path": "/", "action": "None"}]`:                                               "is not clean",
		`[{"path": "/etc/a", "action": "Reload"}]`:                                        "entry 0: path \"/etc/a\": action Reload needs at least one service",
		`[{"path": "/etc/a", "action": "None", "services": ["crio"]}]`:                    "action None takes no services",
		`[{"path": "/etc/a", "action": "None"},]`:                                         "invalid JSON at offset",
		`[{"path": "/etc/a\u0000b", "action": "None"}]`:                                   `entry 0: path "/etc/a\x00b" contains control character U+0000`,
		`[{"path": "/etc/a", "action": "None"}, {"path": "/etc/a\nb", "action": "None"}]`: `entry 1: path "/etc/a\nb" contains control character`,
		`[{"path": "/etc/a\u007f", "action": "None"}]`:                                    "entry 0: path \"/etc/a\\x7f\" contains control character U+007F",
		`[{"path": "/etc/a\u0085", "action": "None"}]`:                                    "entry 0: path \"/etc/a\\u0085\" contains control character U+0085",
		"[{\"path\": \"/etc/a\xff\", \"action\": \"None\"}]":                              "entry 0: path \"/etc/a\ufffd\" is not valid UTF-8",
		`{"path": "/etc/a"}`:                                                              "invalid JSON at offset",
	}
	for in, want := range bad {
		_, err := allowlist.ParseRules([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		f := filepath.Join(dir, "policy.yaml")
		require.NoError(t, os.WriteFile(f, []byte(s), 0o600))
		return f
	}
	p, err := allowlist.LoadPolicy(write(`
paths:
  - {path: /etc/containers/registries.conf, action: Reload, services: [crio]}
allowedUnits: [crio]
coreSSHKeys: false
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"crio.service"}, p.AllowedUnits)
	assert.False(t, p.CoreSSHKeys)
	assert.True(t, p.Resolve("/etc/containers/registries.conf", nil).Allowed)
	assert.False(t, p.Resolve("/var/lib/kubelet/config.json", nil).Allowed, "the path map was replaced")

	p, err = allowlist.LoadPolicy(write(`{"allowedUnits": ["crio.service", "kubelet.service", "coreos-update-ca-trust.service", "node-exporter.service"]}`))
	require.NoError(t, err)
	assert.True(t, p.UnitAllowed("node-exporter.service"))
	assert.True(t, p.Resolve("/var/lib/kubelet/config.json", nil).Allowed, "built-in paths kept")

	bad := map[string]string{
		`paths: [{path: /etc/ssh/x, action: None}]`:                  "paths[0]: /etc/ssh/x is under denied prefix /etc/ssh",
		`paths: [{path: /etc/kubernetes/, action: None}]`:            "paths[0]: /etc/kubernetes/ covers denied prefix /etc/kubernetes/",
		`paths: [{path: /etc/x, action: Restart, services: [sshd]}]`: "paths[0]: unit sshd.service is not an allowed unit",
		`allowedUnits: [crio]`:                                       "allowedUnits drops a unit the built-in path map needs",
		`allowedUnits: ["crio; reboot"]`:                             "allowedUnits[0]",
		`pathz: []`:                                                  "unknown field",
		`paths: [{path: /etc/x, action: Sometimes}]`:                 "paths[0]",
		"paths: [\n  - {\n":                                          "not YAML or JSON",
	}
	for in, want := range bad {
		_, err := allowlist.LoadPolicy(write(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.Contains(t, err.Error(), "policy.yaml", "errors name the file")
	}
	_, err = allowlist.LoadPolicy(filepath.Join(dir, "missing.yaml"))
	assert.Error(t, err)
}

// A ceiling as a service provider would write it: /etc/foo/ may be extended with None or Reload crio.
const fooCeiling = `
configMapCeiling:
  - {prefix: /etc/foo/, actions: [None, Reload], units: [crio]}
  - {prefix: /var/lib/myapp/extra.json, actions: [None]}
`

func mustPolicy(t *testing.T, doc string) *allowlist.Policy {
	t.Helper()
	p, err := allowlist.ParsePolicy([]byte(doc))
	require.NoError(t, err)
	return p
}

func mustRules(t *testing.T, doc string) []allowlist.Rule {
	t.Helper()
	r, err := allowlist.ParseRules([]byte(doc))
	require.NoError(t, err)
	return r
}

// The built-in policy declares no ceiling: every no-reboot-paths entry for a path outside the
// built-in rules is ignored with a warning naming it, and the path stays refused.
func TestDefaultCeilingGrantsNothing(t *testing.T) {
	pol := allowlist.Default()
	assert.Empty(t, pol.Ceiling)
	rules := mustRules(t, `[
		{"path": "/etc/myapp/conf.yaml", "action": "Restart", "services": ["kubelet"]},
		{"path": "/var/lib/myapp/extra.json", "action": "None"},
		{"path": "/etc/cron.d/", "action": "None"},
		{"path": "/etc/ld.so.preload", "action": "None"},
		{"path": "/etc/pam.d/sshd", "action": "None"},
		{"path": "/etc/NetworkManager/dispatcher.d/99-x", "action": "None"},
		{"path": "/etc/containers/oci/hooks.d/x.json", "action": "Reload", "services": ["crio"]},
		{"path": "/etc/kubernetes/manifests/evil.yaml", "action": "None"},
		{"path": "/etc/sysctl.conf", "action": "None"},
		{"path": "/etc/dracut.conf", "action": "None"},
		{"path": "/etc/containers/systemd/x.container", "action": "None"},
		{"path": "/var/lib/kubelet/kubeconfig", "action": "None"},
		{"path": "/etc/containers/registries.conf", "action": "None"}]`)
	extra, warnings := pol.Extra(rules)
	assert.Empty(t, extra)
	require.Len(t, warnings, len(rules))
	assert.Contains(t, warnings[0], "no-reboot-paths entry 0 (/etc/myapp/conf.yaml Restart kubelet): path is outside the node policy's configMapCeiling: ignored")
	assert.Contains(t, warnings[2], "entry 2 (/etc/cron.d/ None): path is under denied prefix /etc/cron")
	for _, r := range rules[:len(rules)-1] {
		p := strings.TrimSuffix(r.Path, "/") + "/x"
		if !strings.HasSuffix(r.Path, "/") {
			p = r.Path
		}
		assert.False(t, pol.Resolve(p, extra).Allowed, p)
		assert.False(t, pol.Resolve(p, rules).Allowed, "unfiltered rules grant nothing either: %s", p)
	}
	// The node's own rule still applies; the entry changes nothing.
	d := pol.Resolve("/etc/containers/registries.conf", extra)
	assert.Equal(t, allowlist.ActionReload, d.Action)
	assert.Equal(t, "policy", d.Source)
}

// The ConfigMap chooses among what the ceiling allows, and nothing else.
func TestCeilingBoundsEachEntry(t *testing.T) {
	pol := mustPolicy(t, fooCeiling)
	require.Len(t, pol.Ceiling, 2)
	assert.Equal(t, []string{"crio.service"}, pol.Ceiling[0].Units, "normalised")
	rules := mustRules(t, `[
		{"path": "/etc/foo/a.conf", "action": "Reload", "services": ["crio"]},
		{"path": "/etc/foo/b.conf", "action": "Restart", "services": ["kubelet"]},
		{"path": "/etc/foo/c.conf", "action": "Reload", "services": ["kubelet"]},
		{"path": "/etc/foo/sub/", "action": "None"},
		{"path": "/etc/foobar/x", "action": "None"},
		{"path": "/etc/", "action": "None"},
		{"path": "/etc/foo/", "action": "Reload", "services": ["crio.service"]},
		{"path": "/var/lib/myapp/extra.json", "action": "None"},
		{"path": "/var/lib/myapp/extra.json.d/", "action": "None"},
		{"path": "/etc/foo/d.conf", "action": "Reload", "services": ["sshd"]}]`)
	extra, warnings := pol.Extra(rules)
	var honoured []string
	for _, r := range extra {
		honoured = append(honoured, r.Path)
	}
	assert.Equal(t, []string{"/etc/foo/a.conf", "/etc/foo/sub/", "/etc/foo/", "/var/lib/myapp/extra.json"}, honoured)
	require.Len(t, warnings, 6)
	assert.Equal(t, "no-reboot-paths entry 1 (/etc/foo/b.conf Restart kubelet): action Restart is not allowed under configMapCeiling prefix /etc/foo/ (allows None, Reload): ignored", warnings[0])
	assert.Contains(t, warnings[1], "entry 2 (/etc/foo/c.conf Reload kubelet): unit kubelet.service is not allowed under configMapCeiling prefix /etc/foo/ (allows crio.service)")
	assert.Contains(t, warnings[2], "entry 4 (/etc/foobar/x None): path is outside the node policy's configMapCeiling")
	assert.Contains(t, warnings[3], "entry 5 (/etc/ None): path is outside")
	assert.Contains(t, warnings[4], "entry 8")
	assert.Contains(t, warnings[5], "entry 9 (/etc/foo/d.conf Reload sshd): unit sshd.service is not an allowed unit")

	d := pol.Resolve("/etc/foo/a.conf", extra)
	assert.True(t, d.Allowed)
	assert.Equal(t, "no-reboot-paths", d.Source)
	assert.Equal(t, allowlist.ActionReload, d.Action)
	assert.Equal(t, allowlist.ActionNone, pol.Resolve("/etc/foo/sub/x", extra).Action)
	assert.Equal(t, allowlist.ActionReload, pol.Resolve("/etc/foo/zzz", extra).Action, "the /etc/foo/ entry")
	for _, p := range []string{"/etc/foo/b.conf", "/etc/foo/c.conf", "/etc/foo/d.conf"} {
		// Covered by the /etc/foo/ entry instead: Reload crio, never what the ignored entry asked.
		assert.Equal(t, allowlist.ActionReload, pol.Resolve(p, extra).Action, p)
	}
	for _, p := range []string{"/etc/foobar/x", "/etc/hosts", "/var/lib/myapp/extra.json.d/a"} {
		assert.False(t, pol.Resolve(p, extra).Allowed, p)
	}
	// Resolve checks the ceiling again: unfiltered entries grant nothing beyond it.
	assert.False(t, pol.Resolve("/etc/foobar/x", rules).Allowed)
	assert.False(t, pol.Resolve("/etc/hosts", rules).Allowed)
}

// A ceiling over denied prefixes is allowed; the deny list still wins for every path under it.
func TestDenyListIsASecondLayerUnderTheCeiling(t *testing.T) {
	pol := mustPolicy(t, "configMapCeiling: [{prefix: /etc/, actions: [None]}, {prefix: /var/lib/, actions: [None]}]")
	extra, warnings := pol.Extra(mustRules(t, `[
		{"path": "/etc/", "action": "None"},
		{"path": "/var/lib/", "action": "None"},
		{"path": "/etc/cron.d/", "action": "None"},
		{"path": "/etc/myapp.conf", "action": "Reload", "services": ["crio"]}]`))
	assert.Len(t, extra, 2)
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "under denied prefix /etc/cron")
	assert.Contains(t, warnings[1], "action Reload is not allowed under configMapCeiling prefix /etc/ (allows None)")
	assert.True(t, pol.Resolve("/etc/myapp.conf", extra).Allowed)
	// The exceptions to the deny list are for the node's own rules: a policy that drops those rules
	// does not open them to the ConfigMap.
	noRules := mustPolicy(t, "paths: []\nconfigMapCeiling: [{prefix: /etc/, actions: [None]}]")
	for _, p := range []string{"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", "/etc/machine-config-daemon/no-reboot/containers-gpg.pub"} {
		rules := mustRules(t, `[{"path": "`+p+`", "action": "None"}, {"path": "/etc/", "action": "None"}]`)
		extra, warnings := noRules.Extra(rules)
		require.Len(t, warnings, 1, p)
		assert.Contains(t, warnings[0], "under denied prefix", p)
		assert.False(t, noRules.Resolve(p, extra).Allowed, p)
		assert.False(t, noRules.Resolve(p, rules).Allowed, p)
		assert.True(t, allowlist.Default().Resolve(p, nil).Allowed, "the built-in rule: %s", p)
	}
	for _, p := range []string{"/etc/cron.d/x", "/etc/crontab", "/etc/ld.so.preload", "/etc/pam.d/sshd", "/etc/sysctl.conf",
		"/etc/kubernetes/manifests/evil.yaml", "/var/lib/kubelet/kubeconfig", "/etc/ssh/sshd_config", "/etc/profile.d/x.sh"} {
		d := pol.Resolve(p, extra)
		assert.False(t, d.Allowed, p)
		assert.Contains(t, d.Reason, "denied prefix", p)
	}
}

// Which entries are honoured, and what each path resolves to, never depends on entry order.
func TestEntryOrderNeverChangesTheResult(t *testing.T) {
	pol := mustPolicy(t, fooCeiling)
	entries := []string{
		`{"path": "/etc/foo/", "action": "None"}`,
		`{"path": "/etc/foo/a/", "action": "Reload", "services": ["crio"]}`,
		`{"path": "/etc/foo/a/b", "action": "None"}`,
		`{"path": "/etc/foo/x", "action": "Restart", "services": ["crio"]}`,
	}
	probes := []string{"/etc/foo/z", "/etc/foo/a/z", "/etc/foo/a/b", "/etc/foo/x"}
	var want []allowlist.Decision
	perm := []int{0, 1, 2, 3}
	for n := 0; n < 24; n++ {
		var parts []string
		for _, i := range perm {
			parts = append(parts, entries[i])
		}
		extra, _ := pol.Extra(mustRules(t, "["+strings.Join(parts, ",")+"]"))
		var got []allowlist.Decision
		for _, p := range probes {
			got = append(got, pol.Resolve(p, extra))
		}
		if want == nil {
			want = got
		}
		assert.Equal(t, want, got, "order %v", perm)
		nextPerm(perm)
	}
	assert.Equal(t, allowlist.ActionReload, want[1].Action)
	assert.Equal(t, allowlist.ActionNone, want[2].Action)
	assert.Equal(t, allowlist.ActionNone, want[3].Action, "Restart is above the ceiling: the /etc/foo/ entry applies")
}

// nextPerm advances p to the next permutation in lexicographic order (wrapping around).
func nextPerm(p []int) {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		slices.Reverse(p)
		return
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
}

// A ceiling prefix without a trailing slash covers the path itself and everything below it, by
// component; with one, only what is below.
func TestCeilingPrefixForms(t *testing.T) {
	pol := mustPolicy(t, "configMapCeiling: [{prefix: /etc/foo, actions: [None]}, {prefix: /etc/bar/, actions: [None]}]")
	extra, warnings := pol.Extra(mustRules(t, `[
		{"path": "/etc/foo", "action": "None"},
		{"path": "/etc/foo/a.conf", "action": "None"},
		{"path": "/etc/foo/sub/", "action": "None"},
		{"path": "/etc/foobar", "action": "None"},
		{"path": "/etc/bar/a.conf", "action": "None"},
		{"path": "/etc/bar", "action": "None"}]`))
	assert.Len(t, extra, 4)
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "entry 3 (/etc/foobar None): path is outside")
	assert.Contains(t, warnings[1], "entry 5 (/etc/bar None): path is outside")
	for _, p := range []string{"/etc/foo", "/etc/foo/a.conf", "/etc/foo/sub/x", "/etc/bar/a.conf"} {
		assert.True(t, pol.Resolve(p, extra).Allowed, p)
	}
	for _, p := range []string{"/etc/foobar", "/etc/bar", "/etc/foo/b.conf"} {
		assert.False(t, pol.Resolve(p, extra).Allowed, p)
	}
}

// Two entries for one path are invalid, whether they agree or not: the result could depend on order.
func TestDuplicateEntriesAreInvalid(t *testing.T) {
	for _, doc := range []string{
		`[{"path": "/etc/foo/a", "action": "None"}, {"path": "/etc/foo/b", "action": "None"}, {"path": "/etc/foo/a", "action": "None"}]`,
		`[{"path": "/etc/foo/a", "action": "None"}, {"path": "/etc/foo/b", "action": "None"}, {"path": "/etc/foo/a", "action": "Reload", "services": ["crio"]}]`,
	} {
		_, err := allowlist.ParseRules([]byte(doc))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `entries 0 and 2 both name path "/etc/foo/a"`)
	}
	// A file and a prefix of the same name are different entries.
	mustRules(t, `[{"path": "/etc/foo", "action": "None"}, {"path": "/etc/foo/", "action": "None"}]`)
}

func TestCeilingErrors(t *testing.T) {
	bad := map[string]string{
		"configMapCeiling: [{prefix: /etc/cron.d/, actions: [None]}]":                                                                                "configMapCeiling[0]: prefix /etc/cron.d/ is under denied prefix /etc/cron",
		"configMapCeiling: [{prefix: /etc/ok/, actions: [None]}, {prefix: /etc/ssh/x, actions: [None]}]":                                             "configMapCeiling[1]: prefix /etc/ssh/x is under denied prefix /etc/ssh",
		"configMapCeiling: [{prefix: /etc/kubernetes/manifests/, actions: [None]}]":                                                                  "under denied prefix /etc/kubernetes/manifests",
		"configMapCeiling: [{prefix: /usr/share/containers/oci/hooks.d/, actions: [None]}]":                                                          "under denied prefix /usr",
		"configMapCeiling: [{prefix: /etc/foo/, actions: []}]":                                                                                       "configMapCeiling[0] (/etc/foo/): actions is empty",
		"configMapCeiling: [{prefix: /etc/foo/, actions: [Reboot]}]":                                                                                 `action "Reboot" is not one of None, Restart, Reload`,
		"configMapCeiling: [{prefix: /etc/foo/, actions: [Reload]}]":                                                                                 "Reload or Restart needs at least one unit",
		"configMapCeiling: [{prefix: /etc/foo/, actions: [Reload], units: [sshd]}]":                                                                  "configMapCeiling[0] (/etc/foo/): unit sshd.service is not an allowed unit",
		"configMapCeiling: [{prefix: /etc/foo/, actions: [Reload], units: [\"crio; reboot\"]}]":                                                      "configMapCeiling[0]",
		"configMapCeiling: [{prefix: etc/foo/, actions: [None]}]":                                                                                    "configMapCeiling[0]: prefix \"etc/foo/\" is not absolute",
		"configMapCeiling: [{prefix: /etc/../boot/, actions: [None]}]":                                                                               "is not clean",
		"configMapCeiling: [{prefix: /, actions: [None]}]":                                                                                           "is not clean",
		"configMapCeiling: [{prefix: \"/etc/fo\\0o/\", actions: [None]}]":                                                                            "configMapCeiling[0]: prefix \"/etc/fo\\x00o/\" contains control character",
		"configMapCeiling: [{prefix: \"/etc/fo\\to/\", actions: [None]}]":                                                                            "contains control character U+0009",
		"configMapCeiling: [{prefix: /etc/foo/, actions: [None]}, {prefix: /etc/foo/, actions: [Reload], units: [crio]}]":                            "configMapCeiling[0] and [1] both name prefix /etc/foo",
		"configMapCeiling: [{prefix: /etc/foo, actions: [None]}, {prefix: /etc/foo/, actions: [Reload], units: [crio]}]":                             "configMapCeiling[0] and [1] both name prefix /etc/foo",
		"configMapCeiling: [{prefix: /etc/foo/, actions: [None], unitz: []}]":                                                                        "unknown field",
		"paths: [{path: \"/etc/a\\0\", action: None}]":                                                                                               "paths[0]: path \"/etc/a\\x00\" contains control character",
		"paths: [{path: /etc/a, action: None}, {path: /etc/a, action: None}]":                                                                        "paths[0] and paths[1] both name path /etc/a",
		"allowedUnits: [crio, kubelet, coreos-update-ca-trust]\nconfigMapCeiling: [{prefix: /etc/foo/, actions: [Restart], units: [node-exporter]}]": "unit node-exporter.service is not an allowed unit",
	}
	for in, want := range bad {
		_, err := allowlist.ParsePolicy([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	// A policy file in non-UTF-8 is refused whole.
	_, err := allowlist.ParsePolicy([]byte("configMapCeiling: [{prefix: /etc/f\xffo/, actions: [None]}]"))
	assert.Error(t, err)
	// The old keys keep working beside the new one.
	p := mustPolicy(t, "coreSSHKeys: false\nallowedUnits: [crio, kubelet, coreos-update-ca-trust, node-exporter]\n"+
		"configMapCeiling: [{prefix: /etc/node-exporter/, actions: [Restart], units: [node-exporter]}]")
	assert.False(t, p.CoreSSHKeys)
	extra, warnings := p.Extra(mustRules(t, `[{"path": "/etc/node-exporter/web.yaml", "action": "Restart", "services": ["node-exporter"]}]`))
	assert.Empty(t, warnings)
	assert.Equal(t, []string{"node-exporter.service"}, p.Resolve("/etc/node-exporter/web.yaml", extra).Services)
}

func TestLoopbackURL(t *testing.T) {
	for _, u := range []string{"http://localhost/", "http://127.0.0.1:8080/healthz", "https://[::1]:6443/readyz",
		"http://127.1.2.3:1/", "http://localhost:65535/"} {
		assert.NoError(t, allowlist.LoopbackURL(u), u)
	}
	for _, u := range []string{"http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]:80/", "http://localhost:99999/",
		"http://localhost:0/", "http://127.0.0.1:65536/", "http://localhost:/", "http://10.0.0.1/", "file:///etc/passwd",
		"http://u@localhost/"} {
		assert.Error(t, allowlist.LoopbackURL(u), u)
	}
}
