package allowlist

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// A job on a unit runs more than that unit (systemd's transaction, unit-dependency-atom.c): its
// start or restart pulls in every unit its Requires=, Wants=, BindsTo= and Upholds= name (and
// theirs, transitively: PULL_IN_START), its end starts OnSuccess=/OnFailure=, a socket, path or
// timer it pulls in triggers its service; its restart try-restarts and its stop stops the units
// that follow it (PROPAGATE_RESTART, PROPAGATE_STOP: those that Requires=, BindsTo= or PartOf= it,
// its PropagatesStopTo=), its reload reloads its PropagatesReloadTo=. Each of those units acts as
// what it is: a helper whose SuccessAction= is reboot reboots the node when a refresh's restart
// pulls it in, whatever it is called. JudgeStartSet judges every unit a job would reach by what it
// is (JudgeStarted), reading each through load: over D-Bus the properties the manager reports
// (actions.Systemd), in a plan the unit files the payload and the node's root give (plan).

// MaxStartSet bounds the units judged for one unit acted on: a start set larger than that is
// refused (too large to judge), never judged in part.
const MaxStartSet = 256

// bootReached are the targets a running node has normally reached at boot: the boot's own targets
// (but graphical.target, which a node whose default.target is multi-user.target, every RHCOS node,
// never reaches), systemd.special(7)'s synchronization points and the MCO's
// kubelet-dependencies.target. The name says nothing of the state: a start of one that is not
// active pulls in what it wants like any other unit (round 13, units 01: graphical.target, inactive,
// pulled in graphical.target.wants/vendor-boom.service, SuccessAction=exit-force). JudgeStartSet
// follows them; a reader that knows no state (the plan) presumes them running only to judge what
// they reach by what it does (presumedRunning).
var bootReached = []string{"sysinit.target", "basic.target", "multi-user.target", "local-fs.target", "local-fs-pre.target", "remote-fs.target",
	"remote-fs-pre.target", "swap.target", "cryptsetup.target", "cryptsetup-pre.target", "remote-cryptsetup.target",
	"veritysetup.target", "remote-veritysetup.target", "integritysetup.target", "paths.target", "sockets.target",
	"timers.target", "slices.target", "network.target", "network-pre.target", "network-online.target",
	"nss-lookup.target", "nss-user-lookup.target", "time-set.target", "time-sync.target", "getty.target",
	"getty-pre.target", "kubelet-dependencies.target", "system.slice"}

// impliedActive are the units a reader that knows no state (the plan) may take as active, from
// what the manager is, not from their names' place in a list: the perpetual root slice and mount
// (the manager never stops them), and sysinit.target, which every service of the system manager
// Requires= (DefaultDependencies=yes: the acted-on unit's own start pulls it in, as every start of
// kubelet, crio or the agent's own peer does), and local-fs.target, which sysinit.target wants and
// whose failure isolates emergency.target (OnFailure=, replace-irreversibly): a node that runs its
// services reached both. The reader that knows the state (the manager, over D-Bus: the dry run and
// the real run) follows them when they are not active, as any other unit.
var impliedActive = []string{"-.slice", "-.mount", "sysinit.target", "local-fs.target"}

// presumedRunning says whether a reader that knows no unit's state presumes the (canonical) unit
// running: a target a running node has normally reached (bootReached) or one of the essentials
// (alwaysActive). The walk follows it all the same; what it reaches is judged by what it does.
func presumedRunning(c string) bool {
	return slices.Contains(bootReached, identityOf(c)) || alwaysActive(c)
}

// alwaysActive says whether the (canonical) unit is one a running node always runs: the manager's
// essentials (dbus, journald, udevd, logind …) and the node's (crio, kubelet, NetworkManager,
// sshd, chronyd, resolved, Open vSwitch), as themselves or by an alias.
func alwaysActive(c string) bool {
	c = identityOf(c)
	return denied(neverActedOn, c) || slices.ContainsFunc(essential, func(e string) bool { return strings.EqualFold(e, c) })
}

