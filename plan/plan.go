// Package plan judges a diff against the node policy and computes the whole refresh before anything
// is touched: the files to write or remove, the units to reload or restart (deduplicated and ordered),
// and every refused change with its reason. A plan with any refusal is refused whole.
package plan

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// Plan is the outcome of planning. Its JSON form is the CLI's and the agent's contract.
type Plan struct {
	Eligible bool         `json:"eligible"`
	Changes  []Change     `json:"changes"`
	Actions  []UnitAction `json:"actions"`
	Refused  []Refusal    `json:"refused"`
	Warnings []string     `json:"warnings"`
	// Drain is set when a change needs the node drained first (a node policy rule says Drain, or a
	// registries.conf change is not safe without one); DrainReasons say which.
	Drain        bool     `json:"drain"`
	DrainReasons []string `json:"drainReasons,omitempty"`
	// ChangesOmitted and RefusedOmitted count the changes and refusals past MaxPlanTexts, which
	// the plan does not list (text.go); the refusal that says so is listed last.
	ChangesOmitted int `json:"changesOmitted,omitempty"`
	RefusedOmitted int `json:"refusedOmitted,omitempty"`

	// Files are the eligible file writes and removals, with decoded contents, in path order.
	Files []FileOp `json:"-"`
	// SSHKeys is set when core's authorized keys change.
	SSHKeys *SSHKeysOp `json:"-"`

	// steps and daemonReload collect what the eligible changes ask, for orderActions.
	steps        []allowlist.Step
	pods         []string
	daemonReload bool
	// states are the unit state actions (enable, disable, mask, unmask, stop), run before the rest.
	states []UnitAction
	// corePassword says the desired config gives core a password hash (core can log in without a key).
	corePassword bool
	// view is every unit as the node's manager will load it after the refresh (unitview.go).
	view *unitView
	// judged is how many YAML nodes the content judges have been given so far (content.go).
	judged int
	// planned are the acted-on units the payload defines, as the refresh writes them (PlannedUnit).
	planned map[string]allowlist.UnitProps
}

