package actions

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	sd "github.com/coreos/go-systemd/v22/dbus"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// runState runs a unit state action over D-Bus, as systemctl enable, disable, mask, unmask, stop
// and start would (the machine-config daemon runs those commands): the install links change on
// disk in /etc/systemd/system (never at runtime only), and a stop or start waits for its job.
func (s *Systemd) runState(ctx context.Context, a plan.UnitAction) error {
	files := []string{a.Unit}
	var err error
	switch a.Action {
	case allowlist.ActionEnable:
		var changes []sd.EnableUnitFileChange
		_, changes, err = s.conn.EnableUnitFilesContext(ctx, files, false, false)
		for _, c := range changes {
			if err == nil {
				err = enabledChange(a.Unit, c, changes)
			}
		}
	case allowlist.ActionDisable:
		_, err = s.conn.DisableUnitFilesContext(ctx, files, false)
	case allowlist.ActionMask:
		// force: a link already there (an old mask) is replaced; a regular file never is.
		_, err = s.conn.MaskUnitFilesContext(ctx, files, false, true)
	case allowlist.ActionUnmask:
		_, err = s.conn.UnmaskUnitFilesContext(ctx, files, false)
	case allowlist.ActionStop, allowlist.ActionStart:
		return s.job(ctx, a)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.Action, a.Unit, err)
	}
	return nil
}

// destinationNotPresent is the change systemd reports (INSTALL_CHANGE_DESTINATION_NOT_PRESENT) when
// enabling links a unit into the .wants/ (.requires/, .upholds/) of a target no unit file
// defines: Filename the target, Destination the unit's file. systemctl enable prints it as a
// warning and succeeds; the link is made, and pulls the unit in once the node has the target.
const destinationNotPresent = "destination not present"

// enabledChange judges one change EnableUnitFiles reports (enabledLink), but for systemd's notice
// that a link the same call made, the unit's own into a target's directory, names a target the
// node has no file of (round 13, units 02: WantedBy=kubelet-dependencies.target on a node without
// it): accepted as systemctl enable accepts it; the plan warns of it.
func enabledChange(unit string, c sd.EnableUnitFileChange, all []sd.EnableUnitFileChange) error {
	if c.Type != destinationNotPresent {
		return enabledLink(unit, c)
	}
	target := c.Filename
	if path.Base(c.Destination) == unit && allowlist.IsUnitName(target) && !strings.Contains(target, "/") {
		for _, l := range all {
			dir := path.Base(path.Dir(l.Filename))
			if l.Type == "symlink" && path.Base(l.Filename) == unit && path.Base(l.Destination) == unit &&
				(dir == target+".wants" || dir == target+".requires" || dir == target+".upholds") {
				return enabledLink(unit, l) // the link the notice is of, judged as every link is
			}
		}
	}
	return fmt.Errorf("%w: enabling it reported %q for %s (to %s), which is no notice of a link of the unit's own the same call made",
		ErrUnitRefused, c.Type, c.Filename, c.Destination)
}

// enabledLink refuses a change EnableUnitFiles reports that the plan never plans (plan.judgeLinks
// and allowlist.JudgeUnit, which read the same [Install] section): only a link named for the unit,
// to the unit's file, in a .wants/, .requires/ or .upholds/ directory of a target that
// allowlist.JudgeInstallLink accepts. A link of another unit (its [Install] Also=, followed
// transitively by systemd) or of another name (Alias=) is refused; the rollback disables the unit
// again. Residual: links of an Also= unit that was already enabled are no change, so nothing
// reports them here, and the rollback's disable follows Also= to them (the plan refuses every
// Also= it can read: under the node's root, the node's files too).
func enabledLink(unit string, c sd.EnableUnitFileChange) error {
	dir := path.Base(path.Dir(c.Filename))
	key := ""
	for suffix, k := range map[string]string{".wants": "WantedBy", ".requires": "RequiredBy", ".upholds": "UpheldBy"} {
		if strings.HasSuffix(dir, suffix) {
			key = k
			dir = strings.TrimSuffix(dir, suffix)
		}
	}
	switch {
	case c.Type != "symlink":
		return fmt.Errorf("%w: enabling it reported %q for %s (to %s): a refresh accepts only the unit's own links",
			ErrUnitRefused, c.Type, c.Filename, c.Destination)
	case path.Base(c.Destination) != unit:
		return fmt.Errorf("%w: enabling it also changed %s (%s to %s): a unit its [Install] Also= names, and a refresh enables only the unit its entry names",
			ErrUnitRefused, c.Filename, c.Type, c.Destination)
	case path.Base(c.Filename) != unit:
		return fmt.Errorf("%w: enabling it linked %s to it: %v", ErrUnitRefused, c.Filename, allowlist.JudgeInstallLink("Alias", path.Base(c.Filename)))
	case key == "":
		return fmt.Errorf("%w: enabling it linked %s, not a link in a target's .wants/, .requires/ or .upholds/", ErrUnitRefused, c.Filename)
	}
	if err := allowlist.JudgeInstallLink(key, dir); err != nil {
		return fmt.Errorf("%w: enabling it linked %s: %v", ErrUnitRefused, c.Filename, err)
	}
	return nil
}

