package allowlist

import (
	"fmt"
	"maps"
)

// The node's own aliases: a unit file in /etc/systemd/system, /run/systemd/system or
// /usr/lib/systemd/system that is a symlink to another unit (what systemctl enable makes of
// [Install] Alias=, or what a package ships) is that unit to systemd. WithUnitAliases gives the
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
			if l, ok := p.nodeAliases[n]; ok {
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
