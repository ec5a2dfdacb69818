package allowlist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// The MCO's NodeDisruptionPolicy, as a user writes it under MachineConfiguration
// spec.nodeDisruptionPolicy and as the MCO shows the merged result under
// status.nodeDisruptionPolicyStatus.clusterPolicies. Field names and types follow openshift/api
// operator/v1/types_machineconfiguration.go (NodeDisruptionPolicyConfig, NodeDisruptionPolicySpecFile,
// NodeDisruptionPolicySpecUnit, NodeDisruptionPolicySpecSSHKey, NodeDisruptionPolicySpecAction,
// ReloadService, RestartService, and their Status twins).
type ndpConfig struct {
	Files  []ndpFile  `json:"files"`
	Units  []ndpUnit  `json:"units"`
	SSHKey *ndpSSHKey `json:"sshkey"`
}

type ndpFile struct {
	Path    string      `json:"path"`
	Actions []ndpAction `json:"actions"`
}

type ndpUnit struct {
	Name    string      `json:"name"`
	Actions []ndpAction `json:"actions"`
}

type ndpSSHKey struct {
	Actions []ndpAction `json:"actions"`
}

type ndpAction struct {
	Type    string      `json:"type"`
	Reload  *ndpService `json:"reload,omitempty"`
	Restart *ndpService `json:"restart,omitempty"`
}

type ndpService struct {
	ServiceName string `json:"serviceName"`
}

// NDP action types.
const (
	ndpReboot       = "Reboot"
	ndpDrain        = "Drain"
	ndpReload       = "Reload"
	ndpRestart      = "Restart"
	ndpDaemonReload = "DaemonReload"
	ndpNone         = "None"
	ndpSpecial      = "Special" // status only: the MCO's internal registries.conf handling
)

// Registries is the one path whose change the built-in rule judges by its contents (Special).
const Registries = "/etc/containers/registries.conf"

// The API's list bounds (+kubebuilder:validation:MaxItems).
const (
	ndpMaxSpecItems   = 50
	ndpMaxStatusItems = 100
	ndpMaxActions     = 10
)

// ndpServiceName is the API's rule for a service name: ${NAME}${SERVICETYPE}.
var ndpServiceName = regexp.MustCompile(`^[a-zA-Z0-9:._\\-]+\.(service|socket|device|mount|automount|swap|target|path|timer|snapshot|slice|scope)$`)

// Effects is what a node policy rule asks for a change it covers, beyond the simple Action and
// Services of the agent's own format. NodeDisruptionPolicy rules fill it; it never comes from the
// ConfigMap (no JSON form).
type Effects struct {
	// Steps are the rule's reloads and restarts, by unit, in the rule's order.
	Steps []Step
	// DaemonReload asks systemd to reload its unit files first.
	DaemonReload bool
	// Drain asks for the node to be drained before the change and uncordoned after.
	Drain bool
	// Reboot marks a change the MCO would reboot for: the agent refuses it.
	Reboot bool
	// Special is the built-in registries.conf handling: Reload crio, after a drain unless the
	// change is safe as the machine-config daemon judges it.
	Special bool
	// Name is the rule as the policy file names it (files[2] (/etc/foo)), for messages.
	Name string
}

// Step is one reload or restart of a unit.
type Step struct {
	Action Action `json:"action"`
	Unit   string `json:"unit"`
}

// UnitRule lets a payload change the contents or dropins of one systemd unit.
type UnitRule struct {
	Unit string
	Effects
}

// ndpLayer is one NodeDisruptionPolicy found in a policy document, with where it was found.
type ndpLayer struct {
	where  string // prefix for rule names, e.g. "spec.nodeDisruptionPolicy."
	status bool   // a clusterPolicies status: Special allowed on registries.conf, bigger lists
	raw    json.RawMessage
}

// machineConfigurationSpec and Status pick the NodeDisruptionPolicy out of a whole
// MachineConfiguration; the object's other fields are the MCO's business and ignored.
type machineConfigurationSpec struct {
	NodeDisruptionPolicy json.RawMessage `json:"nodeDisruptionPolicy"`
}

type machineConfigurationStatus struct {
	NodeDisruptionPolicyStatus *ndpStatus `json:"nodeDisruptionPolicyStatus"`
}

