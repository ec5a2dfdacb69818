// Package allowlist is the node-side policy: which paths a refresh may write, which units it may
// reload or restart, and which paths are denied whatever anyone says. The ConfigMap's
// no-reboot-paths can add paths within narrow bounds; it can never widen the units or the denials.
package allowlist

import (
	"slices"
	"strings"
)

// Action is what a path's change asks of its services.
type Action string

const (
	ActionNone    Action = "None"
	ActionReload  Action = "Reload"
	ActionRestart Action = "Restart"
)

// Rule maps a path (or, when it ends in "/", every path below it) to an action on services.
type Rule struct {
	Path     string   `json:"path"`
	Action   Action   `json:"action"`
	Services []string `json:"services,omitempty"`
	// Pods are static pods ("namespace/name" as in the manifest) restarted through the CRI after
	// the files are in place, for readers that never re-read their config (HAProxy).
	Pods []string `json:"pods,omitempty"`
}

// Policy is the node's own allowlist.
type Policy struct {
	Rules        []Rule
	AllowedUnits []string
	// CoreSSHKeys allows changes to the core user's SSH authorized keys.
	CoreSSHKeys bool
}

// Well-known units.
const (
	UnitCrio     = "crio.service"
	UnitKubelet  = "kubelet.service"
	UnitUpdateCA = "coreos-update-ca-trust.service"
	// PodAPIServerProxy is HyperShift's HAProxy static pod in front of the hosted API server.
	PodAPIServerProxy = "kube-system/kube-apiserver-proxy"
	containersGPGPK   = "/etc/machine-config-daemon/no-reboot/containers-gpg.pub"
)

// Default is the built-in policy.
func Default() *Policy {
	none := func(p string) Rule { return Rule{Path: p, Action: ActionNone} }
	reloadCrio := func(p string) Rule { return Rule{Path: p, Action: ActionReload, Services: []string{UnitCrio}} }
	return &Policy{
		Rules: []Rule{
			none("/var/lib/kubelet/config.json"),
			none("/etc/kubernetes/kubelet-ca.crt"),
			none("/etc/mco/internal-registry-pull-secret.json"),
			none("/etc/kubernetes/manifests/kube-apiserver-proxy.yaml"),
			// haproxy -f never re-reads its config: the static pod is restarted through the CRI.
			{Path: "/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", Action: ActionRestart, Pods: []string{PodAPIServerProxy}},
			// Written by the MCS when serving; the MCD's certificate writer rewrites all three in
			// place with no service action: kubelet reloads its client CA file by itself, and
			// CRI-O reads certs.d at every pull.
			none("/etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem"),
			none("/etc/docker/certs.d/"),
			none("/etc/nmstate/openshift/"),
			reloadCrio("/etc/containers/registries.conf"),
			reloadCrio("/etc/containers/policy.json"),
			reloadCrio("/etc/containers/registries.d/"),
			reloadCrio(containersGPGPK),
			reloadCrio("/etc/crio/policies/"),
			{Path: "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", Action: ActionRestart,
				Services: []string{UnitUpdateCA, UnitCrio}},
			{Path: "/etc/kubernetes/credential-providers/", Action: ActionRestart, Services: []string{UnitKubelet}},
		},
		AllowedUnits: []string{UnitCrio, UnitKubelet, UnitUpdateCA},
		CoreSSHKeys:  true,
	}
}

// deniedPrefixes can never be written by a refresh, whatever the policy file or the ConfigMap say.
var deniedPrefixes = []string{
	"/boot", "/usr", "/sysroot", "/ostree", "/proc", "/sys", "/dev", "/run",
	"/etc/kernel", "/etc/modprobe.d", "/etc/modules-load.d", "/etc/dracut.conf.d", "/etc/sysctl.d",
	"/etc/systemd", "/etc/selinux", "/etc/fstab", "/etc/crypttab", "/etc/passwd", "/etc/shadow",
	"/etc/group", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh",
	"/etc/machine-config-daemon",
	"/etc/mcs-machine-config-content.json", "/etc/ignition-machine-config-encapsulated.json",
	"/etc/mcd-currentconfig.json",
}

// extraRoots bound where the ConfigMap's no-reboot-paths may add paths.
var extraRoots = []string{"/etc/", "/var/lib/kubelet/"}

// under reports whether path is prefix itself or lies below it (component-wise: /etc/sshd is not
// under /etc/ssh).
func under(path, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// Denied returns the denied prefix that covers path, if any. The path is expected to be clean; a
// path is also denied when its directory-prefix form (a rule "…/") is covered.
func Denied(path string) (string, bool) {
	if path == containersGPGPK {
		return "", false // the one file under /etc/machine-config-daemon a refresh may write
	}
	for _, d := range deniedPrefixes {
		if under(strings.TrimSuffix(path, "/"), d) {
			return d, true
		}
	}
	// A prefix rule such as "/etc/" covers denied paths below it; such a rule is denied too.
	if strings.HasSuffix(path, "/") {
		for _, d := range deniedPrefixes {
			if under(d, path) {
				return d, true
			}
		}
	}
	return "", false
}

// matches reports whether the rule covers path, and how specific the match is.
func (r Rule) matches(path string) (int, bool) {
	if strings.HasSuffix(r.Path, "/") {
		if strings.HasPrefix(path, r.Path) && len(path) > len(r.Path) {
			return len(r.Path), true
		}
		return 0, false
	}
	if path == r.Path {
		return len(r.Path) + 1, true // an exact match beats a prefix of the same length
	}
	return 0, false
}

// longestMatch returns the most specific rule covering path.
func longestMatch(rules []Rule, path string) (Rule, bool) {
	best, bestLen, found := Rule{}, -1, false
	for _, r := range rules {
		if n, ok := r.matches(path); ok && n > bestLen {
			best, bestLen, found = r, n, true
		}
	}
	return best, found
}

// UnitAllowed reports whether unit (already normalised) may be named by any action.
func (p *Policy) UnitAllowed(unit string) bool { return slices.Contains(p.AllowedUnits, unit) }

// Decision is the policy's answer for one path.
type Decision struct {
	Allowed  bool
	Reason   string // why not, when not allowed
	Action   Action
	Services []string
	Pods     []string
	Source   string // "policy" or "no-reboot-paths"
}

// Resolve decides a path. Denied prefixes win over everything; then the node policy's most specific
// rule; only paths the node policy does not cover can be allowed by the ConfigMap's extra rules (as
// returned by Extra), so the ConfigMap can never weaken the action the node requires.
func (p *Policy) Resolve(path string, extra []Rule) Decision {
	if d, ok := Denied(path); ok {
		return Decision{Reason: "path is under denied prefix " + d}
	}
	if r, ok := longestMatch(p.Rules, path); ok {
		return Decision{Allowed: true, Action: r.Action, Services: r.Services, Pods: r.Pods, Source: "policy"}
	}
	if r, ok := longestMatch(extra, path); ok {
		return Decision{Allowed: true, Action: r.Action, Services: r.Services, Source: "no-reboot-paths"}
	}
	return Decision{Reason: "path is not in the node allowlist"}
}
