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

// planUnit plans a unit change the node policy has a unit rule for, as the machine-config daemon
// applies one (writeUnits, writeUnit, deleteStaleData in machine-config-operator pkg/daemon): the
// unit file and its dropins are written (or removed) in the same file transaction as every other
// file; then, over D-Bus, a removed unit is stopped and disabled, a unit whose entry says so is
// enabled, disabled, masked or unmasked; systemd reloads its unit files; then the rule's actions
// run (none on a unit that is removed or masked: it cannot run). Each state action carries its undo
// for a rollback. reason is non-empty when refused.
func planUnit(c *diff.Change, pol *allowlist.Policy, v *unitView) ([]FileOp, []UnitAction, allowlist.Effects, string) {
	rule, ok := pol.UnitRule(c.Unit)
	if !ok {
		return nil, nil, allowlist.Effects{}, refusalReason(c)
	}
	refuse := func(format string, args ...any) ([]FileOp, []UnitAction, allowlist.Effects, string) {
		return nil, nil, rule.Effects, fmt.Sprintf("unit %s: ", c.Unit) + fmt.Sprintf(format, args...)
	}
	if rule.Reboot {
		return refuse("node policy rule %s says Reboot, and a refresh never reboots", rule.Name)
	}
	unitPath := path.Join(UnitDir, c.Unit)
	if path.Base(unitPath) != c.Unit || path.Dir(unitPath) != UnitDir {
		return refuse("not a plain unit name")
	}
	old := types.Unit{Name: c.Unit}
	if c.OldUnit != nil {
		old = *c.OldUnit
	}
	removed := c.NewUnit == nil
	des := types.Unit{Name: c.Unit}
	if !removed {
		des = *c.NewUnit
		if why := judgeUnitFile(c.OldUnit, des, pol, v); why != "" {
			return nil, nil, rule.Effects, why
		}
	}
	oldMasked, desMasked := isTrue(old.Mask), isTrue(des.Mask)
	var state []UnitAction
	act := func(a allowlist.Action) {
		state = append(state, UnitAction{Unit: c.Unit, Action: a, Undo: allowlist.Inverse(a)})
	}
	// The unit file itself: gone when removed or masked (the mask is a link where it was).
	desContents := des.Contents
	if desMasked || removed {
		desContents = nil
	}
	oldContents := old.Contents
	if oldMasked {
		oldContents = nil // the link to /dev/null, not a file of the transaction
	}
	switch {
	case removed && oldMasked:
		act(allowlist.ActionUnmask)
	case removed && hasContents(old):
		// Stopped while its definition is still loaded, and its [Install] links removed: a unit
		// whose file is gone must not go on running or be pulled in at boot.
		act(allowlist.ActionStop)
		act(allowlist.ActionDisable)
	case removed:
		// Only dropins on a unit the OS provides: the unit stays; its dropins go.
	case desMasked && !oldMasked:
		if isTrue(des.Enabled) {
			return refuse("a masked unit cannot be enabled")
		}
		act(allowlist.ActionMask)
	case oldMasked && !desMasked:
		if hasContents(des) {
			return refuse("unmasking a unit and writing its file in one refresh is not supported: the transaction never " +
				"replaces the mask's link to /dev/null; unmask it first (mask: false, no contents), then give its contents")
		}
		act(allowlist.ActionUnmask)
	}
	if !removed && !desMasked && !sameBool(old.Enabled, des.Enabled) {
		switch {
		case des.Enabled == nil:
			return refuse("enabled unset: the unit's preset would decide, and a refresh does not apply presets; say enabled: true or false")
		case *des.Enabled:
			act(allowlist.ActionEnable)
		default:
			act(allowlist.ActionDisable)
		}
	}
	for _, a := range state {
		if a.Action != allowlist.ActionStop && a.Action != allowlist.ActionDisable && a.Action != allowlist.ActionMask {
			continue
		}
		if why := allowlist.StopWhy(c.Unit); why != "" {
			// Disabled or masked, it would not start at the next boot either.
			return refuse("a refresh never runs %s on it: it %s", a.Action, why)
		}
	}
	if why := judgeLinks(c.Unit, state, des, v, pol); why != "" {
		return refuse("%s", why)
	}
	if len(state) > 0 {
		if err := allowlist.ActOn(c.Unit); err != nil {
			return refuse("only services are enabled, disabled, masked or stopped by a refresh: %v", err)
		}
	}
	var ops []FileOp
	if op, changed := unitFileOp(unitPath, c.Unit, oldContents, desContents); changed {
		ops = append(ops, op)
	}
	oldDropins := map[string]*string{}
	for _, d := range old.Dropins {
		oldDropins[d.Name] = d.Contents
	}
	desDropins := map[string]*string{}
	for _, d := range des.Dropins {
		if why := checkDropinName(d.Name); why != "" {
			return refuse("dropin %q %s", d.Name, why)
		}
		desDropins[d.Name] = d.Contents
	}
	for _, name := range unionNames(oldDropins, desDropins) {
		if why := checkDropinName(name); why != "" {
			return refuse("dropin %q %s", name, why)
		}
		p := path.Join(UnitDir, c.Unit+".d", name)
		if op, changed := unitFileOp(p, c.Unit, oldDropins[name], desDropins[name]); changed {
			ops = append(ops, op)
		}
	}
	eff := rule.Effects
	if removed && (hasContents(old) || oldMasked) || desMasked {
		// Nothing of a unit that is gone or masked is reloaded or restarted (a unit that was masked
		// and leaves the config is not started either).
		eff.Steps = slices.DeleteFunc(slices.Clone(eff.Steps), func(s allowlist.Step) bool { return s.Unit == c.Unit })
	}
	if len(ops) > 0 || len(state) > 0 {
		// systemd reads unit files and links only on daemon-reload: always before the rule's actions.
		eff.DaemonReload = true
	}
	for i := range ops {
		ops[i].Action, ops[i].Services = allowlist.Action(firstOr(summary(eff))), nil
	}
	return ops, state, eff, ""
}

