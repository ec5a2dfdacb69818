package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// A unit's stop or restart job reaches the units that depend on it (systemd's transaction, the
// PROPAGATE_STOP and PROPAGATE_RESTART atoms of unit-dependency-atom.c): those that Requires=,
// Requisite=, BindsTo= or PartOf= it, and those its PropagatesStopTo= (their StopPropagatedFrom=)
// names. Of the settings a payload may set in the unit itself, [Install] RequiredBy= (enabled, the
// named unit Requires= this one) and [Unit] PropagatesStopTo= make another unit follow it;
// [Install] UpheldBy= makes another start it again whenever it stops. [Install] WantedBy= (Wants=)
// propagates neither stop nor restart, and Requires=, BindsTo=, PartOf=, StopPropagatedFrom= in the
// unit make the unit follow the other, never the reverse. A unit the payload makes follow this one
// must be one whose restart the node policy grants: a service a unit rule names (round-7a F1:
// RequiredBy=sysinit.target made the rule's "restart myapp" restart every service through
// sysinit.target, which each requires; kubelet-dependencies.target, kubelet).

// followerWhy says why the unit u may not follow the unit's jobs through key ("" when a unit rule
// not saying Reboot names it).
func followerWhy(key, u string, pol *allowlist.Policy) string {
	if ruledWithoutReboot(pol, u) {
		return ""
	}
	what := "a unit no unit rule names"
	if strings.HasSuffix(u, ".target") {
		what = "a target, which every unit requiring it follows"
	}
	switch key {
	case "UpheldBy":
		return fmt.Sprintf("%s: once the unit is enabled, %s upholds it (starts it again whenever it stops, a removal's stop included), and %s is %s", u, u, u, what)
	case "PropagatesStopTo":
		return fmt.Sprintf("%s: the unit's stop would stop %s, %s", u, u, what)
	}
	return fmt.Sprintf("%s: once the unit is enabled, %s requires it, so the unit's restart or stop restarts or stops %s, %s", u, u, u, what)
}

// ruledWithoutReboot says whether a unit rule not saying Reboot names one of the names.
func ruledWithoutReboot(pol *allowlist.Policy, names ...string) bool {
	if pol == nil {
		return false
	}
	for _, n := range names {
		if r, ok := pol.UnitRule(n); ok && !r.Reboot {
			return true
		}
	}
	return false
}

// checkFollowers: an entry a payload adds to [Install] RequiredBy=/UpheldBy= or [Unit]
// PropagatesStopTo= names only services a unit rule names (and no provisioning unit).
func checkFollowers(c keyCtx) string {
	if why := checkStarts(c); why != "" {
		return why
	}
	for _, u := range c.added() {
		if why := followerWhy(c.key.key, u, c.pol); why != "" {
			return why
		}
	}
	return ""
}

// enableReach says why enabling the unit u (as systemctl enable will read it: judgeLinks passes the
// payload's file and drop-ins over the node's) would make a unit no rule names follow it, or "":
// enabling links every [Install] RequiredBy=/UpheldBy= entry, the node's own unchanged ones too.
func enableReach(u types.Unit, pol *allowlist.Policy) string {
	def, err := unitDefinition(&u, true)
	if err != nil {
		return "" // judgeUnitFile refuses it
	}
	for _, key := range []string{"RequiredBy", "UpheldBy"} {
		k := optKey{"Install", key}
		for _, e := range list(u.Name, def[k]) {
			if why := followerWhy(key, e, pol); why != "" {
				return k.String() + why
			}
		}
	}
	return ""
}

// checkStops refuses stopping a unit (a removal's "stop, disable") that a unit no rule names
// follows in the node's current definition, as the current payload shows it: the stop would stop
// that unit too (a unit RequiredBy=kubelet-dependencies.target, removed, would stop kubelet).
func (p *Plan) checkStops(cur *diff.Payload, pol *allowlist.Policy) {
	if cur == nil {
		return
	}
	for _, s := range p.states {
		if s.Action != allowlist.ActionStop {
			continue
		}
		why := stopReach(s.Unit, cur.Config.Systemd.Units, pol)
		if why == "" {
			if why = p.view.jobSetWhy(s.Unit, allowlist.JobStop, nil); why == "" {
				continue
			}
		}
		p.refuseUnit(s.Unit, "unit "+s.Unit+": stopping it (it leaves the config): "+why)
	}
	p.checkUnneeded()
}

// refuseUnit refuses the plan for the unit's change, with the reason.
func (p *Plan) refuseUnit(unit, reason string) {
	for i := range p.Changes {
		if p.Changes[i].Kind == diff.KindUnit && p.Changes[i].Unit == unit {
			p.Changes[i].Eligible = false
		}
	}
	p.Refused = append(p.Refused, Refusal{Kind: diff.KindUnit, Unit: unit, Reason: reason})
}

