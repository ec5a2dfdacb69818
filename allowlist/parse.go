package allowlist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// MaxRulesSize bounds a no-reboot-paths list or policy file.
const MaxRulesSize = 1 << 20

// ParseRules parses a no-reboot-paths JSON array. It checks structure only (every entry has a clean
// absolute path, a known action, services for Restart and Reload, none for None) and fails naming the
// entry's index; which paths and units the node accepts is decided by Extra. Empty input is no rules.
func ParseRules(data []byte) ([]Rule, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	if len(data) > MaxRulesSize {
		return nil, fmt.Errorf("no-reboot-paths is larger than %d bytes", MaxRulesSize)
	}
	var rules []Rule
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
	for i, r := range rules {
		if err := checkRule(r); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return rules, nil
}

func checkRule(r Rule) error {
	if r.Path == "" {
		return errors.New("path is empty")
	}
	if !path.IsAbs(r.Path) {
		return fmt.Errorf("path %q is not absolute", r.Path)
	}
	if trimmed := strings.TrimSuffix(r.Path, "/"); trimmed != "" && path.Clean(trimmed) != trimmed || r.Path == "/" {
		return fmt.Errorf("path %q is not clean (no \"..\", \".\", \"//\", and not the root)", r.Path)
	}
	for _, pod := range r.Pods {
		if err := checkPod(pod); err != nil {
			return fmt.Errorf("path %q: %w", r.Path, err)
		}
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

// Extra filters the ConfigMap's rules through the node policy: an entry outside /etc/ and
// /var/lib/kubelet/, under a denied prefix, or naming a unit the node does not allow is dropped with a
// warning, so its paths count as not allowlisted. Service names come back normalised.
func (p *Policy) Extra(rules []Rule) ([]Rule, []string) {
	var out []Rule
	var warnings []string
	for i, r := range rules {
		if d, ok := Denied(r.Path); ok {
			warnings = append(warnings, fmt.Sprintf("no-reboot-paths entry %d: path %s is under denied prefix %s: ignored", i, r.Path, d))
			continue
		}
		if !underAny(r.Path, extraRoots) {
			warnings = append(warnings, fmt.Sprintf("no-reboot-paths entry %d: path %s is outside /etc/ and /var/lib/kubelet/: ignored", i, r.Path))
			continue
		}
		if len(r.Pods) > 0 {
			warnings = append(warnings, fmt.Sprintf("no-reboot-paths entry %d: path %s: pods are named by the node policy only: ignored", i, r.Path))
			continue
		}
		units, bad := p.normalizeUnits(r.Services)
		if bad != "" {
			warnings = append(warnings, fmt.Sprintf("no-reboot-paths entry %d: path %s: %s: ignored", i, r.Path, bad))
			continue
		}
		r.Services = units
		out = append(out, r)
	}
	return out, warnings
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if strings.HasPrefix(p, r) && len(p) > len(r) {
			return true
		}
	}
	return false
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
}

// LoadPolicy reads a node-local policy file (YAML or JSON). It may replace the path map, the allowed
// units and whether core's SSH keys may change; the denied prefixes stay in force, so a rule under
// one is an error, as is a rule naming a unit the policy does not allow.
func LoadPolicy(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}

// ParsePolicy parses a policy document; see LoadPolicy.
func ParsePolicy(data []byte) (*Policy, error) {
	if len(data) > MaxRulesSize {
		return nil, fmt.Errorf("policy is larger than %d bytes", MaxRulesSize)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
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
	}
	if f.Paths != nil {
		p.Rules = nil
		for i, r := range *f.Paths {
			if err := checkRule(r); err != nil {
				return nil, fmt.Errorf("paths[%d]: %w", i, err)
			}
			if d, ok := Denied(r.Path); ok {
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
	return p, nil
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
