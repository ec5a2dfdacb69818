package plan_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

func buildWith(t *testing.T, pol *allowlist.Policy, rules []allowlist.Rule, cur, des *fixture.Config) *plan.Plan {
	t.Helper()
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol, NoRebootPaths: rules})
	require.NoError(t, err)
	return p
}

func uid(n int) *int { return &n }

// Issue 27, class 4: every rule has a mode ceiling and an owner; a wider mode or another owner is
// refused naming the path and the ceiling.
func TestModeAndOwnerCeilings(t *testing.T) {
	const secret, conf = "/var/lib/kubelet/config.json", "/etc/containers/registries.conf"
	cases := []struct {
		name   string
		des    func() *fixture.Config
		refuse string // "" when eligible
	}{
		{"pull secret 0666", func() *fixture.Config { return plain().File(secret, []byte("{}"), 0o666) }, "mode 0666 is wider than the node policy's mode ceiling 0600"},
		{"pull secret 0644", func() *fixture.Config { return plain().File(secret, []byte("{}"), 0o644) }, "mode ceiling 0600"},
		{"pull secret 0604", func() *fixture.Config { return plain().File(secret, []byte("{}"), 0o604) }, "mode ceiling 0600"},
		{"pull secret 0600", func() *fixture.Config { return plain().File(secret, []byte("{}"), 0o600) }, ""},
		{"pull secret 0400", func() *fixture.Config { return plain().File(secret, []byte("{}"), 0o400) }, ""},
		{"registries 0664", func() *fixture.Config { return plain().File(conf, []byte("# x"), 0o664) }, "mode 0664 is wider than the node policy's mode ceiling 0644"},
		{"registries 0755", func() *fixture.Config { return plain().File(conf, []byte("# x"), 0o755) }, "mode ceiling 0644"},
		{"registries 0640", func() *fixture.Config { return plain().File(conf, []byte("# x"), 0o640) }, ""},
		{"pull secret to core by name", func() *fixture.Config { return plain().File(secret, []byte("{}"), 0o600).Owner(secret, "core", "core") }, "owner core:core is not the node policy's owner root:root"},
		{"pull secret to group wheel", func() *fixture.Config {
			return plain().File(secret, []byte("{}"), 0o600).Owner(secret, "root", "wheel")
		}, "owner root:wheel"},
		{"pull secret to uid 1000", func() *fixture.Config {
			c := plain().File(secret, []byte("{}"), 0o600)
			c.Storage.Files[0].User.ID = uid(1000)
			return c
		}, "owner 1000:root"},
		{"pull secret to root by id", func() *fixture.Config {
			c := plain().File(secret, []byte("{}"), 0o600)
			c.Storage.Files[0].User.ID, c.Storage.Files[0].Group.ID = uid(0), uid(0)
			return c
		}, ""},
		{"CA bundle 0644 root", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/ca.crt", []byte("x"), 0o644).Owner("/etc/docker/certs.d/r.io/ca.crt", "root", "root")
		}, ""},
		{"a key below a prefix 0644", func() *fixture.Config { return plain().File("/etc/docker/certs.d/r.io/client.key", []byte("x"), 0o644) }, "mode ceiling 0600"},
		// Adversary F9: a private key by any of the names TLS tools give one, whatever the case.
		{"client.KEY 0644", func() *fixture.Config { return plain().File("/etc/docker/certs.d/r.io/client.KEY", []byte("x"), 0o644) }, "mode ceiling 0600"},
		{"client-key.pem 0644", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/client-key.pem", []byte("x"), 0o644)
		}, "mode ceiling 0600"},
		{"client_key.pem 0644", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/client_key.pem", []byte("x"), 0o644)
		}, "mode ceiling 0600"},
		{"client.key.pem 0644", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/client.key.pem", []byte("x"), 0o644)
		}, "mode ceiling 0600"},
		{"client-key.pem 0600", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/client-key.pem", []byte("x"), 0o600)
		}, ""},
		{"client.cert 0644", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/client.cert", []byte("x"), 0o644)
		}, ""},
		// Round-4b F4: a secret by the class of its name, under the built-in rules too.
		{"iri htpasswd 0644", func() *fixture.Config { return plain().File("/etc/iri-registry/auth/htpasswd", []byte("x"), 0o644) }, "mode ceiling 0600"},
		{"iri key.pem 0644", func() *fixture.Config { return plain().File("/etc/iri-registry/certs/key.pem", []byte("x"), 0o644) }, "mode ceiling 0600"},
		{"iri tls.key.bak 0640", func() *fixture.Config {
			return plain().File("/etc/iri-registry/certs/tls.key.bak", []byte("x"), 0o640)
		}, "mode ceiling 0600"},
		{"certs.d id_ed25519 0644", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/id_ed25519", []byte("x"), 0o644)
		}, "mode ceiling 0600"},
		{"certs.d client.p12 0644", func() *fixture.Config {
			return plain().File("/etc/docker/certs.d/r.io/client.p12", []byte("x"), 0o644)
		}, "mode ceiling 0600"},
		{"iri htpasswd 0600 (the MCO's)", func() *fixture.Config {
			return plain().File("/etc/iri-registry/auth/htpasswd", []byte("x"), 0o600)
		}, ""},
		{"iri tls.crt 0644 (the MCO's)", func() *fixture.Config {
			return plain().File("/etc/iri-registry/certs/tls.crt", []byte("x"), 0o644)
		}, ""},
		{"credential provider config 0644 (the MCO's)", func() *fixture.Config {
			return plain().File("/etc/kubernetes/credential-providers/ecr-credential-provider.yaml", fixture.CredentialProviderConfig("ecr"), 0o644)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := buildWith(t, allowlist.Default(), nil, plain(), tc.des())
			if tc.refuse == "" {
				require.True(t, p.Eligible, "%+v", p.Refused)
				return
			}
			require.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, tc.refuse)
			assert.Contains(t, p.Refused[0].Reason, tc.des().Storage.Files[0].Path, "the reason names the path")
			assert.Empty(t, p.Files)
		})
	}
}

