// Package diff decodes refresh payloads (Ignition configs and MachineConfigs, in any of the encodings
// the upgrade ConfigMap uses) and computes a structured, policy-free diff between two of them.
//
// Nothing here touches the machine or judges a change: the plan package decides what is allowed.
package diff

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// MaxPayloadSize is the memory budget of one decode: the payload as read, every encoding layer's
// output and every file's decoded contents together. Sizes are counted while streaming, before
// anything is allocated, so a gzip bomb is refused having cost only CPU. The default fits the
// DaemonSet's memory limit with room for the decoded config itself; --max-payload-bytes sets it.
var MaxPayloadSize int64 = 64 << 20

// maxLayers bounds how many encodings (gzip, base64) may wrap a payload.
const maxLayers = 4

// Payload is a decoded refresh payload: the Ignition config plus the reboot-class MachineConfig fields.
type Payload struct {
	Config types.Config
	// Machine holds the reboot-class fields, one view per source that carried them (the MachineConfig's
	// spec, or each of the machine-config server's two embedded metadata files). Empty when the payload
	// carries no MachineConfig at all.
	Machine []MachineView
	// MachineConfig is the MachineConfig JSON when the payload is one (for the machine-config daemon's
	// current-config file), else nil.
	MachineConfig []byte
	// ignition is the Ignition config's JSON when the payload is one (IgnitionJSON), else nil.
	ignition []byte
	// dirtyPaths records file, directory and link entries whose path Ignition rejects as relative or
	// unclean; the planner refuses them instead of failing the whole decode.
	dirtyPaths map[string]bool
	// embedded are the MachineConfigs of the metadata files, as the decode parsed them, by path.
	embedded map[string]embeddedMC
	// Bytes is what the decode charged to its budget: the payload as read, its decoded layers and
	// file contents (a measure of what the decoded payload holds, whatever its compression).
	Bytes int64
	// left is the budget the decode had left (measured set): the nested decodes of its embedded
	// MachineConfigs (CheckEmbedded) draw on it, not on a budget of their own.
	left     int64
	measured bool
}

// Form names the encoding a payload was found in, outermost first (e.g. "base64+gzip+ignition").
type Form string

// Decode detects the payload's form and decodes it. Errors name what is wrong and where. The decoded
// payload may share raw's memory (its files' sources: alias.go): raw must not be modified afterwards.
func Decode(raw []byte) (*Payload, error) {
	p, _, err := DecodeForm(raw)
	return p, err
}

// DecodeForm is Decode that also reports the form it found.
func DecodeForm(raw []byte) (*Payload, Form, error) {
	d := newDecoder()
	if err := d.charge(int64(len(raw)), "payload"); err != nil {
		return nil, "", err
	}
	p, form, err := d.decode(raw, 0)
	d.measure(p)
	if err != nil {
		err = shortened(err)
	}
	return p, form, err
}

// maxErrorWord and maxErrorBytes bound what a decode error shows: a word (a number literal, a
// path, a value a parser quotes) over maxErrorWord bytes by its start and length, the message at
// maxErrorBytes. The message becomes the Degraded reason, the Node's annotation and an Event
// (adversary r24 c/08: a 60 MB number literal in a file's mode came back whole).
const (
	maxErrorWord  = 64
	maxErrorBytes = 2048
)

// shortError is an error as shown, shortened; Unwrap keeps what it wraps for errors.Is.
type shortError struct {
	msg string
	err error
}

func (e *shortError) Error() string { return e.msg }
func (e *shortError) Unwrap() error { return e.err }

func shortened(err error) error {
	msg := err.Error()
	if len(msg) <= maxErrorWord && !strings.ContainsAny(msg, "\n") {
		return err
	}
	short := ShortWords(msg)
	if len(short) > maxErrorBytes {
		short = strings.ToValidUTF8(short[:maxErrorBytes], "") + "…"
	}
	if short == msg {
		return err
	}
	return &shortError{msg: short, err: err}
}

