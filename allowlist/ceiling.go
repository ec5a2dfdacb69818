package allowlist

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CeilingRule is one prefix of the node policy's ConfigMap ceiling: a no-reboot-paths entry for a
// path under Prefix is honoured only with one of Actions and only naming Units. Prefix matches by
// path component: /etc/foo covers /etc/foo and everything below it (not /etc/foobar); /etc/foo/
// covers only what is below it.
type CeilingRule struct {
	Prefix  string   `json:"prefix"`
	Actions []Action `json:"actions"`
	Units   []string `json:"units,omitempty"`
	// Mode and Owner bound the files the ConfigMap adds below the prefix (DefaultMode and
	// DefaultOwner when unset).
	Mode  Mode   `json:"mode,omitempty"`
	Owner string `json:"owner,omitempty"`
}

// within reports whether a rule path (a file, or a prefix ending in "/") lies inside the ceiling
// prefix, and how specific the ceiling is.
func (c CeilingRule) within(p string) (int, bool) {
	if strings.HasSuffix(c.Prefix, "/") {
		if strings.HasPrefix(p, c.Prefix) {
			return len(c.Prefix), true
		}
		return 0, false
	}
	if p == c.Prefix || strings.HasPrefix(p, c.Prefix+"/") {
		return len(c.Prefix), true
	}
	return 0, false
}

// ceilingFor returns the most specific ceiling prefix that contains the rule path.
func (p *Policy) ceilingFor(rulePath string) (CeilingRule, bool) {
	best, bestLen, found := CeilingRule{}, -1, false
	for _, c := range p.Ceiling {
		if n, ok := c.within(rulePath); ok && n > bestLen {
			best, bestLen, found = c, n, true
		}
	}
	return best, found
}

// ceilingAllows says why the ceiling does not allow the rule (services already normalised), or "".
func (p *Policy) ceilingAllows(r Rule) string {
	c, ok := p.ceilingFor(r.Path)
	if !ok {
		return "path is outside the node policy's configMapCeiling"
	}
	if !slices.Contains(c.Actions, r.Action) {
		return fmt.Sprintf("action %s is not allowed under configMapCeiling prefix %s (allows %s)", r.Action, c.Prefix, joinActions(c.Actions))
	}
	for _, u := range r.Services {
		if !slices.Contains(c.Units, u) || !p.UnitAllowed(u) {
			return fmt.Sprintf("unit %s is not allowed under configMapCeiling prefix %s (allows %s)", u, c.Prefix, orNone(c.Units))
		}
	}
	return ""
}

func joinActions(as []Action) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return orNone(s)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// Extra filters the ConfigMap's rules through the node policy: the ConfigMap asks, the node grants.
// An entry under a denied prefix, outside the ceiling, with an action or a unit its ceiling prefix
// does not allow, is ignored with a warning naming it, so its paths stay not allowlisted. Service
// names come back normalised. The rules must come from ParseRules (one entry per path), so the
// result does not depend on their order.
func (p *Policy) Extra(rules []Rule) ([]Rule, []string) {
	var out []Rule
	var warnings []string
	for i, r := range rules {
		asked := r // named as the ConfigMap wrote it
		ignore := func(why string) {
			warnings = append(warnings, fmt.Sprintf("no-reboot-paths entry %d (%s %s%s): %s: ignored",
				i, strQuote(asked.Path), asked.Action, servicesSuffix(asked.Services), why))
		}
		if err := checkRulePath(r.Path); err != nil {
			ignore(err.Error())
			continue
		}
		if d, ok := deniedUnder(r.Path, true); ok {
			ignore("path is under denied prefix " + d)
			continue
		}
		if l, ok := NodeOnlyUnder(r.Path); ok {
			ignore(nodeOnlyReason(l))
			continue
		}
		if d, ok := p.stateDirOf(r.Path); ok && (!strings.HasSuffix(r.Path, "/") || under(strings.TrimSuffix(r.Path, "/"), d)) {
			ignore("path is in or takes the place of the agent's state dir " + d)
			continue
		}
		if len(r.Pods) > 0 {
			ignore("pods are named by the node policy only")
			continue
		}
		if r.Mode != 0 || r.Owner != "" {
			ignore("mode and owner ceilings are set by the node policy only")
			continue
		}
		units, bad := p.normalizeUnits(r.Services)
		if bad != "" {
			ignore(bad)
			continue
		}
		r.Services = units
		if why := p.ceilingAllows(r); why != "" {
			ignore(why)
			continue
		}
		out = append(out, r)
	}
	return out, warnings
}

// nodeOnlyReason says why the ConfigMap cannot reach a node-policy-only location.
func nodeOnlyReason(l Location) string {
	return "under " + strings.TrimSuffix(l.Prefix, "*") + ", which only the node policy's own rules may name (" + l.Why + ")"
}

func servicesSuffix(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " " + strings.Join(s, ",")
}

// strQuote quotes a path only when it would not print plainly.
func strQuote(p string) string {
	if checkPathChars(p) != nil || strings.ContainsAny(p, " \"") {
		return fmt.Sprintf("%q", p)
	}
	return p
}

// checkPathChars refuses paths that are not valid UTF-8 (encoding/json turns such bytes into
// U+FFFD, which is refused too) or that contain NUL or any other control character.
func checkPathChars(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("%q is not valid UTF-8", p)
	}
	for _, c := range p {
		if c == utf8.RuneError {
			return fmt.Errorf("%q is not valid UTF-8", p)
		}
		if unicode.IsControl(c) {
			return fmt.Errorf("%q contains control character %U", p, c)
		}
	}
	return nil
}

// checkRulePath checks a rule or ceiling path: absolute, clean (a trailing "/" marks a prefix), not
// the root, no control characters, valid UTF-8.
func checkRulePath(p string) error {
	if p == "" {
		return errors.New("path is empty")
	}
	if err := checkPathChars(p); err != nil {
		return fmt.Errorf("path %w", err)
	}
	if !path.IsAbs(p) {
		return fmt.Errorf("path %q is not absolute", p)
	}
	if trimmed := strings.TrimSuffix(p, "/"); trimmed != "" && path.Clean(trimmed) != trimmed || p == "/" {
		return fmt.Errorf("path %q is not clean (no \"..\", \".\", \"//\", and not the root)", p)
	}
	return nil
}

// CheckPayloadPath is what a payload's file path must satisfy besides being absolute and clean: no
// control characters, valid UTF-8. The error quotes the path.
func CheckPayloadPath(p string) error { return checkPathChars(p) }