// StartedUnit is a unit a job reaches, as load reads it.
type StartedUnit struct {
	Props UnitProps
	// Known says the unit could be read (a unit neither the manager nor the files know is judged
	// by its name only: a start of it fails).
	Known bool
	// Active says the unit is active now (over D-Bus): a start of it pulls in nothing, and it runs
	// nothing, so only a follower (restarted, stopped) is judged and followed further.
	Active bool
	// StateKnown says the reader knows the unit's state (the manager reported its ActiveState):
	// then Active alone ends the walk. A reader that does not (the plan, from the unit files)
	// follows every unit but the impliedActive ones.
	StateKnown bool
	// Masked says the unit is masked: a job on it fails, it runs nothing.
	Masked bool
}

// Job is the kind of job systemd runs on a unit the walk reaches (transaction.c,
// transaction_add_job_and_dependencies): a start pulls in what the unit's Requires=, Wants=,
// BindsTo=, Upholds= name and stops what it Conflicts= with and what Conflicts= with it (systemd
// makes Conflicts= symmetric: ConflictedBy); a restart is a stop and a start, and try-restarts
// the units that follow it (RequiredBy, RequisiteOf, BoundBy, ConsistsOf: PROPAGATE_RESTART) and
// stops its PropagatesStopTo=; a stop stops all of those (PROPAGATE_STOP), starts its
// OnSuccess=/OnFailure= as it ends, fires its SuccessAction=/FailureAction=, runs its ExecStop*=,
// and stops what it pulled in that has StopWhenUnneeded=yes.
type Job int

const (
	// JobRestart is a restart (or reload) of the unit: judged as a stop and a start.
	JobRestart Job = iota
	// JobStop is a stop of the unit.
	JobStop
	// JobUnneed is the refresh dropping the unit's dependencies (the p given names only those it
	// drops: a daemon-reload after which the unit no longer pulls them in): each with
	// StopWhenUnneeded=yes is stopped.
	JobUnneed
	// jobStart is a start of a unit the walk reaches.
	jobStart
)

// verb names the job in a refusal.
func (j Job) verb() string {
	return map[Job]string{JobRestart: "restarting", JobStop: "stopping", JobUnneed: "dropping a dependency of", jobStart: "starting"}[j]
}

// JudgeStartSet judges the units a restart (or reload) of the unit p reaches: JudgeJobSet with
// JobRestart.
func JudgeStartSet(p UnitProps, load func(name string) (StartedUnit, error)) (refusal, err error) {
	return JudgeJobSet(p, JobRestart, load)
}