// job runs a stop or start job and requires the state it leads to.
func (s *Systemd) job(ctx context.Context, a plan.UnitAction) error {
	ch := make(chan string, 1) // buffered: see Run
	var err error
	want := []string{"active"}
	if a.Action == allowlist.ActionStop {
		_, err = s.conn.StopUnitContext(ctx, a.Unit, "replace", ch)
		want = []string{"inactive", "failed"}
	} else {
		_, err = s.conn.StartUnitContext(ctx, a.Unit, "replace", ch)
	}
	if err := s.wait(ctx, a, ch, err); err != nil {
		return err
	}
	state, err := s.activeState(ctx, a.Unit)
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.Action, a.Unit, err)
	}
	if !slices.Contains(want, state) {
		return fmt.Errorf("%s %s: unit is %s after the job", a.Action, a.Unit, state)
	}
	return nil
}

func (s *Systemd) activeState(ctx context.Context, unit string) (string, error) {
	p, err := s.conn.GetUnitPropertyContext(ctx, unit, "ActiveState")
	if err != nil {
		return "", fmt.Errorf("reading ActiveState: %w", err)
	}
	state, _ := p.Value.Value().(string)
	return state, nil
}

// UnitStater reports what a unit is before a refresh changes it, so that a rollback can put it
// back: its install state (UnitFileState: enabled, disabled, masked, static, "" when there is no
// file) and whether it runs (ActiveState).
type UnitStater interface {
	UnitState(ctx context.Context, unit string) (file, active string, err error)
}

// UnitState reads UnitFileState and ActiveState over D-Bus.
func (s *Systemd) UnitState(ctx context.Context, unit string) (string, string, error) {
	props, err := s.conn.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		return "", "", fmt.Errorf("%s: reading its state: %w", unit, err)
	}
	file, _ := props["UnitFileState"].(string)
	active, _ := props["ActiveState"].(string)
	return file, active, nil
}

// UnitState connects if needed (see Systemd.UnitState).
func (l *LazyUnits) UnitState(ctx context.Context, unit string) (string, string, error) {
	u, err := l.get()
	if err != nil {
		return "", "", err
	}
	if st, ok := u.(UnitStater); ok {
		return st.UnitState(ctx, unit)
	}
	return "", "", fmt.Errorf("%s: the unit manager cannot report states", unit)
}

// WithUndo sets each state action's undo from the unit's state before the refresh, as u reports
// it: none when the unit already is as the action leaves it (enabling an enabled unit is undone by
// nothing), the inverse otherwise. When u cannot tell (no manager, an error) the plan's inverse
// stays: undoing an action that changed nothing is harmless, leaving a change in place is not.
func WithUndo(ctx context.Context, u Units, list []plan.UnitAction) []plan.UnitAction {
	st, ok := u.(UnitStater)
	if !ok || Skips(u) {
		return list
	}
	out := slices.Clone(list)
	for i, a := range out {
		if !allowlist.StateAction(a.Action) {
			continue
		}
		file, active, err := st.UnitState(ctx, a.Unit)
		if err != nil {
			continue
		}
		already := false
		switch a.Action {
		case allowlist.ActionEnable:
			already = file == "enabled" || file == "static" || file == "alias" || file == "indirect" || file == "generated"
		case allowlist.ActionDisable:
			already = file == "disabled" || file == "" || file == "static"
		case allowlist.ActionMask:
			already = file == "masked"
		case allowlist.ActionUnmask:
			already = file != "masked"
		case allowlist.ActionStop:
			already = active != "active" && active != "activating" && active != "reloading"
		}
		if already {
			out[i].Undo = ""
		}
	}
	return out
}

// unloaded reports whether the manager has no unit to act on: no file for it, or masked.
func (s *Systemd) unloaded(ctx context.Context, unit string) (bool, error) {
	p, err := s.conn.GetUnitPropertyContext(ctx, unit, "LoadState")
	if err != nil {
		return false, fmt.Errorf("%s: reading LoadState: %w", unit, err)
	}
	state, _ := p.Value.Value().(string)
	return state == "not-found" || state == "masked", nil
}

// stopIfActive stops a unit that still runs.
func (s *Systemd) stopIfActive(ctx context.Context, unit string) error {
	state, err := s.activeState(ctx, unit)
	if err != nil {
		return fmt.Errorf("%s: %w", unit, err)
	}
	if state != "active" && state != "activating" && state != "reloading" {
		return nil
	}
	return s.job(ctx, plan.UnitAction{Unit: unit, Action: allowlist.ActionStop})
}

// wait waits for the result of the job a started (err is the start's error), which must be "done".
func (s *Systemd) wait(ctx context.Context, a plan.UnitAction, ch <-chan string, err error) error {
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.Action, a.Unit, err)
	}
	select {
	case result := <-ch:
		if result != "done" {
			return fmt.Errorf("%s %s: job result %q", a.Action, a.Unit, result)
		}
	case <-s.lost:
		return fmt.Errorf("%s %s: D-Bus connection to systemd lost while waiting for the job", a.Action, a.Unit)
	case <-ctx.Done():
		return fmt.Errorf("%s %s: no job result within %s", a.Action, a.Unit, s.JobTimeout)
	}
	return nil
}
