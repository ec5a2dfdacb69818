package plan

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// unitFileProps reads what a unit file and its dropins (in order) say about what the unit's jobs do,
// as systemd would read them: list settings accumulate, an empty assignment resets the list, a
// later single value replaces an earlier one. The same allowlist.JudgeUnit the executor applies to
// the properties systemd reports then judges it. An unreadable file is an error.
func unitFileProps(name string, contents *string, dropins []types.Dropin) (allowlist.UnitProps, error) {
	p := allowlist.UnitProps{ID: name, Names: []string{name}, DefaultDependencies: true}
	lists := map[string]*[]string{"Requires": &p.Requires, "Requisite": &p.Requisite, "Wants": &p.Wants,
		"BindsTo": &p.BindsTo, "Upholds": &p.Upholds, "OnSuccess": &p.OnSuccess, "OnFailure": &p.OnFailure,
		"Conflicts": &p.Conflicts, "After": &p.After, "Before": &p.Before, "PropagatesStopTo": &p.PropagatesStopTo,
		"StopPropagatedFrom": &p.StopPropagatedFrom, "PartOf": &p.PartOf, "PropagatesReloadTo": &p.PropagatesReloadTo}
	install := map[string]*[]string{"Alias": &p.Alias, "WantedBy": &p.WantedBy, "RequiredBy": &p.RequiredBy,
		"UpheldBy": &p.UpheldBy}
	single := map[string]*string{"SuccessAction": &p.SuccessAction, "FailureAction": &p.FailureAction,
		"JobTimeoutAction": &p.JobTimeoutAction, "StartLimitAction": &p.StartLimitAction,
		"OnFailureJobMode": &p.OnFailureJobMode, "OnSuccessJobMode": &p.OnSuccessJobMode}
	// What the [Service] section says of how the commands run (allowlist.Execution).
	service := map[string]*string{"StandardInput": &p.StandardInput, "StandardOutput": &p.StandardOutput,
		"StandardError": &p.StandardError, "WorkingDirectory": &p.WorkingDirectory, "RootDirectory": &p.RootDirectory}
	serviceLists := map[string]*[]string{"Environment": &p.Environment, "RuntimeDirectory": &p.RuntimeDirectory,
		"StateDirectory": &p.StateDirectory, "CacheDirectory": &p.CacheDirectory, "LogsDirectory": &p.LogsDirectory,
		"ConfigurationDirectory": &p.ConfigurationDirectory}
	if err := unitTexts(contents, dropins); err != nil {
		return p, err
	}
	// A socket, path or timer starts the service its Unit= names, else the one of its own name.
	trigger := map[string]bool{".socket": true, ".path": true, ".timer": true}[path.Ext(name)]
	if trigger {
		p.Triggers = []string{strings.TrimSuffix(name, path.Ext(name)) + ".service"}
	}
	files := []*string{contents}
	for _, d := range dropins {
		files = append(files, d.Contents)
	}
	accept := false // [Socket] Accept=yes: a connection runs an instance of the socket's template
	// The words of all its Exec*= commands, counted while they are split: a unit past
	// allowlist.MaxExecWords is refused having held no more of them (270 dropins of one long
	// continued line each were split whole, 16 million words, before the bound refused them).
	words := allowlist.MaxExecWords
	for i, f := range files {
		if f == nil {
			continue
		}
		where := ""
		if i > 0 {
			where = "dropin " + dropins[i-1].Name + ": "
		}
		opts, err := allowlist.UnitOptions(*f)
		if err != nil {
			return p, err
		}
		for _, o := range opts {
			switch {
			case o.Section == "Unit" && lists[o.Name] != nil:
				if o.Value == "" {
					*lists[o.Name] = nil
				} else {
					names, err := unitNames(name, o, strings.Fields(strings.ReplaceAll(o.Value, "\\\n", " ")))
					if err != nil {
						return p, err
					}
					*lists[o.Name] = append(*lists[o.Name], names...)
				}
			case trigger && (o.Name == "Unit" && (o.Section == "Path" || o.Section == "Timer") || o.Name == "Service" && o.Section == "Socket"):
				// A socket names its service with Service= (systemd.socket(5)), a path or timer
				// with Unit= (round 11, units 04: a node socket's Service=other.service was read as
				// activating the socket's own name).
				names, err := unitNames(name, o, strings.Fields(o.Value))
				if err != nil {
					return p, err
				}
				p.Triggers = names
			case path.Ext(name) == ".socket" && o.Section == "Socket" && o.Name == "Accept":
				accept = parseBool(o.Value)
			case o.Section == "Unit" && single[o.Name] != nil,
				o.Section == "Service" && legacyServiceActions[o.Name]:
				*single[o.Name] = o.Value
			case (o.Section == "Unit" || o.Section == "Service") && rebootArgs[o.Name]:
				// Only read with a reboot action (refused above), but a judge that cannot say why
				// a unit names a reboot argument refuses it rather than guessing.
				if strings.TrimSpace(o.Value) != "" {
					return p, fmt.Errorf("[%s] %s=%s: the argument of a reboot the manager would do", o.Section, o.Name, o.Value)
				}
			case o.Section == "Unit" && o.Name == "StopWhenUnneeded":
				p.StopWhenUnneeded = parseBool(o.Value)
			case o.Section == "Unit" && o.Name == "DefaultDependencies":
				p.DefaultDependencies = !isFalse(o.Value)
			case o.Section == "Install" && install[o.Name] != nil:
				if o.Value == "" {
					*install[o.Name] = nil
				} else {
					names, err := unitNames(name, o, strings.Fields(o.Value))
					if err != nil {
						return p, err
					}
					*install[o.Name] = append(*install[o.Name], names...)
					if o.Name == "Alias" {
						p.Names = append(p.Names, names...)
					}
				}
			case o.Section == "Service" && service[o.Name] != nil:
				*service[o.Name] = allowlist.ResolveSpecifiers(name, strings.TrimSpace(o.Value))
			case o.Section == "Service" && o.Name == "EnvironmentFile":
				if v := strings.TrimSpace(o.Value); v == "" {
					p.EnvironmentFiles = nil
				} else {
					p.EnvironmentFiles = append(p.EnvironmentFiles, allowlist.ResolveSpecifiers(name, v))
				}
			case o.Section == "Service" && o.Name == "UnsetEnvironment":
				if v := strings.TrimSpace(o.Value); v == "" {
					p.UnsetEnvironment = nil
				} else {
					p.UnsetEnvironment = append(p.UnsetEnvironment, strings.Fields(v)...)
				}
			case o.Section == "Service" && o.Name == "PassEnvironment":
				if v := strings.TrimSpace(o.Value); v == "" {
					p.PassEnvironment = nil
				} else {
					p.PassEnvironment = append(p.PassEnvironment, strings.Fields(v)...)
				}
			case o.Section == "Service" && serviceLists[o.Name] != nil:
				words, err := allowlist.SplitExec(strings.ReplaceAll(o.Value, "\\\n", " "))
				if err != nil || len(words) > 1 {
					// By its length: the line may be the node's (a dropin's Environment=DB_PASS=…),
					// whose values a refusal never shows (adversary r23 c/08).
					return p, fmt.Errorf("%s= (a value of %d bytes, not shown) cannot be read as systemd reads it", o.Name, len(o.Value))
				}
				if len(words) == 0 {
					*serviceLists[o.Name] = nil
				}
				for _, w := range words {
					for _, v := range w {
						*serviceLists[o.Name] = append(*serviceLists[o.Name], allowlist.ResolveSpecifiers(name, v))
					}
				}
			case strings.HasPrefix(o.Name, "Exec") && o.Value != "":
				argvs, err := allowlist.SplitExecUpTo(strings.ReplaceAll(o.Value, "\\\n", " "), words)
				if errors.Is(err, allowlist.ErrTooManyWords) {
					return p, fmt.Errorf("%s%s=: runs commands of more than %d words in all (at most %d): too long to judge", where, o.Name, allowlist.MaxExecWords, allowlist.MaxExecWords)
				}
				if err != nil {
					return p, fmt.Errorf("%s= cannot be judged: %v", o.Name, err)
				}
				for _, argv := range argvs {
					words -= len(argv)
					for i := range argv {
						argv[i] = allowlist.ResolveSpecifiers(name, argv[i])
					}
					p.Exec = append(p.Exec, argv)
					p.ExecKeys = append(p.ExecKeys, o.Name)
				}
			}
		}
	}
	if accept {
		// Round 13 (units 03): each connection runs NAME@NR-LOCAL-REMOTE.service, an instance of
		// the socket's template (Service= is refused with Accept=yes): judged as the service the
		// socket triggers, by its template's file.
		p.Triggers = append(p.Triggers, allowlist.AcceptInstance(name))
	}
	return p, nil
}

