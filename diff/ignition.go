package diff

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	ignerrors "github.com/coreos/ignition/v2/config/shared/errors"
	v30 "github.com/coreos/ignition/v2/config/v3_0/types"
	v31tr "github.com/coreos/ignition/v2/config/v3_1/translate"
	v31 "github.com/coreos/ignition/v2/config/v3_1/types"
	v32tr "github.com/coreos/ignition/v2/config/v3_2/translate"
	v32 "github.com/coreos/ignition/v2/config/v3_2/types"
	v33tr "github.com/coreos/ignition/v2/config/v3_3/translate"
	v33 "github.com/coreos/ignition/v2/config/v3_3/types"
	v34tr "github.com/coreos/ignition/v2/config/v3_4/translate"
	v35tr "github.com/coreos/ignition/v2/config/v3_5/translate"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/ignition/v2/config/validate"
	"github.com/coreos/vcontext/report"

	"github.com/coreos/go-semver/semver"

	"github.com/openshift/refresh-agent/api"
)

// parseIgnition parses an Ignition config, whose ignition.version the caller has read, of spec 3.0.0
// to 3.5.0 into 3.5 types exactly as v3_5.ParseCompatibleVersion does: unmarshal into the config's own
// version with encoding/json, validate that version's config with Ignition's own rules, translate up.
// The caller has refused duplicate keys, the one thing encoding/json resolves silently. Differences,
// each on purpose (FuzzDifferential holds the rest equal):
//   - an entry whose path Ignition rejects as relative or unclean does not fail the whole decode: it is
//     recorded so that the planner refuses it by name (a refusal, not an unreadable payload);
//   - the position-tracking re-parse Ignition uses only to report unused keys is skipped: it costs
//     several times the parse itself on a 10 MiB payload and reports warnings only;
//   - inline contents are also checked against their verification hash and counted against the
//     decode's memory budget (Ignition does both only when it writes the file);
//   - a unit file or dropin beyond CheckUnitText's bounds is not parsed by Ignition's validation
//     (boundedUnits): the plan refuses it instead, so a payload Ignition would reject for such a
//     unit's contents is refused, not invalid.
func (d *decoder) parseIgnition(raw []byte, versionField *string) (types.Config, map[string]bool, error) {
	if versionField == nil {
		return types.Config{}, nil, errors.New("ignition.version is missing or not a semantic version")
	}
	version, err := semver.NewVersion(*versionField)
	if err != nil {
		return types.Config{}, nil, errors.New("ignition.version is missing or not a semantic version")
	}
	// Ignition compares the whole version, build metadata included, with each spec's own.
	if *version != (semver.Version{Major: 3, Minor: version.Minor}) || version.Minor > 5 {
		return types.Config{}, nil, fmt.Errorf("unknown Ignition version %q (supported: 3.0.0 to 3.5.0)", version.String())
	}
	cfg, rpt, err := d.unmarshalValidate(raw, version.Minor)
	var bad *DataURLError
	if errors.As(err, &bad) {
		return types.Config{}, nil, err
	}
	if err != nil {
		return types.Config{}, nil, jsonError(raw, err)
	}
	if d.restore != nil {
		if err := d.restore(&cfg); err != nil {
			return types.Config{}, nil, err
		}
	}
	dirty, err := checkReport(cfg, rpt)
	if err != nil {
		return types.Config{}, nil, err
	}
	if err := d.checkContents(cfg); err != nil {
		return types.Config{}, nil, err
	}
	return cfg, dirty, nil
}

// trustedSource is what a known-valid data URL is replaced with for validation.
var trustedSource = "data:,"