// Change is one detected change with the policy's verdict.
type Change struct {
	Kind     diff.Kind `json:"kind"`
	Op       diff.Op   `json:"op"`
	Path     string    `json:"path,omitempty"`
	Unit     string    `json:"unit,omitempty"`
	User     string    `json:"user,omitempty"`
	Eligible bool      `json:"eligible"`
	Action   string    `json:"action,omitempty"`
	Services []string  `json:"services,omitempty"`
	Pods     []string  `json:"pods,omitempty"`
	// Rule names the node policy's NodeDisruptionPolicy rule that decided the change, if any.
	Rule string `json:"rule,omitempty"`
	// States are a unit change's state actions (Stop, Disable, Enable, Mask, Unmask), in order.
	States       []allowlist.Action `json:"states,omitempty"`
	DaemonReload bool               `json:"daemonReload,omitempty"`
	Drain        bool               `json:"drain,omitempty"`
	Detail       string             `json:"detail,omitempty"`
	// Skipped is set, with the reason, for a change a refresh leaves alone without refusing the
	// payload (a first-boot-only file): it is neither written nor a refusal.
	Skipped string `json:"skipped,omitempty"`
	// ModeCeiling and OwnerCeiling are the node policy's bounds for a written file (its permission
	// bits within the mode, owned by root or the owner).
	ModeCeiling  string `json:"modeCeiling,omitempty"`
	OwnerCeiling string `json:"ownerCeiling,omitempty"`
	// Delegated is set on a file change another owner applies (Inputs.Delegated): it is neither
	// written nor refused; Reason says who owns the file.
	Delegated bool   `json:"delegated,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Refusal says why a change cannot be applied without a reboot or outside the policy.
type Refusal struct {
	Kind   diff.Kind `json:"kind"`
	Path   string    `json:"path,omitempty"`
	Unit   string    `json:"unit,omitempty"`
	User   string    `json:"user,omitempty"`
	Reason string    `json:"reason"`
}

// UnitAction is one action to run after the files are in place: a systemd job on Unit, a reload of
// systemd's unit files (Action DaemonReload, no Unit), or a restart of the static pod Pod
// ("namespace/name") through the CRI.
type UnitAction struct {
	Unit   string           `json:"unit,omitempty"`
	Pod    string           `json:"pod,omitempty"`
	Action allowlist.Action `json:"action"`
	// Undo is what a rollback runs instead for a state action (Enable, Disable, Mask, Unmask, Stop):
	// what puts the unit back as it was ("" when it already was as the action leaves it).
	Undo allowlist.Action `json:"undo,omitempty"`
	// IfLoaded runs the action only on a unit the manager has (not missing, not masked): set on the
	// reloads and restarts a rollback runs again, which must not fail on a unit the refresh added or
	// the rollback masked again.
	IfLoaded bool `json:"ifLoaded,omitempty"`
}

// Verb is what the action does, as every printer says it: reload, restart, daemon-reload.
func (a UnitAction) Verb() string {
	if a.Action == allowlist.ActionDaemonReload {
		return "daemon-reload"
	}
	return strings.ToLower(string(a.Action))
}

// Target is what the action acts on: a unit, "static pod NS/NAME", or "systemd" (a daemon-reload).
func (a UnitAction) Target() string {
	switch {
	case a.Action == allowlist.ActionDaemonReload:
		return "systemd"
	case a.Pod != "":
		return "static pod " + a.Pod
	}
	return a.Unit
}

// String is the action as diff, apply --dry-run and apply print it ("reload crio.service",
// "daemon-reload systemd", "restart static pod kube-system/x (through the CRI)").
func (a UnitAction) String() string {
	s := a.Verb() + " " + a.Target()
	if a.Pod != "" {
		s += " (through the CRI)"
	}
	return s
}

// FileOp is a file to write (Remove false) or delete. Its contents are decoded when they are written,
// one file at a time, so a large payload's files are never all held decoded at once.
type FileOp struct {
	Path     string
	Remove   bool
	source   types.File
	Mode     int
	User     types.NodeUser
	Group    types.NodeGroup
	Action   allowlist.Action
	Services []string
	Pods     []string
	// ModeCeiling and Owner are the node policy's bounds for the file (Decision), checked again on the
	// node once owners are resolved.
	ModeCeiling allowlist.Mode
	Owner       string
	// Within is what the node policy named of the path (Decision.Within): below it no directory may
	// be a mount point.
	Within string
	// Unit is set on a unit file or dropin written for the node policy's unit rule of that unit: the
	// only way anything under /etc/systemd is written.
	Unit string
	// inline holds a unit file's or dropin's contents (Ignition gives them as plain strings).
	inline []byte
}

// Write is one file a refresh writes or removes on the node. Mode is octal; never contents.
type Write struct {
	Path   string `json:"path"`
	Remove bool   `json:"remove,omitempty"`
	Mode   string `json:"mode,omitempty"`
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
	// ModeCeiling and OwnerCeiling are the node policy's bounds the write was checked against.
	ModeCeiling  string `json:"modeCeiling,omitempty"`
	OwnerCeiling string `json:"ownerCeiling,omitempty"`
	// For says why: "file" (a payload file), "sshKeys" (core's authorized keys) or
	// "mcdCurrentConfig" (the machine-config daemon's record of the applied MachineConfig).
	For string `json:"for"`
}

// SSHKeysOp replaces core's authorized keys.
type SSHKeysOp struct {
	User string
	Keys []string
}

// ActionDelegated is the action of a delegated change.
const ActionDelegated = "Delegated"

// Inputs are what a plan is computed from.
type Inputs struct {
	Current, Desired *diff.Payload
	// NoRebootPaths are the ConfigMap's rules as parsed by allowlist.ParseRules.
	NoRebootPaths []allowlist.Rule
	Policy        *allowlist.Policy
	// Delegated maps paths someone else owns on this node to the reason: a change to one is listed
	// (action "Delegated") but neither written nor refused.
	Delegated map[string]string
}

// Build diffs the payloads and plans the result. It fails only when a payload's contents cannot be
// decoded; a forbidden change is a refusal, not an error.
func Build(in Inputs) (*Plan, error) {
	pol := in.Policy
	if pol == nil {
		pol = allowlist.Default()
	}
	changes, err := diff.Diff(in.Current, in.Desired)
	if err != nil {
		return nil, err
	}
	extra, warnings := pol.Extra(in.NoRebootPaths)
	managed := make([]string, 0, len(extra))
	for _, r := range extra {
		managed = append(managed, r.Path)
	}
	pol = pol.WithManaged(managed...) // a unit's command may not change them either (unit judge)
	p := &Plan{Changes: []Change{}, Actions: []UnitAction{}, Refused: []Refusal{}, Warnings: append([]string{}, warnings...),
		corePassword: corePassword(in.Desired), view: newUnitView(in.Current, in.Desired, pol)}
	for i := range changes {
		if reason, ok := in.Delegated[changes[i].Path]; ok && changes[i].Kind == diff.KindFile {
			c := changes[i]
			p.Changes = append(p.Changes, Change{Kind: c.Kind, Op: c.Op, Path: c.Path, Eligible: true, Action: ActionDelegated,
				Detail: c.Detail, Delegated: true, Reason: reason})
			continue
		}
		if err := p.add(&changes[i], pol, extra); err != nil {
			return nil, err
		}
	}
	p.checkMachineConfig(in.Current, in.Desired)
	p.checkNesting()
	p.checkActedUnits(in.Current, in.Desired, pol, p.view)
	if err := p.checkReaders(); err != nil {
		return nil, err
	}
	p.checkStops(in.Current, pol)
	p.warnAbsentInstallTargets()
	p.checkJournal()
	p.boundTexts()
	p.Eligible = len(p.Refused) == 0
	if p.Eligible {
		p.Actions = p.orderActions()
	} else {
		// Refused whole: nothing of it is ever applied.
		p.Files, p.SSHKeys = nil, nil
		p.Drain, p.DrainReasons = false, nil
	}
	return p, nil
}

func (p *Plan) add(c *diff.Change, pol *allowlist.Policy, extra []allowlist.Rule) error {
	out := Change{Kind: c.Kind, Op: c.Op, Path: c.Path, Unit: c.Unit, User: c.User, Detail: c.Detail}
	refuse := func(reason string) {
		p.Refused = append(p.Refused, Refusal{Kind: c.Kind, Path: c.Path, Unit: c.Unit, User: c.User, Reason: reason})
		p.Changes = append(p.Changes, out)
	}
	switch c.Kind {
	case diff.KindFile:
		if why := allowlist.FirstBootOnly(c.Path); why != "" {
			out.Eligible, out.Skipped = true, why
			break
		}
		op, eff, reason, err := planFile(c, pol, extra, &p.judged)
		if err != nil {
			return err
		}
		if reason != "" {
			refuse(reason)
			return nil
		}
		out.Eligible, out.Action, out.Services, out.Pods = true, string(op.Action), op.Services, op.Pods
		if !op.Remove {
			out.ModeCeiling, out.OwnerCeiling = op.ModeCeiling.String(), op.Owner
		}
		p.Files = append(p.Files, op)
		p.take(&out, eff, "file "+c.Path)
	case diff.KindSSHKeys:
		if !hasRealKey(c.Keys) && !p.corePassword {
			// As the machine-config daemon refuses it (verifyUserFields, machine-config-operator
			// pkg/controller/common/reconcile.go: core must keep a key or a password hash). Blank
			// entries and comments are no key: [""] or ["# none"] leaves core as locked out as [].
			refuse("SSH authorized keys of core: the desired config removes every key of core and gives core no password hash, " +
				"so no one could log in as core any more (the machine-config daemon refuses this too)")
			return nil
		}
		if !pol.CoreSSHKeys {
			reason := "SSH authorized keys of core: not allowed by the node policy"
			if pol.SSHKey.Reboot {
				reason = "SSH authorized keys of core: node policy rule " + pol.SSHKey.Name + " says Reboot, and a refresh never reboots"
			}
			refuse(reason)
			return nil
		}
		out.Eligible = true
		p.SSHKeys = &SSHKeysOp{User: c.User, Keys: c.Keys}
		p.take(&out, pol.SSHKey, "SSH authorized keys of core")
	case diff.KindUnit:
		ops, state, eff, reason := planUnit(c, pol, p.view)
		if reason != "" {
			refuse(reason)
			return nil
		}
		out.Eligible = true
		out.Action, out.Services = summary(eff)
		for _, a := range state {
			out.States = append(out.States, a.Action)
		}
		p.Files = append(p.Files, ops...)
		p.states = append(p.states, state...)
		p.take(&out, eff, "unit "+c.Unit)
	default:
		refuse(refusalReason(c))
		return nil
	}
	p.Changes = append(p.Changes, out)
	return nil
}

// hasRealKey reports whether keys hold at least one line that sshd could take as a key: not blank
// and not a comment (an entry may hold several lines).
func hasRealKey(keys []string) bool {
	for _, k := range keys {
		for _, line := range strings.Split(k, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				return true
			}
		}
	}
	return false
}

// corePassword reports whether the payload gives core a non-empty password hash.
func corePassword(des *diff.Payload) bool {
	for _, u := range des.Config.Passwd.Users {
		if u.Name == diff.CoreUser && u.PasswordHash != nil && *u.PasswordHash != "" {
			return true
		}
	}
	return false
}

// checkMachineConfig refuses a desired payload whose MachineConfig cannot be trusted: apply writes it
// verbatim to the machine-config daemon's baseline, so it must say what the outer config says; and
// a payload that drops the MachineConfig hides its reboot-class fields.
func (p *Plan) checkMachineConfig(cur, des *diff.Payload) {
	refuse := func(detail, reason string) {
		p.Changes = append(p.Changes, Change{Kind: diff.KindMachineConfig, Op: diff.OpModify, Detail: detail})
		p.Refused = append(p.Refused, Refusal{Kind: diff.KindMachineConfig, Reason: reason})
	}
	if diff.MachineConfigDropped(cur, des) {
		refuse("MachineConfig metadata removed",
			"the desired payload carries no MachineConfig while the current one does: cannot verify reboot-class fields")
	}
	if why := diff.CheckEmbedded(des); why != "" {
		refuse("embedded MachineConfig disagrees with the Ignition config", why+EmbeddedFix)
	}
}

// EmbeddedFix ends the refusal of a payload whose embedded MachineConfig disagrees: how to make one
// that agrees. A hand edit (jq) changes the outer config only.
const EmbeddedFix = " (edit payloads with `refresh-agent payload set-file|remove-file|set-ssh-keys`, " +
	"which change the embedded MachineConfig too; an edit of the outer config alone, e.g. with jq, leaves it behind)"

// refusalReason words the refusal of every change kind the agent never applies.
func refusalReason(c *diff.Change) string {
	switch c.Kind {
	case diff.KindKernelArguments:
		return "kernel arguments change requires a reboot (" + c.Detail + ")"
	case diff.KindOSImage:
		return "OS image change requires a reboot (" + c.Detail + ")"
	case diff.KindFIPS:
		return "FIPS mode change requires a reboot (" + c.Detail + ")"
	case diff.KindKernelType:
		return "kernel type change requires a reboot (" + c.Detail + ")"
	case diff.KindExtensions:
		return "extensions change requires a reboot (" + c.Detail + ")"
	case diff.KindStorage:
		return "storage change requires reprovisioning: " + c.Detail
	case diff.KindPasswd:
		return "passwd change is not allowed (only core's SSH keys may change): " + c.Detail
	case diff.KindDirectory, diff.KindLink:
		return c.Detail + ": directories and links are not changed by a refresh"
	case diff.KindUnit:
		return c.Detail + ": systemd units and dropins are not changed by a refresh"
	case diff.KindIgnition:
		return c.Detail + ": the effective config would depend on configs not in the payload"
	default:
		return fmt.Sprintf("%s change is not supported: %s", c.Kind, c.Detail)
	}
}

// planFile checks one file change against the policy and the entry's own safety rules, and decodes
// the contents to write. reason is non-empty when the change is refused.
func planFile(c *diff.Change, pol *allowlist.Policy, extra []allowlist.Rule, judged *int) (FileOp, allowlist.Effects, string, error) {
	op, reason, err := checkFile(c, pol, extra)
	if reason == "" && err == nil {
		reason = judgeContents(op, judged)
	}
	if reason != "" || err != nil {
		return FileOp{}, allowlist.Effects{}, reason, err
	}
	d := pol.Resolve(c.Path, extra)
	eff := d.Effects
	// The agent's own rule format: one action on every service it names (recovery derives what it
	// may run by the same function: mayRun).
	eff.Steps = fileSteps(eff, d.Action, d.Services)
	if eff.Special {
		why, err := registriesChange(c)
		if err != nil {
			return FileOp{}, eff, fmt.Sprintf("file %s: %v", c.Path, err), nil
		}
		if why != "" {
			why = diff.ShortWords(diff.QuotedCut(why)) // a registry's location is the file's text (r25 c/05)
			eff.Drain = true
			eff.Name = "the registries.conf change is not safe without a drain (" + why + "), as the machine-config daemon judges it"
		}
	}
	return op, eff, "", nil
}

// checkFile checks one file change against the policy and the entry's own safety rules, and
// prepares the contents to write. reason is non-empty when the change is refused.
func checkFile(c *diff.Change, pol *allowlist.Policy, extra []allowlist.Rule) (FileOp, string, error) {
	if err := allowlist.CheckPayloadPath(c.Path); err != nil {
		return FileOp{}, "file path " + err.Error(), nil
	}
	if c.DirtyPath || !path.IsAbs(c.Path) || path.Clean(c.Path) != c.Path {
		return FileOp{}, fmt.Sprintf("file %s: path is not absolute and clean", c.Path), nil
	}
	if err := CheckName(c.Path); err != nil {
		return FileOp{}, "file " + err.Error(), nil
	}
	d := pol.Resolve(c.Path, extra)
	if !d.Allowed {
		return FileOp{}, fmt.Sprintf("file %s: %s", c.Path, d.Reason), nil
	}
	op := FileOp{Path: c.Path, Action: d.Action, Services: d.Services, Pods: d.Pods, Within: d.Within}
	if c.New == nil {
		op.Remove = true
		return op, "", nil
	}
	f := *c.New
	if scheme := diff.SourceScheme(f); scheme != "" && scheme != "data" {
		return FileOp{}, fmt.Sprintf("file %s: contents come from a remote source (%s); only inline data is applied", c.Path, scheme), nil
	}
	if len(f.Append) > 0 {
		return FileOp{}, fmt.Sprintf("file %s: append is not supported; give the whole contents", c.Path), nil
	}
	mode := diff.FileMode(f)
	if mode&0o7000 != 0 {
		return FileOp{}, fmt.Sprintf("file %s: mode %04o sets setuid, setgid or sticky bits", c.Path, mode), nil
	}
	if mode < 0 || mode > 0o777 {
		return FileOp{}, fmt.Sprintf("file %s: mode %o is not a file permission", c.Path, mode), nil
	}
	// An id the kernel cannot store would be truncated on write (2^32+1000 becomes core's 1000):
	// what is written must be what was planned.
	for i, id := range []*int{f.User.ID, f.Group.ID} {
		if id != nil && (*id < 0 || *id > MaxID) {
			return FileOp{}, fmt.Sprintf("file %s: %s id %d is out of range (0 to %d)", c.Path, []string{"user", "group"}[i], *id, MaxID), nil
		}
	}
	if why := checkCeiling(c.Path, d, mode, f.User, f.Group); why != "" {
		return FileOp{}, why, nil
	}
	op.ModeCeiling, op.Owner = d.ModeCeiling, d.Owner
	// Ignition's validation checked the data URL; what it cannot check is compressed contents.
	if f.Contents.Compression != nil && *f.Contents.Compression != "" {
		if err := diff.CheckFileContents(f); err != nil {
			return FileOp{}, "", fmt.Errorf("%s: %w", c.Path, err)
		}
	}
	op.source, op.Mode, op.User, op.Group = f, mode, f.User, f.Group
	return op, "", nil
}

// Contents decodes the file's contents (nil for a removal).
func (f FileOp) Contents() ([]byte, error) {
	if f.Remove {
		return nil, nil
	}
	if f.Unit != "" {
		return f.inline, nil
	}
	data, err := diff.FileContents(f.source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return data, nil
}

// Size is the size of the contents Contents decodes (0 for a removal), without keeping them: what
// the transaction's space check charges for the file.
func (f FileOp) Size() (int64, error) {
	switch {
	case f.Remove:
		return 0, nil
	case f.Unit != "":
		return int64(len(f.inline)), nil
	}
	n, err := diff.ContentSize(f.source)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.Path, err)
	}
	return n, nil
}

// unitRank orders well-known units: the CA trust update must run before crio so crio picks up the
// new bundle, and crio before the kubelet that depends on it. Others follow by name.
var unitRank = map[string]int{allowlist.UnitUpdateCA: 0, allowlist.UnitCrio: 1, allowlist.UnitKubelet: 2}

func rank(u string) int {
	if r, ok := unitRank[u]; ok {
		return r
	}
	return len(unitRank)
}

// orderActions deduplicates the changes' actions (a unit asked to reload and restart is restarted
// once; systemd's unit files are reloaded once) and orders them deterministically: the daemon
// reload first, so that restarts see the new unit files, then units, then static pods, which may
// depend on them (a pod restart needs crio).
func (p *Plan) orderActions() []UnitAction {
	out := orderStates(p.states)
	if p.daemonReload {
		out = append(out, UnitAction{Action: allowlist.ActionDaemonReload})
	}
	out = append(out, orderUnits(p.steps)...)
	return append(out, orderPods(p.pods)...)
}

// take records what an eligible change asks: its actions for orderActions, its drain for the plan.
func (p *Plan) take(out *Change, eff allowlist.Effects, what string) {
	p.steps = append(p.steps, eff.Steps...)
	p.pods = append(p.pods, out.Pods...)
	if eff.DaemonReload {
		p.daemonReload = true
		out.DaemonReload = true
	}
	if eff.Drain {
		why := "node policy rule " + eff.Name + " says Drain"
		if eff.Special {
			why = eff.Name
		}
		p.Drain, out.Drain = true, true
		p.DrainReasons = append(p.DrainReasons, what+": "+why)
	}
	if !eff.Special {
		out.Rule = eff.Name // a NodeDisruptionPolicy rule (files[2] (/etc/foo)), "" for the agent's own
	}
}

func summary(eff allowlist.Effects) (string, []string) {
	a, units := allowlist.ActionNone, []string(nil)
	for _, s := range eff.Steps {
		if s.Action == allowlist.ActionRestart || a == allowlist.ActionNone {
			a = s.Action
		}
		if !slices.Contains(units, s.Unit) {
			units = append(units, s.Unit)
		}
	}
	return string(a), units
}

func orderPods(list []string) []UnitAction {
	var pods []string
	for _, p := range list {
		if !slices.Contains(pods, p) {
			pods = append(pods, p)
		}
	}
	slices.Sort(pods)
	out := make([]UnitAction, 0, len(pods))
	for _, p := range pods {
		out = append(out, UnitAction{Pod: p, Action: allowlist.ActionRestart})
	}
	return out
}

func orderUnits(steps []allowlist.Step) []UnitAction {
	want := map[string]allowlist.Action{}
	for _, s := range steps {
		if s.Action == allowlist.ActionRestart || want[s.Unit] == "" {
			want[s.Unit] = s.Action
		}
	}
	out := make([]UnitAction, 0, len(want))
	for u, a := range want {
		if a == allowlist.ActionNone {
			continue
		}
		out = append(out, UnitAction{Unit: u, Action: a})
	}
	slices.SortFunc(out, func(a, b UnitAction) int {
		if ra, rb := rank(a.Unit), rank(b.Unit); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Unit, b.Unit)
	})
	return out
}

// MaxID is the largest uid or gid a file can have ((uid_t)-1 means "unchanged" to chown); the
// node's passwd and group ids are read within it too (actions.ParseID).
const MaxID = 1<<32 - 2

// checkNesting refuses a written file that is also a parent directory of another written file
// (/etc/docker/certs.d/a and /etc/docker/certs.d/a/ca.crt): both cannot exist, and the plan would
// promise what no run can do. It refuses too a plan whose writes have more than MaxDirs distinct
// parent directories, each one a node may have to create and journal, or whose paths hold more
// than MaxComponentsTogether components together. Each directory's nearest
// written ancestor is found once (memoized), so the walk costs the paths' total length.
func (p *Plan) checkNesting() {
	written := map[string]bool{}
	for _, f := range p.Files {
		if !f.Remove {
			written[f.Path] = true
		}
	}
	above := map[string]string{} // a parent directory → the nearest written file at or above it, or ""
	components := 0
	for _, f := range p.Files {
		if components += strings.Count(f.Path, "/"); components > MaxComponentsTogether {
			p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
				"storage.files: the files' paths hold more than %d components together (at %s), each one a directory every node checks: split the change", MaxComponentsTogether, shorten(f.Path))})
			return
		}
		if f.Remove {
			continue
		}
		var walked []string
		found := ""
		Ancestors(f.Path, func(dir string) bool {
			if w, ok := above[dir]; ok {
				found = w
				return false
			}
			walked = append(walked, dir)
			if written[dir] {
				found = dir
				return false
			}
			return len(above)+len(walked) <= MaxDirs
		})
		for _, d := range walked {
			above[d] = found
		}
		if len(above) > MaxDirs {
			p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
				"storage.files: the files are in more than %d directories (at %s), each one a node may have to create: split the change", MaxDirs, shorten(f.Path))})
			return
		}
		if found != "" {
			p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Path: f.Path,
				Reason: fmt.Sprintf("file %s: its parent %s is also a file of the payload", f.Path, found)})
		}
	}
}