// parseBool reads a systemd boolean as true only for its true spellings.
func parseBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "yes", "true", "on", "y", "t":
		return true
	}
	return false
}

// legacyServiceActions are the [Unit] actions systemd still parses in [Service] under their old
// spelling (load-fragment-gperf: Service.FailureAction, Service.StartLimitAction set the unit's).
var legacyServiceActions = map[string]bool{"FailureAction": true, "StartLimitAction": true}

// rebootArgs are the settings that give a reboot action its argument ([Unit] and, legacy, [Service]).
var rebootArgs = map[string]bool{"RebootArgument": true, "JobTimeoutRebootArgument": true}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "no", "false", "off", "n", "f":
		return true
	}
	return false
}

// judgeUnitFile says why the unit, as the desired payload defines it, would stop the system or
// changes what the judge does not model, or "". old is the node's current definition (nil for a
// new unit): the settings that differ from it are the payload's, so its changed Exec lines are
// marked for the exec judge and only modeled settings may change (unitkeys.go).
//
// Under the node's root (v reads the node's files) the unit judged is the unit the manager will
// load: the payload's file and drop-ins with the node's own drop-ins of it (every drop-in
// directory systemd reads: NAME.d in each unit directory, the prefix directories foo-.service.d,
// the type's service.d) and, when the payload gives drop-ins only, the node's unit file; a
// refusal the node's files take part in names them.
func judgeUnitFile(old *types.Unit, u types.Unit, pol *allowlist.Policy, v *unitView) string {
	contents, dropins := u.Contents, u.Dropins
	var def definition
	if v != nil && v.node != nil {
		d, err := v.define(u.Name, &u)
		if err != nil {
			return fmt.Sprintf("unit %s: the node's files of it cannot be read: %v", u.Name, err)
		}
		def, contents, dropins = d, d.fragment, d.dropins
	}
	p, err := unitFileProps(u.Name, contents, dropins)
	if err != nil {
		return fmt.Sprintf("unit %s: %v%s", u.Name, err, def.nodeNote())
	}
	p.Wants = append(p.Wants, def.wants...)
	p.Requires = append(p.Requires, def.requires...)
	p.Upholds = append(p.Upholds, def.upholds...)
	if why := readsAsSystemd(u); why != "" {
		return fmt.Sprintf("unit %s: %s", u.Name, why)
	}
	des, err := unitDefinition(&u, !isTrue(u.Mask))
	if err != nil {
		return fmt.Sprintf("unit %s: not a unit file systemd reads: %v", u.Name, err)
	}
	cur := map[optKey][]string{}
	if old != nil && !isTrue(old.Mask) { // a masked unit loaded nothing of its file or dropins
		if d, err := unitDefinition(old, true); err == nil {
			cur = d
		}
	}
	changed := changedOptions(cur, des)
	now, known := currentProps(u.Name, old, v)
	if !enables(old, u) && known { // enabling links every alias the definition names: all judged then
		p.Alias = slices.DeleteFunc(p.Alias, func(a string) bool { return slices.Contains(now.Alias, a) })
	}
	p.ExecChanged = execChanged(p.ExecKeys, p.Exec, changed)
	p.ExecQuoted = payloadLines(u, p.Exec)
	p.Programs = unitPrograms(u.Name, now, known, pol)
	if known {
		p.OwnWrites = allowlist.OwnWrites(now)
		p.OwnSecrets = allowlist.OwnSecrets(now)
		p.OwnArgs = allowlist.OwnArgs(now)
	}
	if pol != nil {
		p.NeverOwn = pol.NeverOwn()
		p.Managed = pol.ManagedPaths()
	}
	if slices.Contains(p.ExecChanged, true) {
		reads, err := v.unitReads()
		if err != nil {
			return fmt.Sprintf("unit %s: a changed command may write only files no unit reads as root, and the node's unit files cannot all be read to say which: %v", u.Name, err)
		}
		p.NodeReads = reads
	}
	if err := allowlist.JudgeUnit(p); err != nil {
		return fmt.Sprintf("unit %s: %v%s", u.Name, err, def.nodeNote())
	}
	return judgeChangedSettings(u.Name, cur, des, changed, pol)
}

