package allowlist_test

import (
	"strings"
	"testing"

	"github.com/openshift/refresh-agent/allowlist"
)

// FuzzParseRules: no input panics; accepted rules name each path once and carry no control
// characters; they filter and resolve without panicking; no honoured rule lies outside the ceiling,
// allows a denied path or names a unit the ceiling does not allow; and probes outside the test's
// own copy of the ceiling are never allowed by them.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		`[{"path": "/etc/containers/registries.conf", "action": "Reload", "services": ["crio"]}]`,
		`[{"path": "/etc/ssh/", "action": "None"}, {"path": "/etc/x", "action": "Restart", "services": ["crio; reboot"]}]`,
		`[{"path": "/var/lib/kubelet/x", "action": "Restart", "services": ["update-ca-trust", "../../x.service"]}]`,
		`null`, `[]`, `[{}]`, `[[[[[[`, `{"path": 1}`,
		`[{"path": "/etc/foo/a", "action": "Reload", "services": ["crio"]}, {"path": "/etc/foo/a", "action": "None"}]`,
		`[{"path": "/etc/foo/", "action": "Restart", "services": ["kubelet"]}, {"path": "/etc/foo/cron.d/", "action": "None"}]`,
		"[{\"path\": \"/etc/foo/a\\u0000\", \"action\": \"None\"}]", "[{\"path\": \"/etc/foo/\xff\", \"action\": \"None\"}]",
	} {
		f.Add([]byte(s), "/etc/ssh/sshd_config")
		f.Add([]byte(s), "/etc/foo/a")
	}
	pol, err := allowlist.ParsePolicy([]byte("configMapCeiling: [{prefix: /etc/foo/, actions: [None, Reload], units: [crio]}]"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, probe string) {
		rules, err := allowlist.ParseRules(data)
		if err != nil {
			return
		}
		paths := map[string]bool{}
		for _, r := range rules {
			if paths[r.Path] {
				t.Fatalf("two entries for %q accepted", r.Path)
			}
			paths[r.Path] = true
			for _, c := range r.Path {
				if c < 0x20 || c == 0x7f || c == 0xfffd {
					t.Fatalf("path %q accepted", r.Path)
				}
			}
		}
		extra, _ := pol.Extra(rules)
		for _, r := range extra {
			if !strings.HasPrefix(r.Path, "/etc/foo/") {
				t.Fatalf("entry outside the ceiling honoured: %s", r.Path)
			}
			if r.Action == allowlist.ActionRestart {
				t.Fatalf("action above the ceiling honoured: %+v", r)
			}
			for _, u := range r.Services {
				if u != "crio.service" {
					t.Fatalf("unit %q accepted", u)
				}
			}
		}
		d := pol.Resolve(probe, extra)
		if _, denied := allowlist.Denied(probe); denied && d.Allowed {
			t.Fatalf("denied path %q allowed", probe)
		}
		if d.Allowed && d.Source != "policy" && !strings.HasPrefix(probe, "/etc/foo/") {
			t.Fatalf("path %q outside the ceiling allowed", probe)
		}
	})
}

