package diff

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// The machine-config server's content MachineConfig embeds the whole rendered config again: as large
// as the outer config, and, on a served payload, the same files with the same source strings. The
// decode walks that embedded config once (reduceEmbedded), compares every file's contents source
// with the outer config's at the same path as it goes, and keeps only the config with each source
// that agrees replaced by a placeholder: the embedded copy's metadata (paths, modes, owners, units,
// users...) and whatever contents differ. CheckEmbedded decodes that small document as the whole one
// would be decoded (the same validation, budget and hash checks), puts the agreeing sources back, and
// compares the result with the outer config exactly as before: nothing the embedded copy carries
// differently can hide in a placeholder, since a placeholder stands only for a string equal to the
// outer one. Whatever the walk cannot settle (an error anywhere, a config that is no Ignition config,
// a placeholder not where the walk put it) is decoded whole, as before: checkEmbeddedWhole, also the
// reference FuzzStreamedEmbedded holds this path to.

// embeddedConfig is a metadata file's spec.config as the decode leaves it for CheckEmbedded.
type embeddedConfig struct {
	none    bool           // no spec.config (absent or null): nothing to disagree with
	raw     []byte         // the config, its agreeing sources replaced by placeholders
	size    int64          // the whole config's size and decode cost, charged as its decode would be
	cost    int64          //
	prefix  string         // a placeholder is prefix + the file's index
	sources map[int]string // the source each placeholder stands for, by file index
	kargs   []byte         // the config's kernelArguments value as given (nil when absent)
}

// embeddedKernelArgs reads the Ignition kernelArguments of an embedded MachineConfig's spec.config
// raw, from the walk's span when it settled the config (e), else from the whole config. A config
// they cannot be read from is refused by CheckEmbedded's whole decode; here it reads as none.
func embeddedKernelArgs(raw []byte, e *embeddedConfig) types.KernelArguments {
	var ka types.KernelArguments
	switch {
	case e != nil && e.none:
	case e != nil:
		if e.kargs != nil {
			_ = json.Unmarshal(e.kargs, &ka)
		}
	default:
		var cfg struct {
			KernelArguments types.KernelArguments `json:"kernelArguments"`
		}
		_ = json.Unmarshal(raw, &cfg)
		ka = cfg.KernelArguments
	}
	return ka
}

// reduceEmbedded walks an embedded MachineConfig's spec.config (already checked as JSON) against the
// outer config. nil means it is left to checkEmbeddedWhole.
func reduceEmbedded(raw []byte, outer *types.Config) *embeddedConfig {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return &embeddedConfig{none: true}
	}
	if raw[0] != '{' {
		return nil
	}
	cost, err := checkKeys(raw)
	if err != nil {
		return nil
	}
	outerSources := make(map[string]string, len(outer.Storage.Files))
	for _, f := range outer.Storage.Files {
		if f.Contents.Source != nil {
			outerSources[f.Path] = *f.Contents.Source
		}
	}
	spans, kargs, err := sourceSpans(raw)
	if err != nil {
		return nil
	}
	// A copy: a slice of raw would keep the whole decoded MachineConfig alive with the payload.
	e := &embeddedConfig{size: int64(len(raw)), cost: cost, sources: map[int]string{}, kargs: bytes.Clone(kargs)}
	keep := spans[:0]
	for _, s := range spans {
		if src, ok := outerSources[unquoteKey(s.path)]; ok && jsonStringIs(raw[s.start:s.end], src) {
			keep = append(keep, s)
			e.sources[s.index] = src
		}
	}
	spans = keep
	// A placeholder no payload can carry: a nonce of this decode's own.
	e.prefix = "data:,refresh-agent-embedded-" + rand.Text() + "-"
	e.raw = withPlaceholders(raw, spans, e.prefix)
	return e
}

// sourceSpan is where a storage.files entry's contents.source string is in a config's JSON.
type sourceSpan struct {
	start, end int    // the string token, quotes included
	index      int    // the entry's index in storage.files
	path       []byte // the entry's path, still escaped
}

