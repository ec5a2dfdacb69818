package allowlist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	k8sjson "sigs.k8s.io/json"

	"github.com/openshift/refresh-agent/diff"
)

// MaxRulesSize bounds a no-reboot-paths list or policy file.
const MaxRulesSize = 1 << 20

// maxPolicyNodes bounds the YAML nodes of a policy file (TestPolicyParseCostIsBounded measures the
// largest within the payload budget).
const maxPolicyNodes = 40000

// ParseRules parses a no-reboot-paths JSON array. It checks structure only (every entry has a clean
// absolute path without control characters, a known action, services for Restart and Reload, none for
// None, and no two entries name the same path) and fails naming the entry's index; which entries the
// node honours is decided by Extra against the node policy's ceiling. Empty input is no rules.
func ParseRules(data []byte) ([]Rule, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	if len(data) > MaxRulesSize {
		return nil, fmt.Errorf("no-reboot-paths is larger than %d bytes", MaxRulesSize)
	}
	var rules []Rule
	if err := strictJSON(data, &rules); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &rules); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("invalid JSON at offset %d: %s", syn.Offset, syn.Error())
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return nil, fmt.Errorf("invalid JSON at offset %d: want an array of {\"path\",\"action\",\"services\"} objects (%s)", typ.Offset, typ.Error())
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	seen := map[string]int{}
	for i, r := range rules {
		if err := checkRule(r); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if r.Probe != nil {
			// What proves a node healthy is the node's to say, never the ConfigMap's.
			return nil, fmt.Errorf("entry %d: path %q: probe is a node policy field, not a no-reboot-paths one", i, r.Path)
		}
		// Two entries for one path, equal or not, are ambiguous: which one the node honours would
		// depend on their order.
		if j, dup := seen[r.Path]; dup {
			return nil, fmt.Errorf("entries %d and %d both name path %q: one entry per path", j, i, r.Path)
		}
		seen[r.Path] = i
	}
	return rules, nil
}

func checkRule(r Rule) error {
	if err := checkRulePath(r.Path); err != nil {
		return err
	}
	if err := checkOwner(r.Owner); err != nil {
		return fmt.Errorf("path %q: %w", r.Path, err)
	}
	for _, pod := range r.Pods {
		if err := checkPod(pod); err != nil {
			return fmt.Errorf("path %q: %w", r.Path, err)
		}
	}
	if err := r.Probe.check(r); err != nil {
		return fmt.Errorf("path %q: %w", r.Path, err)
	}
	switch r.Action {
	case ActionNone:
		if len(r.Services) > 0 || len(r.Pods) > 0 {
			return fmt.Errorf("path %q: action None takes no services or pods", r.Path)
		}
	case ActionReload:
		if len(r.Services) == 0 {
			return fmt.Errorf("path %q: action %s needs at least one service", r.Path, r.Action)
		}
		if len(r.Pods) > 0 {
			return fmt.Errorf("path %q: pods can only be restarted, not reloaded", r.Path)
		}
	case ActionRestart:
		if len(r.Services) == 0 && len(r.Pods) == 0 {
			return fmt.Errorf("path %q: action %s needs at least one service or pod", r.Path, r.Action)
		}
	default:
		return fmt.Errorf("path %q: action %q is not one of None, Restart, Reload", r.Path, r.Action)
	}
	return nil
}

// normalizeUnits normalises names and checks each against the allowed units; bad says why not.
func (p *Policy) normalizeUnits(names []string) (units []string, bad string) {
	for _, s := range names {
		u, err := NormalizeUnit(s)
		if err != nil {
			return nil, err.Error()
		}
		if !p.UnitAllowed(u) {
			return nil, fmt.Sprintf("unit %s is not an allowed unit", u)
		}
		units = append(units, u)
	}
	return units, ""
}

// policyFile is the on-disk form of a node-local policy. Absent fields keep the built-in values.
type policyFile struct {
	Paths        *[]Rule   `json:"paths"`
	AllowedUnits *[]string `json:"allowedUnits"`
	CoreSSHKeys  *bool     `json:"coreSSHKeys"`
	// ConfigMapCeiling bounds the ConfigMap's no-reboot-paths (none when absent).
	ConfigMapCeiling []CeilingRule `json:"configMapCeiling"`
	// UnitPrograms grant programs to the changed Exec lines of units that unit rules name.
	UnitPrograms map[string][]string `json:"unitPrograms"`

	// A NodeDisruptionPolicy, as a user writes it under MachineConfiguration spec
	// (nodeDisruptionPolicy), as the MCO shows it in status (nodeDisruptionPolicyStatus or its
	// clusterPolicies), bare (files, units, sshkey), or a whole MachineConfiguration object.
	NodeDisruptionPolicy       json.RawMessage `json:"nodeDisruptionPolicy"`
	NodeDisruptionPolicyStatus *ndpStatus      `json:"nodeDisruptionPolicyStatus"`
	ClusterPolicies            json.RawMessage `json:"clusterPolicies"`
	Files                      json.RawMessage `json:"files"`
	Units                      json.RawMessage `json:"units"`
	SSHKey                     json.RawMessage `json:"sshkey"`
	APIVersion                 string          `json:"apiVersion"`
	Kind                       string          `json:"kind"`
	Metadata                   json.RawMessage `json:"metadata"`
	Spec                       json.RawMessage `json:"spec"`
	Status                     json.RawMessage `json:"status"`
}

