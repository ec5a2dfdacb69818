package actions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/openshift/refresh-agent/allowlist"
)

// ErrUnitRefused marks a unit the agent will not act on, judged from what systemd says it is.
var ErrUnitRefused = errors.New("unit refused")

// ErrUnitNotFound marks a unit the manager has no file of (LoadState=not-found): a job on it
// fails, unless the refresh writes it first.
var ErrUnitNotFound = errors.New("unit not found")

// UnitChecker judges a unit from the properties its manager reports, before any job runs on it.
// *Systemd and LazyUnits implement it; the dry run and a real run call it on every planned unit, and
// Systemd.Run once more right before the job.
type UnitChecker interface {
	CheckUnit(ctx context.Context, unit string) error
}

// CheckUnit reads the unit's properties over D-Bus (every name it answers to, its dependencies, the
// actions the manager takes when a job ends, the commands it runs) and refuses, wrapping
// ErrUnitRefused, what allowlist.JudgeUnit refuses: the same rule the plan applies to the unit
// files a payload carries, so an alias on disk (myapp.service linked to systemd-reboot.service) or a
// unit that pulls in shutdown.target is refused whatever the policy called it.
func (s *Systemd) CheckUnit(ctx context.Context, unit string) error {
	if err := allowlist.ActOn(unit); err != nil {
		return fmt.Errorf("%s: %w: %v", unit, ErrUnitRefused, err)
	}
	props, err := s.conn.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		return fmt.Errorf("%s: reading its properties: %w", unit, err)
	}
	u, err := startedUnit(props, func(kind string) (map[string]any, error) { return s.conn.GetUnitTypePropertiesContext(ctx, unit, kind) })
	if err != nil {
		return fmt.Errorf("%s: %w", unit, err)
	}
	if err := allowlist.JudgeUnit(u.Props); err != nil {
		return fmt.Errorf("%s: %w: %v (as the manager reports it)", unit, ErrUnitRefused, err)
	}
	if ls, _ := props["LoadState"].(string); ls == "not-found" {
		return fmt.Errorf("%s: %w: the manager has no such unit (LoadState=not-found): a job on it would fail", unit, ErrUnitNotFound)
	}
	return s.CheckStartSet(ctx, u.Props)
}

// CheckStartSet judges every unit a job on the unit p reaches, as the manager reports each
// (allowlist.JudgeStartSet): p as the manager reports it (CheckUnit), or as the plan will write it
// (a unit the payload defines, which the manager has not loaded yet: the dry run and the check
// before the first write ask the manager about what its definition pulls in).
func (s *Systemd) CheckStartSet(ctx context.Context, p allowlist.UnitProps) error {
	unit := p.ID
	// Every unit the job reaches (what its start pulls in, what follows its restart or stop),
	// judged by what the manager says it is (allowlist.JudgeStartSet): the manager loads a unit
	// when it is asked for it, so one no job has loaded yet is read too.
	refusal, err := allowlist.JudgeStartSet(p, func(name string) (allowlist.StartedUnit, error) {
		props, err := s.conn.GetUnitPropertiesContext(ctx, name)
		if err != nil {
			return allowlist.StartedUnit{}, fmt.Errorf("reading its properties: %w", err)
		}
		return startedUnit(props, func(kind string) (map[string]any, error) { return s.conn.GetUnitTypePropertiesContext(ctx, name, kind) })
	})
	if err != nil {
		return fmt.Errorf("%s: %w", unit, err)
	}
	if refusal != nil {
		return fmt.Errorf("%s: %w: %v (the units it reaches as the manager reports them)", unit, ErrUnitRefused, refusal)
	}
	return nil
}

// startedUnit reads a unit's properties as the manager reports them (typed reads a service's or a
// socket's own), with its load and active state.
func startedUnit(props map[string]any, typed func(kind string) (map[string]any, error)) (allowlist.StartedUnit, error) {
	p := unitProps(props)
	str := func(k string) string { s, _ := props[k].(string); return s }
	out := allowlist.StartedUnit{Known: true, StateKnown: str("ActiveState") != ""}
	switch str("LoadState") {
	case "masked":
		out.Masked = true
	case "loaded", "":
	default: // not-found, error, bad-setting: a job on it fails, nothing runs
		out.Known = false
	}
	switch str("ActiveState") {
	case "active", "reloading", "refreshing":
		out.Active = true
	}
	if out.Known && !out.Masked && strings.HasSuffix(p.ID, ".service") {
		m, err := typed("Service")
		if err != nil {
			return out, fmt.Errorf("reading its service properties: %w", err)
		}
		p.Exec, p.ExecKeys = execLines(m)
		p.ExecQuoted = make([]bool, len(p.Exec)) // the manager's lines, the node's: never quoted
		p.Execution = execution(p.Execution, props, m)
	}
	if out.Known && !out.Masked && strings.HasSuffix(p.ID, ".socket") {
		// An Accept=yes socket runs an instance of its template per connection, which the
		// manager does not report in Triggers= (round 13, units 03): judged as the service the
		// socket triggers (allowlist.AcceptInstance).
		m, err := typed("Socket")
		if err != nil {
			return out, fmt.Errorf("reading its socket properties: %w", err)
		}
		if accept, _ := m["Accept"].(bool); accept {
			p.Triggers = append(p.Triggers, allowlist.AcceptInstance(p.ID))
		}
	}
	out.Props = p
	return out, nil
}

// CheckUnit connects if needed and judges the unit (see Systemd.CheckUnit).
func (l *LazyUnits) CheckUnit(ctx context.Context, unit string) error {
	u, err := l.get()
	if err != nil {
		return err
	}
	if c, ok := u.(UnitChecker); ok {
		return c.CheckUnit(ctx, unit)
	}
	return nil
}

