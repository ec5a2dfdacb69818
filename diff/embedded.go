package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// KindMachineConfig marks a payload whose embedded MachineConfig cannot be trusted: it disagrees
// with the outer Ignition config, or the desired payload drops the MachineConfig the current one had.
const KindMachineConfig Kind = "machineConfig"

// CheckEmbedded verifies that every MachineConfig the payload embeds (the machine-config server's
// metadata files) agrees with the outer Ignition config as far as it carries it. The MachineConfig
// is written verbatim to the machine-config daemon's baseline (/etc/mcd-currentconfig.json), while
// only the outer config is diffed; without this check a unit or a file smuggled into the embedded
// copy would land in that baseline unseen.
//
// Agreement: every file, directory and link the embedded spec.config carries is in the outer config
// at the same path with the same decoded contents, mode and owner (and append list, link target);
// every unit with the same contents, enablement, mask and dropins; every passwd user and group with
// the same fields (core's SSH keys among them). The outer config may carry more: the machine-config
// server adds files when serving (the kubeconfig, kubelet-ca.crt, node-annotations.json, the cloud
// CA, /etc/docker/certs.d/*). The embedded Ignition kernelArguments and ignition.config must equal
// the outer config's too (agreeAll), as must storage (disks, raid, filesystems, luks) and passwd.
//
// It returns "" when every embedded MachineConfig agrees, else a reason naming the metadata file and
// the first disagreeing path, unit or user. A payload that is itself a MachineConfig is its own
// spec.config; only metadata files inside it are checked.
func CheckEmbedded(p *Payload) string { return checkEach(p, checkEmbeddedFile) }

// checkEach returns the first reason check gives for one of p's metadata files, named.
func checkEach(p *Payload, check func(*Payload, types.File) string) string {
	for _, f := range p.Config.Storage.Files {
		if !isMachineConfigPath(f.Path) {
			continue
		}
		if why := check(p, f); why != "" {
			return "embedded MachineConfig " + f.Path + ": " + why
		}
	}
	return ""
}

// embeddedMC is what the decode kept of a metadata file's MachineConfig for CheckEmbedded.
type embeddedMC struct {
	contents fileContentsID // the file's contents it was read from
	config   *embeddedConfig
	// charged is what the decode charged for reading it: its bytes and its structure (and the JSON
	// converted from YAML): a nested decode of it (CheckEmbedded) charges them again, as its own.
	charged int64
}

// fileContentsID identifies a file's contents as given: its source and compression.
type fileContentsID struct {
	source, compression string
	hasSource           bool
}

func contentsOf(f types.File) fileContentsID {
	id := fileContentsID{hasSource: f.Contents.Source != nil}
	if id.hasSource {
		id.source = *f.Contents.Source
	}
	if f.Contents.Compression != nil {
		id.compression = *f.Contents.Compression
	}
	return id
}

func checkEmbeddedFile(p *Payload, f types.File) string {
	if e, ok := p.embedded[f.Path]; ok && e.config != nil && e.contents == contentsOf(f) {
		if e.config.none {
			return "" // carries no config, so nothing to disagree with
		}
		if inner, err := e.config.decode(p, e.charged); err == nil {
			return compareEmbedded(inner, p, f.Path)
		}
	}
	return checkEmbeddedWhole(p, f)
}

// checkEmbeddedWhole reads a metadata file's MachineConfig and decodes its config whole: for what
// the decode's walk could not settle (and the reason for it), and the reference the streamed check
// is held to.
func checkEmbeddedWhole(p *Payload, f types.File) string {
	data, err := FileContents(f)
	if err != nil {
		return "cannot read it: " + err.Error()
	}
	// Nested in p's decode, on what it left: the file's bytes and structure were charged by it, and
	// are charged again here.
	var credit int64
	if e, ok := p.embedded[f.Path]; ok && e.contents == contentsOf(f) {
		credit = e.charged
	}
	d := p.nested(credit)
	if err := d.charge(int64(len(data)), "contents"); err != nil {
		return "cannot read it: " + err.Error()
	}
	mc, err := d.parseMachineConfig(data)
	if err != nil {
		return "cannot read it: " + err.Error()
	}
	raw := bytes.TrimSpace(mc.Spec.Config)
	if len(raw) == 0 || string(raw) == "null" {
		return "" // carries no config, so nothing to disagree with
	}
	if raw[0] != '{' {
		return "spec.config is not an Ignition config object"
	}
	// Files whose contents equal the outer config's skip a second validation of their data URLs.
	inner, _, err := d.decode(raw, 0)
	d.measure(inner)
	if err != nil {
		return "spec.config: " + err.Error()
	}
	return compareEmbedded(inner, p, f.Path)
}

// compareEmbedded returns why the decoded embedded config inner of the metadata file at path
// disagrees with the outer config, or "".
func compareEmbedded(inner, p *Payload, path string) string {
	if inner.MachineConfig != nil {
		return "spec.config is a MachineConfig, not an Ignition config"
	}
	if why := agree(&inner.Config, &p.Config); why != "" {
		return why
	}
	return agreeAll(inner, p, path)
}

