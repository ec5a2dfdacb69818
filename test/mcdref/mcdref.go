// Package mcdref is a transcription, for tests, of the machine-config daemon's decision code at
// openshift/machine-config-operator 7ff337a: what the daemon decides for a change from one rendered
// MachineConfig to another under a NodeDisruptionPolicy. It reuses nothing of the project, so the
// parity table (docs/mcd-parity.md) can check its "MCD" column against the daemon's logic while the
// project's column is checked against the planner. Each function names the one it transcribes.
// Side effects (writing, usermod, systemctl) are left out: only the verdict is kept.
package mcdref

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
	"sigs.k8s.io/yaml"
)

// Machine is a rendered MachineConfig: its Ignition config and reboot-class fields.
type Machine struct {
	Ignition        types.Config
	OSImageURL      string
	KernelArguments []string
	FIPS            bool
	KernelType      string
	Extensions      []string
}

// Action is a NodeDisruptionPolicyStatusAction (openshift/api operator/v1).
type Action struct {
	Type    string   `json:"type"`
	Reload  *Service `json:"reload,omitempty"`
	Restart *Service `json:"restart,omitempty"`
}

// Service names the unit of a Reload or Restart action.
type Service struct {
	ServiceName string `json:"serviceName"`
}

// File, Unit and Policy are NodeDisruptionPolicy{Spec,Status}{File,Unit} and the cluster status.
type File struct {
	Path    string   `json:"path"`
	Actions []Action `json:"actions"`
}

type Unit struct {
	Name    string   `json:"name"`
	Actions []Action `json:"actions"`
}

type Policy struct {
	Files  []File `json:"files"`
	Units  []Unit `json:"units"`
	SSHKey struct {
		Actions []Action `json:"actions"`
	} `json:"sshkey"`
}

func restart(u string) Action { return Action{Type: "Restart", Restart: &Service{u}} }
func reload(u string) Action  { return Action{Type: "Reload", Reload: &Service{u}} }

// Defaults is defaultClusterPolicies (pkg/apihelpers/apihelpers.go), with the paths of
// pkg/daemon/constants/constants.go.
func Defaults() Policy {
	var p Policy
	file := func(path string, a ...Action) { p.Files = append(p.Files, File{Path: path, Actions: a}) }
	none := Action{Type: "None"}
	file("/var/lib/kubelet/config.json", none)
	file("/etc/machine-config-daemon/no-reboot/containers-gpg.pub", reload("crio.service"))
	file("/etc/containers/policy.json", reload("crio.service"))
	file("/etc/containers/registries.conf", Action{Type: "Special"})
	file("/etc/containers/registries.d", reload("crio.service"))
	file("/etc/crio/policies", reload("crio.service"))
	file("/etc/nmstate/openshift", none)
	file("/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", restart("coreos-update-ca-trust.service"), restart("crio.service"))
	file("/etc/kubernetes/credential-providers", restart("kubelet.service"))
	file("/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf", Action{Type: "DaemonReload"}, restart("kubelet.service"))
	file("/etc/iri-registry", restart("iri-registry.service"))
	file("/usr/local/bin/load-registry-image.sh", restart("iri-registry.service"))
	file("/etc/pki/ca-trust/source/anchors/iri-root-ca.crt", restart("coreos-update-ca-trust.service"))
	p.Units = []Unit{{Name: "iri-registry.service", Actions: []Action{{Type: "DaemonReload"}, restart("iri-registry.service")}}}
	p.SSHKey.Actions = []Action{none}
	return p
}

// ParseSpec reads a spec.nodeDisruptionPolicy (YAML or JSON; empty is no user rules).
func ParseSpec(doc string) (Policy, error) {
	var p Policy
	if strings.TrimSpace(doc) == "" {
		return p, nil
	}
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(js, &p)
}

// Merge is MergeClusterPolicies (pkg/apihelpers/apihelpers.go): user rules replace the default for
// the same path or unit name (compared as written), others are appended; user sshkey actions, when
// given, replace the default.
func Merge(user Policy) Policy {
	d := Defaults()
	m := Policy{Files: slices.Clone(d.Files), Units: slices.Clone(d.Units)}
	for _, u := range user.Files {
		if i := slices.IndexFunc(d.Files, func(f File) bool { return f.Path == u.Path }); i >= 0 {
			m.Files[i] = u
		} else {
			m.Files = append(m.Files, u)
		}
	}
	for _, u := range user.Units {
		if i := slices.IndexFunc(d.Units, func(x Unit) bool { return x.Name == u.Name }); i >= 0 {
			m.Units[i] = u
		} else {
			m.Units = append(m.Units, u)
		}
	}
	m.SSHKey = d.SSHKey
	if len(user.SSHKey.Actions) > 0 {
		m.SSHKey = user.SSHKey
	}
	return m
}

