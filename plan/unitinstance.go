package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openshift/refresh-agent/allowlist"
)

// An instance a payload's unit names as a dependency runs its template's text with the payload's
// instance substituted (allowlist/unitinstance.go). instanceWhy judges it so: with the node's
// definition of it (Policy.NodeUnit, read under --root), the commands the instance changes are
// changed lines, judged strictly, every other setting the instance changes must be one that only
// describes, orders, conditions or names a dependency (judged as a dependency the payload names) or
// sets the commands' environment (then every command is a changed line); without it (no --root, or
// no unit file the judge can read), the instance is refused unless a node policy rule names it.

// maxInstanceDepth bounds the instances judged through the dependencies an instance names.
const maxInstanceDepth = 2

// instanceDescribes are the settings an instance may change that only describe, order or test the
// unit ([Install] is read only when the unit is enabled, which a dependency does not do).
func instanceDescribes(o sysOption) bool {
	switch o.section {
	case "Install":
		return true
	case "Unit":
		return slices.Contains([]string{"Description", "Documentation", "After", "Before"}, o.key) ||
			strings.HasPrefix(o.key, "Condition") || strings.HasPrefix(o.key, "Assert")
	case "Service":
		return o.key == "SyslogIdentifier"
	}
	return false
}

// instanceDependencies are the [Unit] settings naming units a start of the instance starts.
var instanceDependencies = []string{"Requires", "Requisite", "Wants", "BindsTo", "Upholds", "OnFailure", "OnSuccess"}

// instanceEnvironment are the settings that set how every command runs: an instance that changes
// one changes every command.
var instanceEnvironment = []string{"Environment", "UnsetEnvironment", "PassEnvironment", "WorkingDirectory"}

