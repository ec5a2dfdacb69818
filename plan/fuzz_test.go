package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// The fuzzed node policy: the built-in rules plus a ConfigMap ceiling wide enough that the deny list
// has to do its work (all of /etc/ and /var/lib/ with None; /etc/foo/ also Reload crio).
const fuzzPolicy = `configMapCeiling:
  - {prefix: /etc/, actions: [None]}
  - {prefix: /var/lib/, actions: [None]}
  - {prefix: /etc/foo/, actions: [None, Reload], units: [crio]}
nodeDisruptionPolicy:
  units:
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
`

// The same policy restated as plain lists for the invariant, which must not reuse the
// implementation: its own prefix logic over hard-coded paths.
var (
	// Paths the built-in rules allow, exactly or (ending in "/") below.
	builtinPaths = []string{
		"/var/lib/kubelet/config.json", "/etc/kubernetes/kubelet-ca.crt", "/etc/mco/internal-registry-pull-secret.json",
		"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", "/etc/kubernetes/apiserver-proxy-config/haproxy.cfg",
		"/etc/nmstate/openshift/", "/etc/containers/registries.conf", "/etc/containers/policy.json",
		"/etc/containers/registries.d/", "/etc/machine-config-daemon/no-reboot/containers-gpg.pub", "/etc/crio/policies/",
		"/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", "/etc/kubernetes/credential-providers/",
		"/etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem", "/etc/docker/certs.d/",
		// The MCO's defaults: each covers its path and everything below it.
		"/var/lib/kubelet/config.json/", "/etc/containers/policy.json/", "/etc/containers/registries.d", "/etc/crio/policies",
		"/etc/nmstate/openshift", "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt/",
		"/etc/kubernetes/credential-providers", credProviderDropin, "/etc/iri-registry", "/etc/iri-registry/",
		"/etc/pki/ca-trust/source/anchors/iri-root-ca.crt", "/etc/pki/ca-trust/source/anchors/iri-root-ca.crt/",
	}
	// The kubelet dropin of the MCO's defaults, written as a storage file (exactly this path).
	credProviderDropin = "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf"
	// Where the ConfigMap may add paths, and what it may ask there.
	ceilingPrefixes = []string{"/etc/", "/var/lib/"}
	reloadPrefix    = "/etc/foo/"
	// A hard-coded sample of the deny list: never written, whatever the ceiling.
	deniedSample = []string{
		"/boot/", "/usr/", "/etc/ssh/", "/etc/systemd/", "/etc/sudoers", "/etc/passwd", "/etc/shadow",
		"/etc/cron", "/etc/ld.so.", "/etc/pam.d/", "/etc/security/", "/etc/NetworkManager/dispatcher.d/",
		"/etc/containers/oci/hooks.d/", "/etc/kubernetes/manifests/", "/etc/sysctl.", "/etc/dracut.conf",
		"/etc/containers/systemd/", "/var/lib/kubelet/kubeconfig", "/etc/profile", "/etc/environment",
		"/etc/sysconfig/", "/etc/udev/", "/etc/tmpfiles.d/", "/etc/machine-config-daemon/",
		"/etc/mcd-currentconfig.json", "/etc/mcs-machine-config-content.json",
	}
	deniedExceptions = []string{"/etc/machine-config-daemon/no-reboot/containers-gpg.pub", "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", credProviderDropin}
	knownUnits       = []string{"crio.service", "kubelet.service", "coreos-update-ca-trust.service", "myapp.service", "iri-registry.service"}
	// The one unit whose file and dropins the policy lets a payload change.
	ruledUnit = "myapp.service"
)