// forValidation returns cfg (a Config of any 3.x spec, whose files all have the same shape) with
// every file's inline contents that are known valid carrying a trivial data URL instead (same
// indices, so report paths still point at cfg's entries): contents equal to an already-validated
// entry's, and data URLs decodeDataURL accepts, which is what Ignition's validateURL would check of
// them, at a fraction of its cost (its data URL parser lexes them rune by rune). The compression of
// the latter is kept for Ignition to validate. The metadata files' data, decoded for that, is kept
// for decodeIgnition. A file whose contents Ignition would read as a data URL (isDataScheme) and
// decodeDataURL refuses is refused here, naming the field: that parser would leave a goroutine
// blocked for good on it, holding the source (checkDataURLs refuses the config's other sources).
func forValidation[C any](d *decoder, cfg C) (C, error) {
	v := reflect.ValueOf(&cfg).Elem()
	boundedUnits(v.FieldByName("Systemd").FieldByName("Units"))
	files := v.FieldByName("Storage").FieldByName("Files")
	if files.Len() == 0 {
		return cfg, nil
	}
	copied := reflect.MakeSlice(files.Type(), files.Len(), files.Len())
	reflect.Copy(copied, files)
	index := func(names ...string) []int { // field indices, looked up once per call
		var idx []int
		t := files.Type().Elem()
		for _, n := range names {
			f, _ := t.FieldByName(n)
			idx, t = append(idx, f.Index...), f.Type
		}
		return idx
	}
	pathIdx, sourceIdx, compIdx := index("Path"), index("Contents", "Source"), index("Contents", "Compression")
	for i := range copied.Len() {
		f := copied.Index(i)
		source := f.FieldByIndex(sourceIdx).Interface().(*string)
		if source == nil || !isDataScheme(*source) {
			continue // Ignition refuses it as a URL, or it is remote: no data URL parser reads it
		}
		compression := f.FieldByIndex(compIdx)
		path := f.FieldByIndex(pathIdx).String()
		if k, ok := d.known[path]; ok && ptrEq(k.Source, source) && ptrEq(k.Compression, compression.Interface().(*string)) {
			f.FieldByIndex(sourceIdx).Set(reflect.ValueOf(&trustedSource))
			compression.Set(reflect.Zero(compression.Type()))
			continue
		}
		data, err := decodeDataURL(*source)
		if err != nil {
			var zero C
			return zero, &DataURLError{Field: "storage.files[" + api.Truncate(path, 256) + "].contents.source", Err: err}
		}
		f.FieldByIndex(sourceIdx).Set(reflect.ValueOf(&trustedSource))
		if isMachineConfigPath(path) {
			if d.dataURLs == nil {
				d.dataURLs = map[string]decodedURL{}
			}
			d.dataURLs[path] = decodedURL{source: *source, data: data}
		}
	}
	files.Set(copied)
	return cfg, nil
}

// unjudgedUnit stands, for Ignition's validation, for a unit text beyond CheckUnitText's bounds.
var unjudgedUnit = "# beyond the unit text bounds: refused by the plan\n"

// boundedUnits replaces, in a copy of units (a []Unit of any 3.x spec), every unit file and dropin
// text beyond CheckUnitText's bounds, and every text of a unit beyond CheckUnitTexts', with
// unjudgedUnit: Ignition's validation parses each one with
// go-systemd's lexer, whose cost grows with its sections and settings (a 30 MB unit of [Service]
// lines allocated over 500 MiB). The config keeps the text; the plan refuses it, naming the unit
// and the bound (allowlist.UnitOptions), or it is the node's current text, never judged.
func boundedUnits(units reflect.Value) {
	if units.Len() == 0 {
		return
	}
	copied := reflect.MakeSlice(units.Type(), units.Len(), units.Len())
	reflect.Copy(copied, units)
	whole := true // the unit's texts within MaxUnitTexts together
	bound := func(contents reflect.Value) {
		if t := contents.Interface().(*string); t != nil && (!whole || CheckUnitText(*t) != nil) {
			contents.Set(reflect.ValueOf(&unjudgedUnit))
		}
	}
	for i := range copied.Len() {
		u := copied.Index(i)
		dropins := u.FieldByName("Dropins")
		texts := make([]*string, dropins.Len())
		for j := range texts {
			texts[j] = dropins.Index(j).FieldByName("Contents").Interface().(*string)
		}
		whole = CheckUnitTexts(u.FieldByName("Contents").Interface().(*string), texts) == nil
		bound(u.FieldByName("Contents"))
		if dropins.Len() == 0 {
			continue
		}
		dc := reflect.MakeSlice(dropins.Type(), dropins.Len(), dropins.Len())
		reflect.Copy(dc, dropins)
		for j := range dc.Len() {
			bound(dc.Index(j).FieldByName("Contents"))
		}
		dropins.Set(dc)
	}
	units.Set(copied)
}

