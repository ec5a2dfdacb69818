package allowlist_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Issue 27 class 4, round-4b F4: a secret's default ceiling is 0600 by the class of its name, not by
// a few patterns. Each name is tried in a directory no rule knows, and the public and configuration
// names beside them keep 0644.
func TestSecretNamesDefaultTo0600(t *testing.T) {
	secret := []string{
		// The adversary's.
		"key.pem", "privkey.pem", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "tls.p12", "kubeconfig", "htpasswd", "tls.key.bak",
		// The class around them.
		"tls.key", "client.KEY", "client-key.pem", "client_key.pem", "client.key.pem", "tls.key.old", "server.key.1",
		"id_ecdsa_sk", "id_ed25519_sk", "id_rsa.bak", "id_xmss", "ssh_host_rsa_key", "ssh_host_ed25519_key",
		"server.pfx", "bundle.P12", "truststore.jks", "app.keystore", "pkcs8.p8", "key.pk8", "putty.ppk", "code.pvk",
		"private.pem", "tls-private.pem", "privateKey.pem", "PrivateKey.der", "secret.yaml", "db-secrets.env", "secretkey",
		"api-key.txt", "apiKey.json", "apikey", "token", "bootstrap-token", "sa.token", "tokens.csv", "password",
		"db_password.txt", "passwords.json", "passwd", "passphrase", ".htpasswd", "admin.kubeconfig", "kubeconfig.yaml",
		"credentials", "aws-credentials", ".git-credentials", "creds.json", "krb5.keytab", "http.keytab", ".netrc",
		".pgpass", ".dockercfg", "dockerconfigjson", "auth.json", "registry.password", "enc-key.bin", "tls.key.pem.bak",
		"public.key", // *.key is a key's name whatever the rest says
	}
	public := []string{
		"tls.crt", "ca.pem", "ca-bundle.crt", "client.cert", "id_rsa.pub", "id_ed25519.pub", "id_rsa-cert.pub",
		"ssh_host_rsa_key.pub", "key.pub", "cosign.pub", "containers-gpg.pub", "RPM-GPG-KEY-redhat-release", "pubkey.pem",
		"public-key.pem.asc.gpg", "signing-key.crt", "server.csr", "app.conf", "20-keyfiles.conf", "monkey.conf",
		"keyboard.map", "tokenizer.json", "passport.conf", "acr-credential-provider.yaml", "ecr-credential-provider.yaml",
		"gcr-credential-provider.yaml", "credentials-provider.json", "registries.conf", "config.json", "policy.json",
		"kubelet-ca.crt", "haproxy.cfg", "p12.conf", "id.conf", "identity.conf", "secretariat.txt",
	}
	for _, name := range secret {
		assert.Equal(t, allowlist.Mode(0o600), allowlist.DefaultMode("/etc/myapp/"+name), name)
	}
	for _, name := range public {
		assert.Equal(t, allowlist.Mode(0o644), allowlist.DefaultMode("/etc/myapp/"+name), name)
	}
	// A directory of secrets makes every file in it one.
	for _, p := range []string{"/etc/myapp/private/a.conf", "/etc/myapp/secrets/a.conf", "/etc/myapp/SECRETS/a.conf"} {
		assert.Equal(t, allowlist.Mode(0o600), allowlist.DefaultMode(p), p)
	}
	assert.Equal(t, allowlist.Mode(0o644), allowlist.DefaultMode("/etc/secrets.d/a.conf"))
}

// The machine-config operator's own files of these names (templates/ and the internal release
// image's templates at 7ff337a, path and mode as written there) stay within the built-in policy's
// ceilings: the real payloads keep applying. The secret ones it writes 0600 get 0600; the
// credential provider configs and certificates it writes 0644 get 0644.
func TestSecretNamesMatchTheMCO(t *testing.T) {
	mco := map[string]int{
		"/etc/iri-registry/auth/htpasswd":                                      0o600,
		"/etc/iri-registry/certs/tls.key":                                      0o600,
		"/etc/iri-registry/certs/tls.crt":                                      0o644,
		"/etc/kubernetes/credential-providers/acr-credential-provider.yaml":    0o644,
		"/etc/kubernetes/credential-providers/ecr-credential-provider.yaml":    0o644,
		"/etc/kubernetes/credential-providers/gcr-credential-provider.yaml":    0o644,
		"/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt": 0o600,
		"/etc/pki/ca-trust/source/anchors/iri-root-ca.crt":                     0o644,
		"/var/lib/kubelet/config.json":                                         0o600,
		"/etc/containers/policy.json":                                          0o644,
		"/etc/containers/registries.conf":                                      0o644,
		"/etc/docker/certs.d/.create":                                          0o600,
	}
	pol := allowlist.Default()
	for p, mode := range mco {
		d := pol.Resolve(p, nil)
		if assert.True(t, d.Allowed, p) {
			assert.Zero(t, mode&^int(d.ModeCeiling), "%s: the MCO writes %04o, the ceiling is %s", p, mode, d.ModeCeiling)
		}
	}
	// The adversary's, under the built-in rule for /etc/iri-registry: 0600.
	for _, p := range []string{"/etc/iri-registry/auth/htpasswd", "/etc/iri-registry/certs/key.pem", "/etc/iri-registry/certs/id_rsa"} {
		assert.Equal(t, allowlist.Mode(0o600), pol.Resolve(p, nil).ModeCeiling, p)
	}
}