// ShortWords shows each blank-separated word of s over maxErrorWord bytes by its start and length:
// a parser's or a judge's message that quotes a payload's word (a number literal, a path, a
// registry's location) stays short.
func ShortWords(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if len(w) > maxErrorWord {
			words[i] = fmt.Sprintf("%s…(%d bytes)", strings.ToValidUTF8(w[:16], ""), len(w))
		}
	}
	return strings.Join(words, " ")
}

// measure records on p what the decode charged.
func (d *decoder) measure(p *Payload) {
	if p != nil {
		p.Bytes = d.start - d.budget
		p.left, p.measured = d.budget, true
	}
}

// nested is a decoder for a decode nested in p's (an embedded MachineConfig's config, decoded again
// by CheckEmbedded): it draws on what p's decode left, plus credit, the part of what p's decode
// charged that the nested decode charges again for the same bytes (the embedded config's text and
// structure, which it charges first). Contents the nested config shares with p (same path, source,
// compression and hash) were charged by p's decode and are not charged again. A payload that no
// decode made (a test's) has the whole budget.
func (p *Payload) nested(credit int64) *decoder {
	left := MaxPayloadSize
	if p.measured {
		left = min(p.left+credit, MaxPayloadSize)
	}
	d := &decoder{budget: left, start: left, known: knownContents(p), shared: true}
	return d
}

// DecodeAgainst is Decode for a payload that will be diffed against known (the node's current
// payload, itself decoded and validated before). A file whose contents (source and compression) are
// the same as known's at that path skips Ignition's data URL validation, which decodes every file
// and dominates the cost of a large payload: those exact bytes were validated already. Everything
// else is validated as by Decode. As with Decode, raw must not be modified afterwards.
func DecodeAgainst(raw []byte, known *Payload) (*Payload, error) {
	d := newDecoder()
	if err := d.charge(int64(len(raw)), "payload"); err != nil {
		return nil, err
	}
	d.known = knownContents(known)
	p, _, err := d.decode(raw, 0)
	d.measure(p)
	return p, err
}

// knownContents are a decoded payload's file contents by path (nil for none).
func knownContents(known *Payload) map[string]types.Resource {
	if known == nil {
		return nil
	}
	m := make(map[string]types.Resource, len(known.Config.Storage.Files))
	for _, f := range known.Config.Storage.Files {
		m[f.Path] = f.Contents
	}
	return m
}

// decoder carries what a decode may trust and the memory it may still use.
type decoder struct {
	known    map[string]types.Resource // contents already validated, by path
	budget   int64                     // bytes this decode may still hold (see MaxPayloadSize)
	dataURLs map[string]decodedURL     // metadata files' data, decoded while validating, by path
	// restore, when set, puts back what a reduced embedded config left out (see streamed.go),
	// before contents are checked.
	restore func(*types.Config) error
	start   int64 // the budget it began with
	whole   bool  // never alias sources (alias.go): the reference FuzzAliasedSources holds it to
	// shared: a nested decode (Payload.nested), whose contents equal to known's were charged by the
	// outer decode.
	shared bool
}

func newDecoder() *decoder { return &decoder{budget: MaxPayloadSize, start: MaxPayloadSize} }

// charge takes n bytes from the decode's budget, failing (before the caller allocates them) when the
// budget cannot cover them.
func (d *decoder) charge(n int64, what string) error {
	if n > d.budget {
		return fmt.Errorf("%s exceeds the %d byte payload budget (--max-payload-bytes: payload and all decoded file contents together)", what, MaxPayloadSize)
	}
	d.budget -= n
	return nil
}