// LoadPolicy reads a node-local policy file (YAML or JSON). It may replace the path map, the allowed
// units and whether core's SSH keys may change, and declare the ConfigMap ceiling; the denied
// prefixes stay in force, so a rule or ceiling prefix under one is an error, as is a rule or ceiling
// naming a unit the policy does not allow.
func LoadPolicy(file string) (*Policy, error) {
	data, err := readUpTo(file, MaxRulesSize)
	if err != nil {
		return nil, err
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}

// readUpTo reads file if it holds at most max bytes, never more than max+1 of them (round 11, core
// 02: a 3 GB policy file was read whole before its limit said no).
func readUpTo(file string, max int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: policy is larger than %d bytes", file, max)
	}
	return data, nil
}

// ParsePolicy parses a policy document; see LoadPolicy.
func ParsePolicy(data []byte) (*Policy, error) {
	if len(data) > MaxRulesSize {
		return nil, fmt.Errorf("policy is larger than %d bytes", MaxRulesSize)
	}
	// A policy is a few hundred nodes; parsing costs far more than its bytes (measured: 18 000
	// ceiling entries in 850 KB allocate 99 MiB): bound the nodes before parsing.
	if n := diff.YAMLNodes(data); n > maxPolicyNodes {
		return nil, fmt.Errorf("policy may hold up to %d YAML nodes, more than the %d a policy is allowed", n, maxPolicyNodes)
	}
	js, err := diff.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if err := checkModeSpellings(data); err != nil {
		return nil, err
	}
	if err := strictJSON(js, &policyFile{}); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var f policyFile
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p := Default()
	if f.AllowedUnits != nil {
		p.AllowedUnits = nil
		for i, s := range *f.AllowedUnits {
			u, err := NormalizeUnit(s)
			if err != nil {
				return nil, fmt.Errorf("allowedUnits[%d]: %w", i, err)
			}
			p.AllowedUnits = append(p.AllowedUnits, u)
		}
		// The internal-release-image rules (control-plane nodes only) go when their unit is left
		// out: their paths and unit are refused.
		p.dropRulesFor(UnitIRIRegistry)
	}
	if f.Paths != nil {
		p.Rules = nil
		seen := map[string]int{}
		for i, r := range *f.Paths {
			if err := checkRule(r); err != nil {
				return nil, fmt.Errorf("paths[%d]: %w", i, err)
			}
			if j, dup := seen[r.Path]; dup {
				return nil, fmt.Errorf("paths[%d] and paths[%d] both name path %s", j, i, r.Path)
			}
			seen[r.Path] = i
			if d, ok := Denied(r.Path); ok {
				if _, under := deniedUnder(r.Path, false); !under {
					return nil, fmt.Errorf("paths[%d]: %s covers denied prefix %s (a rule ending in / covers every path below it)", i, r.Path, d)
				}
				return nil, fmt.Errorf("paths[%d]: %s is under denied prefix %s", i, r.Path, d)
			}
			units, bad := p.normalizeUnits(r.Services)
			if bad != "" {
				return nil, fmt.Errorf("paths[%d]: %s", i, bad)
			}
			r.Services = units
			p.Rules = append(p.Rules, r)
		}
	} else {
		// The built-in rules must still name only allowed units.
		for i, r := range p.Rules {
			if _, bad := p.normalizeUnits(r.Services); bad != "" {
				return nil, fmt.Errorf("allowedUnits drops a unit the built-in path map needs (rule %d, %s): %s; replace paths too", i, r.Path, bad)
			}
		}
	}
	if f.CoreSSHKeys != nil {
		p.CoreSSHKeys = *f.CoreSSHKeys
	}
	layers, err := f.ndpLayers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		if err := p.mergeNDP(l, f.AllowedUnits != nil); err != nil {
			return nil, err
		}
	}
	ceiling, err := p.parseCeiling(f.ConfigMapCeiling)
	if err != nil {
		return nil, err
	}
	p.Ceiling = ceiling
	if err := p.parseUnitPrograms(f.UnitPrograms); err != nil {
		return nil, err
	}
	return p, nil
}

