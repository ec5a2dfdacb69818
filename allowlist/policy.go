// Package allowlist is the node-side policy: which paths a refresh may write, which units it may
// reload or restart, and which paths are denied whatever anyone says. The ConfigMap's
// no-reboot-paths asks; it never grants: an entry is honoured only within the node policy's
// ConfigMap ceiling (none by default), and never under a denied prefix.
package allowlist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Action is what a path's change asks of its services.
type Action string

const (
	ActionNone    Action = "None"
	ActionReload  Action = "Reload"
	ActionRestart Action = "Restart"
	// ActionDaemonReload reloads systemd's unit files (a plan action with no unit).
	ActionDaemonReload Action = "DaemonReload"
)

// Rule maps a path (or, when it ends in "/", every path below it) to an action on services.
type Rule struct {
	Path     string   `json:"path"`
	Action   Action   `json:"action"`
	Services []string `json:"services,omitempty"`
	// Pods are static pods ("namespace/name" as in the manifest) restarted through the CRI after
	// the files are in place, for readers that never re-read their config (HAProxy).
	Pods []string `json:"pods,omitempty"`
	// Mode and Owner bound what a written file may be (its permission bits within Mode; owned by
	// root or Owner, "user:group"): node policy rules only; unset, DefaultMode and DefaultOwner.
	Mode  Mode   `json:"mode,omitempty"`
	Owner string `json:"owner,omitempty"`
	// Probe, in the node policy only, is asked after this rule's actions until the verification
	// window ends (package verify): a loopback URL that must answer with Expect (default 200).
	Probe *Probe `json:"probe,omitempty"`
	// Effects are set by NodeDisruptionPolicy rules of the node policy only.
	Effects `json:"-"`
}

// Policy is the node's own allowlist.
type Policy struct {
	Rules        []Rule
	AllowedUnits []string
	// CoreSSHKeys allows changes to the core user's SSH authorized keys.
	CoreSSHKeys bool
	// Ceiling bounds what the ConfigMap's no-reboot-paths may add: the prefixes, and the actions
	// and units allowed under each. Empty (the default): every entry outside the rules is ignored.
	Ceiling []CeilingRule
	// UnitRules let a payload change the contents and dropins of the units they name
	// (NodeDisruptionPolicy units); no unit may change otherwise.
	UnitRules []UnitRule
	// SSHKey is what a change of core's SSH keys asks besides the write (NodeDisruptionPolicy sshkey).
	SSHKey Effects
	// UnitPrograms grant, by unit (one a unit rule names), programs a payload's changed Exec lines
	// may run besides the modeled ones and the unit's own (the policy file's unitPrograms): absolute
	// clean paths of the node's programs (nodeProgram). Never from the ConfigMap.
	UnitPrograms map[string][]string
	// stateDirs are the agent's state dirs on the node (WithStateDir): refused to every rule.
	stateDirs []string
	// policyFiles are the node policy's own files on the node (WithPolicyFile): refused to every
	// rule, ceiling and unit command, as the state dirs are.
	policyFiles []string
	// homes are the node users' home directories (WithHomes): home → user; homeDirs them sorted,
	// the order a refusal names the first in.
	homes    map[string]string
	homeDirs []string
	// managed are the paths a plan's ConfigMap entries manage besides the rules (WithManaged).
	managed []string
	// nodeAliases are the node's unit links (WithUnitAliases): canonical name → the unit linked to.
	nodeAliases map[string]string
	// nodeUnits reads the node's unit files (WithNodeUnitFiles): nil when the plan has no node root.
	nodeUnitFiles NodeUnitReader
}

// Well-known units.
const (
	UnitCrio     = "crio.service"
	UnitKubelet  = "kubelet.service"
	UnitUpdateCA = "coreos-update-ca-trust.service"
	// PodAPIServerProxy is HyperShift's HAProxy static pod in front of the hosted API server.
	PodAPIServerProxy = "kube-system/kube-apiserver-proxy"
)