// Verdict is what the daemon decides.
type Verdict struct {
	// Unreconcilable is reconcilable's error (the node goes Degraded, nothing is written).
	Unreconcilable string
	// Err is an error after reconcilable (the update fails, nothing is written).
	Err     string
	Actions []Action
	Drain   bool
}

// String words the verdict as the parity table writes it: "unreconcilable", "error", "reboot",
// "none", or the actions in the daemon's order ("drain; " first when it drains).
func (v Verdict) String() string {
	switch {
	case v.Unreconcilable != "":
		return "unreconcilable"
	case v.Err != "":
		return "error"
	}
	var words []string
	for _, a := range v.Actions {
		var w string
		switch a.Type {
		case "Reboot":
			return "reboot"
		case "None", "Drain":
			continue
		case "Reload":
			w = "reload " + a.Reload.ServiceName
		case "Restart":
			w = "restart " + a.Restart.ServiceName
		case "Special":
			w = "reload crio.service"
		case "DaemonReload":
			w = "daemon-reload"
		}
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	s := strings.Join(words, ", ")
	if s == "" {
		s = "none"
	}
	if v.Drain {
		s = "drain; " + s
	}
	return s
}

// Decide is the daemon's update() up to its post-config actions: reconcilable, the diff, the
// NodeDisruptionPolicy actions and the drain decision.
func Decide(old, new Machine, cluster Policy) Verdict {
	if err := reconcilable(old, new); err != nil {
		return Verdict{Unreconcilable: err.Error()}
	}
	d := newDiff(old, new)
	fileSet := configFileDiffs(old.Ignition, new.Ignition)
	unitSet := changedUnits(old.Ignition, new.Ignition)
	actions := nodeDisruptionAction(d, fileSet, unitSet, cluster)
	drain, err := drainRequired(actions, old.Ignition, new.Ignition)
	if err != nil {
		return Verdict{Err: err.Error()}
	}
	return Verdict{Actions: actions, Drain: drain}
}

// reconcilable is isConfigReconcilable (pkg/controller/common/reconcile.go) and checkFIPS's
// comparison (pkg/daemon/update.go).
func reconcilable(o, n Machine) error {
	oi, ni := o.Ignition, n.Ignition
	if !reflect.DeepEqual(oi.Passwd, ni.Passwd) {
		if err := validatePasswdChanges(oi, ni); err != nil {
			return fmt.Errorf("invalid passwd change(s): %w", err)
		}
	}
	if !reflect.DeepEqual(oi.KernelArguments, ni.KernelArguments) {
		return fmt.Errorf("ignition kargs section contains changes")
	}
	if !reflect.DeepEqual(oi.Storage.Disks, ni.Storage.Disks) || !reflect.DeepEqual(oi.Storage.Filesystems, ni.Storage.Filesystems) ||
		!reflect.DeepEqual(oi.Storage.Raid, ni.Storage.Raid) {
		return fmt.Errorf("ignition disks, filesystems or raid section contains changes")
	}
	if !reflect.DeepEqual(oi.Storage.Directories, ni.Storage.Directories) {
		return fmt.Errorf("ignition directories section contains changes")
	}
	if !reflect.DeepEqual(oi.Storage.Links, ni.Storage.Links) && len(ni.Storage.Links) != 0 {
		return fmt.Errorf("ignition links section contains changes")
	}
	for _, f := range ni.Storage.Files {
		if len(f.Append) > 0 {
			return fmt.Errorf("ignition file %v includes append", f.Path)
		}
		if f.Path == "/run/machine-config-daemon-force" {
			return fmt.Errorf("cannot create %s via Ignition", f.Path)
		}
	}
	if o.FIPS != n.FIPS {
		return fmt.Errorf("detected change to FIPS flag; refusing to modify FIPS on a running cluster")
	}
	return nil
}

// validatePasswdChanges and verifyUserFields (pkg/controller/common/reconcile.go). Only the last
// user of the new list is verified; an empty list is accepted.
func validatePasswdChanges(o, n types.Config) error {
	if !reflect.DeepEqual(o.Passwd.Groups, n.Passwd.Groups) {
		return fmt.Errorf("ignition Passwd Groups section contains changes")
	}
	if !reflect.DeepEqual(o.Passwd.Users, n.Passwd.Users) {
		for _, u := range n.Passwd.Users {
			if u.Name != "core" {
				return fmt.Errorf("ignition passwd user section contains unsupported changes: non-core user")
			}
		}
		if len(n.Passwd.Users) != 0 {
			u := n.Passwd.Users[len(n.Passwd.Users)-1]
			if u.Name == "core" && (u.PasswordHash != nil || len(u.SSHAuthorizedKeys) >= 1) {
				u.Name, u.SSHAuthorizedKeys, u.PasswordHash = "", nil, nil
				if !reflect.DeepEqual(types.PasswdUser{}, u) {
					return fmt.Errorf("SSH keys and password hash are not reconcilable")
				}
			} else {
				return fmt.Errorf("ignition passwd user section contains unsupported changes: user must be core and have 1 or more sshKeys")
			}
		}
	}
	return nil
}

type mcDiff struct{ osUpdate, kargs, fips, passwd, files, units, kernelType, extensions bool }

// newDiff is newMachineConfigDiff (pkg/daemon/update.go), without on-cluster layering.
func newDiff(o, n Machine) mcDiff {
	canon := func(k string) string {
		if k == "" {
			return "default"
		}
		return k
	}
	return mcDiff{
		osUpdate:   o.OSImageURL != n.OSImageURL,
		kargs:      !(len(o.KernelArguments) == 0 && len(n.KernelArguments) == 0 || reflect.DeepEqual(o.KernelArguments, n.KernelArguments)),
		fips:       o.FIPS != n.FIPS,
		passwd:     !reflect.DeepEqual(o.Ignition.Passwd, n.Ignition.Passwd),
		files:      !reflect.DeepEqual(o.Ignition.Storage.Files, n.Ignition.Storage.Files),
		units:      !reflect.DeepEqual(o.Ignition.Systemd.Units, n.Ignition.Systemd.Units),
		kernelType: canon(o.KernelType) != canon(n.KernelType),
		extensions: !(len(o.Extensions) == 0 && len(n.Extensions) == 0 || reflect.DeepEqual(o.Extensions, n.Extensions)),
	}
}

// configFileDiffs is CalculateConfigFileDiffs (pkg/controller/common/helpers.go).
func configFileDiffs(o, n types.Config) []string {
	of, nf := map[string]types.File{}, map[string]types.File{}
	for _, f := range o.Storage.Files {
		of[f.Path] = f
	}
	for _, f := range n.Storage.Files {
		nf[f.Path] = f
	}
	var out []string
	for p := range of {
		if _, ok := nf[p]; !ok {
			out = append(out, p)
		}
	}
	for p, f := range nf {
		if g, ok := of[p]; !ok || !reflect.DeepEqual(f, g) {
			out = append(out, p)
		}
	}
	slices.Sort(out) // the daemon's order is a map's; the verdict does not depend on it
	return out
}

// changedUnits is GetChangedConfigUnitsByType's names (added, removed or updated).
func changedUnits(o, n types.Config) []string {
	ou, nu := map[string]types.Unit{}, map[string]types.Unit{}
	for _, u := range o.Systemd.Units {
		ou[u.Name] = u
	}
	for _, u := range n.Systemd.Units {
		nu[u.Name] = u
	}
	var out []string
	for name := range ou {
		if _, ok := nu[name]; !ok {
			out = append(out, name)
		}
	}
	for name, u := range nu {
		if v, ok := ou[name]; !ok || !reflect.DeepEqual(u, v) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// isSubdirectory is IsSubdirectory and closestFile FindClosestFilePolicyPathMatch
// (pkg/controller/common/helpers.go).
func isSubdirectory(dir, target string) bool {
	return strings.HasPrefix(filepath.Clean(target), filepath.Clean(dir)+"/")
}

func closestFile(p string, files []File) (bool, []Action) {
	n, found, actions := 0, false, []Action(nil)
	for _, f := range files {
		if (p == f.Path || isSubdirectory(f.Path, p)) && len(f.Path) > n {
			n, found, actions = len(f.Path), true, f.Actions
		}
	}
	return found, actions
}

func has(actions []Action, types ...string) bool {
	return slices.ContainsFunc(actions, func(a Action) bool { return slices.Contains(types, a.Type) })
}

// nodeDisruptionAction is calculatePostConfigChangeNodeDisruptionAction and ...FromMCDiffs
// (pkg/daemon/update.go).
func nodeDisruptionAction(d mcDiff, fileSet, unitSet []string, c Policy) []Action {
	reboot := []Action{{Type: "Reboot"}}
	if d.osUpdate || d.kargs || d.fips || d.kernelType || d.extensions {
		return reboot
	}
	if !d.files && !d.units && !d.passwd {
		return []Action{{Type: "None"}}
	}
	var actions []Action
	for _, p := range fileSet {
		found, a := closestFile(p, c.Files)
		if !found {
			return reboot
		}
		actions = append(actions, a...)
	}
	for _, name := range unitSet {
		i := slices.IndexFunc(c.Units, func(u Unit) bool { return u.Name == name })
		if i < 0 {
			return reboot
		}
		actions = append(actions, c.Units[i].Actions...)
	}
	if d.passwd {
		actions = append(actions, c.SSHKey.Actions...)
	}
	if has(actions, "Reboot") {
		return reboot
	}
	if has(actions, "None") {
		if has(actions, "Drain", "Reload", "Restart", "DaemonReload", "Special") {
			return slices.DeleteFunc(actions, func(a Action) bool { return a.Type == "None" })
		}
		return []Action{{Type: "None"}}
	}
	return actions
}

// drainRequired is isDrainRequiredForNodeDisruptionActions (pkg/daemon/drain.go).
func drainRequired(actions []Action, o, n types.Config) (bool, error) {
	if has(actions, "Reboot", "Drain") {
		return true, nil
	}
	if has(actions, "Special") {
		safe, err := safeRegistries(o, n)
		return !safe, err
	}
	return false, nil
}

// The fields of containers/image sysregistriesv2 that isSafeContainerRegistryConfChanges reads.
type endpoint struct {
	Location       string `toml:"location"`
	Insecure       bool   `toml:"insecure"`
	PullFromMirror string `toml:"pull-from-mirror"`
}

type registry struct {
	Prefix string `toml:"prefix"`
	endpoint
	Blocked            bool       `toml:"blocked"`
	Mirrors            []endpoint `toml:"mirror"`
	MirrorByDigestOnly bool       `toml:"mirror-by-digest-only"`
}

type registriesConf struct {
	UnqualifiedSearchRegistries []string   `toml:"unqualified-search-registries"`
	Registries                  []registry `toml:"registry"`
}

// fileData is GetIgnitionFileDataByPath (pkg/controller/common/helpers.go): the data URL decoded,
// never decompressed.
func fileData(c types.Config, p string) ([]byte, error) {
	for _, f := range c.Storage.Files {
		if f.Path == p && f.Contents.Source != nil {
			d, err := dataurl.DecodeString(*f.Contents.Source)
			if err != nil {
				return nil, err
			}
			return d.Data, nil
		}
	}
	return nil, nil
}

// safeRegistries is isSafeContainerRegistryConfChanges (pkg/daemon/drain.go).
func safeRegistries(o, n types.Config) (bool, error) {
	var confs [2]registriesConf
	for i, c := range []types.Config{o, n} {
		data, err := fileData(c, "/etc/containers/registries.conf")
		if err != nil {
			return false, fmt.Errorf("failed decoding Data URL scheme string: %w", err)
		}
		if _, err := toml.Decode(string(data), &confs[i]); err != nil {
			return false, fmt.Errorf("failed decoding TOML content from file /etc/containers/registries.conf: %w", err)
		}
	}
	old, new := confs[0], confs[1]
	if len(old.UnqualifiedSearchRegistries) > len(new.UnqualifiedSearchRegistries) {
		return false, nil
	}
	for i, r := range old.UnqualifiedSearchRegistries {
		if new.UnqualifiedSearchRegistries[i] != r {
			return false, nil
		}
	}
	scopes := func(c registriesConf) map[string]registry {
		m := map[string]registry{}
		for _, r := range c.Registries {
			s := r.Location
			if r.Prefix != "" {
				s = r.Prefix
			}
			m[s] = r
		}
		return m
	}
	om, nm := scopes(old), scopes(new)
	for s := range om {
		if _, ok := nm[s]; !ok {
			return false, nil
		}
	}
	find := func(loc string, ms []endpoint) (bool, endpoint) {
		for _, m := range ms {
			if m.Location == loc {
				return true, m
			}
		}
		return false, endpoint{}
	}
	for s, nr := range nm {
		or, ok := om[s]
		if !ok {
			if len(nr.Mirrors) == 0 && !nr.MirrorByDigestOnly {
				return false, nil
			}
			for _, m := range nr.Mirrors {
				if m.PullFromMirror != "digest-only" {
					return false, nil
				}
			}
			continue
		}
		if reflect.DeepEqual(or, nr) {
			continue
		}
		if or.Prefix != nr.Prefix || or.Location != nr.Location || or.Blocked != nr.Blocked || or.Insecure != nr.Insecure {
			return false, nil
		}
		for _, m := range or.Mirrors {
			if found, _ := find(m.Location, nr.Mirrors); !found {
				return false, nil
			}
		}
		for _, m := range nr.Mirrors {
			if found, om := find(m.Location, or.Mirrors); found {
				if m.PullFromMirror != om.PullFromMirror && m.PullFromMirror != "digest-only" {
					return false, nil
				}
			} else if m.PullFromMirror != "digest-only" && !nr.MirrorByDigestOnly {
				return false, nil
			}
		}
	}
	return true, nil
}