// movedKernelArgs reports Ignition kernelArguments an embedded config may carry that the outer one
// lacks: the machine-config server, serving a spec older than 3.3.0 (which has none), moves them into
// the MachineConfig's spec.kernelArguments (the rendered copy keeps them). So only when the outer
// config has none, the embedded copy only adds arguments (shouldExist; no shouldNotExist), and
// every one of them is in that MachineConfig's spec.kernelArguments, which diffMachine compares
// current against desired. Anything else (mitigations=off in the embedded copy only) disagrees.
func movedKernelArgs(inner, outer *Payload, path string) bool {
	ok, ik := outer.Config.KernelArguments, inner.Config.KernelArguments
	if len(ok.ShouldExist) > 0 || len(ok.ShouldNotExist) > 0 || len(ik.ShouldNotExist) > 0 {
		return false
	}
	i := slices.IndexFunc(outer.Machine, func(v MachineView) bool { return v.Source == path })
	if i < 0 {
		return false
	}
	for _, a := range ik.ShouldExist {
		if !slices.Contains(outer.Machine[i].KernelArguments, string(a)) {
			return false
		}
	}
	return true
}

// serverAdded reports the files the machine-config server adds to the rendered MachineConfig's
// config when it serves it (MCO pkg/server appenders): the only outer files its content copy lacks.
func serverAdded(path string) bool {
	switch path {
	case "/etc/kubernetes/kubelet-ca.crt", "/etc/kubernetes/kubeconfig",
		"/etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem":
		return true
	}
	return strings.HasPrefix(path, "/etc/docker/certs.d/")
}

// agreeAll diffs the embedded config against the outer one with the same diff a refresh uses, so
// every field Ignition has is compared (see coverage.go), not only files, units and users: storage,
// directories, links, ignition.config merge/replace, passwd. The only differences allowed are what
// the outer config adds (the server adds files when serving; the encapsulated copy carries an empty
// config). Anything the embedded copy carries that the outer config does not, or carries
// differently, is a disagreement: its Ignition kernelArguments too, but for those the server moved
// into spec.kernelArguments (movedKernelArgs). They were once let through whenever the outer config
// had none, so a payload could set shouldExist/shouldNotExist in the embedded copy only and have
// them land in the machine-config daemon's record. diffMachine also compares them per source,
// current against desired.
func agreeAll(inner, outer *Payload, path string) string {
	whole := path == MachineConfigContentPath
	if why := ignitionAgrees(inner.Config.Ignition, outer.Config.Ignition); why != "" {
		return why
	}
	changes, err := Diff(&Payload{Config: inner.Config}, &Payload{Config: outer.Config})
	if err != nil {
		return "cannot compare it: " + err.Error()
	}
	for _, c := range changes {
		switch {
		case c.Op == OpAdd && whole && c.Kind == KindFile && serverAdded(c.Path):
			// The content copy is the whole rendered config: the outer one may carry more only
			// what the server adds when serving.
		case c.Op == OpAdd && !whole: // the encapsulated copy carries no config at all
		case c.Kind == KindKernelArguments && movedKernelArgs(inner, outer, path):
		default:
			what := c.Detail
			if what == "" {
				what = string(c.Kind) + " " + string(c.Op)
			}
			return fmt.Sprintf("disagrees with the outer config: %s %s", quote(c.Path+c.Unit+c.User), quote(what))
		}
	}
	return ""
}

// ignitionAgrees returns why the embedded copy's ignition section says what the outer one does not,
// or "". A refresh never diffs proxy, TLS and timeouts (they steer only Ignition's first-boot
// fetches), but the embedded copy is what the daemon's record keeps: one that carries them as the
// outer config does not would put unchecked values there (adversary r15 d/04). An embedded copy
// without them agrees (the encapsulated copy carries an empty config).
func ignitionAgrees(in, out types.Ignition) string {
	for _, s := range []struct {
		name    string
		in, out any
		empty   bool
	}{
		{"proxy", in.Proxy, out.Proxy, len(fieldsChanged(in.Proxy, types.Proxy{})) == 0},
		{"security", in.Security, out.Security, len(fieldsChanged(in.Security, types.Security{})) == 0},
		{"timeouts", in.Timeouts, out.Timeouts, len(fieldsChanged(in.Timeouts, types.Timeouts{})) == 0},
	} {
		if f := fieldsChanged(s.in, s.out); len(f) > 0 && !s.empty {
			return fmt.Sprintf("disagrees with the outer config: %s", quote("ignition."+s.name+"."+strings.Join(f, ", ")+" differs"))
		}
	}
	return ""
}

