package plan

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// Under a unit rule a payload may change only the unit settings the judge models: the judge's model
// is the boundary, not a list of settings found dangerous one adversary round at a time. A setting
// is changed when its sequence of assignments (unit file, then dropins in systemd's order) differs
// from the node's current definition, or only the desired definition has it; a new unit changes
// everything. Each changed setting present in the desired definition must be in modeledSettings,
// with a value its check accepts. Settings the node already had, unchanged, stay as they are.

// optKey is a unit setting: section and key, case-sensitive as systemd reads them.
type optKey struct{ section, key string }

func (k optKey) String() string { return "[" + k.section + "] " + k.key + "=" }

// sysOption is one assignment as systemd reads it.
type sysOption struct{ section, key, value string }

// readSystemdUnit reads a unit file or dropin as systemd's config_parse does (src/shared/conf-parser.c,
// systemd 252 and later): a line ends at \n, \r\n, \r or NUL; a line whose first non-blank byte is
// # or ; is skipped, also in the middle of a continuation (it neither continues nor ends one); a line
// ending in an odd run of backslashes continues, the last backslash becoming a space; the UTF-8 byte
// order mark is dropped once; assignments outside any section, and lines without a key or without
// =, are ignored as systemd ignores them. Invalid UTF-8 and a bad section header are errors (the
// unit would not load as written).
func readSystemdUnit(text string) ([]sysOption, error) {
	if err := diff.CheckUnitText(text); err != nil {
		return nil, err
	}
	var out []sysOption
	section, haveSection, bomSeen := "", false, false
	var cont []byte // the continuation so far (systemd's is bounded by LONG_LINE_MAX)
	inCont := false
	lineNo := 0
	parse := func(l string) error {
		l = strings.Trim(l, " \t\n\r")
		if l == "" {
			return nil
		}
		if !utf8.ValidString(l) {
			return fmt.Errorf("line %d: not valid UTF-8", lineNo)
		}
		if l[0] == '[' {
			if l[len(l)-1] != ']' || len(l) < 2 {
				return fmt.Errorf("line %d: invalid section header", lineNo)
			}
			n := l[1 : len(l)-1]
			if strings.ContainsFunc(n, func(r rune) bool { return r < ' ' || r == 0x7f || strings.ContainsRune("\"'\\", r) }) {
				return fmt.Errorf("line %d: bad characters in section header", lineNo)
			}
			section, haveSection = n, true
			return nil
		}
		if !haveSection {
			return nil
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil
		}
		out = append(out, sysOption{section: section, key: strings.Trim(k, " \t\n\r"), value: strings.Trim(v, " \t\n\r")})
		return nil
	}
	for _, buf := range systemdLines(text) {
		lineNo++
		if l := strings.TrimLeft(buf, " \t\n\r"); l != "" && (l[0] == '#' || l[0] == ';') {
			continue
		}
		l := buf
		if !bomSeen && strings.HasPrefix(buf, "\xef\xbb\xbf") {
			l, bomSeen = buf[3:], true
		}
		if !inCont {
			cont = cont[:0]
		}
		cont = append(cont, l...)
		if len(cont) > maxContinuation {
			return nil, fmt.Errorf("line %d: continuation line too long", lineNo)
		}
		if n := len(cont) - len(bytes.TrimRight(cont, `\`)); n%2 == 1 {
			cont[len(cont)-1] = ' '
			inCont = true
			continue
		}
		if err := parse(string(cont)); err != nil {
			return nil, err
		}
		inCont = false
	}
	if inCont {
		lineNo++
		if err := parse(string(cont)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxContinuation is systemd's LONG_LINE_MAX: a longer continued line fails the unit's load.
const maxContinuation = 1 << 20

// systemdLines splits text at the line ends systemd's read_line knows: \n, \r\n, \r and NUL.
func systemdLines(text string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n', 0:
			lines = append(lines, text[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, text[start:i])
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(text) {
		lines = append(lines, text[start:])
	}
	return lines
}

// unitDefinition is what systemd loads of a unit as the payload defines it: each setting's
// assignments in order, the unit file first (none when masked: the mask is what loads), then the
// *.conf dropins in the order systemd reads them (by name).
func unitDefinition(u *types.Unit, withContents bool) (map[optKey][]string, error) {
	def := map[optKey][]string{}
	if u == nil {
		return def, nil
	}
	if err := unitTexts(u.Contents, u.Dropins); err != nil {
		return nil, err
	}
	files := []struct {
		name string
		text *string
	}{}
	if withContents {
		files = append(files, struct {
			name string
			text *string
		}{"", u.Contents})
	}
	dropins := slices.Clone(u.Dropins)
	sort.SliceStable(dropins, func(i, j int) bool { return dropins[i].Name < dropins[j].Name })
	for _, d := range dropins {
		if !strings.HasSuffix(d.Name, ".conf") {
			continue // systemd reads only *.conf dropins: the others are files, not settings
		}
		files = append(files, struct {
			name string
			text *string
		}{d.Name, d.Contents})
	}
	for _, f := range files {
		if f.text == nil {
			continue
		}
		opts, err := readSystemdUnit(*f.text)
		if err != nil {
			if f.name != "" {
				return nil, fmt.Errorf("dropin %s: %v", f.name, err)
			}
			return nil, err
		}
		for _, o := range opts {
			k := optKey{o.section, o.key}
			def[k] = append(def[k], o.value)
		}
	}
	return def, nil
}

// changedOptions are the settings whose assignments differ between the two definitions, or that
// only one of them has (a removal is a change too).
func changedOptions(old, des map[optKey][]string) map[optKey]bool {
	out := map[optKey]bool{}
	for k, v := range des {
		if !slices.Equal(old[k], v) {
			out[k] = true
		}
	}
	for k := range old {
		if _, ok := des[k]; !ok {
			out[k] = true
		}
	}
	return out
}

// readsAsSystemdReads says how the judge's reading of a unit text (go-systemd's lexer, which
// unitFileProps uses) differs from systemd's, or "": a backslash run, a comment line in or after a
// continuation, a carriage return or NUL inside a line would otherwise hide a setting from the
// judge that systemd applies.
func readsAsSystemdReads(text string) string {
	theirs, err := readSystemdUnit(text)
	if err != nil {
		return err.Error()
	}
	ours, err := allowlist.UnitOptions(text)
	if err != nil {
		return "" // refused by unitFileProps with go-systemd's own error
	}
	for i := 0; i < len(ours) || i < len(theirs); i++ {
		if i >= len(ours) {
			return fmt.Sprintf("systemd reads [%s] %s= where the judge reads nothing", theirs[i].section, theirs[i].key)
		}
		o := ours[i]
		v := strings.Trim(strings.ReplaceAll(o.Value, "\\\n", " "), " \t\n\r")
		if i >= len(theirs) {
			return fmt.Sprintf("the judge reads [%s] %s= where systemd reads nothing", o.Section, o.Name)
		}
		if t := theirs[i]; t.section != o.Section || t.key != o.Name || t.value != v {
			// Named by keys and lengths, never values: a value may be a secret (Environment=).
			return fmt.Sprintf("systemd reads [%s] %s= (a value of %d bytes) where the judge reads [%s] %s= (a value of %d bytes)",
				t.section, t.key, len(t.value), o.Section, o.Name, len(v))
		}
	}
	return ""
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// keyCtx is what a modeled setting's check sees: the desired value(s) and what else the desired
// and current definitions say.
type keyCtx struct {
	unit     string
	key      optKey
	values   []string // the desired assignments of this setting, in order
	des, old map[optKey][]string
	pol      *allowlist.Policy
}

// last is the setting's effective single value: a later assignment replaces an earlier one, an
// empty one resets to the default.
func (c keyCtx) last() string {
	if len(c.values) == 0 {
		return ""
	}
	return c.values[len(c.values)-1]
}

// list is a list setting's effective entries in def (an empty assignment resets the list),
// specifiers resolved.
func list(unitName string, vs []string) []string {
	var out []string
	for _, v := range vs {
		if v == "" {
			out = nil
			continue
		}
		for _, f := range strings.Fields(v) {
			out = append(out, allowlist.ResolveSpecifiers(unitName, f))
		}
	}
	return out
}

// added are the entries of the setting's desired list the current definition does not have.
func (c keyCtx) added() []string {
	have := map[string]bool{} // a set: a unit may name tens of thousands (adversary r25 c/02, quadratic)
	for _, u := range list(c.unit, c.old[c.key]) {
		have[u] = true
	}
	var out []string
	for _, u := range list(c.unit, c.values) {
		if !have[u] {
			out = append(out, u)
		}
	}
	return out
}

// modeledSetting is one row of the table: settings of a section the judge models, the values they
// may take when a payload changes them (for the docs), and the check of those values ("" accepts).
type modeledSetting struct {
	section string
	keys    []string
	values  string
	check   func(keyCtx) string
}

// The value checks judge each assignment the node's definition of the setting does not have, not
// only the last: systemd ignores an assignment it cannot parse, for most settings an empty one too,
// and keeps the one before (systemd 252: Type=forking then Type= stays forking, NotifyAccess=all
// then NotifyAccess= stays all, and Type=notify-reload, which 252 does not know, leaves an earlier
// Type=forking in force). The node's own values stay as they are.

func oneOf(vals ...string) func(keyCtx) string {
	return func(c keyCtx) string {
		for _, v := range c.newValues() {
			if v != "" && !slices.Contains(vals, v) {
				return fmt.Sprintf("%s: not one of %s", short(v), strings.Join(vals, ", "))
			}
		}
		return ""
	}
}

func intRange(lo, hi int) func(keyCtx) string {
	return func(c keyCtx) string {
		for _, v := range c.newValues() {
			if v == "" {
				continue
			}
			if n, err := strconv.Atoi(v); err != nil || n < lo || n > hi {
				return fmt.Sprintf("%s: not a number from %d to %d", short(v), lo, hi)
			}
		}
		return ""
	}
}

// yesNo: a boolean systemd parses (parse_boolean); an empty or unparsable assignment is ignored by
// systemd, which keeps the one before, while unitFileProps reads the last (DefaultDependencies=no
// then DefaultDependencies= would be judged with the defaults the unit does not have).
func yesNo(c keyCtx) string {
	for _, v := range c.newValues() {
		switch strings.ToLower(v) {
		case "1", "yes", "y", "true", "t", "on", "0", "no", "n", "false", "f", "off":
		default:
			return fmt.Sprintf("%s: not yes or no", short(v))
		}
	}
	return ""
}

var conditionKinds = []string{"Architecture", "Firmware", "Virtualization", "Host", "KernelCommandLine", "KernelVersion",
	"Credential", "Environment", "Security", "Capability", "ACPower", "NeedsUpdate", "FirstBoot", "PathExists",
	"PathExistsGlob", "PathIsDirectory", "PathIsSymbolicLink", "PathIsMountPoint", "PathIsReadWrite", "PathIsEncrypted",
	"DirectoryNotEmpty", "FileNotEmpty", "FileIsExecutable", "User", "Group", "ControlGroupController", "Memory",
	"CPUs", "CPUFeature", "OSRelease", "MemoryPressure", "CPUPressure", "IOPressure"}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// execKeys are the settings that hold the commands the exec judge judges.
var execKeys = []string{"ExecCondition", "ExecStartPre", "ExecStart", "ExecStartPost", "ExecReload", "ExecStop", "ExecStopPost"}

var limitKeys = []string{"LimitCPU", "LimitFSIZE", "LimitDATA", "LimitSTACK", "LimitCORE", "LimitRSS", "LimitNOFILE",
	"LimitAS", "LimitNPROC", "LimitMEMLOCK", "LimitLOCKS", "LimitSIGPENDING", "LimitMSGQUEUE", "LimitNICE", "LimitRTPRIO", "LimitRTTIME"}

// modeledSettings is the boundary: what a payload may change in a unit under a unit rule. Every
// other setting, and every setting of a section other than these three, is refused when changed.
// Kept to what the judge reads (JudgeUnit, the exec judge, judgeEnvironment) and to what only
// tunes or restricts the unit itself; docs/security.md shows this table (checked by a test).
var modeledSettings = []modeledSetting{
	{"Unit", []string{"Description", "Documentation"}, "any", nil},
	{"Unit", []string{"Requires", "Requisite", "Wants", "BindsTo", "Upholds", "OnFailure", "OnSuccess"},
		"units JudgeUnit accepts (none that stops the system or is essential); each added entry judged by DependencyIdentity (as UnitIdentity judges a name, an alias as its unit, but for the boot's own targets: no special, power, essential, OS updater's, MCD's or provisioning unit, no instance of an unsafe template such as systemd-fsck@ or user@); a BindsTo= entry as PartOf='s", checkStarts},
	{"Unit", []string{"PartOf", "StopPropagatedFrom"}, "units JudgeUnit accepts; each added entry judged by DependencyIdentity, and only the unit's own (myapp.target, myapp-helper.service for myapp.service), a target, or a service a unit rule names (one not saying Reboot): the unit follows the named unit's stop or restart, and a service no rule names is no evidence of safety", checkStarts},
	{"Unit", []string{"Before", "After"}, "units JudgeUnit accepts; each added entry names one unit (no prefix drop-in or type name, no unresolvable D-Bus alias); no added entry in both (an ordering cycle), and with default dependencies no added Before= of the early boot's targets (" +
		strings.Join(earlyBoot, ", ") + ": a cycle through the After=basic.target the defaults add)", checkOrderingNames},
	{"Unit", []string{"Conflicts"}, "added entries only the units every ordinary unit conflicts with (" +
		strings.Join(allowlist.ConflictOK(), ", ") + ")", checkStopReach},
	{"Unit", []string{"PropagatesStopTo"}, "added entries only services a unit rule names (one not saying Reboot), never a target: the unit's stop stops them", checkFollowers},
	{"Unit", []string{"DefaultDependencies", "RefuseManualStart", "RefuseManualStop", "StopWhenUnneeded"}, "yes or no (each assignment: systemd ignores an empty or unparsable one and keeps the one before)", yesNo},
	{"Unit", prefixed("Condition", conditionKinds), "any (a condition only tests)", nil},
	{"Unit", prefixed("Assert", conditionKinds), "any (an assertion only tests)", nil},
	{"Unit", []string{"StartLimitIntervalSec", "StartLimitInterval", "StartLimitBurst", "JobTimeoutSec", "JobRunningTimeoutSec",
		"SuccessActionExitStatus", "FailureActionExitStatus"}, "any", nil},
	{"Unit", []string{"SuccessAction", "FailureAction", "JobTimeoutAction", "StartLimitAction", "OnFailureJobMode",
		"OnSuccessJobMode", "RebootArgument", "JobTimeoutRebootArgument"}, "what JudgeUnit accepts (actions none, job modes fail or replace, no reboot argument)", nil},
	{"Service", []string{"Type"}, "simple, exec, oneshot, notify, notify-reload, idle (not forking: with PIDFile= the manager adopts another daemon's PID as $MAINPID; not dbus)",
		oneOf("simple", "exec", "oneshot", "notify", "notify-reload", "idle")},
	{"Service", execKeys, "commands the exec judge accepts (changed lines judged strictly)", nil},
	{"Service", []string{"Restart"}, "no, on-success, on-failure, on-abnormal, on-watchdog, on-abort, always",
		oneOf("no", "on-success", "on-failure", "on-abnormal", "on-watchdog", "on-abort", "always")},
	{"Service", []string{"RestartSec", "RestartSteps", "RestartMaxDelaySec", "RestartPreventExitStatus", "RestartForceExitStatus",
		"SuccessExitStatus", "TimeoutSec", "TimeoutStartSec", "TimeoutStopSec", "TimeoutAbortSec", "RemainAfterExit",
		"WatchdogSec", "StartLimitInterval", "StartLimitBurst"}, "any", nil},
	{"Service", []string{"RuntimeMaxSec"}, "any, when the unit is not Type=forking and has no PIDFile=", checkRuntimeMax},
	{"Service", []string{"NotifyAccess"}, "main, exec, none (not all: any process of the unit could send the manager MAINPID= of another daemon, kubelet's, which a restart or kill $MAINPID then signals)", oneOf("main", "exec", "none")},
	{"Service", []string{"FailureAction", "StartLimitAction", "RebootArgument"}, "what JudgeUnit accepts (the legacy spellings of the [Unit] actions)", nil},
	{"Service", []string{"Environment", "EnvironmentFile", "UnsetEnvironment", "PassEnvironment"}, "what the environment judge accepts", nil},
	{"Service", []string{"User", "Group"}, "any, unless the unit then runs as another user than root (a User=, Group= or DynamicUser= not root) with a *Directory= that is, holds or lies under a path the node policy manages (its rules' paths and ceiling prefixes): systemd hands those directories, recursively, to the unit's user", checkDirectoryOwner},
	{"Service", []string{"WorkingDirectory"}, "what the exec judge accepts (nothing under /proc, /sys, /dev)", nil},
	{"Service", []string{"StandardOutput", "StandardError"}, "inherit, null, journal, kmsg, journal+console, kmsg+console (not tty: the console's device; not fd:, socket, file:, append:, truncate:)",
		oneOf("inherit", "null", "journal", "kmsg", "journal+console", "kmsg+console")},
	{"Service", []string{"StandardInput"}, "null (tty* would take the console from its getty for a program of the payload's choice)", oneOf("null")},
	{"Service", []string{"SyslogIdentifier", "SyslogLevel", "SyslogFacility", "SyslogLevelPrefix", "LogLevelMax"}, "any", nil},
	{"Service", []string{"KillMode"}, "control-group, mixed, process (not none)", oneOf("control-group", "mixed", "process")},
	{"Service", []string{"KillSignal", "FinalKillSignal", "SendSIGKILL", "SendSIGHUP"}, "any", nil},
	{"Service", dirKeys, "the unit's own directories: each added entry's first component is the unit's name (myapp for myapp.service) or starts with it and a dash; " +
		"none that is, holds or lies under a path the node policy manages when the unit runs as another user than root (as User=, Group=)", checkDirectories},
	{"Service", []string{"RuntimeDirectoryMode", "StateDirectoryMode", "CacheDirectoryMode", "LogsDirectoryMode", "ConfigurationDirectoryMode"},
		"octal modes of at most 0755: no group or other write (others could replace what the unit and a refresh keep there), no setuid, setgid or sticky bit", checkDirectoryMode},
	{"Service", []string{"RuntimeDirectoryPreserve"}, "any", nil},
	{"Service", limitKeys, "any (the unit's own resource limits)", nil},
	{"Service", []string{"Nice"}, "0 to 19 (never above the default priority)", intRange(0, 19)},
	{"Service", []string{"OOMScoreAdjust"}, "0 to 1000 (never less likely to be killed than the node's services)", intRange(0, 1000)},
	{"Service", []string{"CPUWeight", "IOWeight"}, "idle or 1 to 100 (never more than the default share)", checkWeight},
	{"Service", []string{"CPUQuota", "MemoryHigh", "MemoryMax", "TasksMax"}, "any (limits of the unit itself)", nil},
	{"Service", []string{"NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "ProtectKernelTunables",
		"ProtectKernelModules", "ProtectControlGroups", "ProtectClock", "ProtectHostname", "RestrictRealtime", "LockPersonality",
		"MemoryDenyWriteExecute"}, "any (each only restricts the unit's own sandbox)", nil},
	{"Install", []string{"WantedBy"}, "what JudgeUnit accepts (ordinary targets: a Wants= propagates no stop or restart); each added entry judged by DependencyIdentity", checkStarts},
	{"Install", []string{"RequiredBy", "UpheldBy"}, "added entries only services a unit rule names (one not saying Reboot), never a target: enabled, the named unit Requires= (Upholds=) this one, so the unit's restart or stop restarts or stops it (RequiredBy=sysinit.target: every service); each added entry judged by DependencyIdentity", checkFollowers},
	{"Install", []string{"Alias"}, "what JudgeUnit accepts (no alias)", nil},
	{"Install", []string{"Also"}, "added entries only units a unit rule names (each judged by DependencyIdentity)", checkAlso},
	{"Install", []string{"DefaultInstance"}, "any", nil},
}

// modeledIndex maps each modeled setting to its row.
var modeledIndex = func() map[optKey]*modeledSetting {
	m := map[optKey]*modeledSetting{}
	for i := range modeledSettings {
		for _, k := range modeledSettings[i].keys {
			m[optKey{modeledSettings[i].section, k}] = &modeledSettings[i]
		}
	}
	return m
}()

// checkStopReach: a Conflicts= or PropagatesStopTo= entry the payload adds may name only what
// every ordinary unit conflicts with (round 3: Conflicts=kubepods.slice, openvswitch.service and
// var.mount stopped the pods, the switch and /var when the unit started).
func checkStopReach(c keyCtx) string {
	for _, u := range c.added() {
		if !slices.Contains(allowlist.ConflictOK(), u) {
			return fmt.Sprintf("%s: a start or stop of the unit would stop %s; a payload may add only %s", u, u,
				strings.Join(allowlist.ConflictOK(), ", "))
		}
	}
	return ""
}

// earlyBoot are the targets a unit with default dependencies is ordered after (After=sysinit.target
// basic.target, and what those are ordered after).
var earlyBoot = []string{"sysinit.target", "basic.target", "local-fs.target", "local-fs-pre.target", "sockets.target",
	"paths.target", "timers.target", "slices.target", "swap.target", "cryptsetup.target", "veritysetup.target",
	"integritysetup.target", "systemd-journald.service", "systemd-udevd.service", "systemd-tmpfiles-setup.service"}

// checkOrdering refuses the ordering cycles a payload can make by itself: systemd breaks a cycle by
// deleting one of its jobs, which may be another unit's start at the next boot (kubelet's, with
// After=kubelet.service and Before=kubelet.service).
func checkOrdering(c keyCtx) string {
	before, after := map[string]bool{}, map[string]bool{}
	for _, u := range list(c.unit, c.des[optKey{"Unit", "Before"}]) {
		before[u] = true
	}
	for _, u := range list(c.unit, c.des[optKey{"Unit", "After"}]) {
		after[u] = true
	}
	for _, u := range c.added() {
		if before[u] && after[u] {
			return fmt.Sprintf("%s: the unit would be ordered both before and after %s, a cycle systemd breaks by deleting a job", u, u)
		}
		defaults := !isFalse(keyCtx{values: c.des[optKey{"Unit", "DefaultDependencies"}]}.last())
		if c.key.key == "Before" && defaults && slices.Contains(earlyBoot, u) {
			return fmt.Sprintf("%s: with default dependencies the unit is ordered after basic.target, so this is a cycle systemd breaks by deleting a job of the boot", u)
		}
	}
	return ""
}

// checkRuntimeMax: RuntimeMaxSec= kills the main process, which a forking unit with a PIDFile=
// may have adopted from another daemon.
func checkRuntimeMax(c keyCtx) string {
	// Any assignment: one systemd cannot parse after Type=forking leaves it forking.
	forking := slices.Contains(c.des[optKey{"Service", "Type"}], "forking")
	pid := slices.ContainsFunc(c.des[optKey{"Service", "PIDFile"}], func(v string) bool { return v != "" })
	if forking || pid {
		return c.last() + ": the unit is Type=forking or has a PIDFile=, so its main process may be another daemon's"
	}
	return ""
}

func checkWeight(c keyCtx) string {
	for _, v := range c.newValues() {
		if v == "" || v == "idle" {
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 100 {
			return fmt.Sprintf("%s: not idle or a number from 1 to 100", short(v))
		}
	}
	return ""
}

// checkOwnDirectories: the directories systemd creates, chowns to the unit's user and (for
// RuntimeDirectory=) removes when the unit stops must be the unit's own: RuntimeDirectory=crio
// would remove /run/crio, CRI-O's socket with it.
func checkOwnDirectories(c keyCtx) string {
	stem := strings.TrimSuffix(c.unit, ".service")
	stem, _, _ = strings.Cut(stem, "@")
	for _, v := range c.values {
		words, err := allowlist.SplitExec(v)
		if err != nil || len(words) > 1 {
			return fmt.Sprintf("a value of %d bytes (not shown) cannot be read as systemd reads it", len(v))
		}
		for _, w := range words {
			for _, e := range w {
				e = allowlist.ResolveSpecifiers(c.unit, e)
				if slices.Contains(list(c.unit, c.old[c.key]), e) {
					continue // the node's own
				}
				for _, d := range strings.Split(e, ":") {
					first, _, _ := strings.Cut(d, "/")
					if strings.Contains(d, "..") || (first != stem && !strings.HasPrefix(first, stem+"-")) {
						return fmt.Sprintf("%s: not the unit's own directory (%s or %s-…): systemd creates it, hands it to the unit's user and may remove it", d, stem, stem)
					}
					// Named after the unit, but configuration a root-run program reads or a row of
					// the audit (NetworkManager.service's RuntimeDirectory=NetworkManager/conf.d,
					// kubelet.service's StateDirectory=kubelet): no unit's own (round 11, exec 01).
					if roots := dirRoots[c.key.key]; len(roots) > 0 && d != "" {
						if why := allowlist.NeverOwn(path.Join(roots[0], d)); why != "" {
							return fmt.Sprintf("%s: %s, never a unit's own directory: systemd creates it, hands it to the unit's user and may remove it", d, why)
						}
					}
				}
			}
		}
	}
	return ""
}

// dirKeys are the settings naming the directories systemd creates for the unit (and, but for
// ConfigurationDirectory= when it exists already, chowns recursively to the unit's user); dirRoots
// are where each lies (with DynamicUser=, under private/ too).
var dirKeys = []string{"RuntimeDirectory", "StateDirectory", "CacheDirectory", "LogsDirectory", "ConfigurationDirectory"}
var dirRoots = map[string][]string{"RuntimeDirectory": {"/run"}, "StateDirectory": {"/var/lib", "/var/lib/private"},
	"CacheDirectory": {"/var/cache", "/var/cache/private"}, "LogsDirectory": {"/var/log", "/var/log/private"}, "ConfigurationDirectory": {"/etc"}}

// checkDirectories: the unit's own directories (checkOwnDirectories), none of them handed to a user
// who is not root where the node policy manages paths (checkDirectoryOwner).
func checkDirectories(c keyCtx) string {
	if why := checkOwnDirectories(c); why != "" {
		return why
	}
	return checkDirectoryOwner(c)
}

// checkDirectoryOwner: systemd.exec(5) creates each *Directory= of the unit at start and, when it
// exists with another owner, chowns it and everything below to the unit's User=/Group= (a
// configuration directory only when it creates it, possibly just after a refresh wrote there: judged
// as the others). A payload that makes a unit with such a directory run as a user who is not root, or
// gives such a unit one, would hand the files the node policy manages there (a rule's path, a
// ceiling prefix) to that user, against "owned by root or the rule's owner" (round-7a F4:
// User=core and StateDirectory=myapp over the ceiling's /var/lib/myapp/extra.json). Judged on the
// desired definition whenever one of those settings changes; a User= that is not root, without
// such a directory, only drops the unit's privileges and stays accepted.
func checkDirectoryOwner(c keyCtx) string {
	who := runsAs(c.des)
	if who == "" {
		return ""
	}
	for _, key := range dirKeys {
		for _, e := range dirEntries(c.unit, c.des[optKey{"Service", key}]) {
			for _, root := range dirRoots[key] {
				d := path.Join(root, e)
				if m := managedAt(c.pol, d); m != "" {
					return fmt.Sprintf("%s: the unit would run as %s with %s=%s, which systemd hands, recursively, to that user; "+
						"%s is, holds or lies under %s, which the node policy manages (its files stay root's or their rule's owner)", short(c.last()), who, key, e, d, m)
				}
			}
		}
	}
	return ""
}

// runsAs names the first setting of the definition that makes the unit run as a user or group
// other than root ("" if none). Every assignment counts, not only the last: systemd ignores an
// assignment it cannot parse, so an earlier one may be what it keeps.
func runsAs(def map[optKey][]string) string {
	for _, k := range []string{"User", "Group"} {
		for _, v := range def[optKey{"Service", k}] {
			if v != "" && v != "root" && v != "0" {
				return k + "=" + short(v)
			}
		}
	}
	for _, v := range def[optKey{"Service", "DynamicUser"}] {
		if v != "" && !isFalse(v) {
			return "DynamicUser=" + short(v)
		}
	}
	return ""
}

// dirEntries are the directories (relative to their root) a *Directory= setting's assignments name,
// both sides of a symlink entry (a:b), specifiers resolved; an empty assignment resets the list.
func dirEntries(unitName string, vs []string) []string {
	var out []string
	for _, v := range vs {
		words, err := allowlist.SplitExec(v)
		if err != nil || len(words) > 1 {
			continue // refused by checkOwnDirectories
		}
		if len(words) == 0 {
			out = nil
		}
		for _, w := range words {
			for _, e := range w {
				for _, d := range strings.Split(allowlist.ResolveSpecifiers(unitName, e), ":") {
					if d != "" {
						out = append(out, d)
					}
				}
			}
		}
	}
	return out
}

// managedAt returns a path the node policy manages (a rule's path or a ceiling prefix) that the
// directory d is, holds or lies under, or "".
func managedAt(pol *allowlist.Policy, d string) string {
	if pol == nil {
		return ""
	}
	var managed []string
	for _, r := range pol.Rules {
		managed = append(managed, r.Path)
	}
	for _, c := range pol.Ceiling {
		managed = append(managed, c.Prefix)
	}
	for _, m := range managed {
		n := strings.TrimSuffix(m, "*")
		if rest, ok := strings.CutPrefix(n, "/var/run/"); ok {
			n = "/run/" + rest
		}
		// m a string prefix of the directory (the directory is, or lies under, the managed
		// path or prefix), or the directory a parent of m.
		if n != "" && (strings.HasPrefix(d+"/", n) || strings.HasPrefix(n, d+"/")) {
			return m
		}
	}
	return ""
}

// checkDirectoryMode: a directory mode a payload sets gives no group or other write and no
// setuid, setgid or sticky bit (round-7a F4: StateDirectoryMode=0777 over a managed file). Each
// assignment the node's definition does not have is judged, not only the last: systemd ignores one
// it cannot parse (an empty one too) and keeps the one before.
func checkDirectoryMode(c keyCtx) string {
	for _, v := range c.newValues() {
		if v == "" {
			continue
		}
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m > 0o7777 {
			return fmt.Sprintf("%s: not an octal mode", short(v))
		}
		if m&^0o755 != 0 {
			return fmt.Sprintf("%s: more than 0755 (group or other write, setuid, setgid or sticky): others could replace what the unit and a refresh keep there", v)
		}
	}
	return ""
}

// newValues are the setting's desired assignments the node's current definition of it does not have.
func (c keyCtx) newValues() []string {
	var out []string
	for _, v := range c.values {
		if !slices.Contains(c.old[c.key], v) {
			out = append(out, v)
		}
	}
	return out
}

// checkStarts: every entry a payload adds to a setting that names another unit as a dependency
// (what the unit pulls in, what pulls it in, what it follows, what its end starts: every [Unit]
// dependency row and [Install] WantedBy=/RequiredBy=/UpheldBy=) is judged by the one identity
// function, allowlist.DependencyIdentity, whatever the setting (round-8 A1:
// Upholds=systemd-fsck@dev-sda1.service, Wants=user@0.service were accepted where OnFailure= of
// them was refused), after the provisioning units (round-5 F6: Wants=crio-wipe.service empties the
// image store, Upholds=kubelet-cleanup.service restarts a oneshot whenever it is inactive). An entry
// of PartOf=, BindsTo= or StopPropagatedFrom= makes the unit stop or restart with the named unit:
// it may name only the unit itself or a unit a unit rule names (followedWhy). The node's own units
// keep theirs (kubelet's Requires=kubens.service): JudgeUnit, which the executor applies to every
// unit, does not refuse them.
func checkStarts(c keyCtx) string {
	for _, u := range c.added() {
		if why := dependencyWhy(u, c.pol, 0); why != "" {
			return why
		}
		if slices.Contains(followKeys, c.key.key) {
			if why := followedWhy(c.unit, u, c.pol); why != "" {
				return why
			}
		}
	}
	return ""
}

// dependencyWhy says why a payload may not name u as a dependency, or "": a provisioning unit, a
// unit DependencyIdentity refuses (as itself or as the unit a link of the node's links it to), or an
// instance whose template, with the payload's instance, runs what a payload may not (instanceWhy).
// depth counts the instances judged through instances.
func dependencyWhy(u string, pol *allowlist.Policy, depth int) string {
	if allowlist.ProvisioningUnit(u) {
		return fmt.Sprintf("%s: a provisioning unit (it sets the node up once, at boot): a payload may not add a dependency that starts it", u)
	}
	if err := allowlist.DependencyIdentity(u); err != nil {
		return fmt.Sprintf("%s: %v", u, err)
	}
	if real, ok := pol.UnitAlias(u); ok {
		// A link on the node (or an alias the judge knows) is the unit it links to; an instance of
		// a template's link (foo@x.service, foo@.service -> bar@.service) is the linked template's
		// instance, judged by its text with the payload's instance (round 11, units 02).
		if err := allowlist.DependencyIdentity(real); err != nil {
			return fmt.Sprintf("%s: a link to %s: %v", u, real, err)
		}
		if why := instanceWhy(real, pol, depth); why != "" {
			return fmt.Sprintf("%s: a link to %s: %s", u, real, why)
		}
		return ""
	}
	return instanceWhy(u, pol, depth)
}

// followKeys are the [Unit] settings that make the unit stop or restart with the unit they name.
var followKeys = []string{"PartOf", "BindsTo", "StopPropagatedFrom"}

// followedWhy says why the unit may not stop or restart with u, or "" when u is the unit's own (the
// unit itself, or named by its name: myapp.target, myapp-helper.service for myapp.service), a
// target (DependencyIdentity passed it: a target's stop or restart is the system's stop or an
// isolate, which stops the unit anyway), or a unit a unit rule not saying Reboot names (as itself
// or as the unit its alias links to). A service the judge knows nothing of is no evidence of safety
// (round-8 A2: PartOf=openvswitch.service, PartOf=randomname.service, and
// PartOf=dbus-org.freedesktop.login1.service, the alias of systemd-logind, passed a list of names).
func followedWhy(unit, u string, pol *allowlist.Policy) string {
	real, _ := pol.UnitAlias(u)
	if ownUnit(unit, real) || strings.HasSuffix(real, ".target") || ruledWithoutReboot(pol, u, real) {
		return ""
	}
	return fmt.Sprintf("%s: the unit would stop or restart whenever %s does, a unit no unit rule names: a payload may tie it only to itself or to units a unit rule names", u, u)
}

// ownUnit says whether the (canonical) unit u is the unit's own: named by the unit's name, as its
// own directories are (checkOwnDirectories): myapp.*, myapp-*.* for myapp.service.
func ownUnit(unit, u string) bool {
	stem, _, _ := strings.Cut(strings.TrimSuffix(strings.ToLower(unit), ".service"), "@")
	ustem := strings.TrimSuffix(u, path.Ext(u))
	return ustem == stem || strings.HasPrefix(ustem, stem+"-")
}

// checkOrderingNames: a Before=/After= entry a payload adds names one unit (no prefix drop-in or
// type name, no unresolvable D-Bus alias), then checkOrdering.
func checkOrderingNames(c keyCtx) string {
	for _, u := range c.added() {
		if err := allowlist.UnitNameShape(u); err != nil {
			return fmt.Sprintf("%s: %v", u, err)
		}
	}
	return checkOrdering(c)
}

// checkAlso: enabling follows [Install] Also=, so an added entry may name only units a unit rule
// names (Also=debug-shell.service would enable a root shell on tty9).
func checkAlso(c keyCtx) string {
	for _, u := range c.added() {
		if err := allowlist.DependencyIdentity(u); err != nil {
			return fmt.Sprintf("%s: %v", u, err)
		}
		if c.pol == nil {
			return fmt.Sprintf("%s: enabling the unit would enable units no unit rule names", u)
		}
		if _, ok := c.pol.UnitRule(u); !ok {
			return fmt.Sprintf("%s: enabling the unit would enable units no unit rule names", u)
		}
	}
	return ""
}

// judgeChangedSettings refuses the first changed setting present in the desired definition that the
// judge does not model, or whose value its row does not accept.
func judgeChangedSettings(name string, old, des map[optKey][]string, changed map[optKey]bool, pol *allowlist.Policy) string {
	keys := make([]optKey, 0, len(changed))
	for k := range changed {
		if _, present := des[k]; present {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].section != keys[j].section {
			return keys[i].section < keys[j].section
		}
		return keys[i].key < keys[j].key
	})
	for _, k := range keys {
		row := modeledIndex[k]
		if row == nil {
			why := "a setting the judge does not model"
			switch {
			case k.section != "Unit" && k.section != "Service" && k.section != "Install":
				why = "a section the judge does not model"
			case modeledIndex[optKey{k.section, caseFold(k.key)}] != nil:
				why = "not a setting systemd knows (keys are case-sensitive), and not one the judge models"
			}
			return fmt.Sprintf("unit %s: %s: %s; under a unit rule a payload may change only the settings docs/security.md lists", name, k, why)
		}
		if row.check == nil {
			continue
		}
		if why := row.check(keyCtx{unit: name, key: k, values: des[k], des: des, old: old, pol: pol}); why != "" {
			return fmt.Sprintf("unit %s: %s%s", name, k, why)
		}
	}
	return ""
}

// caseFold finds the modeled key a miscased one stands for ("" if none), for the message only.
func caseFold(key string) string {
	for k := range modeledIndex {
		if strings.EqualFold(k.key, key) {
			return k.key
		}
	}
	return ""
}

// UnitSetting is one assignment of a unit file as systemd reads it.
type UnitSetting struct{ Section, Key, Value string }

// ReadUnitText reads a unit file or dropin as systemd does (readSystemdUnit), for tests that compare
// the reading with a real systemd's.
func ReadUnitText(text string) ([]UnitSetting, error) {
	opts, err := readSystemdUnit(text)
	out := make([]UnitSetting, len(opts))
	for i, o := range opts {
		out[i] = UnitSetting{o.section, o.key, o.value}
	}
	return out, err
}

// execEnvKeys and execDirKeys are the settings that change what an unchanged Exec line does: its variables, and
// the directories its relative paths and $RUNTIME_DIRECTORY-style variables name.
var execEnvKeys = []string{"Environment", "EnvironmentFile", "PassEnvironment", "UnsetEnvironment", "RuntimeDirectory",
	"StateDirectory", "CacheDirectory", "LogsDirectory", "ConfigurationDirectory"}
var execDirKeys = []string{"WorkingDirectory", "RootDirectory"}

// execChanged marks the Exec lines the payload changes: every line of a changed Exec key, every
// line naming a variable when an environment setting changed, and every line when the working or
// root directory changed.
func execChanged(keys []string, exec [][]string, changed map[optKey]bool) []bool {
	changedKey := map[string]bool{}
	for k := range changed {
		changedKey[k.key] = true
	}
	env := slices.ContainsFunc(execEnvKeys, func(k string) bool { return changedKey[k] })
	dir := slices.ContainsFunc(execDirKeys, func(k string) bool { return changedKey[k] })
	out := make([]bool, len(exec))
	for i, argv := range exec {
		out[i] = i >= len(keys) || changedKey[keys[i]] || dir ||
			env && slices.ContainsFunc(argv, func(w string) bool { return strings.Contains(w, "$") })
	}
	return out
}