func (d *decoder) decode(raw []byte, layer int) (*Payload, Form, error) {
	if layer > maxLayers {
		return nil, "", fmt.Errorf("payload is wrapped in more than %d encodings", maxLayers)
	}
	// JSON's whitespace only: Ignition rejects a document that starts with any other.
	trimmed := bytes.Trim(raw, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, "", errors.New("payload is empty")
	}
	switch {
	case bytes.HasPrefix(trimmed, []byte{0x1f, 0x8b}):
		inner, err := d.gunzip(trimmed, "decompressed size")
		if err != nil {
			return nil, "", fmt.Errorf("gzip: %w", err)
		}
		return wrap(d.decode(inner, layer+1))("gzip")
	case trimmed[0] == '{':
		return d.decodeJSON(trimmed)
	case isBase64(trimmed):
		inner, err := d.decodeBase64(trimmed)
		if err != nil {
			return nil, "", fmt.Errorf("base64: %w", err)
		}
		return wrap(d.decode(inner, layer+1))("base64")
	default:
		// Strict: a key given twice in YAML is invalid, as in JSON.
		js, err := d.yamlToJSON(trimmed)
		if errors.Is(err, ErrYAMLCost) {
			return nil, "", fmt.Errorf("payload: %w", err)
		}
		if err != nil {
			return nil, "", fmt.Errorf("payload is neither JSON, YAML, gzip nor base64: %s", oneLine(err))
		}
		if err := d.charge(int64(len(js)), "JSON converted from YAML"); err != nil {
			return nil, "", err
		}
		if len(js) == 0 || js[0] != '{' {
			return nil, "", errors.New("payload is neither JSON, YAML, gzip nor base64")
		}
		p, form, err := d.decodeJSON(js)
		if err != nil {
			return nil, "", fmt.Errorf("yaml: %w", err)
		}
		if form != "machineconfig" {
			return p, "yaml+" + form, nil
		}
		return p, "machineconfig-yaml", nil
	}
}

// oneLine joins a multi-line error (the YAML parser's) into one line.
func oneLine(err error) string {
	return QuotedCut(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " "))
}

// QuotedCut shows each quoted segment of a parser's message (`…`, "…") longer than 24 bytes by
// its length: the YAML and JSON parsers quote the value they refuse, and a payload's value is a
// pull secret or a key (adversary r22 c/01: "cannot decode !!str `data:,…<the pull secret>…` as a
// !!bool" reached stderr and the reason).
func QuotedCut(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexAny(s, "`\"")
		if i < 0 {
			b.WriteString(s)
			break
		}
		q := s[i]
		b.WriteString(s[:i])
		j := closingQuote(s[i+1:], q)
		inner, rest := s[i+1:], ""
		if j >= 0 {
			inner, rest = s[i+1:i+1+j], s[i+2+j:]
		}
		switch {
		case len(inner) > 24:
			fmt.Fprintf(&b, "%c(%d bytes not shown)%c", q, len(inner), q)
		case j >= 0:
			b.WriteString(s[i : i+2+j])
		default:
			b.WriteString(s[i:])
		}
		s = rest
	}
	return b.String()
}

// closingQuote is the index in s of the quote q that closes one opened just before s, or -1: in a
// double-quoted segment a backslash escapes the next byte, as Go's %q and JSON write a value that
// holds a quote (adversary r23 c/03: "\"<a JWT>\"" was cut at its first escaped quote and the
// rest shown). A segment never closed runs to the end of the message and is cut by its length too.
func closingQuote(s string, q byte) int {
	for k := 0; k < len(s); k++ {
		switch {
		case s[k] == '\\' && q == '"':
			k++
		case s[k] == q:
			return k
		}
	}
	return -1
}

// wrap prefixes the inner form with the name of the encoding around it.
func wrap(p *Payload, form Form, err error) func(string) (*Payload, Form, error) {
	return func(layer string) (*Payload, Form, error) {
		if err != nil {
			return nil, "", err
		}
		return p, Form(layer) + "+" + form, nil
	}
}

// probe is what tells an Ignition config from a MachineConfig, and the Ignition version.
type probe struct {
	Ignition *ignitionHeader
	Kind     string
	HasSpec  bool
}

type ignitionHeader struct {
	Version *string `json:"version"`
}