// JudgeJobSet judges the units a job of the kind on the unit p (already judged with JudgeUnit)
// reaches, transitively, reading each through load (an error is no refusal: the caller says what
// it could not read): a unit started or restarted with JudgeStarted, a unit stopped with
// judgeStopped. It returns the first refusal, naming the chain of units through which the job
// reaches it, or nil.
func JudgeJobSet(p UnitProps, job Job, load func(name string) (StartedUnit, error)) (refusal, err error) {
	type item struct {
		name, via string
		job       Job
		// own says the unit is one the acted-on unit's start pulls in itself (its own Wants=,
		// Requires=, …): judged by name where it is written (reachedAs), not here.
		own bool
		// presumed says the unit is reached only through a unit the reader presumes running
		// without knowing its state (presumedRunning): judged by what it declares the manager
		// does (startedNotExec), its identity (a provisioning unit) and its commands left to the
		// reader that knows the state, which follows the presumed unit only when it is not active.
		presumed bool
		// unneeded says the unit is stopped only if it has StopWhenUnneeded=yes: a stopped unit
		// pulled it in (check_unneeded_dependencies).
		unneeded bool
	}
	type key struct {
		unit     string
		job      Job
		unneeded bool
	}
	// seen: 1 judged as presumed only, 2 judged in full (a unit reached both ways is judged in full).
	seen := map[key]int{}
	for _, j := range []Job{JobRestart, JobStop, JobUnneed, jobStart} {
		seen[key{canonUnit(p.ID), j, false}] = 2
		for _, n := range p.Names {
			seen[key{canonUnit(n), j, false}] = 2
		}
	}
	var queue []item
	push := func(from UnitProps, via string, job Job, own, presumed bool) {
		by := job.verb() + " " + from.ID
		for _, e := range jobEdges(from, job) {
			next := item{name: e.unit, job: e.job, own: own && e.job == jobStart, presumed: presumed, unneeded: e.unneeded}
			dep := e.key + "=" + e.unit
			if e.reverse {
				dep = e.key + "=" + from.ID
			}
			if e.unneeded {
				dep += ", if it has StopWhenUnneeded=yes"
			}
			switch {
			case e.job == jobStart:
				next.via = via + " " + dep
			case e.key == "is followed by" || e.key == "PropagatesReloadTo":
				next.via = via + " " + e.key + " " + e.unit
			default:
				next.via = fmt.Sprintf("%s %s %s %s (%s)", via, by, map[Job]string{JobStop: "stops", JobRestart: "restarts"}[e.job], e.unit, dep)
			}
			queue = append(queue, next)
		}
	}
	push(p, p.ID+":", job, true, false)
	judged := 0
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		c := canonUnit(it.name)
		level := 2
		if it.presumed {
			level = 1
		}
		k := key{c, it.job, it.unneeded}
		if seen[k] >= level {
			continue
		}
		if seen[k] == 0 {
			if judged++; judged > MaxStartSet {
				return fmt.Errorf("a job on it reaches more than %d units (%s): too many to judge, refused rather than judged in part", MaxStartSet, it.via), nil
			}
		}
		seen[k] = level
		u, err := load(it.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.via, err)
		}
		if it.job == JobStop {
			if it.unneeded && !u.Props.StopWhenUnneeded {
				continue // needed or not, systemd leaves it running
			}
			if !u.Known || u.Masked || u.StateKnown && !u.Active {
				continue // not running: its stop does nothing
			}
			if err := judgeStopped(it.name, u.Props, it.presumed); err != nil {
				return fmt.Errorf("%s, whose %v", it.via, err), nil
			}
			push(u.Props, it.via, JobStop, false, it.presumed || !u.StateKnown && presumedRunning(c))
			continue
		}
		if it.job == JobRestart && u.StateKnown && !u.Active {
			continue // a try-restart of a unit that is not running does nothing (job_type_collapse)
		}
		if it.job == jobStart && !u.StateKnown && slices.Contains(impliedActive, identityOf(c)) {
			continue // active on a node that runs its services (impliedActive); the manager says
		}
		if !it.own && !it.presumed {
			if err := reachedIdentity(it.name, u); err != nil {
				return fmt.Errorf("%s: %v (reached through the node's units: a job the refresh runs would start it)", it.via, err), nil
			}
		}
		if !u.Known || u.Masked {
			if err := startedName(it.name); err != nil {
				return fmt.Errorf("%s: %v", it.via, err), nil
			}
			continue
		}
		if !it.presumed {
			if err := reachedAs(it.name, u.Props); err != nil {
				return fmt.Errorf("%s: %v", it.via, err), nil
			}
		}
		if it.job == jobStart && u.StateKnown && u.Active {
			// Started already: its start runs and pulls in nothing (systemd drops the redundant
			// job with what only it pulled in). Only the manager's word ends the walk here.
			continue
		}
		for _, n := range u.Props.Names {
			if nk := (key{canonUnit(n), it.job, false}); seen[nk] < level {
				seen[nk] = level
			}
		}
		judge := JudgeStarted
		if alwaysActive(c) || slices.ContainsFunc(u.Props.Names, func(n string) bool { return alwaysActive(canonUnit(n)) }) {
			// One of the essentials (crio, ovsdb-server, dbus …), started because the manager
			// reports it inactive or the reader knows no state: its own commands are the node's
			// essential's (ovsdb-server's EnvironmentFile=-/run/openvswitch.useropts, dbus's
			// ReloadConfig), run by every boot; its names, job-end actions, dependencies and
			// conflicts are judged, and what it pulls in is followed.
			judge = startedNotExec
		}
		if it.presumed {
			// Behind a unit the reader presumes running (the plan: no state): run again only if
			// that unit is not active, which the manager decides (the dry run and the real run
			// follow it then, and judge this unit in full). What it declares the manager does
			// (its names, job-end actions, what it pulls in by name, its conflicts) is judged
			// here; its commands, the node's boot's own (nodeip-configuration's podman run
			// with /etc/systemd/system mounted, its systemctl daemon-reload), are not.
			judge = startedNotExec
		}
		if err := judge(u.Props); err != nil {
			if why := err.Error(); strings.HasPrefix(why, "unit ") {
				return fmt.Errorf("%s: %s", it.via, why), nil
			}
			return fmt.Errorf("%s: %s %v", it.via, u.Props.ID, err), nil
		}
		presumed := it.presumed || !u.StateKnown && presumedRunning(c)
		push(u.Props, it.via, it.job, false, presumed)
	}
	return nil, nil
}