type ndpStatus struct {
	ClusterPolicies json.RawMessage `json:"clusterPolicies"`
}

// ndpLayers lists the NodeDisruptionPolicies of a policy document in merge order: cluster policies
// (status) first, then what the user wrote (spec), then a bare document, each merged over the
// previous as the MCO merges user rules over its defaults.
func (f *policyFile) ndpLayers() ([]ndpLayer, error) {
	if f.Kind != "" && f.Kind != "MachineConfiguration" {
		return nil, fmt.Errorf("kind %q: want MachineConfiguration (or a bare nodeDisruptionPolicy, or the agent's own format)", f.Kind)
	}
	var layers []ndpLayer
	add := func(where string, status bool, raw json.RawMessage) {
		if len(raw) > 0 && string(raw) != "null" {
			layers = append(layers, ndpLayer{where: where, status: status, raw: raw})
		}
	}
	if len(f.Status) > 0 {
		var st machineConfigurationStatus
		if err := json.Unmarshal(f.Status, &st); err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
		if st.NodeDisruptionPolicyStatus != nil {
			add("status.nodeDisruptionPolicyStatus.clusterPolicies.", true, st.NodeDisruptionPolicyStatus.ClusterPolicies)
		}
	}
	if f.NodeDisruptionPolicyStatus != nil {
		add("nodeDisruptionPolicyStatus.clusterPolicies.", true, f.NodeDisruptionPolicyStatus.ClusterPolicies)
	}
	add("clusterPolicies.", true, f.ClusterPolicies)
	if len(f.Spec) > 0 {
		var sp machineConfigurationSpec
		if err := json.Unmarshal(f.Spec, &sp); err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
		add("spec.nodeDisruptionPolicy.", false, sp.NodeDisruptionPolicy)
	}
	add("nodeDisruptionPolicy.", false, f.NodeDisruptionPolicy)
	if f.Files != nil || f.Units != nil || f.SSHKey != nil {
		bare, err := json.Marshal(ndpBare{Files: f.Files, Units: f.Units, SSHKey: f.SSHKey})
		if err != nil {
			return nil, err
		}
		add("", false, bare)
	}
	return layers, nil
}

type ndpBare struct {
	Files  json.RawMessage `json:"files,omitempty"`
	Units  json.RawMessage `json:"units,omitempty"`
	SSHKey json.RawMessage `json:"sshkey,omitempty"`
}