// Files under a denied prefix that a refresh may write, by exact path only (the built-in rules).
var deniedExceptions = []string{containersGPGPK, kubeAPIServerProxy, credProviderDropin, kubeletAuthFile}

// deniedUnder returns the denied prefix that path (a file, or a directory prefix ending in "/") lies
// under, if any. The exceptions are for the node policy's rules only: with forConfigMap they do not
// apply, so the ConfigMap can never reach them, whatever the ceiling.
func deniedUnder(path string, forConfigMap bool) (string, bool) {
	if !forConfigMap && slices.Contains(deniedExceptions, path) {
		return "", false
	}
	if l, ok := locationOf(path, Deny); ok {
		return strings.TrimSuffix(l.Prefix, "*"), true
	}
	return "", false
}

// Denied returns the denied prefix that covers path, if any. The path is expected to be clean; a
// prefix rule ("…/") is also denied when a denied prefix lies below it, since it would cover it.
func Denied(path string) (string, bool) {
	if d, ok := deniedUnder(path, false); ok {
		return d, true
	}
	if l, ok := coveredLocation(path, Deny); ok {
		return strings.TrimSuffix(l.Prefix, "*"), true
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
	if len(rules) > indexedRules {
		return ruleIndexOf(rules).match(path)
	}
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
	// ModeCeiling and Owner bound the written file: its permission bits within ModeCeiling, owned by
	// root or by Owner ("user:group"), from the node policy's rule or the ceiling entry.
	ModeCeiling Mode
	Owner       string
	// Effects are the node policy rule's NodeDisruptionPolicy effects (none for other rules).
	Effects
	// Within is what the node policy named of the path: the rule's or the ceiling entry's
	// directory prefix (ending in /), or the path itself for a rule naming the file. Below it the
	// name is the payload's choice, and no directory there may be a mount point (actions: a bind
	// mount or an overlay there reaches what the name does not say).
	Within string
}

// Resolve decides a path. Denied prefixes win over everything; then the node policy's most specific
// rule; only paths the node policy does not cover can be allowed by the ConfigMap's extra rules (as
// returned by Extra), so the ConfigMap can never weaken the action the node requires, and an extra
// rule counts only while the ceiling allows it (checked again here, whoever built extra).
func (p *Policy) Resolve(path string, extra []Rule) Decision {
	if err := checkPathChars(path); err != nil {
		return Decision{Reason: "path " + err.Error()}
	}
	if d, ok := Denied(path); ok {
		return Decision{Reason: "path is under denied prefix " + d}
	}
	if why := p.ownPathReason(path); why != "" {
		return Decision{Reason: why}
	}
	if r, ok := longestMatch(p.Rules, path); ok {
		if r.Reboot {
			return Decision{Reason: "node policy rule " + r.Name + " says Reboot, and a refresh never reboots", Effects: r.Effects}
		}
		mode, owner := ceilingOf(path, r.Mode, r.Owner)
		return Decision{Allowed: true, Action: r.Action, Services: r.Services, Pods: r.Pods, Source: "policy", Effects: r.Effects,
			ModeCeiling: mode, Owner: owner, Within: within(r.Path, path)}
	}
	if _, denied := deniedUnder(path, true); denied {
		return Decision{Reason: "path is not in the node allowlist"} // an exception for the node's rules only
	}
	if l, ok := NodeOnlyUnder(path); ok {
		// No ceiling reaches it: only the node policy's own rules may name it.
		if _, asked := longestMatch(extra, path); asked {
			return Decision{Reason: "path is not in the node allowlist: the ConfigMap asked for it, but it is " + nodeOnlyReason(l)}
		}
		return Decision{Reason: "path is not in the node allowlist"}
	}
	// The ceiling is checked for the path itself, not only for the entry that covers it: an entry
	// for a wide prefix must not carry its action into a narrower ceiling below it.
	if r, ok := longestMatch(extra, path); ok && p.ceilingAllows(r) == "" && p.ceilingAllows(Rule{Path: path, Action: r.Action, Services: r.Services}) == "" {
		c, _ := p.ceilingFor(path)
		mode, owner := ceilingOf(path, c.Mode, c.Owner)
		return Decision{Allowed: true, Action: r.Action, Services: r.Services, Source: "no-reboot-paths", ModeCeiling: mode, Owner: owner,
			Within: within(c.Prefix, path)}
	}
	return Decision{Reason: "path is not in the node allowlist"}
}

// within is Decision.Within for path under the node's entry named by prefix.
func within(prefix, path string) string {
	if prefix == path || prefix == "" {
		return path
	}
	return strings.TrimSuffix(prefix, "/") + "/"
}

// MayWrite says why no refresh could write or remove path under this policy, or nil when one could:
// a node policy rule that does not reboot, or a ConfigMap entry within the configMapCeiling; never
// a denied path. Recovery acts on a journal entry only for such a path (a journal naming anything
// else was not written by the agent). Unit files written for a unit rule are the caller's to allow
// (plan.UnitDir).
func (p *Policy) MayWrite(path string) error {
	if err := checkPathChars(path); err != nil {
		return fmt.Errorf("path %w", err)
	}
	if d, ok := Denied(path); ok {
		return fmt.Errorf("path is under denied prefix %s", d)
	}
	if why := p.ownPathReason(path); why != "" {
		return errors.New(why)
	}
	if r, ok := longestMatch(p.Rules, path); ok {
		if r.Reboot {
			return fmt.Errorf("node policy rule %s says Reboot", r.Name)
		}
		return nil
	}
	if _, denied := deniedUnder(path, true); denied {
		return errors.New("path is not in the node allowlist")
	}
	if _, ok := p.ceilingFor(path); ok {
		return nil
	}
	return errors.New("path is neither in the node allowlist nor within its configMapCeiling")
}

// indexedRules is the size past which longestMatch looks rules up by path instead of comparing
// each: a ConfigMap's no-reboot-paths may hold tens of thousands, and every file of the payload is
// resolved against them (adversary r25 c/01: 21 000 files against 22 668 entries, 11.7 s a plan).
const indexedRules = 64

// ruleIndex finds the rule longestMatch would: an exact one by the path, a prefix one by each of
// the path's prefixes ending in "/", the longest first; the first of equal rules wins.
type ruleIndex struct {
	rules []Rule // what it indexes: held, so that the cache's key stays this slice
	exact map[string]int
	pre   map[string]int
}

func (x *ruleIndex) match(path string) (Rule, bool) {
	if i, ok := x.exact[path]; ok {
		return x.rules[i], true
	}
	for k := strings.LastIndexByte(path[:max(len(path)-1, 0)], '/'); k >= 0; k = strings.LastIndexByte(path[:k], '/') {
		if i, ok := x.pre[path[:k+1]]; ok && len(path) > k+1 {
			return x.rules[i], true
		}
		if k == 0 {
			break
		}
	}
	return Rule{}, false
}

// lastIndex caches the index of the rules last looked up (one plan resolves every path against the
// same slice): keyed by the slice itself, which it holds.
var lastIndex struct {
	sync.Mutex
	x *ruleIndex
}

func ruleIndexOf(rules []Rule) *ruleIndex {
	lastIndex.Lock()
	defer lastIndex.Unlock()
	if x := lastIndex.x; x != nil && len(x.rules) == len(rules) && &x.rules[0] == &rules[0] {
		return x
	}
	x := &ruleIndex{rules: rules, exact: map[string]int{}, pre: map[string]int{}}
	for i, r := range rules {
		m := x.exact
		if strings.HasSuffix(r.Path, "/") {
			m = x.pre
		}
		if _, ok := m[r.Path]; !ok {
			m[r.Path] = i
		}
	}
	lastIndex.x = x
	return x
}