// judgeStopped says why the stop of the unit (as name reaches it; p as load read it) may not be a
// side effect of a refresh's job, or nil: what its stop does, as the explicit stop of a unit is
// judged. It may not cut the node off or leave the boot's state (stopWhy); the actions its end makes
// the manager take (SuccessAction=, FailureAction=, JobTimeoutAction=) are refused; what its end
// starts (OnSuccess=, OnFailure=) is judged by name here and walked as a start; its ExecStop= and
// ExecStopPost= lines are judged as a unit's own commands (judgeExecution), but behind a unit the
// reader presumes running (presumed: the manager's walk judges them when it follows it).
func judgeStopped(name string, p UnitProps, presumed bool) error {
	for _, n := range append([]string{name, p.ID}, p.Names...) {
		if n == "" {
			continue
		}
		if why := stopWhy(canonUnit(n)); why != "" {
			return fmt.Errorf("stop %s", why)
		}
	}
	for _, a := range []struct{ key, v string }{{"SuccessAction", p.SuccessAction}, {"FailureAction", p.FailureAction},
		{"JobTimeoutAction", p.JobTimeoutAction}} {
		if v := strings.TrimSpace(a.v); v != "" && v != "none" {
			return fmt.Errorf("%s=%s makes the manager %s as it stops", a.key, v, v)
		}
	}
	q := UnitProps{ID: p.ID, Names: p.Names, OnSuccess: p.OnSuccess, OnFailure: p.OnFailure, Execution: p.Execution}
	q.ExecKeys, q.ExecChanged = nil, nil
	if !presumed {
		for i, k := range p.ExecKeys {
			if strings.HasPrefix(k, "ExecStop") && i < len(p.Exec) {
				q.Exec = append(q.Exec, p.Exec[i])
				q.ExecKeys = append(q.ExecKeys, k)
				if i < len(p.ExecChanged) {
					q.ExecChanged = append(q.ExecChanged, p.ExecChanged[i])
				}
			}
		}
	} else {
		q.Execution = Execution{OnFailureJobMode: p.OnFailureJobMode, OnSuccessJobMode: p.OnSuccessJobMode}
	}
	if err := dependencyNames(q); err != nil {
		return err
	}
	q.ExecQuoted = make([]bool, len(q.Exec)) // a stopped unit's lines: by their skeleton (adversary r24 c/05)
	if err := judgeExecution(q); err != nil {
		return fmt.Errorf("stop runs what the judge refuses: %v", err)
	}
	return nil
}

// StopWhy is stopWhy for a unit a refresh acts on itself: the plan refuses to stop, disable or mask
// what a job must not stop as a side effect either (adversary r16 c/06: removing kubelet.service
// from the payload planned its Stop and Disable, while stopping it through a dependency was refused).
func StopWhy(unit string) string { return stopWhy(unit) }

// stopWhy says why stopping the (canonical) unit takes from the node what keeps it running, or "":
// an essential (crio, kubelet, dbus, journald …), a target a running node has reached or one of the
// boot's targets, or a unit whose stop unmounts, kills or detaches (a mount, automount, swap,
// device, slice or scope). A service, socket, path, timer or other target stops only itself.
func stopWhy(c string) string {
	switch kind := path.Ext(c); kind {
	case ".mount", ".automount", ".swap", ".device", ".slice", ".scope":
		return fmt.Sprintf("would stop %s, a %s unit (its stop unmounts, kills or detaches what the node runs on)", c, strings.TrimPrefix(kind, "."))
	}
	if alwaysActive(c) || presumedRunning(c) || slices.Contains(bootTargets, identityOf(c)) {
		return fmt.Sprintf("would stop %s, which keeps the node running", c)
	}
	return ""
}