// parseUnitPrograms checks the unitPrograms grants: each names a unit a unit rule names, and
// programs by absolute clean paths among the node's programs (read-only OS content, or
// /usr/local/bin, /usr/local/sbin, /usr/local/libexec), which neither a refresh nor a judged
// command writes.
func (p *Policy) parseUnitPrograms(in map[string][]string) error {
	units := make([]string, 0, len(in))
	for u := range in {
		units = append(units, u)
	}
	slices.Sort(units) // the first error is the same on every read
	for _, u := range units {
		if _, ok := p.UnitRule(u); !ok {
			return fmt.Errorf("unitPrograms[%s]: no unit rule names %s (a units rule of the NodeDisruptionPolicy lets a payload change it; a grant is for such a unit only)", strQuote(u), strQuote(u))
		}
		for i, prog := range in[u] {
			name := fmt.Sprintf("unitPrograms[%s][%d]", strQuote(u), i)
			if err := checkPathChars(prog); err != nil {
				return fmt.Errorf("%s: path %w", name, err)
			}
			if !strings.HasPrefix(prog, "/") || path.Clean(prog) != prog {
				return fmt.Errorf("%s: %s is not an absolute clean path", name, strQuote(prog))
			}
			if !nodeProgram(prog) {
				return fmt.Errorf("%s: %s is not one of the node's programs: only %s, which the payload cannot write", name, prog, readOnlyDirs)
			}
		}
		if p.UnitPrograms == nil {
			p.UnitPrograms = map[string][]string{}
		}
		p.UnitPrograms[u] = slices.Clone(in[u])
	}
	return nil
}

// parseCeiling checks the configMapCeiling entries: a clean prefix not under a denied prefix (one
// that covers a denied prefix is fine: the deny list still wins for every path), known actions,
// allowed units (at least one when Reload or Restart is allowed), one entry per prefix.
func (p *Policy) parseCeiling(in []CeilingRule) ([]CeilingRule, error) {
	var out []CeilingRule
	seen := map[string]int{}
	for i, c := range in {
		name := fmt.Sprintf("configMapCeiling[%d]", i)
		if err := checkRulePath(c.Prefix); err != nil {
			return nil, fmt.Errorf("%s: prefix %s", name, strings.TrimPrefix(err.Error(), "path "))
		}
		if d, ok := deniedUnder(c.Prefix, true); ok {
			return nil, fmt.Errorf("%s: prefix %s is under denied prefix %s", name, c.Prefix, d)
		}
		if !underEtcOrVar(c.Prefix) {
			return nil, fmt.Errorf("%s: prefix %s is outside /etc and /var: on RHCOS nothing else is the node's configuration "+
				"(what lies directly under / is the OS tree, a symlink into /usr or /var, or a boot marker such as /.autorelabel, /system-update, /forcefsck)", name, c.Prefix)
		}
		if l, ok := NodeOnlyUnder(c.Prefix); ok {
			return nil, fmt.Errorf("%s: prefix %s is %s", name, c.Prefix, nodeOnlyReason(l))
		}
		// /etc/foo and /etc/foo/ overlap exactly where they would tie: one of them, not both.
		key := strings.TrimSuffix(c.Prefix, "/")
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("configMapCeiling[%d] and [%d] both name prefix %s", j, i, key)
		}
		seen[key] = i
		if len(c.Actions) == 0 {
			return nil, fmt.Errorf("%s (%s): actions is empty", name, c.Prefix)
		}
		if err := checkOwner(c.Owner); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", name, c.Prefix, err)
		}
		needsUnits := false
		for _, a := range c.Actions {
			switch a {
			case ActionNone:
			case ActionReload, ActionRestart:
				needsUnits = true
			default:
				return nil, fmt.Errorf("%s (%s): action %q is not one of None, Restart, Reload", name, c.Prefix, a)
			}
		}
		units, bad := p.normalizeUnits(c.Units)
		if bad != "" {
			return nil, fmt.Errorf("%s (%s): %s", name, c.Prefix, bad)
		}
		if needsUnits && len(units) == 0 {
			return nil, fmt.Errorf("%s (%s): Reload or Restart needs at least one unit", name, c.Prefix)
		}
		c.Units = units
		out = append(out, c)
	}
	return out, nil
}

// checkPod accepts a static pod reference "namespace/name" made of DNS labels.
func checkPod(ref string) error {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || !dnsName(ns) || !dnsName(name) {
		return fmt.Errorf("pod %q is not namespace/name", ref)
	}
	return nil
}

func dnsName(s string) bool {
	if s == "" || len(s) > 253 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// strictJSON rejects what encoding/json would silently resolve: a key given twice (the last would
// win), a key that names a field only when case is ignored ("Path" for "path"), an unknown key.
// The first problem is named; the entry order never changes the result.
func strictJSON(data []byte, v any) error {
	strict, err := k8sjson.UnmarshalStrict(data, v, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
	if err != nil {
		return nil // a syntax or type error: the caller's decode reports it with its offset
	}
	if len(strict) > 0 {
		return fmt.Errorf("invalid JSON: %v", strict[0])
	}
	return nil
}

// underEtcOrVar says whether a ceiling prefix lies in /etc or /var, the only trees of an RHCOS node
// that hold its configuration and state: the rest is the read-only OS, symlinks into /usr or /var,
// kernel file systems, and the markers directly under / that steer the next boot.
func underEtcOrVar(prefix string) bool {
	return under(prefix, "/etc") || under(prefix, "/var")
}