// Round-4b F5: "mode: 400" in a YAML policy was read as decimal 400, a ceiling of 0620. A mode is
// octal however it is written, or an error naming the field and saying how to write it.
func TestPolicyModesAreOctal(t *testing.T) {
	ceiling := func(mode string) string {
		return "configMapCeiling:\n- {prefix: /etc/myapp/, actions: [None], mode: " + mode + "}\n"
	}
	for spelling, want := range map[string]allowlist.Mode{
		"0400": 0o400, "0o400": 0o400, `"0400"`: 0o400, `"400"`: 0o400, `'0640'`: 0o640, `"0o640"`: 0o640,
		"!!str 400": 0o400, "00644": 0o644, "0644": 0o644, "0777": 0o777, "01": 0o1,
	} {
		pol, err := allowlist.ParsePolicy([]byte(ceiling(spelling)))
		if assert.NoError(t, err, spelling) {
			assert.Equal(t, want, pol.Ceiling[0].Mode, spelling)
		}
	}
	for doc, want := range map[string]string{
		ceiling("400"):         `configMapCeiling[0] (/etc/myapp/): mode 400 is a bare number, which YAML and JSON read as decimal (0620, not 0400): write modes in octal with a leading 0, as 0400 or "0400"`,
		ceiling("444"):         `mode 444 is a bare number, which YAML and JSON read as decimal (0674, not 0444)`,
		ceiling("511"):         `(0777, not 0511)`,
		ceiling("420"):         `(0644, not 0420)`,
		ceiling("384"):         `configMapCeiling[0] (/etc/myapp/): mode 384 is a bare number, which YAML and JSON read as decimal (0600): write modes in octal with a leading 0, as 0600 or "0600"`,
		ceiling(`!!int "400"`): `mode 400 is a bare number`,
		ceiling("0x1a4"):       `mode 0x1a4 is a bare number not written in octal`,
		ceiling("0b110"):       `mode 0b110 is a bare number not written in octal`,
		ceiling("6.4e2"):       `mode 6.4e2 is a bare number not written in octal`,
		ceiling("1000"):        `mode 1000 is a bare number not written in octal`,
		ceiling("0_644"):       `mode 0_644 is a bare number not written in octal`,
		"paths:\n- {path: /etc/a, action: None}\n- {path: /etc/b, action: None, mode: 600}\n": `paths[1] (/etc/b): mode 600 is a bare number`,
		`{"paths": [{"path": "/etc/a", "action": "None", "mode": 420}]}`:                      `paths[0] (/etc/a): mode 420 is a bare number, which YAML and JSON read as decimal (0644, not 0420)`,
		"paths:\n- path: /etc/a\n  action: None\n  mode: 755\n":                               `paths[0] (/etc/a): mode 755 is a bare number`,
		// Adversary r14 b/07: a mode out of range named no entry (the decode's error has none).
		ceiling("04755"):   `configMapCeiling[0] (/etc/myapp/): mode 4755 is not a file permission ceiling`,
		ceiling(`"02644"`): `configMapCeiling[0] (/etc/myapp/): mode 2644 is not a file permission ceiling`,
		ceiling("0o1777"):  `configMapCeiling[0] (/etc/myapp/): mode 1777 is not a file permission ceiling`,
		ceiling(`"0"`):     `configMapCeiling[0] (/etc/myapp/): mode 0000 is not a file permission ceiling`,
		ceiling(`"rw-"`):   `configMapCeiling[0] (/etc/myapp/): mode "rw-" is not an octal permission`,
		`{"paths": [{"path": "/etc/a", "action": "None"}, {"path": "/etc/b", "action": "None", "mode": "04755"}]}`: `paths[1] (/etc/b): mode 4755 is not a file permission ceiling`,
	} {
		_, err := allowlist.ParsePolicy([]byte(doc))
		if assert.Error(t, err, doc) {
			assert.Contains(t, err.Error(), want, doc)
		}
	}
	// The ConfigMap's no-reboot-paths may not set a mode at all; a number there is still read (and
	// the entry ignored with a warning, TestCeilingModesAndTheirDisplay).
	rules, err := allowlist.ParseRules([]byte(`[{"path": "/etc/myapp/", "action": "None", "mode": 420}]`))
	if assert.NoError(t, err) {
		_, warnings := mustPolicy(t, ceiling("0644")).Extra(rules)
		assert.Len(t, warnings, 1)
	}
}

// The mode check parses a policy a second time (yaml.v3 nodes, to see how each mode was written):
// the largest policy within the node bound, a mode on every entry, still parses within the budget.
func TestModeCheckCostIsBounded(t *testing.T) {
	gen := func(n int) []byte {
		var b strings.Builder
		b.WriteString("configMapCeiling:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "- {prefix: /etc/app/x%d/, actions: [None], mode: 0640}\n", i)
		}
		return []byte(b.String())
	}
	lo, hi := 1, allowlist.MaxRulesSize/40
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, err := allowlist.ParsePolicy(gen(mid)); err == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	doc := gen(lo)
	var err error
	cost := memtest.Allocated(func() { _, err = allowlist.ParsePolicy(doc) })
	require.NoError(t, err)
	t.Logf("%d entries with modes, %d bytes: %d MiB allocated", lo, len(doc), cost>>20)
	assert.Greater(t, lo, 1000)
	assert.Less(t, cost, uint64(diff.MaxPayloadSize))
}