// decodedURL is a data URL source and its data.
type decodedURL struct {
	source string
	data   []byte
}

// parseSpec unmarshals raw into spec C's types, validates them as that spec's Parse does, and
// translates the result to 3.5.
func parseSpec[C any](d *decoder, raw []byte, translate func(C) types.Config) (types.Config, report.Report, error) {
	var c C
	if d.restore == nil && !d.whole { // an embedded config's placeholders are put back later (streamed.go)
		if a := aliasSources(raw); a != nil {
			if json.Unmarshal(a.doc, &c) == nil && a.put(&c) == nil {
				return validateSpec(d, c, translate)
			}
			c = *new(C) // decoded whole: errors are worded on the document as given
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return types.Config{}, report.Report{}, err
	}
	return validateSpec(d, c, translate)
}

// validateSpec validates c with Ignition's own rules once its data URLs are checked (checkDataURLs,
// forValidation), and translates it to 3.5.
func validateSpec[C any](d *decoder, c C, translate func(C) types.Config) (types.Config, report.Report, error) {
	if err := checkDataURLs(c); err != nil {
		return types.Config{}, report.Report{}, err
	}
	cfg := translate(c)
	if err := checkLinkWork(cfg.Storage); err != nil {
		return types.Config{}, report.Report{}, err
	}
	vc, err := forValidation(d, c)
	if err != nil {
		return types.Config{}, report.Report{}, err
	}
	return cfg, validate.ValidateWithContext(vc, nil), nil
}

// maxLinkChecks bounds Ignition's check of every file, directory and link path against every link
// (a path through a link is invalid): quadratic, and one report entry per pair that fails. A
// machine-config server's payload has a few links; 21 000 flat links (a 71 KB ConfigMap value)
// took 10 s of CPU, and a chain of 3 000 links below one another (19 KB) 2.7 GB in report entries
// on every node of the pool at once (adversary r23 c/02, c/06).
const maxLinkChecks = 1 << 22

// checkLinkWork refuses, before Ignition validates it, a storage whose quadratic checks cost more
// than the budget: its links times its paths over maxLinkChecks; the bytes those checks compare
// (every path against each link's path and "/", a string Ignition builds per pair) over
// maxLinkBytes (adversary r24 c/03: 500 links of 12 KB paths against 7 400 files, 40 KB as a
// ConfigMap value, took 18 s); the pairs that fail, one report entry each, over maxLinkMatches,
// counted by walking each path's ancestors (r24 c/02: 380 nested links over 10 000 files, within
// the pair bound, nearly every pair an entry: 1.95 GB); a disk's partitions over maxPartitions
// (Ignition's overlap check is quadratic: r24 c/01, 20 000 partitions, 7 s). A refresh never
// changes links or disks, so such a payload has nothing to apply.
func checkLinkWork(s types.Storage) error {
	for i, d := range s.Disks {
		if len(d.Partitions) > maxPartitions {
			return fmt.Errorf("storage.disks.%d.partitions: %d partitions, more than the %d a GPT holds by default (Ignition's overlap check is quadratic)", i, len(d.Partitions), maxPartitions)
		}
	}
	links := len(s.Links)
	if links == 0 {
		return nil
	}
	paths := len(s.Files) + len(s.Directories) + links
	if links*paths > maxLinkChecks {
		return fmt.Errorf("storage.links: %d links against %d paths: more than Ignition's link check can do within the budget (at most %d link-path pairs)", links, paths, maxLinkChecks)
	}
	linkBytes := 0
	isLink := make(map[string]bool, links)
	lengths := map[int]bool{} // only a prefix as long as some link's is looked up: within linkBytes a path
	for _, l := range s.Links {
		linkBytes += len(l.Path) + 1
		isLink[l.Path], lengths[len(l.Path)] = true, true
	}
	if linkBytes*paths > maxLinkBytes {
		return fmt.Errorf("storage.links: %d bytes of link paths against %d paths: more than Ignition's link check can compare within the budget (%d bytes)", linkBytes, paths, maxLinkBytes)
	}
	matches := 0
	count := func(p string) error {
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			if lengths[i] && isLink[p[:i]] {
				if matches++; matches > maxLinkMatches {
					return fmt.Errorf("storage.links: more than %d paths lie through a link (at %s): more report entries than the budget holds", maxLinkMatches, shortPath(p))
				}
			}
		}
		return nil
	}
	for _, f := range s.Files {
		if err := count(f.Path); err != nil {
			return err
		}
	}
	for _, d := range s.Directories {
		if err := count(d.Path); err != nil {
			return err
		}
	}
	for _, l := range s.Links {
		if err := count(l.Path); err != nil {
			return err
		}
	}
	return nil
}