// sourceSpans walks an Ignition config's JSON, checking it as encoding/json would, and returns the
// span of every storage.files entry's contents.source that is a string, in an entry whose path is
// a string, with the members encoding/json matches to those fields (keys are matched as it matches
// them; the caller refused keys equal but for case); and the kernelArguments value as given (the
// last member, as in encoding/json; nil when absent).
func sourceSpans(raw []byte) (spans []sourceSpan, kargs []byte, err error) {
	w := walker{js: raw}
	file := func(i int) error {
		if w.peek() != '{' {
			return w.value()
		}
		var path []byte
		hasPath, start, end := false, -1, -1
		err := w.object(func(key []byte) error {
			switch {
			case keyFolds(key, "path") && w.peek() == '"':
				var err error
				path, err = w.str()
				hasPath = err == nil
				return err
			case keyFolds(key, "contents") && w.peek() == '{':
				return w.object(func(key []byte) error {
					if !keyFolds(key, "source") || w.peek() != '"' {
						return w.value()
					}
					start = w.pos
					_, err := w.str()
					end = w.pos
					return err
				})
			}
			return w.value()
		})
		if err != nil || !hasPath || start < 0 {
			return err
		}
		spans = append(spans, sourceSpan{start: start, end: end, index: i, path: path})
		return nil
	}
	err = w.object(func(key []byte) error {
		if keyFolds(key, "kernelArguments") {
			start := w.pos
			err := w.value()
			kargs = raw[start:w.pos:w.pos]
			return err
		}
		if !keyFolds(key, "storage") || w.peek() != '{' {
			return w.value()
		}
		return w.object(func(key []byte) error {
			if !keyFolds(key, "files") || w.peek() != '[' {
				return w.value()
			}
			return w.array(file)
		})
	})
	if err == nil {
		if w.ws(); w.pos != len(raw) {
			err = errSyntax
		}
	}
	return spans, kargs, err
}

// withPlaceholders returns raw with each span's string replaced by the placeholder prefix + its
// file's index.
func withPlaceholders(raw []byte, spans []sourceSpan, prefix string) []byte {
	out := make([]byte, 0, len(raw)-totalLen(spans, func(s sourceSpan) int { return s.end - s.start })+len(spans)*(len(prefix)+12))
	last := 0
	for _, s := range spans {
		out = append(out, raw[last:s.start]...)
		out = append(append(append(out, '"'), prefix...), strconv.Itoa(s.index)+`"`...)
		last = s.end
	}
	return append(out, raw[last:]...)
}

func totalLen[T any](xs []T, n func(T) int) int {
	t := 0
	for _, x := range xs {
		t += n(x)
	}
	return t
}

// jsonStringIs reports whether the JSON string tok (quotes included, checked as JSON) reads as s.
func jsonStringIs(tok []byte, s string) bool {
	body := tok[1 : len(tok)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		// No escape: the string reads as its bytes, but for invalid UTF-8 (which encoding/json
		// replaces with U+FFFD).
		return string(body) == s && utf8.ValidString(s)
	}
	var v string
	return json.Unmarshal(tok, &v) == nil && v == s
}

// errPlaceholder: a placeholder did not decode where the walk put it (the config is decoded whole).
var errPlaceholder = errors.New("embedded config placeholders out of place")

// decode decodes the reduced config as DecodeAgainst(whole config, outer) would decode the whole one,
// with the sources the placeholders stand for put back before contents are checked.
// It draws on what the outer decode left, with credit what that decode charged for the metadata file
// (embeddedMC.charged: the text and structure it charges first again).
func (e *embeddedConfig) decode(outer *Payload, credit int64) (*Payload, error) {
	d := outer.nested(credit)
	if err := d.charge(e.size, "payload"); err != nil {
		return nil, err
	}
	if err := d.charge(e.cost, "decoded JSON values"); err != nil {
		return nil, err
	}
	pr, err := probeJSON(e.raw)
	if err != nil || pr.Ignition == nil {
		return nil, errPlaceholder // no Ignition config: decoded whole, which says what it is
	}
	d.restore = e.restoreSources
	p, err := d.decodeIgnition(e.raw, pr.Ignition.Version)
	d.measure(p)
	return p, err
}

// restoreSources puts back the sources the placeholders stand for, checking that each is exactly
// where the walk put it: the file of that index, and nowhere else among the files' contents.
func (e *embeddedConfig) restoreSources(cfg *types.Config) error {
	n := 0
	for i := range cfg.Storage.Files {
		src := cfg.Storage.Files[i].Contents.Source
		if src == nil || !strings.HasPrefix(*src, e.prefix) {
			continue
		}
		want, ok := e.sources[i]
		if !ok || *src != e.prefix+strconv.Itoa(i) {
			return errPlaceholder
		}
		cfg.Storage.Files[i].Contents.Source = &want
		n++
	}
	if n != len(e.sources) {
		return errPlaceholder
	}
	return nil
}