// agree returns why the embedded config in is not carried by the outer config out, or "".
func agree(in, out *types.Config) string {
	outFiles := byPath(out.Storage.Files, func(f types.File) string { return f.Path })
	for _, f := range in.Storage.Files {
		o, ok := outFiles[f.Path]
		if !ok {
			return fmt.Sprintf("file %s is not in the outer config", quote(f.Path))
		}
		if why := fileAgrees(f, o); why != "" {
			return fmt.Sprintf("file %s: %s differs from the outer config", quote(f.Path), why)
		}
	}
	outDirs := byPath(out.Storage.Directories, dirPath)
	for _, d := range in.Storage.Directories {
		o, ok := outDirs[d.Path]
		if !ok || !sameJSON(d, o) {
			return fmt.Sprintf("directory %s is not in the outer config as embedded", quote(d.Path))
		}
	}
	outLinks := byPath(out.Storage.Links, linkPath)
	for _, l := range in.Storage.Links {
		o, ok := outLinks[l.Path]
		if !ok || !sameJSON(l, o) {
			return fmt.Sprintf("link %s is not in the outer config as embedded", quote(l.Path))
		}
	}
	outUnits := byPath(out.Systemd.Units, func(u types.Unit) string { return u.Name })
	for _, u := range in.Systemd.Units {
		o, ok := outUnits[u.Name]
		if !ok {
			return fmt.Sprintf("unit %s is not in the outer config", quote(u.Name))
		}
		if why := unitAgrees(u, o); why != "" {
			return fmt.Sprintf("unit %s: %s differs from the outer config", quote(u.Name), why)
		}
	}
	outUsers := byPath(out.Passwd.Users, func(u types.PasswdUser) string { return u.Name })
	for _, u := range in.Passwd.Users {
		o, ok := outUsers[u.Name]
		if !ok {
			return fmt.Sprintf("user %s is not in the outer config", quote(u.Name))
		}
		if fields := fieldsChanged(u, o); len(fields) > 0 {
			return fmt.Sprintf("user %s: %s differs from the outer config", quote(u.Name), fields[0])
		}
	}
	outGroups := byPath(out.Passwd.Groups, func(g types.PasswdGroup) string { return g.Name })
	for _, g := range in.Passwd.Groups {
		o, ok := outGroups[g.Name]
		if !ok || !sameJSON(g, o) {
			return fmt.Sprintf("group %s is not in the outer config as embedded", quote(g.Name))
		}
	}
	return ""
}

// fileAgrees names the first of contents, append, mode, owner, group that differs, or "".
func fileAgrees(in, out types.File) string {
	if !ptrEq(in.Contents.Source, out.Contents.Source) || !ptrEq(in.Contents.Compression, out.Contents.Compression) {
		a, errA := FileContents(in)
		b, errB := FileContents(out)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return "contents"
		}
	}
	if !sameJSON(in.Append, out.Append) {
		return "append"
	}
	if FileMode(in) != FileMode(out) {
		return "mode"
	}
	if ownerString(in.User.ID, in.User.Name) != ownerString(out.User.ID, out.User.Name) {
		return "owner"
	}
	if ownerString(in.Group.ID, in.Group.Name) != ownerString(out.Group.ID, out.Group.Name) {
		return "group"
	}
	return ""
}

// unitAgrees names the first of contents, enabled, mask, dropins that differs, or "".
func unitAgrees(in, out types.Unit) string {
	switch {
	case !ptrEq(in.Contents, out.Contents):
		return "contents"
	case !ptrEq(in.Enabled, out.Enabled):
		return "enabled"
	case !ptrEq(in.Mask, out.Mask):
		return "mask"
	}
	key := func(d types.Dropin) string { return d.Name }
	ind, outd := byPath(in.Dropins, key), byPath(out.Dropins, key)
	if len(ind) != len(outd) {
		return "dropins"
	}
	for name, d := range ind {
		if o, ok := outd[name]; !ok || !ptrEq(d.Contents, o.Contents) {
			return "dropin " + quote(name)
		}
	}
	return ""
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && slices.Equal(ja, jb)
}

// MachineConfigDropped reports a desired payload that carries no MachineConfig at all while the
// current one does: its reboot-class fields (OS image, kernel arguments, FIPS, kernel type,
// extensions) cannot be compared, so the planner refuses it rather than assume they are unchanged.
func MachineConfigDropped(cur, des *Payload) bool {
	if len(cur.Machine) > 0 && len(des.Machine) == 0 {
		return true
	}
	// Dropping one source is dropping it too: the content file (or, for a MachineConfig payload, the
	// MachineConfig itself) is what the machine-config daemon's baseline receives, and a payload
	// without it would leave that baseline stale.
	content := func(v MachineView) bool { return v.Source == "spec" || v.Source == MachineConfigContentPath }
	if slices.ContainsFunc(cur.Machine, content) && !slices.ContainsFunc(des.Machine, content) {
		return true
	}
	for _, c := range cur.Machine {
		if c.Source == MachineConfigEncapsulatedPath && !slices.ContainsFunc(des.Machine, func(d MachineView) bool { return d.Source == c.Source }) {
			return true
		}
	}
	return false
}

// quote returns s as is when it prints plainly, else Go-quoted: names in reasons come from the
// payload and must not carry control characters into logs and annotations.
func quote(s string) string {
	for _, c := range s {
		if !unicode.IsPrint(c) || c == '"' {
			return strconv.Quote(s)
		}
	}
	return s
}