// maxLinkBytes bounds the bytes Ignition's link check compares; maxLinkMatches the paths through a
// link it reports (each is invalid: a few is as refused as many); maxPartitions a disk's partitions.
const (
	maxLinkBytes   = 1 << 27
	maxLinkMatches = 1 << 12
	maxPartitions  = 128
)

// shortPath is p as a message names it: at most 80 bytes.
func shortPath(p string) string {
	if len(p) > 80 {
		return p[:80] + "…"
	}
	return p
}

func (d *decoder) unmarshalValidate(raw []byte, minor int64) (types.Config, report.Report, error) {
	switch minor {
	case 0:
		return parseSpec(d, raw, func(c v30.Config) types.Config {
			return v35tr.Translate(v34tr.Translate(v33tr.Translate(v32tr.Translate(v31tr.Translate(c)))))
		})
	case 1:
		return parseSpec(d, raw, func(c v31.Config) types.Config {
			return v35tr.Translate(v34tr.Translate(v33tr.Translate(v32tr.Translate(c))))
		})
	case 2:
		return parseSpec(d, raw, func(c v32.Config) types.Config { return v35tr.Translate(v34tr.Translate(v33tr.Translate(c))) })
	case 3:
		return parseSpec(d, raw, func(c v33.Config) types.Config { return v35tr.Translate(v34tr.Translate(c)) })
	case 4:
		return parseSpec(d, raw, v35tr.Translate)
	default:
		return parseSpec(d, raw, func(c types.Config) types.Config { return c })
	}
}

// checkReport returns the first fatal validation error, naming its location in the config, except
// for unclean or relative node paths, which it collects for the planner to refuse.
func checkReport(cfg types.Config, r report.Report) (map[string]bool, error) {
	var dirty map[string]bool
	for _, e := range r.Entries {
		if !e.Kind.IsFatal() {
			continue
		}
		if p, ok := nodePathError(cfg, e); ok {
			if dirty == nil {
				dirty = map[string]bool{}
			}
			dirty[p] = true
			continue
		}
		return nil, fmt.Errorf("invalid Ignition config at %s: %s", e.Context.String(), reportMessage(e.Message))
	}
	return dirty, nil
}

// reportMessage is Ignition's validation message without unit text: its unit check wraps
// go-systemd's lexer error, which quotes what follows a section header's "]" (adversary r23 c/07:
// a unit's Environment=DB_PASS=… after "[Service]" reached the refusal).
func reportMessage(msg string) string {
	const garbage = "found garbage after section name"
	if i := strings.Index(msg, garbage); i >= 0 {
		return msg[:i] + "text after a section header's closing \"]\" (not shown: it may be any line of the unit)"
	}
	return msg
}