// FuzzParsePolicy: no policy document panics or switches a denied prefix off.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		"paths:\n  - {path: /etc/containers/registries.conf, action: Reload, services: [crio]}\nallowedUnits: [crio]\n",
		`{"allowedUnits": ["crio.service", "kubelet.service", "coreos-update-ca-trust.service"], "coreSSHKeys": false}`,
		"paths: [{path: /etc/, action: None}]", "- a", "{", "",
		"configMapCeiling: [{prefix: /etc/, actions: [None]}]",
		"configMapCeiling: [{prefix: /etc/foo/, actions: [None, Reload], units: [crio]}, {prefix: /etc/cron.d/, actions: [None]}]",
		"configMapCeiling: [{prefix: \"/etc/a\\0/\", actions: [None]}]",
		"files: [{path: /etc/myapp, actions: [{type: Restart, restart: {serviceName: myapp.service}}]}]\nunits: [{name: myapp.service, actions: [{type: DaemonReload}]}]",
		"nodeDisruptionPolicy: {files: [{path: /etc/kubernetes, actions: [{type: None}]}]}",
		"clusterPolicies: {files: [{path: /etc/containers/registries.conf, actions: [{type: Special}]}], sshkey: {actions: [{type: Reboot}]}}",
		"kind: MachineConfiguration\nspec: {nodeDisruptionPolicy: {units: [{name: reboot.target, actions: [{type: None}]}]}}",
	} {
		f.Add([]byte(s))
	}
	everything := []allowlist.Rule{{Path: "/etc/", Action: allowlist.ActionNone}, {Path: "/var/", Action: allowlist.ActionNone}}
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
		prefixes := map[string]bool{}
		for _, c := range p.Ceiling {
			if prefixes[c.Prefix] {
				t.Fatalf("two ceiling entries for %q", c.Prefix)
			}
			prefixes[c.Prefix] = true
			for _, u := range c.Units {
				if !p.UnitAllowed(u) {
					t.Fatalf("ceiling unit %q is not an allowed unit", u)
				}
			}
		}
		for _, u := range p.UnitRules {
			if strings.ContainsAny(u.Unit, "/\\") || u.Unit == "" || strings.HasPrefix(u.Unit, ".") {
				t.Fatalf("unit rule for %q", u.Unit)
			}
			for _, s := range u.Steps {
				if !p.UnitAllowed(s.Unit) {
					t.Fatalf("unit rule %s names %s, not an allowed unit", u.Unit, s.Unit)
				}
			}
		}
		for _, u := range p.AllowedUnits {
			for _, bad := range []string{"reboot.target", "poweroff.target", "halt.target", "kexec.target", "systemd-reboot.service"} {
				if u == bad {
					t.Fatalf("allowed unit %s reboots", u)
				}
			}
		}
		for _, denied := range []string{"/etc/ssh/sshd_config", "/boot/x", "/etc/cron.d/x", "/etc/ld.so.preload", "/var/lib/kubelet/kubeconfig"} {
			if p.Resolve(denied, everything).Allowed {
				t.Fatalf("denied path %s allowed by a policy file", denied)
			}
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

// FuzzJudgeExec: judging any Exec line a unit file can hold never panics, stays within its bound,
// and looking through a wrapper never lets a refused command pass: if argv is refused, env argv is.
func FuzzJudgeExec(f *testing.F) {
	for _, s := range []string{"/usr/bin/systemctl reboot", "/bin/sh -c 'a; systemctl \"reboot\"'", "$CMD",
		"/usr/bin/nice -n 5 /usr/bin/myapp $ARGS", "busctl call org.freedesktop.login1 / x PowerOff",
		"/usr/bin/timeout 5 $CMD", "/bin/sh -c 'exec /usr/bin/myapp \"$@\"' x $ARGS", "systemctl start runlevel6",
		"echo b > /proc/sysrq-trigger", "/usr/bin/env " + strings.Repeat("nice ", 20) + "reboot"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argvs, err := allowlist.SplitExec(line)
		if err != nil {
			return
		}
		judge := func(exec [][]string) error {
			return allowlist.JudgeUnit(allowlist.UnitProps{ID: "myapp.service", DefaultDependencies: true, Exec: exec})
		}
		for _, argv := range argvs {
			if len(argv) == 0 || strings.HasPrefix(argv[0], "-") || strings.Contains(argv[0], "=") {
				continue // env would read it as an option or an assignment, not as the program
			}
			if judge([][]string{argv}) != nil {
				wrapped := append([]string{"/usr/bin/env"}, argv...)
				if judge([][]string{wrapped}) == nil {
					t.Fatalf("%q is refused but %q is not", argv, wrapped)
				}
			}
		}
	})
}
