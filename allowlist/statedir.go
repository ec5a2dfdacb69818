package allowlist

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// The agent's own state dir (its journal, record, backups and payloads) is wherever --state-dir
// puts it, not only the audited /var/lib/refresh-agent: a write there forges the journal recovery
// acts on or the record a refresh starts from. WithStateDir denies it to every rule and ceiling.

// WithStateDir returns a copy of p that refuses the agent's state dirs (node paths: absolute and
// clean) to every rule, ConfigMap entry and ceiling: a path in one, and a path that is one's
// ancestor (a file or link there would take the state dir's place). An error names a node policy
// rule or ceiling prefix that reaches into one, so a policy that grants it fails to load.
func (p *Policy) WithStateDir(dirs ...string) (*Policy, error) {
	q := *p
	q.stateDirs = append([]string(nil), p.stateDirs...)
	for _, d := range dirs {
		if !path.IsAbs(d) || path.Clean(d) != d {
			return nil, fmt.Errorf("state dir %q: not an absolute clean path on the node", d)
		}
		if !slices.Contains(q.stateDirs, d) {
			q.stateDirs = append(q.stateDirs, d)
		}
	}
	for i, r := range q.Rules {
		if d, ok := q.stateDirOf(r.Path); ok {
			return nil, fmt.Errorf("node policy rule %d (%s) reaches the agent's state dir %s: no rule may write it or take its place", i, r.Path, d)
		}
	}
	for i, c := range q.Ceiling {
		for _, d := range q.stateDirs {
			if under(strings.TrimSuffix(c.Prefix, "/"), d) {
				return nil, fmt.Errorf("configMapCeiling[%d] prefix %s lies in the agent's state dir %s: nothing there may be written", i, c.Prefix, d)
			}
		}
	}
	return &q, nil
}

// WithPolicyFile returns a copy of p that refuses the node policy's own file (a node path, absolute
// and clean: --policy when it lies inside the root) to every rule, ConfigMap entry, ceiling and unit
// command, and every ancestor of it: a ConfigMap that rewrote it would grant itself the node policy
// at the next refresh (adversary r23 d/01, an /etc/ ceiling and the policy in /etc/refresh-agent).
// A rule or ceiling that covers it still loads; the file alone is refused.
func (p *Policy) WithPolicyFile(files ...string) (*Policy, error) {
	q := *p
	q.policyFiles = slices.Clone(p.policyFiles)
	for _, f := range files {
		if !path.IsAbs(f) || path.Clean(f) != f || f == "/" {
			return nil, fmt.Errorf("policy file %q: not an absolute clean file path on the node", f)
		}
		if !slices.Contains(q.policyFiles, f) {
			q.policyFiles = append(q.policyFiles, f)
		}
	}
	return &q, nil
}

// WithHomes returns a copy of p that refuses, to every rule and ceiling, the node's users' home
// directories (home → user, from the node's /etc/passwd): a shell's rc files, keys and tools'
// configuration there run code or log in as that user, whichever directory /etc/passwd names
// (adversary r23 d/03: a service account's home outside the audit's fixed rows). core's keys are
// written by the sshKeys rule, never a file rule.
func (p *Policy) WithHomes(homes map[string]string) *Policy {
	q := *p
	q.homes, q.homeDirs = maps.Clone(homes), slices.Sorted(maps.Keys(homes))
	return &q
}

// NeverOwn returns the agent's own paths, which no unit command may own or write
// (Execution.NeverOwn): the state dirs WithStateDir added and the policy files WithPolicyFile added.
func (p *Policy) NeverOwn() []string {
	return append(slices.Clone(p.stateDirs), p.policyFiles...)
}

// stateDirOf returns the state dir that path (a file, or a prefix ending in "/") is in, is, or is
// an ancestor of.
func (p *Policy) stateDirOf(rulePath string) (string, bool) {
	d := inOrAbove(rulePath, p.stateDirs)
	return d, d != ""
}

// ownPathReason says why path is refused for the agent's own paths (a policy file, a state dir),
// or "".
func (p *Policy) ownPathReason(rulePath string) string {
	if f := inOrAbove(rulePath, p.policyFiles); f != "" {
		if strings.TrimSuffix(rulePath, "/") != f {
			return "path is an ancestor of the node policy file " + f + ": a write there would take its place; no rule or ceiling reaches it"
		}
		return "path is the node policy file " + f + ": a refresh never rewrites the policy it is judged by"
	}
	if why := p.homeReason(rulePath); why != "" {
		return why
	}
	d, ok := p.stateDirOf(rulePath)
	if !ok {
		return ""
	}
	if q := strings.TrimSuffix(rulePath, "/"); q != d && under(d, q) {
		return "path is an ancestor of the agent's state dir " + d + " (its journal, record and payloads): a write there would take its place; no rule or ceiling reaches it"
	}
	return "path is in the agent's state dir " + d + " (its journal, record and payloads): no rule or ceiling reaches it"
}

// WithManaged returns a copy of p whose ManagedPaths also hold paths (a plan's ConfigMap entries
// within the ceiling, Extra's rules).
func (p *Policy) WithManaged(paths ...string) *Policy {
	q := *p
	q.managed = append(slices.Clone(p.managed), paths...)
	return &q
}

// ManagedPaths are the paths whose mode and owner the policy bounds: every rule's path (a prefix
// rule's ending in "/") and those WithManaged added. No unit's command may change them
// (Execution.Managed).
func (p *Policy) ManagedPaths() []string {
	out := slices.Clone(p.managed)
	for _, r := range p.Rules {
		out = append(out, r.Path)
	}
	return out
}

// homeReason says why rulePath is refused as in or above a user's home (WithHomes), or "".
func (p *Policy) homeReason(rulePath string) string {
	q := strings.TrimSuffix(rulePath, "/")
	for _, h := range p.homeDirs {
		switch {
		case under(q, h):
			return "path is in the home of the node's user " + p.homes[h] + " (" + h + ", /etc/passwd): its rc files, keys and tools' configuration run code or log in as that user; no rule or ceiling reaches it"
		case under(h, q):
			return "path is an ancestor of the home of the node's user " + p.homes[h] + " (" + h + ", /etc/passwd): a write there would take its place; no rule or ceiling reaches it"
		}
	}
	return ""
}