// nodePathError reports whether e is Ignition's "path not absolute/clean" error on a file, directory
// or link entry, and returns that entry's path.
func nodePathError(cfg types.Config, e report.Entry) (string, bool) {
	if e.Message != ignerrors.ErrDirtyPath.Error() && e.Message != ignerrors.ErrPathRelative.Error() {
		return "", false
	}
	p := e.Context.Path
	if len(p) != 4 || p[0] != "storage" || p[3] != "path" {
		return "", false
	}
	i, ok := p[2].(int)
	if !ok {
		return "", false
	}
	s := cfg.Storage
	switch p[1] {
	case "files":
		if i < len(s.Files) {
			return s.Files[i].Path, true
		}
	case "directories":
		if i < len(s.Directories) {
			return s.Directories[i].Path, true
		}
	case "links":
		if i < len(s.Links) {
			return s.Links[i].Path, true
		}
	}
	return "", false
}

// decodeIgnition parses an Ignition payload and reads the reboot-class fields from the MachineConfig
// files the machine-config server embeds in it.
func (d *decoder) decodeIgnition(js []byte, version *string) (*Payload, error) {
	cfg, dirty, err := d.parseIgnition(js, version)
	if err != nil {
		return nil, err
	}
	p := &Payload{Config: cfg, dirtyPaths: dirty}
	for _, f := range cfg.Storage.Files {
		if !isMachineConfigPath(f.Path) {
			continue
		}
		data, err := d.fileContents(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		before := d.budget
		mc, err := d.parseMachineConfig(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		charged := int64(len(data)) + before - d.budget
		if p.embedded == nil {
			p.embedded = map[string]embeddedMC{}
		}
		// What CheckEmbedded needs of it (the largest file by far), walked once, now.
		reduced := reduceEmbedded(mc.Spec.Config, &cfg)
		p.embedded[f.Path] = embeddedMC{contents: contentsOf(f), config: reduced, charged: charged}
		view := mc.view(f.Path)
		// The embedded config's own Ignition kernelArguments are reboot-class too: diffMachine
		// compares them current against desired, per source, as spec.kernelArguments.
		view.IgnitionKernelArguments = kargStrings(embeddedKernelArgs(mc.Spec.Config, reduced))
		p.Machine = append(p.Machine, view)
	}
	return p, nil
}

// fileContents is FileContents, reusing the data validation decoded (for an uncompressed file with
// no hash to check, as the machine-config server writes its metadata files).
func (d *decoder) fileContents(f types.File) ([]byte, error) {
	if pre, ok := d.dataURLs[f.Path]; ok && f.Contents.Source != nil && *f.Contents.Source == pre.source &&
		!compressed(f) && f.Contents.Verification.Hash == nil {
		return pre.data, nil
	}
	return FileContents(f)
}

// Metadata files: the machine-config server adds them to every payload it serves. Two embed the
// rendered MachineConfig (the reboot-class fields are read from them); node-annotations.json holds
// the machine-config daemon's currentConfig/desiredConfig annotations, "rendered-<pool>-<hash>", and
// so changes with every change. They describe the machine for the daemon's first boot; a refresh
// never writes, diffs or refuses them.
const (
	MachineConfigContentPath      = "/etc/mcs-machine-config-content.json"
	MachineConfigEncapsulatedPath = "/etc/ignition-machine-config-encapsulated.json"
	NodeAnnotationsPath           = "/etc/machine-config-daemon/node-annotations.json"
)

// IsMetadataPath reports whether path is one of the machine-config server's metadata files.
func IsMetadataPath(path string) bool {
	return isMachineConfigPath(path) || path == NodeAnnotationsPath
}

// isMachineConfigPath reports whether path is one of the embedded MachineConfig files.
func isMachineConfigPath(path string) bool {
	return path == MachineConfigContentPath || path == MachineConfigEncapsulatedPath
}

// DirtyPath reports whether Ignition rejected path as relative or unclean.
func (p *Payload) DirtyPath(path string) bool { return p.dirtyPaths[path] }