// instanceWhy says why a payload may not name the instance u as a dependency, or "" (u no instance).
func instanceWhy(u string, pol *allowlist.Policy, depth int) string {
	tmpl, inst, ok := allowlist.Instance(u)
	if !ok {
		return ""
	}
	var d definition
	found := false
	if pol.NodeUnitFiles() != nil {
		if def, err := newUnitView(nil, nil, pol).define(u, nil); err == nil {
			d, found = def, def.known && (def.fragment != nil || def.masked)
		}
	}
	switch {
	case !found && pol.NamesUnit(u):
		return "" // the node policy's own choice of instance
	case !found:
		return fmt.Sprintf("%s: an instance of %s with the payload's instance %s: the judge cannot read the template here (no --root, or no unit file of that name it can read in the node's unit directories), so it cannot say what the payload's instance makes it run; refused unless a node policy rule names the instance", u, tmpl, inst)
	case d.masked:
		return "" // a job on a masked unit fails: it runs nothing
	case d.id != u && d.id != tmpl:
		return "" // a node link to another unit: judged as that unit (dependencyWhy, the start set)
	case depth >= maxInstanceDepth:
		return fmt.Sprintf("%s: an instance named by an instance's template (through %d instances): too deep to judge", u, depth)
	}
	where := u
	if len(d.nodeFiles) > 0 {
		where = d.nodeFiles[0]
	}
	texts := []struct{ path, text string }{{where, *d.fragment}}
	for _, dr := range d.dropins {
		if dr.Contents != nil {
			texts = append(texts, struct{ path, text string }{"dropin " + dr.Name + " of " + where, *dr.Contents})
		}
	}
	allChanged := false
	for _, t := range texts {
		if why := readsAsSystemdReads(t.text); why != "" {
			return fmt.Sprintf("%s: the node's %s reads differently to systemd than to the judge: %s", u, t.path, why)
		}
		opts, _ := readSystemdUnit(t.text) // readable: readsAsSystemdReads said so
		for _, o := range opts {
			if !allowlist.InstanceSpecifier(o.value) || o.section == "Service" && slices.Contains(execKeys, o.key) || instanceDescribes(o) {
				continue // the commands: compared below
			}
			switch {
			case o.section == "Unit" && slices.Contains(instanceDependencies, o.key):
				for _, f := range strings.Fields(o.value) {
					if !allowlist.InstanceSpecifier(f) {
						continue
					}
					if why := dependencyWhy(allowlist.ResolveSpecifiers(u, f), pol, depth+1); why != "" {
						return fmt.Sprintf("%s: the node's %s [Unit] %s=%s with the payload's instance: %s", u, t.path, o.key, f, why)
					}
				}
			case o.section == "Service" && slices.Contains(instanceEnvironment, o.key):
				allChanged = true
			default:
				return fmt.Sprintf("%s: the node's %s [%s] %s=%s: the payload's instance %s would set it, and a payload may set only what the judge models (its commands, their environment, its dependencies, its description and ordering)", u, t.path, o.section, o.key, nodeValue(o.key, o.value), inst)
			}
		}
	}
	p, err := unitFileProps(u, d.fragment, d.dropins)
	if err != nil {
		return fmt.Sprintf("%s: the node's %s: %v", u, where, err)
	}
	q, err := unitFileProps(allowlist.InstanceProbe(u), d.fragment, d.dropins)
	if err != nil || len(q.Exec) != len(p.Exec) {
		return fmt.Sprintf("%s: the node's %s cannot be read for another instance", u, where)
	}
	// The node's .wants/, .requires/, .upholds/ links are its own, as the manager reports them.
	p.Wants, p.Requires, p.Upholds = append(p.Wants, d.wants...), append(p.Requires, d.requires...), append(p.Upholds, d.upholds...)
	// A command whose words differ between two instances is the instance's: a changed line. The
	// programs and paths of the others, and those the instance does not change, are the template's
	// own (as the node's current definition of a unit a payload changes gives its own).
	p.ExecChanged = make([]bool, len(p.Exec))
	var own, mine, theirs [][]string
	var ownKeys, mineKeys []string
	for i := range p.Exec {
		p.ExecChanged[i] = allChanged || !slices.Equal(p.Exec[i], q.Exec[i])
		if p.ExecChanged[i] {
			mine, theirs, mineKeys = append(mine, p.Exec[i]), append(theirs, q.Exec[i]), append(mineKeys, p.ExecKey(i))
		} else {
			own, ownKeys = append(own, p.Exec[i]), append(ownKeys, p.ExecKey(i))
		}
	}
	p.Programs = append(allowlist.OwnPrograms(own), both(allowlist.OwnPrograms(mine), allowlist.OwnPrograms(theirs))...)
	// The lines with their keys: the flags OwnArgs records are by the line's key (daemonflags.go).
	withExec := func(x allowlist.UnitProps, exec [][]string) allowlist.UnitProps {
		x.Exec, x.ExecKeys = exec, mineKeys
		if len(exec) > 0 && len(own) > 0 && &exec[0] == &own[0] {
			x.ExecKeys = ownKeys
		}
		return x
	}
	p.OwnWrites = append(allowlist.OwnWrites(withExec(p, own)), both(allowlist.OwnWrites(withExec(p, mine)), allowlist.OwnWrites(withExec(q, theirs)))...)
	p.OwnSecrets = append(allowlist.OwnSecrets(withExec(p, own)), both(allowlist.OwnSecrets(withExec(p, mine)), allowlist.OwnSecrets(withExec(q, theirs)))...)
	p.OwnArgs = append(allowlist.OwnArgs(withExec(p, own)), both(allowlist.OwnArgs(withExec(p, mine)), allowlist.OwnArgs(withExec(q, theirs)))...)
	p.NeverOwn = pol.NeverOwn()
	if slices.Contains(p.ExecChanged, true) {
		reads, err := nodeReads(pol.NodeUnitFiles())
		if err != nil {
			return fmt.Sprintf("%s: a changed command may write only files no unit reads as root, and the node's unit files cannot all be read to say which: %v", u, err)
		}
		p.NodeReads = reads
	}
	if err := allowlist.JudgeInstance(p); err != nil {
		return fmt.Sprintf("%s: the node's %s run with the payload's instance %s (the commands holding it judged as changed lines): %v", u, where, inst, err)
	}
	return ""
}

// both are the entries of a that b has too.
func both[T comparable](a, b []T) []T {
	var out []T
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// namingKeys are the settings whose values name units, paths or terminals, never secrets: a
// refusal shows the node's value of one; any other (Environment=, a command) by its length only
// (adversary r23 c/07: the node's own values are the node's secrets).
var namingKeys = []string{"Wants", "Requires", "Requisite", "BindsTo", "PartOf", "Upholds", "Conflicts", "Before", "After",
	"OnFailure", "OnSuccess", "PropagatesReloadTo", "ReloadPropagatedFrom", "PropagatesStopTo", "StopPropagatedFrom",
	"JoinsNamespaceOf", "Alias", "WantedBy", "RequiredBy", "UpheldBy", "Also", "DefaultInstance", "UtmpIdentifier", "TTYPath", "Slice",
	"ExecSearchPath", "WorkingDirectory", "RootDirectory", "RootImage", "PIDFile", "EnvironmentFile", "ReadWritePaths", "ReadOnlyPaths",
	"InaccessiblePaths", "BindPaths", "BindReadOnlyPaths", "RuntimeDirectory", "StateDirectory", "CacheDirectory", "LogsDirectory",
	"ConfigurationDirectory", "User", "Group", "DynamicUser", "SupplementaryGroups"}

// nodeValue is the node's value of key as a refusal shows it.
func nodeValue(key, v string) string {
	if slices.Contains(namingKeys, key) {
		return short(v)
	}
	return fmt.Sprintf(" (a value of %d bytes, not shown)", len(v))
}