// judgeLinks says why the unit's enable or disable (or its undo on rollback) may not run, or "":
// systemctl enable and disable read the unit's [Install] section as the manager will load it (its
// fragment and drop-ins: the payload's over the node's own files, under the node's root), and
// follow Also=. The forward action reads the definition the refresh writes; its undo runs once the
// files are back, on the current one.
func judgeLinks(name string, state []UnitAction, des types.Unit, v *unitView, pol *allowlist.Policy) string {
	for _, a := range state {
		if a.Action != allowlist.ActionEnable && a.Action != allowlist.ActionDisable {
			continue
		}
		after, err := v.asLoaded(name, &des, false)
		if err != nil {
			return fmt.Sprintf("the node's files of it cannot be read: %v", err)
		}
		if why := installAlso(name, a.Action, after); why != "" {
			return why
		}
		if a.Action == allowlist.ActionEnable {
			if why := enableReach(after, pol); why != "" {
				return "enabling it: " + why
			}
		}
		if a.Undo == "" {
			continue
		}
		before, err := v.asLoaded(name, nil, true)
		if err != nil {
			return fmt.Sprintf("the node's files of it cannot be read: %v", err)
		}
		if why := installAlso(name, a.Undo, before); why != "" {
			return "undoing it on rollback (the current definition): " + why
		}
	}
	return ""
}

// installAlso says why the action (Enable or Disable) may not run on the unit u, whose [Install]
// Also= names other units, or "": systemctl enable and disable follow Also= (transitively), so
// they would enable or disable those units too. A refresh acts only on the unit its entry names,
// and never follows Also=: a disable's Also=crio-wipe.service would disable a unit the node keeps
// enabled, and the rollback's disable of an enable would do it to an Also= unit that was enabled
// before the refresh. The executor refuses any link EnableUnitFiles makes for another unit (the
// same rule, over D-Bus). An unreadable file names none: judgeUnitFile refuses it.
func installAlso(name string, a allowlist.Action, u types.Unit) string {
	def, err := unitDefinition(&u, true)
	if err != nil {
		return ""
	}
	var other []string
	// Not list: an empty Also= resets nothing (systemd's config_parse_also adds each word, and
	// none for an empty value), so a drop-in's "Also=" leaves the fragment's entries in force.
	for _, v := range def[optKey{"Install", "Also"}] {
		for _, f := range strings.Fields(v) {
			if e := allowlist.ResolveSpecifiers(name, f); e != name && !slices.Contains(other, e) {
				other = append(other, e)
			}
		}
	}
	if len(other) == 0 {
		return ""
	}
	verb := map[allowlist.Action]string{allowlist.ActionEnable: "enable", allowlist.ActionDisable: "disable"}[a]
	return fmt.Sprintf("[Install] Also=%s: to %s it would %s %s too (systemctl follows Also=), and a refresh %ss only the unit its entry names",
		strings.Join(other, " "), verb, verb, strings.Join(other, " "), verb)
}

func isTrue(b *bool) bool { return b != nil && *b }

// hasContents is the daemon's unitHasContent: contents that are not empty.
func hasContents(u types.Unit) bool { return u.Contents != nil && *u.Contents != "" }

func firstOr(a string, _ []string) string { return a }

// unitFileOp is the write or removal that takes a unit file or dropin from old to des contents.
func unitFileOp(p, unit string, old, des *string) (FileOp, bool) {
	switch {
	case des == nil && old == nil:
		return FileOp{}, false
	case des == nil:
		return FileOp{Path: p, Remove: true, Unit: unit, Within: UnitDir + "/"}, true
	case old != nil && *old == *des:
		return FileOp{}, false
	}
	return FileOp{Path: p, Mode: 0o644, Unit: unit, inline: []byte(*des), Within: UnitDir + "/"}, true
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