// mergeNDP merges one NodeDisruptionPolicy over p: a file rule replaces the rule for the same path
// (with or without a trailing "/"), a unit rule the rule for the same unit, and sshkey actions, when
// given, replace the SSH key rule (as the MCO's MergeClusterPolicies does). explicitUnits says the
// document lists allowedUnits itself: then every unit a rule names must be in it; otherwise the
// units the rules name are allowed (the node policy file is the node owner's grant).
func (p *Policy) mergeNDP(l ndpLayer, explicitUnits bool) error {
	var c ndpConfig
	dec := json.NewDecoder(bytes.NewReader(l.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("%s: %w", strings.TrimSuffix(l.where, "."), err)
	}
	limit := ndpMaxSpecItems
	if l.status {
		limit = ndpMaxStatusItems
	}
	if len(c.Files) > limit || len(c.Units) > limit {
		return fmt.Errorf("%sfiles or units: more than %d entries", l.where, limit)
	}
	seen := map[string]int{}
	for i, f := range c.Files {
		name := fmt.Sprintf("%sfiles[%d] (%s)", l.where, i, strQuote(f.Path))
		if err := checkNDPPath(f.Path); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		key := f.Path
		if j, dup := seen[key]; dup {
			return fmt.Errorf("%sfiles[%d] and files[%d] both name path %s", l.where, j, i, key)
		}
		seen[key] = i
		if l.status && MCODefaultNotApplied(key) != "" {
			// The MCO's own default rule, as its status shows it: never applied here (its path
			// stays refused), and no reason to refuse the MCO's status as a policy.
			continue
		}
		if d, ok := deniedUnder(key, false); ok {
			return fmt.Errorf("%s: path is under denied prefix %s", name, d)
		}
		// The rule covers what is below the path too (as the MCD matches it): like a paths rule, it
		// may not cover a denied prefix either.
		if d, ok := Denied(key + "/"); ok && !slices.Contains(deniedExceptions, key) {
			return fmt.Errorf("%s: path covers denied prefix %s", name, d)
		}
		eff, err := p.ndpEffects(name, f.Actions, l.status && key == Registries, explicitUnits)
		if err != nil {
			return err
		}
		p.setFileRule(key, eff)
	}
	seenUnits := map[string]int{}
	for i, u := range c.Units {
		name := fmt.Sprintf("%sunits[%d] (%s)", l.where, i, strQuote(u.Name))
		if err := checkNDPService(u.Name); err != nil {
			return fmt.Errorf("%s: name %w", name, err)
		}
		if j, dup := seenUnits[u.Name]; dup {
			return fmt.Errorf("%sunits[%d] and units[%d] both name unit %s", l.where, j, i, u.Name)
		}
		seenUnits[u.Name] = i
		eff, err := p.ndpEffects(name, u.Actions, false, explicitUnits)
		if err != nil {
			return err
		}
		p.UnitRules = slices.DeleteFunc(p.UnitRules, func(r UnitRule) bool { return r.Unit == u.Name })
		p.UnitRules = append(p.UnitRules, UnitRule{Unit: u.Name, Effects: eff})
	}
	if c.SSHKey != nil && len(c.SSHKey.Actions) > 0 {
		eff, err := p.ndpEffects(l.where+"sshkey", c.SSHKey.Actions, false, explicitUnits)
		if err != nil {
			return err
		}
		p.SSHKey = eff
		p.CoreSSHKeys = !eff.Reboot
	}
	return nil
}

// checkNDPPath accepts a NodeDisruptionPolicy file path only where the MCO and the agent read it
// the same way. The MCO matches a rule path P to a changed file F when F == P (as written) or when
// filepath.Clean(P)+"/" is a prefix of F (FindClosestFilePolicyPathMatch and IsSubdirectory,
// machine-config-operator pkg/controller/common/helpers.go), longest P first. So a clean absolute
// P covers the file P and everything below it, which is what the agent applies. Any other P means
// something a reader would not expect, and is refused naming how the MCO would read it: with a
// trailing "/" the file P itself is never matched (the rule covers only what is below it), an
// unclean P matches no file exactly and the files below its cleaned form, a relative P matches
// nothing.
func checkNDPPath(p string) error {
	if err := checkPathChars(p); err != nil {
		return fmt.Errorf("path %w", err)
	}
	clean := path.Clean(p)
	switch {
	case p == "":
		return errors.New("path is empty")
	case !path.IsAbs(p):
		return fmt.Errorf("path %q is not absolute: the MCO would match it to no file", p)
	case clean == "/":
		return fmt.Errorf("path %q covers every file: the root is never a rule", p)
	case strings.HasSuffix(p, "/") && clean+"/" == p:
		return fmt.Errorf("path %s ends in \"/\", which the MCO reads differently: it matches only the files below %s, never %s itself "+
			"(a change to %s would still get the rule that covers %s without the slash, or a reboot); "+
			"write %s for the file and everything below it", p, clean, clean, clean, clean, clean)
	case clean != p:
		return fmt.Errorf("path %s is not clean: the MCO would match it to no file exactly and to the files below %s; write %s", p, clean, clean)
	}
	return nil
}

// setFileRule replaces the rules for path (exact and below) with the NDP rule. The MCD matches a
// policy path exactly or as a directory above the changed file, so the rule covers both.
func (p *Policy) setFileRule(path string, eff Effects) {
	p.Rules = slices.DeleteFunc(p.Rules, func(r Rule) bool { return strings.TrimSuffix(r.Path, "/") == path })
	r := Rule{Path: path, Effects: eff}
	r.Action, r.Services = eff.summary()
	p.Rules = append(p.Rules, r)
	if !slices.Contains(deniedExceptions, path) {
		below := r
		below.Path = path + "/"
		p.Rules = append(p.Rules, below)
	}
}

// summary is the rule's strongest service action and its units, for the plan's one-word verdict.
func (e Effects) summary() (Action, []string) {
	a, units := ActionNone, []string(nil)
	for _, s := range e.Steps {
		if s.Action == ActionRestart || a == ActionNone {
			a = s.Action
		}
		if !slices.Contains(units, s.Unit) {
			units = append(units, s.Unit)
		}
	}
	return a, units
}

// ndpEffects checks one rule's action list as the API's validation does (known types, Reboot and
// None standalone, reload/restart exactly when their type says so, at most 10) plus the agent's own
// rules (Special only on the built-in registries.conf rule, allowed units, no unit that reboots).
func (p *Policy) ndpEffects(name string, actions []ndpAction, specialOK, explicitUnits bool) (Effects, error) {
	eff := Effects{Name: name}
	if len(actions) == 0 {
		return eff, fmt.Errorf("%s: actions is empty", name)
	}
	if len(actions) > ndpMaxActions {
		return eff, fmt.Errorf("%s: more than %d actions", name, ndpMaxActions)
	}
	for i, a := range actions {
		at := fmt.Sprintf("%s: actions[%d] (%s)", name, i, a.Type)
		if (a.Reload != nil) != (a.Type == ndpReload) {
			return eff, fmt.Errorf("%s: reload is required when type is Reload, and forbidden otherwise", at)
		}
		if (a.Restart != nil) != (a.Type == ndpRestart) {
			return eff, fmt.Errorf("%s: restart is required when type is Restart, and forbidden otherwise", at)
		}
		switch a.Type {
		case ndpReboot, ndpNone, ndpSpecial:
			if len(actions) != 1 {
				return eff, fmt.Errorf("%s: %s can only be specified standalone", at, a.Type)
			}
			eff.Reboot = a.Type == ndpReboot
			if a.Type == ndpSpecial {
				if !specialOK {
					return eff, fmt.Errorf("%s: Special is reserved to the built-in %s rule", at, Registries)
				}
				eff.Special = true
				eff.Steps = []Step{{Action: ActionReload, Unit: UnitCrio}}
			}
		case ndpDrain:
			eff.Drain = true
		case ndpDaemonReload:
			eff.DaemonReload = true
		case ndpReload, ndpRestart:
			svc := a.Reload
			if svc == nil {
				svc = a.Restart
			}
			if err := checkNDPService(svc.ServiceName); err != nil {
				return eff, fmt.Errorf("%s: serviceName %w", at, err)
			}
			if err := ActOn(svc.ServiceName); err != nil {
				return eff, fmt.Errorf("%s: serviceName %q: %w", at, svc.ServiceName, err)
			}
			u := svc.ServiceName
			if !p.UnitAllowed(u) {
				if explicitUnits {
					return eff, fmt.Errorf("%s: unit %s is not an allowed unit", at, u)
				}
				p.AllowedUnits = append(p.AllowedUnits, u)
			}
			eff.Steps = append(eff.Steps, Step{Action: Action(a.Type), Unit: u})
		default:
			return eff, fmt.Errorf("%s: type %q is not one of Reboot, Drain, Reload, Restart, DaemonReload, None", at, a.Type)
		}
	}
	return eff, nil
}

// checkNDPService checks a unit name as the API does, and refuses the units that reboot.
func checkNDPService(name string) error {
	if len(name) > 255 {
		return fmt.Errorf("%q is longer than 255 characters", name)
	}
	if !ndpServiceName.MatchString(name) {
		return fmt.Errorf("%q is not ${NAME}${SERVICETYPE} (e.g. crio.service)", name)
	}
	if strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%q is not a unit name", name)
	}
	if err := UnitIdentity(name); err != nil {
		return fmt.Errorf("%q would reboot, halt or isolate the node: %w", name, err)
	}
	if real, ok := AliasOf(name); ok {
		// A rule for an alias would write a unit file where the alias's link is: the name would
		// then start the payload's unit, not the one it links to.
		return fmt.Errorf("%q is an alias of %s: a rule names the unit itself", name, real)
	}
	return nil
}

// UnitRule returns the node policy's rule for a unit, if any.
func (p *Policy) UnitRule(unit string) (UnitRule, bool) {
	for _, r := range p.UnitRules {
		if r.Unit == unit {
			return r, true
		}
	}
	return UnitRule{}, false
}