// probeJSON reads the top-level keys of a JSON object, stopping as soon as it knows the form: the
// "ignition" key (first in every config Go tooling writes) or kind MachineConfig. Scanning a 10 MiB
// payload costs as much as decoding it, so the probe avoids a pass; the full decode that follows
// still checks the whole document.
func probeJSON(js []byte) (probe, error) {
	var pr probe
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil {
		return pr, err
	} else if tok != json.Delim('{') {
		return pr, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return pr, err
		}
		// Ignition matches keys case-insensitively (encoding/json); checkKeys has made sure no key
		// is given twice, so the first match is the only one.
		if key, _ := tok.(string); keyIs(key, "ignition") {
			pr.Ignition = &ignitionHeader{}
			return pr, dec.Decode(pr.Ignition)
		}
		// The MachineConfig is read as the machine-config operator reads it: case-sensitively.
		switch tok {
		case "kind":
			if err := dec.Decode(&pr.Kind); err != nil {
				return pr, err
			}
			if pr.Kind == "MachineConfig" {
				return pr, nil
			}
			continue
		case "spec":
			pr.HasSpec = true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

// decodeJSON tells an Ignition config from a MachineConfig by their top-level keys.
func (d *decoder) decodeJSON(js []byte) (*Payload, Form, error) {
	cost, err := checkKeysWithin(js, d.budget)
	if err != nil {
		return nil, "", err
	}
	if err := d.charge(cost, "decoded JSON values"); err != nil {
		return nil, "", err
	}
	pr, err := probeJSON(js)
	if err != nil {
		return nil, "", jsonError(js, err)
	}
	switch {
	case pr.Ignition != nil:
		p, err := d.decodeIgnition(js, pr.Ignition.Version)
		if p != nil {
			p.ignition = js
		}
		return p, "ignition", err
	case pr.HasSpec || pr.Kind == "MachineConfig":
		p, err := d.decodeMachineConfig(js)
		return p, "machineconfig", err
	default:
		return nil, "", errors.New("JSON is neither an Ignition config (no \"ignition\" key) nor a MachineConfig (no \"spec\" key)")
	}
}

// jsonError turns encoding/json's errors into one line that gives the byte offset.
func jsonError(js []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("invalid JSON at offset %d (%s): %s", syn.Offset, lineCol(js, syn.Offset), syn.Error())
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := typ.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Errorf("invalid JSON at offset %d (%s): field %s: cannot use %s as %s", typ.Offset, lineCol(js, typ.Offset), field, typ.Value, typ.Type)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// lineCol locates a byte offset as encoding/json reports it (bytes read before the error).
func lineCol(js []byte, off int64) string {
	if len(js) == 0 {
		return "line 1, column 1"
	}
	off = min(max(off, 1), int64(len(js)))
	before := js[:off-1]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int64(len(before) - bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// gunzip decompresses b within the decode's budget.
func (d *decoder) gunzip(b []byte, what string) ([]byte, error) {
	n, err := gunzipSize(b, d.budget, io.Discard)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, d.charge(d.budget+1, what)
		}
		return nil, err
	}
	if err := d.charge(n, what); err != nil {
		return nil, err
	}
	return gunzipN(b, n)
}

var errTooLarge = errors.New("too large")

// gunzipSize streams b through gzip into w (io.Discard to only count), returning the decompressed
// size; more than limit bytes is errTooLarge. The size is known before a byte is allocated for it.
func gunzipSize(b []byte, limit int64, w io.Writer) (int64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	n, err := io.Copy(w, io.LimitReader(zr, limit+1))
	if err != nil {
		return 0, err
	}
	if n > limit {
		return 0, errTooLarge
	}
	return n, nil
}

// gunzipN decompresses b, whose decompressed size gunzipSize found to be n, into exactly n bytes.
func gunzipN(b []byte, n int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := make([]byte, n)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// IsBase64 reports whether b holds only base64 characters (either alphabet) and whitespace, as the
// decoder tells a base64 layer.
func IsBase64(b []byte) bool { return isBase64(b) }

func isBase64(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '+', c == '/', c == '=', c == '-', c == '_',
			c == '\n', c == '\r', c == ' ', c == '\t':
		default:
			return false
		}
	}
	return true
}

// decodeBase64 accepts standard or URL alphabets, padded or not, with line breaks.
func (d *decoder) decodeBase64(b []byte) ([]byte, error) {
	clean := bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, b)
	clean = bytes.TrimRight(clean, "=")
	enc := base64.RawStdEncoding
	if bytes.ContainsAny(clean, "-_") {
		enc = base64.RawURLEncoding
	}
	if err := d.charge(int64(len(clean)+enc.DecodedLen(len(clean))), "decoded size"); err != nil {
		return nil, err
	}
	out := make([]byte, enc.DecodedLen(len(clean)))
	n, err := enc.Decode(out, clean)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}
