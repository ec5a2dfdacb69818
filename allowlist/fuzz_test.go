package allowlist_test

import (
	"testing"

	"github.com/openshift/refresh-agent/allowlist"
)

// FuzzParseRules: no input panics; accepted rules filter and resolve without panicking, and no
// accepted rule ever allows a denied path or names a unit outside the allowed ones.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		`[{"path": "/etc/containers/registries.conf", "action": "Reload", "services": ["crio"]}]`,
		`[{"path": "/etc/ssh/", "action": "None"}, {"path": "/etc/x", "action": "Restart", "services": ["crio; reboot"]}]`,
		`[{"path": "/var/lib/kubelet/x", "action": "Restart", "services": ["update-ca-trust", "../../x.service"]}]`,
		`null`, `[]`, `[{}]`, `[[[[[[`, `{"path": 1}`,
	} {
		f.Add([]byte(s), "/etc/ssh/sshd_config")
	}
	pol := allowlist.Default()
	f.Fuzz(func(t *testing.T, data []byte, probe string) {
		rules, err := allowlist.ParseRules(data)
		if err != nil {
			return
		}
		extra, _ := pol.Extra(rules)
		for _, r := range extra {
			if _, denied := allowlist.Denied(r.Path); denied {
				t.Fatalf("denied path accepted: %s", r.Path)
			}
			for _, u := range r.Services {
				if !pol.UnitAllowed(u) {
					t.Fatalf("unit %q accepted", u)
				}
			}
		}
		d := pol.Resolve(probe, extra)
		if _, denied := allowlist.Denied(probe); denied && d.Allowed {
			t.Fatalf("denied path %q allowed", probe)
		}
	})
}

// FuzzParsePolicy: no policy document panics or switches a denied prefix off.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		"paths:\n  - {path: /etc/containers/registries.conf, action: Reload, services: [crio]}\nallowedUnits: [crio]\n",
		`{"allowedUnits": ["crio.service", "kubelet.service", "coreos-update-ca-trust.service"], "coreSSHKeys": false}`,
		"paths: [{path: /etc/, action: None}]", "- a", "{", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := allowlist.ParsePolicy(data)
		if err != nil {
			return
		}
		for _, r := range p.Rules {
			if _, denied := allowlist.Denied(r.Path); denied {
				t.Fatalf("policy rule under a denied prefix accepted: %s", r.Path)
			}
		}
		if p.Resolve("/etc/ssh/sshd_config", nil).Allowed || p.Resolve("/boot/x", nil).Allowed {
			t.Fatal("denied path allowed by a policy file")
		}
	})
}

// FuzzNormalizeUnit: a normalised name never carries a path separator or shell syntax.
func FuzzNormalizeUnit(f *testing.F) {
	for _, s := range []string{"crio", "update-ca-trust", "crio; reboot", "../../x.service", "a b", "x\x00y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := allowlist.NormalizeUnit(s)
		if err != nil {
			return
		}
		for _, c := range u {
			if c == '/' || c == ';' || c == ' ' || c == '$' || c == '`' || c == '\n' || c == 0 {
				t.Fatalf("normalised %q to %q", s, u)
			}
		}
	})
}