// A ceiling entry bounds the files the ConfigMap adds; the ConfigMap cannot set a mode or owner.
func TestCeilingModesAndTheirDisplay(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte("configMapCeiling:\n- {prefix: /etc/myapp/, actions: [None], mode: 0640, owner: \"core:core\"}\n" +
		"paths:\n- {path: /etc/tool.conf, action: None, mode: \"0755\"}\n"))
	require.NoError(t, err)
	rules, err := allowlist.ParseRules([]byte(`[{"path": "/etc/myapp/", "action": "None"}]`))
	require.NoError(t, err)
	p := buildWith(t, pol, rules, plain(), plain().File("/etc/myapp/a", []byte("x"), 0o644))
	require.False(t, p.Eligible)
	assert.Contains(t, p.Refused[0].Reason, "mode 0644 is wider than the node policy's mode ceiling 0640")
	p = buildWith(t, pol, rules, plain(), plain().File("/etc/myapp/a", []byte("x"), 0o640).Owner("/etc/myapp/a", "core", "core"))
	require.True(t, p.Eligible, "%+v", p.Refused)
	p = buildWith(t, pol, rules, plain(), plain().File("/etc/tool.conf", []byte("x"), 0o755).File("/etc/myapp/b", []byte("x"), 0o600))
	require.True(t, p.Eligible, "%+v", p.Refused)
	// The plan shows the ceilings (diff -o json).
	out, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"path":"/etc/tool.conf","eligible":true,"action":"None","modeCeiling":"0755","ownerCeiling":"root:root"`)
	assert.Contains(t, string(out), `"modeCeiling":"0640","ownerCeiling":"core:core"`)

	// The ConfigMap asking for a mode or owner is ignored with a warning.
	asks, err := allowlist.ParseRules([]byte(`[{"path": "/etc/myapp/", "action": "None", "mode": "0777", "owner": "core:core"}]`))
	require.NoError(t, err)
	extra, warnings := pol.Extra(asks)
	assert.Empty(t, extra)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "mode and owner ceilings are set by the node policy only")

	for doc, want := range map[string]string{
		"paths:\n- {path: /etc/a, action: None, mode: \"abc\"}\n":                 "not an octal permission",
		"paths:\n- {path: /etc/a, action: None, mode: 04755}\n":                   "not a file permission ceiling",
		"paths:\n- {path: /etc/a, action: None, owner: root}\n":                   "is not user:group",
		"paths:\n- {path: /etc/a, action: None, owner: \"a b:c\"}\n":              "is not user:group",
		"configMapCeiling:\n- {prefix: /etc/a/, actions: [None], owner: \"x\"}\n": "is not user:group",
	} {
		_, err := allowlist.ParsePolicy([]byte(doc))
		if assert.Error(t, err, doc) {
			assert.Contains(t, err.Error(), want, doc)
		}
	}
}