func coveredBy(path string, list []string) bool {
	for _, p := range list {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

func deniedByTest(path string) bool {
	if slices.Contains(deniedExceptions, path) {
		return false
	}
	for _, d := range deniedSample {
		if strings.HasPrefix(path, d) || path+"/" == d {
			return true
		}
	}
	return false
}

func printable(path string) bool {
	for _, c := range path {
		if c < 0x20 || c >= 0x7f && c <= 0x9f || c == 0xfffd {
			return false
		}
	}
	return true
}

// FuzzPlan: no pair of payloads, rules or added file panics the planner, and invariants computed
// independently of the implementation hold: a refused plan carries nothing to apply; an eligible plan
// writes only paths within the built-in rules or the ceiling, never one under a denied prefix, never
// an unprintable path, never special mode bits; a path only the ceiling allows gets None (or Reload
// crio under /etc/foo/); it runs only known units, and only what recovery would run again from its
// journal (plan.Journaled); it never drops the MachineConfig unnoticed.
func FuzzPlan(f *testing.F) {
	cur := base().JSON()
	m := fixture.DefaultMachine()
	m.FIPS = true
	f.Add(cur, base().File(registries, []byte("# new"), 0o644).JSON(), []byte(`[{"path":"/etc/x/","action":"None"}]`), "", uint16(0o644))
	f.Add(cur, base().EmbedMachine(m).JSON(), []byte(``), "", uint16(0o644))
	f.Add(cur, base().File("/etc/ssh/x", []byte("x"), 0o4755).JSON(), []byte(`[{"path":"/etc/ssh/","action":"None"}]`), "", uint16(0o644))
	f.Add(cur, base().File("/etc/myapp/a", []byte("x"), 0o644).JSON(), []byte(`[{"path":"/etc/myapp/","action":"Restart","services":["crio; reboot"]}]`), "", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/etc/","action":"None"}]`), "/etc/cron.d/evil", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/etc/","action":"None"}]`), "/etc/crontab", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/etc/","action":"None"}]`), "/etc/myapp.conf", uint16(0o600))
	f.Add(cur, cur, []byte(`[{"path":"/etc/foo/","action":"Reload","services":["crio"]}]`), "/etc/foo/a.conf", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/etc/foo/","action":"Restart","services":["kubelet"]}]`), "/etc/foo/a.conf", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/var/lib/kubelet/","action":"None"}]`), "/var/lib/kubelet/kubeconfig", uint16(0o600))
	f.Add(cur, cur, []byte(`[{"path":"/etc/kubernetes/","action":"None"}]`), "/etc/kubernetes/manifests/evil.yaml", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/etc/","action":"None"}]`), "/etc/foo/a\nb", uint16(0o644))
	f.Add(cur, cur, []byte(`[{"path":"/etc/","action":"None"}]`), "/etc/ld.so.preload", uint16(0o644))
	f.Add(cur, cur, []byte(``), "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", uint16(0o644))
	f.Add(cur, base().Unit("myapp.service", "[Service]\n").JSON(), []byte(``), "", uint16(0o644))
	f.Add(cur, base().Unit("evil.service", "[Service]\n").JSON(), []byte(``), "", uint16(0o644))
	f.Add(cur, cur, []byte(``), "/etc/systemd/system/myapp.service", uint16(0o644))
	f.Add(cur, cur, []byte(``), credProviderDropin, uint16(0o644))
	f.Add(cur, cur, []byte(``), credProviderDropin+".x", uint16(0o644))
	f.Add(cur, fixture.Ignition("3.2.0").File(registries, []byte("# x"), 0o644).JSON(), []byte(``), "", uint16(0o644))
	// Adversary r13 c/05: paths past MaxPathComponents, and writes in many nested directories.
	f.Add(cur, base().File("/etc/containers/registries.d/d/"+strings.Repeat("a/", 1900)+"x.yaml", []byte("x"), 0o644).JSON(), []byte(``), "", uint16(0o644))
	f.Add(cur, base().File("/etc/containers/registries.d/d/"+strings.Repeat("a/", 120)+"x.yaml", []byte("x"), 0o644).
		File("/etc/containers/registries.d/d/"+strings.Repeat("a/", 60)+"a", []byte("x"), 0o644).JSON(), []byte(``), "", uint16(0o644))
	pol, err := allowlist.ParsePolicy([]byte(fuzzPolicy))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b, rulesRaw []byte, addPath string, mode uint16) {
		c, err := diff.Decode(a)
		if err != nil {
			return
		}
		if addPath != "" {
			// Structured input: the desired payload is the current one plus one file, through the
			// real decoder.
			b = (&fixture.Config{Config: c.Config}).Clone().File(addPath, []byte("x"), int(mode&0o7777)).JSON()
		}
		d, err := diff.Decode(b)
		if err != nil {
			return
		}
		rules, err := allowlist.ParseRules(rulesRaw)
		if err != nil {
			return
		}
		p, err := plan.Build(plan.Inputs{Current: c, Desired: d, NoRebootPaths: rules, Policy: pol})
		if err != nil {
			return
		}
		if !p.Eligible {
			if len(p.Files) > 0 || p.SSHKeys != nil || len(p.Actions) > 0 || len(p.Refused) == 0 {
				t.Fatal("refused plan carries work")
			}
			return
		}
		if len(p.Refused) > 0 {
			t.Fatal("eligible plan with refusals")
		}
		if len(c.Machine) > 0 && len(d.Machine) == 0 {
			t.Fatal("eligible plan drops the MachineConfig")
		}
		unitFiles := false
		for _, f := range p.Files {
			if f.Path == credProviderDropin && f.Unit == "" {
				unitFiles = true // the manager reloads it
				continue
			}
			if strings.HasPrefix(f.Path, "/etc/systemd/") || f.Unit != "" {
				// Unit writes come only from the unit rule, only as its file or one dropin.
				dropin, ok := strings.CutPrefix(f.Path, "/etc/systemd/system/"+f.Unit+".d/")
				ruled := f.Unit == ruledUnit || f.Unit == "iri-registry.service"
				if !ruled || f.Path != "/etc/systemd/system/"+f.Unit && (!ok || dropin == "" || strings.Contains(dropin, "/") || dropin == "." || dropin == "..") {
					t.Fatalf("plan writes %s for unit %q", f.Path, f.Unit)
				}
				unitFiles = true
				continue
			}
			if !printable(f.Path) {
				t.Fatalf("plan writes unprintable path %q", f.Path)
			}
			if deniedByTest(f.Path) {
				t.Fatalf("plan writes denied path %s", f.Path)
			}
			builtin := coveredBy(f.Path, builtinPaths)
			if !builtin && !coveredBy(f.Path, ceilingPrefixes) {
				t.Fatalf("plan writes %s, outside the rules and the ceiling", f.Path)
			}
			if !builtin {
				reloadCrio := f.Action == allowlist.ActionReload && slices.Equal(f.Services, []string{"crio.service"}) &&
					strings.HasPrefix(f.Path, reloadPrefix)
				if f.Action != allowlist.ActionNone && !reloadCrio {
					t.Fatalf("plan asks %s %v for %s, above the ceiling", f.Action, f.Services, f.Path)
				}
			}
			if f.Mode&0o7000 != 0 || f.Mode > 0o777 {
				t.Fatalf("plan writes %s with mode %o", f.Path, f.Mode)
			}
		}
		states := 0
		for _, a := range p.Actions {
			if allowlist.StateAction(a.Action) {
				if a.Unit != ruledUnit && a.Unit != "iri-registry.service" || a.Action == allowlist.ActionStart {
					t.Fatalf("plan runs %s on %q", a.Action, a.Unit)
				}
				states++
			}
		}
		for i, a := range p.Actions {
			if allowlist.StateAction(a.Action) {
				if i >= states {
					t.Fatalf("state action %s after the others", a.Action)
				}
				continue
			}
			if a.Action == allowlist.ActionDaemonReload {
				if i != states || a.Unit != "" || !unitFiles && states == 0 {
					t.Fatalf("daemon-reload at %d (unit %q, unit files written: %v)", i, a.Unit, unitFiles)
				}
				continue
			}
			if a.Pod != "" {
				// The one static pod the node policy restarts, and only for its config file.
				haproxy := slices.ContainsFunc(p.Files, func(f plan.FileOp) bool {
					return f.Path == "/etc/kubernetes/apiserver-proxy-config/haproxy.cfg"
				})
				if a.Pod != "kube-system/kube-apiserver-proxy" || a.Unit != "" || !haproxy {
					t.Fatalf("plan restarts pod %q (unit %q)", a.Pod, a.Unit)
				}
				continue
			}
			if !slices.Contains(knownUnits, a.Unit) {
				t.Fatalf("plan runs %s", a.Unit)
			}
		}
		if p.SSHKeys != nil && p.SSHKeys.User != "core" {
			t.Fatalf("plan writes keys of %s", p.SSHKeys.User)
		}
		// What recovery re-derives from the policy covers every plan's actions: a journal the agent
		// writes is never refused as hostile (issue 27, class 5).
		if err := plan.Journaled(pol, p.Actions); err != nil {
			t.Fatalf("recovery would refuse the plan's own actions: %v", err)
		}
	})
}