// payloadLines marks the lines of exec whose text the payload's own unit file or drop-ins hold (a
// refusal may quote those; the node's own lines it names by their skeleton only).
func payloadLines(u types.Unit, exec [][]string) []bool {
	own, err := unitFileProps(u.Name, u.Contents, u.Dropins)
	if err != nil {
		return nil
	}
	mine := map[string]bool{}
	for _, argv := range own.Exec {
		mine[strings.Join(argv, "\x00")] = true
	}
	out := make([]bool, len(exec))
	for i, argv := range exec {
		out[i] = mine[strings.Join(argv, "\x00")]
	}
	return out
}

// enables says whether the refresh enables the unit (the payload turns enabled on).
func enables(old *types.Unit, u types.Unit) bool {
	return isTrue(u.Enabled) && (old == nil || !isTrue(old.Enabled))
}

// currentProps is the node's current definition of the unit, what its own aliases, programs,
// writes, secrets and arguments are read from (known false: none, for a unit the payload adds, a
// masked one, or one whose files the judge cannot read). Under the node's root it is the unit as
// the manager loads it now: the current payload's files over the node's, so a payload that ships
// drop-ins only is judged with the node's unit file (adversary r18 c/02: the current payload's
// drop-ins alone named none of the programs the unit runs). Without the node's root, the current
// payload's unit.
//
// The aliases: the [Install] Alias= names of this definition are the node's own links (the cri-o
// package's crio.service: Alias=cri-o.service), which a refresh that does not enable the unit does
// not add, so JudgeUnit judges only the aliases the payload adds (adversary r18 c/01).
func currentProps(name string, old *types.Unit, v *unitView) (allowlist.UnitProps, bool) {
	var contents *string
	var dropins []types.Dropin
	if old != nil && !isTrue(old.Mask) {
		contents, dropins = old.Contents, old.Dropins
	}
	if v != nil && v.node != nil {
		d, err := v.define(name, old)
		if err != nil || d.masked {
			return allowlist.UnitProps{}, false
		}
		contents, dropins = d.fragment, d.dropins
	}
	if contents == nil && len(dropins) == 0 {
		return allowlist.UnitProps{}, false
	}
	cp, err := unitFileProps(name, contents, dropins)
	return cp, err == nil
}