// reachedIdentity says why a unit a job reaches through another unit (a node unit's Wants=,
// Requires=, BindsTo=, Upholds=, OnSuccess=, OnFailure=, drop-ins and .wants/ links, the service
// a socket, path or timer triggers, a follower of the restart or stop), not by the acted-on
// unit's own dependency, must not be reached: judged as a dependency a payload adds
// (DependencyIdentity), by the name it is reached by and every name it loads as (its Id and
// Names), whatever its state (round 11, units 03: a payload's Wants=helper.service, a node unit
// with Wants=crio-wipe.service, ran crio-wipe). One hop through a unit the node has is no way
// around the rule the payload's own entries are judged by. The always-running essentials (dbus,
// journald, crio, kubelet …) are not judged by it (a start of one runs the unit itself, no set-up);
// what they reach is (JudgeStartSet follows them unless the manager reports them active). The
// acted-on unit's own dependencies, as
// the node writes them, stay the node's (crio.service's Requires=crio-wipe.service: a restart of
// crio runs it as every restart of crio does); the plan judges the entries a payload adds.
func reachedIdentity(name string, u StartedUnit) error {
	names := []string{name}
	if u.Known {
		names = append(names, u.Props.ID)
		names = append(names, u.Props.Names...)
	}
	for _, n := range names {
		if n == "" || alwaysActive(canonUnit(n)) {
			return nil // an essential (as itself or by an alias): running, its start runs nothing
		}
	}
	for _, n := range names {
		if n == "" || n != name && unitNameShape(n, true) != nil {
			continue // a name's shape (a D-Bus alias the judge cannot resolve) says nothing of the unit
		}
		if err := DependencyIdentity(n); err != nil {
			if canonUnit(n) != canonUnit(name) {
				return fmt.Errorf("%v (%s loads it: a link)", err, name)
			}
			return err
		}
	}
	return nil
}

// reachedAs says why a unit reached by the name must not be reached, when the name passes
// DependencyIdentity but the unit it loads (its Id, or any of its Names, as the manager reports
// them or the node's files define it) does not: a link the plan could not see (round 11, units 01:
// vendor-wipe.service, a link to crio-wipe.service in a load directory the plan did not read, was
// started by the real run). Judged whatever the unit's state, as the plan judges a name. A name
// DependencyIdentity refuses itself is where it is written: a payload may not add it (the plan),
// and the node keeps its own (crio.service's Requires=crio-wipe.service).
func reachedAs(name string, p UnitProps) error {
	if DependencyIdentity(name) != nil {
		return nil
	}
	for _, n := range append([]string{p.ID}, p.Names...) {
		if n == "" || canonUnit(n) == canonUnit(name) || unitNameShape(n, true) != nil {
			continue // a name's shape (a D-Bus alias the judge cannot resolve) says nothing of the unit
		}
		if err := DependencyIdentity(n); err != nil {
			return fmt.Errorf("%v (%s loads it: a link)", err, name)
		}
	}
	return nil
}

type edge struct {
	key, unit string
	job       Job
	// reverse says the dependency is the other unit's (it names this one: BindsTo= of it).
	reverse, unneeded bool
}

// jobEdges are the jobs a job of the kind on the unit adds to its transaction.
func jobEdges(p UnitProps, job Job) []edge {
	var out []edge
	if job == JobUnneed {
		return unneededEdges(p)
	}
	add := func(key string, list []string, j Job, reverse bool) {
		for _, u := range list {
			if j == JobStop && key == "Conflicts" && slices.Contains(conflictOK, u) {
				continue // what every unit conflicts with: never running on a node that runs its services
			}
			out = append(out, edge{key: key, unit: u, job: j, reverse: reverse})
		}
	}
	if job != JobStop {
		// Its start: what it pulls in or its end starts, and what it stops.
		for _, d := range []struct {
			key  string
			list []string
		}{{"Requires", p.Requires}, {"Wants", p.Wants}, {"BindsTo", p.BindsTo}, {"Upholds", p.Upholds},
			{"OnSuccess", p.OnSuccess}, {"OnFailure", p.OnFailure}, {"Triggers", p.Triggers}} {
			add(d.key, d.list, jobStart, false)
		}
		add("Conflicts", p.Conflicts, JobStop, false)
		add("Conflicts", p.ConflictedBy, JobStop, true)
	}
	if job == jobStart {
		return out
	}
	// Its stop (a restart's too): the units that follow it, restarted with a restart, stopped with a stop.
	follow := JobRestart
	if job == JobStop {
		follow = JobStop
		add("OnSuccess", p.OnSuccess, jobStart, false)
		add("OnFailure", p.OnFailure, jobStart, false)
	}
	if follow == JobRestart {
		add("is followed by", p.Followers, follow, false)
	} else {
		add("Requires", p.Followers, follow, true)
	}
	add("Requisite", p.RequisiteOf, follow, true)
	add("BindsTo", p.BoundBy, follow, true)
	add("PartOf", p.ConsistsOf, follow, true)
	add("PropagatesStopTo", p.PropagatesStopTo, JobStop, false)
	if job == JobRestart {
		add("PropagatesReloadTo", p.PropagatesReloadTo, JobRestart, false)
		return out
	}
	return append(out, unneededEdges(p)...)
}

