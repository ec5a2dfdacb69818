package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

const ndpSpec = `files:
- path: /etc/myapp/app.conf
  actions:
  - type: Drain
  - type: Reload
    reload:
      serviceName: myapp.service
  - type: Restart
    restart:
      serviceName: crio.service
- path: /etc/myapp/static.conf
  actions:
  - type: None
- path: /etc/myapp/kernel.conf
  actions:
  - type: Reboot
- path: /etc/myapp/dir
  actions:
  - type: DaemonReload
units:
- name: myapp.service
  actions:
  - type: Restart
    restart:
      serviceName: myapp.service
sshkey:
  actions:
  - type: Reboot
`

func TestNDPEveryFormParses(t *testing.T) {
	indent := func(s, pad string) string {
		out := ""
		for _, l := range splitLines(s) {
			out += pad + l + "\n"
		}
		return out
	}
	docs := map[string]string{
		"bare":                 ndpSpec,
		"nodeDisruptionPolicy": "nodeDisruptionPolicy:\n" + indent(ndpSpec, "  "),
		"spec":                 "spec:\n  nodeDisruptionPolicy:\n" + indent(ndpSpec, "    "),
		"object": "apiVersion: operator.openshift.io/v1\nkind: MachineConfiguration\nmetadata:\n  name: cluster\nspec:\n  logLevel: Normal\n  nodeDisruptionPolicy:\n" +
			indent(ndpSpec, "    ") + "status:\n  observedGeneration: 3\n  nodeDisruptionPolicyStatus:\n    clusterPolicies:\n      files:\n      - path: /etc/containers/registries.conf\n        actions:\n        - type: Special\n",
		"status": "status:\n  nodeDisruptionPolicyStatus:\n    clusterPolicies:\n" + indent(ndpSpec, "      "),
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			p := mustPolicy(t, doc)
			d := p.Resolve("/etc/myapp/app.conf", nil)
			require.True(t, d.Allowed, d.Reason)
			assert.True(t, d.Drain)
			assert.Equal(t, []allowlist.Step{{Action: "Reload", Unit: "myapp.service"}, {Action: "Restart", Unit: "crio.service"}}, d.Steps)
			assert.Contains(t, d.Name, "files[0] (/etc/myapp/app.conf)")
			assert.Equal(t, allowlist.ActionNone, p.Resolve("/etc/myapp/static.conf", nil).Action)
			reboot := p.Resolve("/etc/myapp/kernel.conf", nil)
			assert.False(t, reboot.Allowed)
			assert.Contains(t, reboot.Reason, "files[2] (/etc/myapp/kernel.conf) says Reboot")
			// A policy path covers itself and what is below it, as the MCD matches it.
			below := p.Resolve("/etc/myapp/dir/x.conf", nil)
			assert.True(t, below.Allowed)
			assert.True(t, below.DaemonReload)
			u, ok := p.UnitRule("myapp.service")
			require.True(t, ok)
			assert.Equal(t, []allowlist.Step{{Action: "Restart", Unit: "myapp.service"}}, u.Steps)
			assert.True(t, p.UnitAllowed("myapp.service"), "units named by the file's rules are allowed")
			assert.False(t, p.CoreSSHKeys, "sshkey Reboot refuses SSH key changes")
			// The built-in rules stay where the NDP does not replace them.
			reg := p.Resolve(allowlist.Registries, nil)
			assert.True(t, reg.Special)
			assert.True(t, p.Resolve("/var/lib/kubelet/config.json", nil).Allowed)
		})
	}
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

func TestNDPMergesOverDefaultsByPath(t *testing.T) {
	// A user rule for a default path replaces it (MergeClusterPolicies); trailing "/" or not.
	p := mustPolicy(t, `files:
- path: /etc/containers/registries.conf
  actions: [{type: Restart, restart: {serviceName: crio.service}}]
- path: /etc/containers/registries.d
  actions: [{type: None}]
`)
	reg := p.Resolve(allowlist.Registries, nil)
	assert.False(t, reg.Special)
	assert.Equal(t, allowlist.ActionRestart, reg.Action)
	assert.Equal(t, allowlist.ActionNone, p.Resolve("/etc/containers/registries.d/x.yaml", nil).Action)
	// Later layers win: spec over status.
	p = mustPolicy(t, `spec:
  nodeDisruptionPolicy:
    files: [{path: /etc/foo.conf, actions: [{type: None}]}]
status:
  nodeDisruptionPolicyStatus:
    clusterPolicies:
      files: [{path: /etc/foo.conf, actions: [{type: Reboot}]}]
`)
	assert.True(t, p.Resolve("/etc/foo.conf", nil).Allowed)
}

