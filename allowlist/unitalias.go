package allowlist

import (
	"fmt"
	"maps"
	"path"
	"strings"
)

// The node's own aliases: a unit file in a directory of the manager's unit search path
// (/etc/systemd/system, /usr/local/lib/systemd/system, /run/systemd/transient … plan.UnitSearchPath)
// that is a symlink to another unit (what systemctl enable makes of [Install] Alias=, or what a
// package ships) is that unit to systemd; a template's link aliases every instance. WithUnitAliases gives the
// policy the node's links (apply reads them under --root: apply.NodeUnitAliases); the plan then
// judges a dependency on a link as the unit it links to, and a policy may not name a link at all
// (a rule for it would write a unit file where the link is).

// maxAliasHops bounds the chain of links followed (systemd follows a chain too, and refuses loops).
const maxAliasHops = 8

// WithUnitAliases returns a copy of p that knows the node's unit links (name → the unit it links
// to, as on the node), refusing a policy that names one: as a unit rule, an allowed unit, a rule's
// service or a NodeDisruptionPolicy step. The error names the rule and the unit the link is.
func (p *Policy) WithUnitAliases(links map[string]string) (*Policy, error) {
	q := *p
	q.nodeAliases = maps.Clone(p.nodeAliases)
	if q.nodeAliases == nil {
		q.nodeAliases = map[string]string{}
	}
	for k, v := range links {
		if k != "" && v != "" && k != v {
			q.nodeAliases[canonUnit(k)] = canonUnit(v)
		}
	}
	named := func(u string) error {
		if real, ok := q.UnitAlias(u); ok {
			why := "name the unit itself"
			if err := UnitIdentity(real); err != nil {
				why = err.Error()
			}
			return fmt.Errorf("unit %s is, on this node, a link to %s: %s", u, real, why)
		}
		return nil
	}
	for _, r := range q.UnitRules {
		if err := named(r.Unit); err != nil {
			return nil, fmt.Errorf("node policy unit rule %s: %w", r.Unit, err)
		}
	}
	for _, u := range q.namedUnits() {
		if err := named(u); err != nil {
			return nil, fmt.Errorf("node policy: %w", err)
		}
	}
	return &q, nil
}

// UnitAlias is the unit the name is an alias of, by the judge's table (AliasOf) or the node's
// links (WithUnitAliases), canonical, and whether it is one.
func (p *Policy) UnitAlias(name string) (string, bool) {
	c := canonUnit(name)
	n := c
	for range maxAliasHops {
		next := identityOf(n)
		if p != nil {
			if l, ok := p.nodeLink(n); ok {
				next = l
			}
		}
		if next == n {
			break
		}
		n = next
	}
	return n, n != c
}

// nodeLink is the unit the node's links make the (canonical) name: its own link, or, for an
// instance without one, its template's. systemd aliases templates (round 11, units 02): a link
// foo@.service -> bar@.service makes foo@x.service bar@x.service, and an instance's link to a
// template (foo@x.service -> bar@.service) is that template's instance. (An instance's own file
// hides its template's link to systemd; judged as the link's here, the stricter.)
func (p *Policy) nodeLink(n string) (string, bool) {
	tmpl, inst, isInstance := template(n)
	isInstance = isInstance && inst != ""
	l, ok := p.nodeAliases[n]
	if !ok && isInstance {
		l, ok = p.nodeAliases[tmpl]
	}
	if !ok {
		return "", false
	}
	if t, i, lt := template(l); isInstance && lt && i == "" {
		l = strings.TrimSuffix(t, path.Ext(t)) + inst + path.Ext(t)
	}
	return l, l != n
}