// unitPrograms are the programs a changed Exec line of the unit may run besides the modeled ones:
// those the node's current definition of the unit runs (now, when known) and those the node
// policy grants it.
func unitPrograms(name string, now allowlist.UnitProps, known bool, pol *allowlist.Policy) []string {
	var out []string
	if known {
		out = allowlist.OwnPrograms(now.Exec)
	}
	if pol != nil {
		out = append(out, pol.UnitPrograms[name]...)
	}
	return out
}

// readsAsSystemd says which of the unit's texts the judge would read differently from systemd, or "".
func readsAsSystemd(u types.Unit) string {
	if u.Contents != nil {
		if why := readsAsSystemdReads(*u.Contents); why != "" {
			return "the unit file reads differently to systemd than to the judge: " + why
		}
	}
	for _, d := range u.Dropins {
		if d.Contents != nil {
			if why := readsAsSystemdReads(*d.Contents); why != "" {
				return fmt.Sprintf("dropin %s reads differently to systemd than to the judge: %s", d.Name, why)
			}
		}
	}
	return ""
}

// checkActedUnits refuses an action on a unit that may not be acted on (ActOn), or whose definition
// in the desired payload makes a job on it stop the system: what the executor would refuse once it
// reads the unit's properties, the plan refuses first.
//
// Then every unit a job on an acted-on unit reaches (what its start pulls in, transitively, what
// follows its restart, stop or reload) is judged by what it is (allowlist.JudgeStartSet), read
// as the view defines it: the payload's units, the node's under its root. The executor judges the
// same set from what the manager reports.
func (p *Plan) checkActedUnits(cur, des *diff.Payload, pol *allowlist.Policy, v *unitView) {
	defined, current := map[string]types.Unit{}, map[string]*types.Unit{}
	if des != nil {
		for _, u := range des.Config.Systemd.Units {
			defined[u.Name] = u
		}
	}
	if cur != nil {
		for _, u := range cur.Config.Systemd.Units {
			current[u.Name] = &u
		}
	}
	seen := map[string]bool{}
	var acted []string
	defer func() {
		if len(acted) > 0 && v.node == nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("units judged from the payloads alone (no node root): the node's own drop-ins of "+
				"%s and the node's units their jobs reach (what they Wants=, Requires=, BindsTo=, Upholds=, OnSuccess=, OnFailure=, "+
				"what follows their restart, stop or reload) are not seen here, only the names the payload gives; apply, also with "+
				"--dry-run, reads them from the node and asks its manager", strings.Join(acted, ", ")))
		}
		if len(v.unread) > 0 {
			p.Warnings = append(p.Warnings, "node units judged by their names only, their files unreadable: "+strings.Join(v.unread, "; "))
		}
	}()
	for _, s := range p.steps {
		if seen[s.Unit] || s.Action == allowlist.ActionNone {
			continue
		}
		seen[s.Unit] = true
		reason := ""
		if err := allowlist.ActOn(s.Unit); err != nil {
			reason = fmt.Sprintf("%s %s: %v", s.Action, s.Unit, err)
		} else if u, ok := defined[s.Unit]; ok {
			reason = judgeUnitFile(current[s.Unit], u, pol, v)
		}
		if reason == "" {
			var props *allowlist.UnitProps
			reason, props = v.startSetWhy(s.Unit)
			if v.des[s.Unit] != nil {
				acted = append(acted, s.Unit)
			}
			if props != nil && v.des[s.Unit] != nil {
				if p.planned == nil {
					p.planned = map[string]allowlist.UnitProps{}
				}
				p.planned[s.Unit] = *props
			}
		}
		if reason != "" {
			p.Changes = append(p.Changes, Change{Kind: diff.KindUnit, Op: diff.OpModify, Unit: s.Unit, Detail: "a unit the refresh would act on"})
			p.Refused = append(p.Refused, Refusal{Kind: diff.KindUnit, Unit: s.Unit, Reason: reason})
		}
	}
}

