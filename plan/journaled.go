package plan

import (
	"errors"
	"fmt"

	"github.com/openshift/refresh-agent/allowlist"
)

// What recovery may run from a journal (issue 27, class 5). A journal's unit actions are the plan's
// (Build: orderActions), each state action's undo as the unit's state before the refresh set it
// (actions.WithUndo); recovery runs them again after a crash, and their undos on a rollback. The
// journal sits in the state dir, which only root writes; but what recovery runs must be what a plan
// under the node's policy could have journaled, re-derived here from the policy by the rules the
// plan itself uses, so that a forged journal cannot stop, mask or disable a unit no rule names (a
// `committed` journal saying {"unit":"crio.service","action":"Stop"}: adversary round 9, 08).

// JournaledForm says why a journal's unit actions are not of the form a plan journals, or nil: each
// is a daemon-reload (no unit, pod or undo), a reload or restart of a unit, a restart of a static pod,
// or a state action (Enable, Disable, Mask, Unmask, Stop: never Start, which only a rollback runs) on
// a unit with no undo or its inverse; none is marked ifLoaded (a rollback's own reruns only), and
// none is listed twice (the plan lists each once: one reload or restart a unit). The policy's part is
// Journaled's. The error names the action by its index.
func JournaledForm(list []UnitAction) error {
	seen := map[string]int{}
	for i, a := range list {
		key, err := journaledForm(a)
		if err == nil {
			if k, ok := seen[key]; ok {
				err = fmt.Errorf("action %d names it too: a plan lists each once", k)
			}
			seen[key] = i
		}
		if err != nil {
			return fmt.Errorf("unit action %d (%s): %w", i, describeAction(a), err)
		}
	}
	return nil
}

// Journaled says why no refresh of this node under pol could have journaled the unit actions list,
// or nil: JournaledForm, and each action on what the policy names it for, as the plan derives them
// (mayRun). The error names the action; recovery refuses such a journal whole, touching nothing.
func Journaled(pol *allowlist.Policy, list []UnitAction) error {
	if err := JournaledForm(list); err != nil {
		return err
	}
	m := mayRun(pol)
	for i, a := range list {
		if err := m.allows(pol, a); err != nil {
			return fmt.Errorf("unit action %d (%s): %w", i, describeAction(a), err)
		}
	}
	return nil
}

// describeAction names an action as a journal has it, quoting what may not print.
func describeAction(a UnitAction) string {
	switch {
	case a.Unit != "" && a.Pod != "":
		return fmt.Sprintf("%q of unit %q and static pod %q", a.Action, a.Unit, a.Pod)
	case a.Pod != "":
		return fmt.Sprintf("%q of static pod %q", a.Action, a.Pod)
	case a.Unit != "":
		return fmt.Sprintf("%q of %q", a.Action, a.Unit)
	}
	return fmt.Sprintf("%q", a.Action)
}

// journaledForm checks one action's form and returns the key it may appear once under.
func journaledForm(a UnitAction) (string, error) {
	if a.IfLoaded {
		return "", errors.New("ifLoaded is set only on what a rollback runs again, never journaled")
	}
	switch {
	case a.Action == allowlist.ActionDaemonReload:
		if a.Unit != "" || a.Pod != "" || a.Undo != "" {
			return "", errors.New("a daemon-reload names no unit, static pod or undo")
		}
		return "daemon-reload", nil
	case a.Unit != "" && a.Pod != "":
		return "", errors.New("an action names a unit or a static pod, not both")
	case a.Pod != "":
		if a.Action != allowlist.ActionRestart || a.Undo != "" {
			return "", errors.New("a static pod is only ever restarted (no undo)")
		}
		return "pod " + a.Pod, nil
	case a.Unit == "":
		return "", errors.New("names no unit")
	case a.Action == allowlist.ActionReload || a.Action == allowlist.ActionRestart:
		if a.Undo != "" {
			return "", errors.New("a reload or restart has no undo")
		}
		return "unit " + a.Unit, nil
	case a.Action == allowlist.ActionStart:
		return "", errors.New("a refresh never starts a unit (only a rollback does, to undo its stop)")
	case allowlist.StateAction(a.Action):
		if a.Undo != "" && a.Undo != allowlist.Inverse(a.Action) {
			return "", fmt.Errorf("its undo %q is not %s's (%s)", a.Undo, a.Action, allowlist.Inverse(a.Action))
		}
		return "state " + string(a.Action) + " " + a.Unit, nil
	}
	return "", errors.New("not an action a refresh journals (Reload, Restart, DaemonReload; Enable, Disable, Mask, Unmask, Stop of a unit rule's unit)")
}