// unneededEdges: the units the unit pulls in, each stopped if it has StopWhenUnneeded=yes once
// the unit no longer needs it (systemd's check_unneeded_dependencies, as the unit stops, and the
// queue a daemon-reload runs).
func unneededEdges(p UnitProps) []edge {
	var out []edge
	for _, d := range []struct {
		key  string
		list []string
	}{{"Requires", p.Requires}, {"Requisite", p.Requisite}, {"Wants", p.Wants}, {"BindsTo", p.BindsTo}, {"Upholds", p.Upholds}} {
		for _, u := range d.list {
			out = append(out, edge{key: d.key, unit: u, job: JobStop, unneeded: true})
		}
	}
	return out
}

// AcceptInstance is the unit an Accept=yes socket runs for a connection, as the start set judges
// it: an instance of the template named for the socket (helper.socket: helper@.service;
// systemd.socket(5): Service= is refused with Accept=yes), with the instance "0" standing for the
// connection's (systemd names it NR-LOCAL-REMOTE). Its template's file is what the instance runs:
// SuccessAction=, Conflicts=, its commands, what it pulls in, judged as an instance a payload names.
func AcceptInstance(socket string) string {
	stem := strings.TrimSuffix(socket, path.Ext(socket))
	if at := strings.IndexByte(stem, '@'); at >= 0 {
		stem = stem[:at] // an instance of a socket template: the service template is the stem's
	}
	return stem + "@0.service"
}

// startedName judges a unit a job reaches that cannot be read: by its name.
func startedName(n string) error {
	if err := stopsSystem(n); err != nil {
		return err
	}
	if k := path.Ext(canonUnit(n)); (k == ".mount" || k == ".automount" || k == ".swap") && !presumedRunning(canonUnit(n)) && !slices.Contains(impliedActive, identityOf(canonUnit(n))) {
		// A mount a job starts shows its What= over what the node's programs read at its Where=
		// (etc-crio.mount bound over /etc/crio), a swap takes memory: neither is a refresh's
		// (adversary r23 a/04). One already active is not started (the executor's walk stops there).
		return fmt.Errorf("starting %s would mount or swap what the judge does not see: a refresh never mounts", n)
	}
	return unsafeInstance(n)
}

// JudgeStarted says why a unit a job on an acted-on unit would start, restart or stop along with
// it would stop the system, or nil: judged by what it is, as JudgeUnit judges the unit acted on,
// but for what only an acted-on unit must be (a service, not named by a policy's deny lists: a
// node's own target, socket or provisioning unit may be pulled in): its names (an alias of a unit
// that stops the system), the actions its jobs' end makes the manager take (SuccessAction=,
// FailureAction=, JobTimeoutAction=, StartLimitAction=), what it pulls in by name, what its start
// stops (Conflicts=), and its commands and how they run (judgeExecution: the node's own lines).
func JudgeStarted(p UnitProps) error {
	if p.ExecQuoted == nil {
		// A unit a job reaches is the node's or the payload's as it stands: its lines are named
		// by their skeleton (adversary r24 a/13, c/05).
		p.ExecQuoted = make([]bool, len(p.Exec))
	}
	for _, n := range append([]string{p.ID}, p.Names...) {
		if n == "" {
			continue
		}
		if err := startedName(n); err != nil {
			return err
		}
	}
	if err := jobEndActions(p); err != nil {
		return err
	}
	if err := dependencyNames(p); err != nil {
		return err
	}
	for _, u := range p.Conflicts {
		if slices.Contains(conflictOK, u) {
			continue
		}
		lu := canonUnit(u)
		if kind := path.Ext(lu); kind != ".service" && kind != ".target" {
			return fmt.Errorf("Conflicts=%s: its start would stop %s (a %s unit, not a service or target)", u, u, strings.TrimPrefix(kind, "."))
		}
		// Stopping a unit that stops the system (initrd-switch-root.target, which every unit of the
		// running system conflicts with) is harmless; stopping what keeps the node running is not.
		if alwaysActive(lu) || presumedRunning(lu) || slices.Contains(bootTargets, identityOf(lu)) {
			return fmt.Errorf("Conflicts=%s: its start would stop %s", u, u)
		}
	}
	return judgeExecution(p)
}