// unitNames resolves the specifiers in the unit names a dependency or [Install] setting lists, as
// systemd does when it loads the unit (and systemctl enable for [Install]): Upholds=systemd-halt%i.service
// in a unit that is no instance names systemd-halt.service, and is judged as that. A name with a
// specifier the judge does not resolve is refused: it cannot say which unit it is.
func unitNames(unitName string, o *unit.UnitOption, fields []string) ([]string, error) {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		r := allowlist.ResolveSpecifiers(unitName, f)
		if strings.Contains(r, "%") {
			return nil, fmt.Errorf("[%s] %s=%s: a unit named with a specifier the judge does not resolve", o.Section, o.Name, f)
		}
		out = append(out, r)
	}
	return out, nil
}

// startSetWhy says why a unit a job on the acted-on unit reaches would stop the system, or "",
// and the acted-on unit's properties as the view defines it (nil: nothing defines it, or masked).
func (v *unitView) startSetWhy(name string) (string, *allowlist.UnitProps) {
	d, err := v.define(name, v.des[name])
	if err != nil {
		v.unread = append(v.unread, fmt.Sprintf("%s (%v)", name, err))
		return "", nil
	}
	if !d.known || d.masked || d.fragment == nil {
		return "", nil
	}
	p, err := v.props(d)
	if err != nil {
		if v.des[name] == nil {
			v.unread = append(v.unread, fmt.Sprintf("%s (%v)", name, err))
		}
		return "", nil // the payload's unit is refused by judgeUnitFile
	}
	p.ID, p.Names = name, []string{name}
	v.withDependents(&p)
	refusal, err := allowlist.JudgeStartSet(p, v.load)
	if err != nil {
		v.unread = append(v.unread, fmt.Sprintf("%s (%v)", name, err))
		return "", &p
	}
	if refusal != nil {
		return "unit " + refusal.Error(), &p
	}
	return "", &p
}