// runnable is what a plan under one policy can ever ask of units and pods (mayRun).
type runnable struct {
	units        map[string]map[allowlist.Action]bool // reloads and restarts, by unit
	pods         map[string]bool
	daemonReload bool
}

// mayRun derives, from the policy alone, every reload, restart, pod restart and daemon-reload a plan
// could ask for, by the plan's own rules: a file's rule (fileSteps: its effects' steps, or its
// action on each service it names; its static pods; its daemon-reload), a ConfigMap entry within the
// configMapCeiling (an action the ceiling allows on a unit it and the policy allow: no pods, no
// daemon-reload), a unit rule (its steps; a daemon-reload for any unit change), core's keys (the
// sshkey effects). A rule that says Reboot is refused by the plan and asks nothing.
func mayRun(pol *allowlist.Policy) runnable {
	m := runnable{units: map[string]map[allowlist.Action]bool{}, pods: map[string]bool{}}
	add := func(steps []allowlist.Step) {
		for _, s := range steps {
			if m.units[s.Unit] == nil {
				m.units[s.Unit] = map[allowlist.Action]bool{}
			}
			m.units[s.Unit][s.Action] = true
		}
	}
	for _, r := range pol.Rules {
		if r.Reboot {
			continue
		}
		add(fileSteps(r.Effects, r.Action, r.Services))
		for _, p := range r.Pods {
			m.pods[p] = true
		}
		m.daemonReload = m.daemonReload || r.DaemonReload
	}
	for _, c := range pol.Ceiling {
		for _, a := range c.Actions {
			var steps []allowlist.Step
			for _, u := range c.Units {
				if pol.UnitAllowed(u) && a != allowlist.ActionNone {
					steps = append(steps, allowlist.Step{Action: a, Unit: u})
				}
			}
			add(steps)
		}
	}
	for _, r := range pol.UnitRules {
		if r.Reboot {
			continue
		}
		add(r.Steps)
		m.daemonReload = true // any change of a unit's files or state reloads systemd's (planUnit)
	}
	if pol.CoreSSHKeys && !pol.SSHKey.Reboot {
		add(pol.SSHKey.Steps)
		m.daemonReload = m.daemonReload || pol.SSHKey.DaemonReload
	}
	return m
}

// allows says why the policy never asks for a (of the form JournaledForm checks), or nil. Every unit
// is judged as the plan judges the units it acts on (allowlist.ActOn: a plain service that neither
// reboots nor halts the node); the executor judges it once more, as the manager reports it, right
// before any job.
func (m runnable) allows(pol *allowlist.Policy, a UnitAction) error {
	switch {
	case a.Action == allowlist.ActionDaemonReload:
		if !m.daemonReload {
			return errors.New("no rule of the node policy asks for a daemon-reload")
		}
		return nil
	case a.Pod != "":
		if !m.pods[a.Pod] {
			return errors.New("no node policy rule names this static pod")
		}
		return nil
	}
	u, err := allowlist.NormalizeUnit(a.Unit)
	if err == nil {
		err = allowlist.ActOn(u)
	}
	switch {
	case err != nil:
		return fmt.Errorf("not a unit the agent acts on: %w", err)
	case u != a.Unit:
		return fmt.Errorf("not a unit name as a plan names units (it names %s)", u)
	}
	if allowlist.StateAction(a.Action) {
		if r, ok := pol.UnitRule(a.Unit); !ok || r.Reboot {
			return errors.New("no unit rule of the node policy names this unit (that does not reboot): only such a unit is ever enabled, disabled, masked, unmasked or stopped by a refresh")
		}
		return nil
	}
	if !m.units[a.Unit][a.Action] {
		return fmt.Errorf("no node policy rule (nor the configMapCeiling) asks to %s this unit", a.Verb())
	}
	return nil
}

// fileSteps are the reloads and restarts a file's rule asks for: its effects' steps (a
// NodeDisruptionPolicy rule), or else (the agent's own rule format) its one action on every service it
// names.
func fileSteps(eff allowlist.Effects, action allowlist.Action, services []string) []allowlist.Step {
	if eff.Steps != nil {
		return eff.Steps
	}
	var steps []allowlist.Step
	for _, u := range services {
		if action != allowlist.ActionNone {
			steps = append(steps, allowlist.Step{Action: action, Unit: u})
		}
	}
	return steps
}