// CheckStartSet connects if needed and judges the units a job on p reaches (see Systemd.CheckStartSet).
func (l *LazyUnits) CheckStartSet(ctx context.Context, p allowlist.UnitProps) error {
	u, err := l.get()
	if err != nil {
		return err
	}
	if c, ok := u.(StartSetChecker); ok {
		return c.CheckStartSet(ctx, p)
	}
	return nil
}

// StartSetChecker judges the units a job on a unit reaches from what the manager reports of them.
type StartSetChecker interface {
	CheckStartSet(ctx context.Context, p allowlist.UnitProps) error
}

// CheckUnits judges every unit the actions name through u, when u can (a manager is there); nil
// when u skips actions (--systemd none) or cannot judge. planned gives a unit's definition as the
// refresh writes it (false: the refresh does not define the unit): the units it reaches are
// judged too, and the manager not knowing the unit yet is no refusal.
func CheckUnits(ctx context.Context, u Units, actions []string, planned func(unit string) (allowlist.UnitProps, bool)) error {
	c, ok := u.(UnitChecker)
	if !ok || Skips(u) {
		return nil
	}
	for _, unit := range actions {
		p, defined := allowlist.UnitProps{}, false
		if planned != nil {
			p, defined = planned(unit)
		}
		err := c.CheckUnit(ctx, unit)
		if errors.Is(err, ErrUnitNotFound) && defined {
			err = nil
		}
		if err != nil {
			return err
		}
		if sc, ok := u.(StartSetChecker); ok && defined {
			if err := sc.CheckStartSet(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func unitProps(m map[string]any) allowlist.UnitProps {
	str := func(k string) string { s, _ := m[k].(string); return s }
	list := func(k string) []string { l, _ := m[k].([]string); return l }
	dd, _ := m["DefaultDependencies"].(bool)
	props := m
	return allowlist.UnitProps{
		ID: str("Id"), Names: list("Names"),
		Requires: list("Requires"), Requisite: list("Requisite"), Wants: list("Wants"), BindsTo: list("BindsTo"),
		Upholds: list("Upholds"), OnSuccess: list("OnSuccess"), OnFailure: list("OnFailure"),
		Conflicts: list("Conflicts"), After: list("After"), Before: list("Before"), DefaultDependencies: dd,
		PulledInBy:       append(append(list("WantedBy"), list("RequiredBy")...), list("UpheldBy")...),
		PropagatesStopTo: list("PropagatesStopTo"), StopPropagatedFrom: list("StopPropagatedFrom"), PartOf: list("PartOf"),
		Triggers: list("Triggers"), PropagatesReloadTo: list("PropagatesReloadTo"),
		Followers: list("RequiredBy"), RequisiteOf: list("RequisiteOf"), BoundBy: list("BoundBy"), ConsistsOf: list("ConsistsOf"),
		ConflictedBy: list("ConflictedBy"), StopWhenUnneeded: props["StopWhenUnneeded"] == true,
		SuccessAction: str("SuccessAction"), FailureAction: str("FailureAction"),
		JobTimeoutAction: str("JobTimeoutAction"), StartLimitAction: str("StartLimitAction"),
	}
}

// execution reads how the unit's commands run and what its end starts, as the manager reports it
// (systemd reports StandardOutput=file:PATH as "file", without the path).
func execution(e allowlist.Execution, unit, svc map[string]any) allowlist.Execution {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	list := func(k string) []string { l, _ := svc[k].([]string); return l }
	e.OnFailureJobMode, e.OnSuccessJobMode = str(unit, "OnFailureJobMode"), str(unit, "OnSuccessJobMode")
	e.StandardInput, e.StandardOutput, e.StandardError = str(svc, "StandardInput"), str(svc, "StandardOutput"), str(svc, "StandardError")
	e.WorkingDirectory, e.RootDirectory = str(svc, "WorkingDirectory"), str(svc, "RootDirectory")
	e.Environment, e.PassEnvironment = list("Environment"), list("PassEnvironment")
	if fs, ok := svc["EnvironmentFiles"].([][]any); ok { // a(sb): path, whether a missing file is ignored
		for _, f := range fs {
			if len(f) == 2 {
				p, _ := f[0].(string)
				if ign, _ := f[1].(bool); ign {
					p = "-" + p
				}
				e.EnvironmentFiles = append(e.EnvironmentFiles, p)
			}
		}
	}
	e.RuntimeDirectory, e.StateDirectory, e.CacheDirectory = list("RuntimeDirectory"), list("StateDirectory"), list("CacheDirectory")
	e.LogsDirectory, e.ConfigurationDirectory = list("LogsDirectory"), list("ConfigurationDirectory")
	return e
}

// execLines reads the argv of every Exec* property (a(sasbttttuii): path, argv, ignore-failure, …),
// in the order of their names so that every read of a unit reports the same first refusal.
func execLines(m map[string]any) ([][]string, []string) {
	var out [][]string
	var keys []string
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := m[k]
		if !strings.HasPrefix(k, "Exec") {
			continue
		}
		cmds, ok := v.([][]any)
		if !ok {
			continue
		}
		for _, c := range cmds {
			if len(c) < 2 {
				continue
			}
			path, _ := c[0].(string)
			argv, _ := c[1].([]string)
			if len(argv) == 0 {
				argv = []string{path}
			} else {
				argv = append([]string{path}, argv[1:]...)
			}
			out = append(out, argv)
			keys = append(keys, strings.TrimSuffix(k, "Ex"))
		}
	}
	return out, keys
}