// before is the unit as the node loads it now, before the refresh (the current payload's files over
// the node's), with the dependencies its node links add; ok is false when nothing defines it, it is
// masked, or it cannot be read (judged where it is written).
func (v *unitView) before(name string) (allowlist.UnitProps, bool) {
	return (&unitView{node: v.node, cur: v.cur, des: v.cur}).after(name)
}

// after is the unit as the node will load it after the refresh (see before).
func (v *unitView) after(name string) (allowlist.UnitProps, bool) {
	d, err := v.define(name, v.des[name])
	if err != nil || !d.known || d.masked || d.fragment == nil && len(d.dropins) == 0 {
		return allowlist.UnitProps{}, false
	}
	p, err := v.props(d)
	if err != nil {
		return allowlist.UnitProps{}, false
	}
	p.ID, p.Names = name, []string{name}
	return p, true
}

// jobSetWhy says why the job (a stop of the unit as the node loads it before the refresh, or the
// dropped dependencies p names) reaches a unit the judge refuses, or "" (allowlist.JudgeJobSet, the
// units it reaches read as the view defines them after the refresh).
func (v *unitView) jobSetWhy(name string, job allowlist.Job, p *allowlist.UnitProps) string {
	if p == nil {
		q, ok := v.before(name)
		if !ok {
			return ""
		}
		v.withDependents(&q)
		p = &q
	}
	refusal, err := allowlist.JudgeJobSet(*p, job, v.load)
	if err != nil {
		v.unread = append(v.unread, fmt.Sprintf("%s (%v)", name, err))
		return ""
	}
	if refusal != nil {
		return strings.TrimPrefix(refusal.Error(), p.ID+": ")
	}
	return ""
}

// nodeNote names the node's files a definition takes from the node, for a refusal ("" when none).
func (d definition) nodeNote() string {
	if len(d.nodeFiles) == 0 {
		return ""
	}
	return " (the unit as the node's manager will load it, with the node's " + strings.Join(d.nodeFiles, ", ") + ")"
}

// PlannedUnit is the unit as the refresh writes it (the desired payload's file and drop-ins, with
// the node's drop-ins under the node's root), for a unit the plan acts on that the payload
// defines: the dry run asks the node's manager about the units its jobs will reach before the
// manager has loaded it.
func (p *Plan) PlannedUnit(name string) (allowlist.UnitProps, bool) {
	u, ok := p.planned[name]
	return u, ok
}

// unitTexts refuses a unit whose file and dropins together are beyond diff.CheckUnitTexts, before
// any of them is lexed.
func unitTexts(contents *string, dropins []types.Dropin) error {
	texts := make([]*string, len(dropins))
	for i, d := range dropins {
		texts[i] = d.Contents
	}
	return diff.CheckUnitTexts(contents, texts)
}