func TestNDPErrorsNameTheRule(t *testing.T) {
	cases := map[string]struct{ doc, want string }{
		"denied":         {"files:\n- path: /etc/x\n  actions: [{type: None}]\n- path: /etc/systemd/system/x.service\n  actions: [{type: None}]\n", "files[1] (/etc/systemd/system/x.service): path is under denied prefix /etc/systemd"},
		"special":        {"files:\n- path: /etc/a\n  actions: [{type: None}]\n- path: /etc/containers/registries.conf\n  actions: [{type: Special}]\n", "files[1] (/etc/containers/registries.conf): actions[0] (Special): Special is reserved"},
		"special status": {"clusterPolicies:\n  files:\n  - path: /etc/foo\n    actions: [{type: Special}]\n", "clusterPolicies.files[0] (/etc/foo): actions[0] (Special): Special is reserved"},
		"reload needs":   {"files:\n- path: /etc/a\n  actions: [{type: Reload}]\n", "files[0] (/etc/a): actions[0] (Reload): reload is required"},
		"restart extra":  {"files:\n- path: /etc/a\n  actions: [{type: None, restart: {serviceName: a.service}}]\n", "restart is required when type is Restart, and forbidden otherwise"},
		"none alone":     {"files:\n- path: /etc/a\n  actions: [{type: None}, {type: Drain}]\n", "files[0] (/etc/a): actions[0] (None): None can only be specified standalone"},
		"reboot alone":   {"units:\n- name: a.service\n  actions: [{type: Drain}, {type: Reboot}]\n", "units[0] (a.service): actions[1] (Reboot): Reboot can only be specified standalone"},
		"unknown type":   {"files:\n- path: /etc/a\n  actions: [{type: Reexec}]\n", `files[0] (/etc/a): actions[0] (Reexec): type "Reexec" is not one of`},
		"empty actions":  {"files:\n- path: /etc/a\n", "files[0] (/etc/a): actions is empty"},
		"bad service":    {"files:\n- path: /etc/a\n  actions: [{type: Restart, restart: {serviceName: crio}}]\n", "is not ${NAME}${SERVICETYPE}"},
		"reboot unit":    {"files:\n- path: /etc/a\n  actions: [{type: Restart, restart: {serviceName: reboot.target}}]\n", "would reboot, halt or isolate the node"},
		"unit name":      {"units:\n- name: ../x.service\n  actions: [{type: None}]\n", "units[0] (../x.service): name"},
		"covers":         {"nodeDisruptionPolicy:\n  files:\n  - path: /etc/kubernetes\n    actions: [{type: None}]\n", "nodeDisruptionPolicy.files[0] (/etc/kubernetes): path covers denied prefix /etc/kubernetes/"},
		"relative":       {"files:\n- path: etc/a\n  actions: [{type: None}]\n", "files[0] (etc/a): path \"etc/a\" is not absolute"},
		"duplicate":      {"files:\n- path: /etc/a\n  actions: [{type: None}]\n- path: /etc/a\n  actions: [{type: None}]\n", "files[0] and files[1] both name path /etc/a"},
		"trailing slash": {"files:\n- path: /etc/a\n  actions: [{type: None}]\n- path: /etc/a/\n  actions: [{type: None}]\n", "files[1] (/etc/a/): path /etc/a/ ends in \"/\", which the MCO reads differently: it matches only the files below /etc/a, never /etc/a itself"},
		"unclean":        {"files:\n- path: /etc//a\n  actions: [{type: None}]\n", "files[0] (/etc//a): path /etc//a is not clean: the MCO would match it to no file exactly and to the files below /etc/a"},
		"relative ndp":   {"files:\n- path: etc/a\n  actions: [{type: None}]\n", "path \"etc/a\" is not absolute: the MCO would match it to no file"},
		"not allowed":    {"allowedUnits: [crio, kubelet, update-ca-trust]\nnodeDisruptionPolicy:\n  files:\n  - path: /etc/a\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n", "nodeDisruptionPolicy.files[0] (/etc/a): actions[0] (Restart): unit myapp.service is not an allowed unit"},
		"unknown field":  {"files:\n- path: /etc/a\n  action: [{type: None}]\n", "unknown field"},
		"kind":           {"kind: MachineConfig\nspec: {}\n", `kind "MachineConfig"`},
		"denied allowed": {"allowedUnits: [poweroff.target]\n", "poweroff.target"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := allowlist.ParsePolicy([]byte(tc.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNDPNeverWidensTheConfigMap(t *testing.T) {
	p := mustPolicy(t, "files:\n- path: /etc/myapp\n  actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n")
	// The ConfigMap cannot name a path a node rule covers with a weaker action, nor use the unit.
	rules := mustRules(t, `[{"path":"/etc/other.conf","action":"Restart","services":["myapp"]}]`)
	extra, warnings := p.Extra(rules)
	assert.Empty(t, extra)
	assert.NotEmpty(t, warnings)
	assert.Equal(t, allowlist.ActionRestart, p.Resolve("/etc/myapp/a.conf", mustRules(t, `[{"path":"/etc/myapp/a.conf","action":"None"}]`)).Action)
}
