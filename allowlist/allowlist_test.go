package allowlist_test

import (
	"os"
	"path/filepath"
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
		"/etc/containers/registries.d",         // the directory itself is no file under it
		"/etc/containers/registries.conf.bak",  // exact entries are exact
		"/etc/nmstate/openshiftx",
		"/etc/hosts",
	} {
		d := pol.Resolve(p, nil)
		assert.False(t, d.Allowed, p)
		assert.Equal(t, "path is not in the node allowlist", d.Reason, p)
	}
	assert.True(t, pol.Resolve("/etc/containers/registries.d/sub/dir/x.yaml", nil).Allowed)
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
		"/etc/ignition-machine-config-encapsulated.json", "/run/x", "/proc/sys/kernel/x", "/etc/kernel/cmdline"} {
		prefix, denied := allowlist.Denied(p)
		assert.True(t, denied, p)
		assert.NotEmpty(t, prefix)
		assert.Contains(t, allowlist.Default().Resolve(p, nil).Reason, "denied prefix", p)
	}
	for _, p := range []string{"/etc/sshd", "/etc/passwdx", "/usrx", "/etc/machine-config-daemon/no-reboot/containers-gpg.pub"} {
		_, denied := allowlist.Denied(p)
		assert.False(t, denied, p)
	}
	_, denied := allowlist.Denied("/etc/")
	assert.True(t, denied, "a prefix rule covering denied paths is itself denied")
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
		`[{"path": "/etc/a", "action": "None"}, {"path": "/etc/b", "action": "Reboot"}]`: `entry 1: path "/etc/b": action "Reboot" is not one of None, Restart, Reload`,
		`[{"path": "", "action": "None"}]`:                                               "entry 0: path is empty",
		`[{"path": "etc/a", "action": "None"}]`:                                          "entry 0: path \"etc/a\" is not absolute",
		`[{"path": "/etc/../boot/x", "action": "None"}]`:                                 "entry 0: path \"/etc/../boot/x\" is not clean",
		`[{"path": "/etc//x", "action": "None"}]`:                                        "is not clean",
		`[{"path": "/", "action": "None"}]`:                                              "is not clean",
		`[{"path": "/etc/a", "action": "Reload"}]`:                                       "entry 0: path \"/etc/a\": action Reload needs at least one service",
		`[{"path": "/etc/a", "action": "None", "services": ["crio"]}]`:                   "action None takes no services",
		`[{"path": "/etc/a", "action": "None"},]`:                                        "invalid JSON at offset",
		`{"path": "/etc/a"}`:                                                             "invalid JSON at offset",
	}
	for in, want := range bad {
		_, err := allowlist.ParseRules([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func TestExtraRulesCannotWidenThePolicy(t *testing.T) {
	pol := allowlist.Default()
	rules, err := allowlist.ParseRules([]byte(`[
		{"path": "/etc/myapp/conf.yaml", "action": "Restart", "services": ["kubelet"]},
		{"path": "/etc/ssh/sshd_config", "action": "None"},
		{"path": "/etc/sysctl.d/", "action": "None"},
		{"path": "/opt/app/x", "action": "None"},
		{"path": "/etc/evil.conf", "action": "Restart", "services": ["sshd"]},
		{"path": "/etc/inject.conf", "action": "Restart", "services": ["crio; reboot"]},
		{"path": "/etc/trav.conf", "action": "Restart", "services": ["../../x.service"]},
		{"path": "/var/lib/kubelet/extra.json", "action": "None"},
		{"path": "/etc/containers/registries.conf", "action": "None"}]`))
	require.NoError(t, err)
	extra, warnings := pol.Extra(rules)
	require.Len(t, extra, 3)
	assert.Len(t, warnings, 6)
	assert.Equal(t, []string{"kubelet.service"}, extra[0].Services, "normalised")

	d := pol.Resolve("/etc/myapp/conf.yaml", extra)
	assert.True(t, d.Allowed)
	assert.Equal(t, "no-reboot-paths", d.Source)
	assert.True(t, pol.Resolve("/var/lib/kubelet/extra.json", extra).Allowed)
	// Denied prefixes beat no-reboot-paths, and rejected entries leave their paths not allowlisted.
	for _, p := range []string{"/etc/ssh/sshd_config", "/etc/sysctl.d/99-x.conf", "/opt/app/x", "/etc/evil.conf", "/etc/inject.conf", "/etc/trav.conf"} {
		assert.False(t, pol.Resolve(p, extra).Allowed, p)
	}
	// The node's own action wins over the ConfigMap's for a path it covers.
	d = pol.Resolve("/etc/containers/registries.conf", extra)
	assert.Equal(t, allowlist.ActionReload, d.Action)
	assert.Equal(t, "policy", d.Source)
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