// startedNotExec is JudgeStarted but for the unit's commands (judgeExecution): for the essentials.
func startedNotExec(p UnitProps) error {
	p.Exec, p.ExecKeys, p.Execution = nil, nil, Execution{OnFailureJobMode: p.OnFailureJobMode, OnSuccessJobMode: p.OnSuccessJobMode}
	return JudgeStarted(p)
}

// jobEndActions refuses an action the manager takes when a job of the unit ends.
func jobEndActions(p UnitProps) error {
	for _, a := range []struct{ key, v string }{{"SuccessAction", p.SuccessAction}, {"FailureAction", p.FailureAction},
		{"JobTimeoutAction", p.JobTimeoutAction}, {"StartLimitAction", p.StartLimitAction}} {
		if v := strings.TrimSpace(a.v); v != "" && v != "none" {
			return fmt.Errorf("%s=%s: the manager would %s when the unit stops, fails or times out", a.key, v, v)
		}
	}
	return nil
}

// dependencyNames refuses a unit a start of the unit pulls in that stops the system by its name.
func dependencyNames(p UnitProps) error {
	for _, dep := range []struct {
		key  string
		list []string
	}{{"Requires", p.Requires}, {"Requisite", p.Requisite}, {"Wants", p.Wants}, {"BindsTo", p.BindsTo},
		{"Upholds", p.Upholds}, {"OnSuccess", p.OnSuccess}, {"OnFailure", p.OnFailure}, {"Triggers", p.Triggers}} {
		for _, u := range dep.list {
			if err := stopsSystem(u); err != nil {
				return fmt.Errorf("%s=%s: its job would start a unit that stops the system (%v)", dep.key, u, err)
			}
			if err := unsafeInstance(u); err != nil {
				return fmt.Errorf("%s=%s: its job would start a unit that acts on the whole node (%v)", dep.key, u, err)
			}
		}
	}
	return nil
}

// NodeUnitReader reads a unit as the node's unit files define it (the plan's view of the node's
// root: plan.NodeUnitsAt). The plan judges with it what the payload does not carry: the node's
// drop-ins of a unit the payload defines, and the node's units a job reaches.
type NodeUnitReader interface {
	// ReadUnit returns the unit's files on the node; ok is false when the node has none of them.
	ReadUnit(name string) (u NodeUnitDef, ok bool, err error)
}

// NodeUnitFile is one unit file or drop-in on the node.
type NodeUnitFile struct {
	Path     string // on the node (/etc/systemd/system/myapp.service.d/10-x.conf)
	Name     string // the drop-in's file name (10-x.conf), or the fragment's unit name
	Contents string
	Masked   bool // a link to /dev/null: a masked unit or drop-in
}

// NodeUnitDef is a unit as the node's files define it: every file that may be its fragment, in the
// order systemd searches them (the first present one is), its drop-ins (every one, in systemd's
// order: by file name, where a name in an earlier directory hides the same name in a later one; the
// caller replaces the ones the payload writes), and the dependencies its .wants/, .requires/ and
// .upholds/ directories add.
type NodeUnitDef struct {
	Name                     string // the unit the name loads (a link's target)
	Fragments                []NodeUnitFile
	Dropins                  []NodeUnitFile
	Wants, Requires, Upholds []string
}

// WithNodeUnitFiles returns a copy of p that reads the node's unit files through r.
func (p *Policy) WithNodeUnitFiles(r NodeUnitReader) *Policy {
	q := *p
	q.nodeUnitFiles = r
	return &q
}

// NodeUnitFiles is the reader of the node's unit files, or nil (no node root: a diff of two payloads).
func (p *Policy) NodeUnitFiles() NodeUnitReader {
	if p == nil {
		return nil
	}
	return p.nodeUnitFiles
}
