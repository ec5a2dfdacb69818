package plan

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// UnitDir is where the machine-config daemon writes units and their dropins (<unit>.d/<name>).
const UnitDir = "/etc/systemd/system"

// planUnit plans a unit change the node policy has a unit rule for: the unit file and its dropins
// are written (or removed) in the same file transaction, systemd reloads its unit files, then the
// rule's actions run. Enabling, disabling, masking or removing a unit stays refused: a refresh
// changes files and reloads or restarts what already runs; it never starts, stops or enables a unit
// (the NodeDisruptionPolicy has no action that would say so). reason is non-empty when refused.
func planUnit(c *diff.Change, pol *allowlist.Policy) ([]FileOp, allowlist.Effects, string) {
	rule, ok := pol.UnitRule(c.Unit)
	if !ok {
		return nil, allowlist.Effects{}, refusalReason(c)
	}
	if rule.Reboot {
		return nil, rule.Effects, fmt.Sprintf("unit %s: node policy rule %s says Reboot, and a refresh never reboots", c.Unit, rule.Name)
	}
	if c.NewUnit == nil {
		return nil, rule.Effects, fmt.Sprintf("unit %s removed: a refresh never stops or removes a unit", c.Unit)
	}
	old := types.Unit{Name: c.Unit}
	if c.OldUnit != nil {
		old = *c.OldUnit
	}
	des := *c.NewUnit
	if !sameBool(old.Enabled, des.Enabled) || !sameBool(old.Mask, des.Mask) {
		return nil, rule.Effects, fmt.Sprintf("unit %s: enabling, disabling or masking a unit is not changed by a refresh", c.Unit)
	}
	if why := judgeUnitFile(des); why != "" {
		return nil, rule.Effects, why
	}
	unitPath := path.Join(UnitDir, c.Unit)
	if path.Base(unitPath) != c.Unit || path.Dir(unitPath) != UnitDir {
		return nil, rule.Effects, fmt.Sprintf("unit %s: not a plain unit name", c.Unit)
	}
	var ops []FileOp
	if op, changed := unitFileOp(unitPath, c.Unit, old.Contents, des.Contents); changed {
		ops = append(ops, op)
	}
	oldDropins := map[string]*string{}
	for _, d := range old.Dropins {
		oldDropins[d.Name] = d.Contents
	}
	desDropins := map[string]*string{}
	for _, d := range des.Dropins {
		if why := checkDropinName(d.Name); why != "" {
			return nil, rule.Effects, fmt.Sprintf("unit %s: dropin %q %s", c.Unit, d.Name, why)
		}
		desDropins[d.Name] = d.Contents
	}
	for _, name := range unionNames(oldDropins, desDropins) {
		if why := checkDropinName(name); why != "" {
			return nil, rule.Effects, fmt.Sprintf("unit %s: dropin %q %s", c.Unit, name, why)
		}
		p := path.Join(UnitDir, c.Unit+".d", name)
		if op, changed := unitFileOp(p, c.Unit, oldDropins[name], desDropins[name]); changed {
			ops = append(ops, op)
		}
	}
	eff := rule.Effects
	if len(ops) > 0 {
		// systemd reads unit files only on daemon-reload: always before the rule's actions.
		eff.DaemonReload = true
	}
	for i := range ops {
		ops[i].Action, ops[i].Services = allowlist.Action(firstOr(summary(eff))), nil
	}
	return ops, eff, ""
}

func firstOr(a string, _ []string) string { return a }

// unitFileOp is the write or removal that takes a unit file or dropin from old to des contents.
func unitFileOp(p, unit string, old, des *string) (FileOp, bool) {
	switch {
	case des == nil && old == nil:
		return FileOp{}, false
	case des == nil:
		return FileOp{Path: p, Remove: true, Unit: unit}, true
	case old != nil && *old == *des:
		return FileOp{}, false
	}
	return FileOp{Path: p, Mode: 0o644, Unit: unit, inline: []byte(*des)}, true
}

// checkDropinName accepts a plain file name: no separators, no dot names, no control characters.
func checkDropinName(n string) string {
	if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\\") || len(n) > 255 {
		return "is not a plain file name"
	}
	if strings.ContainsFunc(n, unicode.IsControl) || strings.ContainsRune(n, '\uFFFD') {
		return "contains a control character or invalid UTF-8"
	}
	return ""
}

func sameBool(a, b *bool) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func unionNames(a, b map[string]*string) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
