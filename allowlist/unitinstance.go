package allowlist

import (
	"path"
	"slices"
	"strings"
)

// An instance of a template (NAME@INSTANCE.TYPE) is its template's text with the instance
// substituted: its %i, %I, %n, %N and %f are the instance (systemd.unit(5)). When a payload's unit
// names an instance as a dependency, the payload chose the instance, so every word of the template
// holding one of those specifiers is the payload's: round 9's podman-kube@etc-iri\x2dregistry-pod.yaml
// ran podman's stock `podman kube play %I` on a pod file the payload wrote. The plan judges such an
// instance by its template's text as the node has it (NodeUnitFiles, read under --root), the lines the
// instance changes as changed lines; an instance whose template the judge cannot read is refused
// unless a rule of the node policy names it.

// Instance splits an instance name (getty@tty1.service) into its template (getty@.service) and its
// instance; ok is false for a name that is no instance (a template's instance is empty).
func Instance(name string) (tmpl, instance string, ok bool) {
	tmpl, instance, ok = template(name)
	return tmpl, instance, ok && instance != ""
}

// instanceSpecifiers are the specifiers whose value is (or holds) the instance.
const instanceSpecifiers = "iInNf"

// InstanceSpecifier says whether a unit file value holds a specifier whose value is the unit's
// instance (%i, %I, %n, %N, %f; %% is a percent sign).
func InstanceSpecifier(v string) bool {
	for i := 0; i+1 < len(v); i++ {
		if v[i] != '%' {
			continue
		}
		if strings.IndexByte(instanceSpecifiers, v[i+1]) >= 0 {
			return true
		}
		i++ // %% and the other specifiers
	}
	return false
}

// InstanceProbe is the name of another instance of the unit's template (a name no node has): the
// words of the template that read the same for both are the template's, the others the instance's.
func InstanceProbe(name string) string {
	tmpl, _, _ := template(name)
	return strings.TrimSuffix(tmpl, path.Ext(tmpl)) + "refresh\\x2dagent-probe" + path.Ext(tmpl)
}

// NamesUnit says whether the policy names the unit (canonical spellings compared): as a unit rule,
// an allowed unit, a rule's service or a step of a rule, of a unit rule or of the SSH key rule.
func (p *Policy) NamesUnit(name string) bool {
	if p == nil {
		return false
	}
	c := canonUnit(name)
	return slices.ContainsFunc(p.namedUnits(), func(u string) bool { return canonUnit(u) == c })
}

// namedUnits are every unit the policy names.
func (p *Policy) namedUnits() []string {
	units := slices.Clone(p.AllowedUnits)
	for _, r := range p.UnitRules {
		units = append(units, r.Unit)
		for _, s := range r.Steps {
			units = append(units, s.Unit)
		}
	}
	for _, r := range p.Rules {
		units = append(units, r.Services...)
		for _, s := range r.Steps {
			units = append(units, s.Unit)
		}
	}
	for _, s := range p.SSHKey.Steps {
		units = append(units, s.Unit)
	}
	return units
}

// JudgeInstance says why a job on an instance a payload's unit pulls in would stop the system or
// run what a refresh may not, or nil: JudgeUnit on its properties (the plan marks the lines the
// instance changes), but for its type: an instance of a socket, timer or target template is judged
// by what it runs too, not refused for not being a service.
func JudgeInstance(p UnitProps) error {
	if p.ID != "" && !strings.HasSuffix(p.ID, ".service") {
		p.Names = append([]string{p.ID}, p.Names...)
		p.ID = ""
	}
	return JudgeUnit(p)
}