// checkUnneeded refuses a refresh that drops a unit's Requires=, Requisite=, Wants=, BindsTo= or
// Upholds= of a unit with StopWhenUnneeded=yes (the payload's unit no longer names it, or leaves
// the config) whose stop the judge refuses: the refresh's daemon-reload makes systemd stop it once
// nothing pulls it in (round 14, c/03). Judged whether or not another unit still pulls it in.
func (p *Plan) checkUnneeded() {
	v := p.view
	for _, name := range slices.Sorted(maps.Keys(v.cur)) {
		before, ok := v.before(name)
		if !ok {
			continue
		}
		var after allowlist.UnitProps
		if v.des[name] != nil {
			after, _ = v.after(name)
		}
		dropped := allowlist.UnitProps{ID: name, Names: []string{name}}
		for _, d := range []struct {
			was, now []string
			to       *[]string
		}{
			{before.Requires, after.Requires, &dropped.Requires}, {before.Requisite, after.Requisite, &dropped.Requisite},
			{before.Wants, after.Wants, &dropped.Wants}, {before.BindsTo, after.BindsTo, &dropped.BindsTo}, {before.Upholds, after.Upholds, &dropped.Upholds}} {
			for _, u := range d.was {
				if !slices.Contains(d.now, u) {
					*d.to = append(*d.to, u)
				}
			}
		}
		if why := v.jobSetWhy(name, allowlist.JobUnneed, &dropped); why != "" {
			p.refuseUnit(name, "unit "+name+": "+why)
		}
	}
}

// stopReach says which unit no rule names the unit name's stop would stop in the current
// definitions units, or "": the unit's own [Install] RequiredBy= (unless it is disabled) and
// PropagatesStopTo=, and every other unit's Requires=, Requisite=, BindsTo=, PartOf= and
// StopPropagatedFrom= naming it or one of its aliases.
func stopReach(name string, units []types.Unit, pol *allowlist.Policy) string {
	names := []string{name}
	for i := range units {
		u := &units[i]
		if u.Name != name || isTrue(u.Mask) {
			continue
		}
		def, err := unitDefinition(u, true)
		if err != nil {
			continue
		}
		names = append(names, list(name, def[optKey{"Install", "Alias"}])...)
		keys := []optKey{{"Unit", "PropagatesStopTo"}}
		if u.Enabled == nil || *u.Enabled { // disabled: no link of its [Install] section
			keys = append(keys, optKey{"Install", "RequiredBy"})
		}
		for _, k := range keys {
			for _, e := range list(name, def[k]) {
				if why := followerWhy(k.key, e, pol); why != "" {
					return k.String() + why
				}
			}
		}
	}
	for i := range units {
		v := &units[i]
		if v.Name == name || isTrue(v.Mask) || followerWhy("", v.Name, pol) == "" {
			continue
		}
		def, err := unitDefinition(v, true)
		if err != nil {
			continue
		}
		for _, key := range []string{"Requires", "Requisite", "BindsTo", "PartOf", "StopPropagatedFrom"} {
			for _, e := range list(v.Name, def[optKey{"Unit", key}]) {
				if slices.Contains(names, e) {
					return fmt.Sprintf("%s has [Unit] %s=%s, so the stop would stop %s, a unit no unit rule names", v.Name, key, e, v.Name)
				}
			}
		}
	}
	return ""
}

// warnAbsentInstallTargets warns, under the node's root, of an enabled unit's [Install]
// WantedBy=/RequiredBy=/UpheldBy= target that neither the node's unit files nor the payload
// define (round 13, units 02: WantedBy=kubelet-dependencies.target on a node that lacks it). As
// systemctl enable does, the refresh makes the link all the same: systemd reports it "destination
// not present" and the executor accepts that notice for the unit's own link; nothing pulls the
// unit in until the node has the target. The dry run says so, as the real run will do it.
func (p *Plan) warnAbsentInstallTargets() {
	v := p.view
	if v == nil || v.node == nil {
		return
	}
	for _, s := range p.states {
		if s.Action != allowlist.ActionEnable {
			continue
		}
		u, err := v.asLoaded(s.Unit, v.des[s.Unit], false)
		if err != nil {
			continue // judgeLinks refuses it
		}
		def, err := unitDefinition(&u, true)
		if err != nil {
			continue
		}
		for _, key := range []string{"WantedBy", "RequiredBy", "UpheldBy"} {
			for _, t := range list(s.Unit, def[optKey{"Install", key}]) {
				if v.des[t] != nil {
					continue
				}
				if _, ok, err := v.node.ReadUnit(t); ok || err != nil {
					continue
				}
				suffix := map[string]string{"WantedBy": ".wants", "RequiredBy": ".requires", "UpheldBy": ".upholds"}[key]
				p.Warnings = append(p.Warnings, fmt.Sprintf("unit %s: [Install] %s=%s: the node has no unit file of %s; enabling links %s%s/%s all the same "+
					"(systemd reports the destination not present, as systemctl enable warns), and nothing pulls the unit in until the node has %s",
					s.Unit, key, t, t, t, suffix, s.Unit, t))
			}
		}
	}
}
