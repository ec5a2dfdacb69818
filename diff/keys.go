package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openshift/refresh-agent/api"
)

// DuplicateKeyError reports a JSON object that names one key twice, or two keys equal but for case.
// encoding/json (and so Ignition, which uses it) keeps the last of two equal keys and matches keys to
// fields case-insensitively, so such a document reads differently depending on the reader: it is
// invalid, never guessed at.
type DuplicateKeyError struct {
	Key     string // the second key, as written
	First   string // the key it repeats, as written
	Pointer string // JSON pointer (RFC 6901) of the second key's member
	Offset  int64  // byte offset of the second key in the document
}

func (e *DuplicateKeyError) Error() string {
	// What the payload chose (a key can be megabytes) is cut for a message that ends up in node
	// annotations and Events.
	ptr := api.Truncate(e.Pointer, 256)
	if ptr == "" {
		ptr = "/"
	}
	if e.Key == e.First {
		return fmt.Sprintf("duplicate key %q at %s (offset %d)", api.Truncate(e.Key, 64), ptr, e.Offset)
	}
	return fmt.Sprintf("duplicate key %q at %s (offset %d): equal to %q but for case, and JSON keys match case-insensitively",
		api.Truncate(e.Key, 64), ptr, e.Offset, api.Truncate(e.First, 64))
}

// errMalformed: the scan met something that is not JSON. The caller's full decode reports it.
var errMalformed = errors.New("malformed JSON")

// maxDepth is encoding/json's own nesting limit.
const maxDepth = 10000

// maxMembers bounds the members of one JSON object in a payload: real Ignition configs and
// MachineConfigs have at most a few tens in any object (12 in the largest of the MCO's rendered
// ones), and the only objects a decode turns into maps (a MachineConfig's metadata.labels and
// metadata.annotations, Kubernetes' ObjectMeta) are read twice, case-sensitively and not, each
// member a map entry: 4.5 million annotations in a 52 MB payload cost 1.1 GB and 45 s before it was.
const maxMembers = 10000

// BoundError is a JSON document over one of the scan's bounds (maxMembers, or the decode's budget
// for what its values cost once decoded), refused where the scan met it, before anything decodes it.
type BoundError struct {
	Pointer string // JSON pointer (RFC 6901) of the object or array over the bound
	What    string
}

func (e *BoundError) Error() string {
	at := "(top level)"
	if e.Pointer != "" {
		// metadata.annotations, storage.files.3: the form Ignition's own reports use.
		at = api.Truncate(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(e.Pointer[1:], "/", "."), "~1", "/"), "~0", "~"), 256)
	}
	return at + ": " + e.What
}

// checkKeys fails on the first object in js that repeats a key (as encoding/json matches keys). It is
// a single pass that allocates only for keys with escapes or non-ASCII bytes, so it costs little next
// to the decode that follows. Malformed JSON is reported as encoding/json reports it.
//
// It also returns what decoding js may cost in memory beyond its bytes (see objectCost): a few bytes
// of JSON ("{}," or "\"\",") become hundreds of bytes of Go values, so a small compressed payload
// of millions of empty entries would otherwise exhaust memory within its byte budget.
//
// The scan stops, with a *BoundError naming the object, at an object of more than maxMembers
// members, or as soon as that cost exceeds limit (what the decode has left of its budget): the
// scan's own memory (a map of an object's keys once it has many) stays within what it charges.
func checkKeys(js []byte) (int64, error) { return checkKeysWithin(js, MaxPayloadSize) }

// checkKeysWithin is checkKeys for a decode that has limit bytes of its budget left.
func checkKeysWithin(js []byte, limit int64) (int64, error) {
	s := keyScanner{js: js, limit: limit}
	s.ws()
	err := s.value(0)
	if err == nil {
		s.ws()
		if s.pos != len(js) {
			err = errMalformed
		}
	}
	if err != errMalformed {
		return s.cost, err
	}
	// Only the syntax is wanted: a RawMessage is the input copied, never a tree of values.
	var v json.RawMessage
	if uerr := json.Unmarshal(js, &v); uerr != nil {
		return 0, jsonError(js, uerr)
	}
	// Valid JSON the scan could not follow: fail closed rather than skip the check.
	return 0, fmt.Errorf("invalid JSON: duplicate-key scan failed at offset %d", s.pos)
}

// What decoding a JSON value may allocate at worst, charged against the decode's budget before it
// happens: an object becomes a struct, an array element a slice slot, each decoded, translated and
// validated (an invalid or duplicate entry also gets a report entry with its path; measured: about
// 1.5 KiB per empty file entry, 0.9 KiB per duplicate SSH key); a string value a copy of its bytes.
// Real payloads have a few hundred objects and elements.
// A member beyond an object's manyKeys-th costs memberCost and its key's bytes: an entry of the scan's
// own key set (a map once an object has that many), and a map entry where a decode reads the object
// as a map (ObjectMeta's labels and annotations: read by the two decoders of the payload, again for
// the daemon's record; measured: about 620 bytes a member, maps grown, TestObjectMemberCostIsBounded).
// No struct of Ignition's or the MachineConfig's has that many fields, so the members a struct
// decode skips or reads into its fields cost nothing beyond their object; and a map of up to
// manyKeys entries is within its objectCost.
const (
	objectCost  = 2048
	elementCost = 1024
	memberCost  = 768
)

type keyScanner struct {
	js    []byte
	pos   int
	cost  int64 // see objectCost
	limit int64 // the most cost may reach
}

// over is the error for a cost beyond the scan's limit, nil within it.
func (s *keyScanner) over() error {
	if s.cost <= s.limit {
		return nil
	}
	return &BoundError{What: fmt.Sprintf("what the JSON's objects, members, elements and strings cost once decoded exceeds the %d byte payload budget (--max-payload-bytes) "+
		"(%d bytes an object, %d a member and its key, %d an element, a string its bytes; %d left after the payload itself)",
		MaxPayloadSize, objectCost, memberCost, elementCost, max(s.limit, 0))}
}

func (s *keyScanner) ws() {
	for s.pos < len(s.js) {
		switch s.js[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *keyScanner) value(depth int) error {
	if s.pos >= len(s.js) || depth > maxDepth {
		return errMalformed
	}
	switch s.js[s.pos] {
	case '{':
		return s.object(depth + 1)
	case '[':
		return s.array(depth + 1)
	case '"':
		v, err := s.str()
		s.cost += int64(len(v))
		return err
	default:
		// A number or literal: its spelling is checked by the decode that follows.
		start := s.pos
		for s.pos < len(s.js) {
			switch s.js[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.pos == start {
					return errMalformed
				}
				return nil
			}
			s.pos++
		}
		return nil
	}
}

// str skips a string and returns its contents between the quotes, still escaped.
func (s *keyScanner) str() ([]byte, error) {
	start := s.pos + 1
	i := start
	for {
		j := bytes.IndexByte(s.js[i:], '"')
		if j < 0 {
			s.pos = len(s.js)
			return nil, errMalformed
		}
		i += j
		// The quote ends the string unless an odd number of backslashes precedes it.
		n := 0
		for k := i - 1; k >= start && s.js[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			s.pos = i + 1
			return s.js[start:i], nil
		}
		i++
	}
}

func (s *keyScanner) array(depth int) error {
	s.pos++ // [
	s.ws()
	if s.pos < len(s.js) && s.js[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.cost += elementCost
		if err := s.over(); err != nil {
			return err
		}
		s.ws()
		if err := s.value(depth); err != nil {
			return within(err, strconv.Itoa(i))
		}
		s.ws()
		if s.pos >= len(s.js) {
			return errMalformed
		}
		switch s.js[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return errMalformed
		}
	}
}

// seenKey is a key already met in the current object.
type seenKey struct {
	raw    []byte // between the quotes, as written
	at     int    // the offset of its opening quote
	folded string // folded form, set for keys that are not plain ASCII (and for all once many)
}

// manyKeys is how many keys an object may have before lookups go through a map.
const manyKeys = 16

func (s *keyScanner) object(depth int) error {
	s.pos++ // {
	s.cost += objectCost
	s.ws()
	if s.pos < len(s.js) && s.js[s.pos] == '}' {
		s.pos++
		return nil
	}
	var buf [manyKeys]seenKey // most objects have a few keys: no allocation for them
	seen := buf[:0]
	var byFold map[string]int // folded -> the offset of the key (its opening quote), once the object has many
	for members := 1; ; members++ {
		if members > maxMembers {
			return &BoundError{What: fmt.Sprintf("more than %d members (an object's bound in a payload: real configs have tens)", maxMembers)}
		}
		s.ws()
		if s.pos >= len(s.js) || s.js[s.pos] != '"' {
			return errMalformed
		}
		at := s.pos
		raw, err := s.str()
		if err != nil {
			return err
		}
		if members > manyKeys { // see memberCost
			s.cost += memberCost + int64(len(raw))
			if err := s.over(); err != nil {
				return err
			}
		}
		key := seenKey{raw: raw, at: at}
		if !plainASCII(raw) {
			key.folded = foldKey(unquoteKey(raw))
		}
		if first, dup := s.lookup(seen, byFold, key); dup {
			name := unquoteKey(raw)
			return &DuplicateKeyError{Key: name, First: first, Pointer: "/" + escapePointer(name), Offset: int64(at)}
		}
		switch {
		case byFold != nil:
			byFold[key.fold()] = at
		case len(seen) < manyKeys:
			seen = append(seen, key)
		default:
			byFold = make(map[string]int, 2*manyKeys)
			for _, k := range append(seen, key) {
				byFold[k.fold()] = k.at
			}
			seen = nil
		}
		s.ws()
		if s.pos >= len(s.js) || s.js[s.pos] != ':' {
			return errMalformed
		}
		s.pos++
		s.ws()
		if err := s.value(depth); err != nil {
			return within(err, unquoteKey(raw))
		}
		s.ws()
		if s.pos >= len(s.js) {
			return errMalformed
		}
		switch s.js[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return errMalformed
		}
	}
}

// lookup returns the earlier key that k repeats, if any.
func (s *keyScanner) lookup(seen []seenKey, byFold map[string]int, k seenKey) (string, bool) {
	if byFold != nil {
		at, ok := byFold[k.fold()]
		if !ok {
			return "", false
		}
		first := keyScanner{js: s.js, pos: at}
		raw, _ := first.str() // scanned already
		return unquoteKey(raw), true
	}
	for _, o := range seen {
		var same bool
		if k.folded == "" && o.folded == "" {
			same = asciiEqualFold(k.raw, o.raw)
		} else {
			same = k.fold() == o.fold()
		}
		if same {
			return unquoteKey(o.raw), true
		}
	}
	return "", false
}

func (k seenKey) fold() string {
	if k.folded != "" {
		return k.folded
	}
	return foldKey(string(k.raw))
}

// within prefixes a duplicate key's pointer with the member or element it was found in.
func within(err error, segment string) error {
	var dup *DuplicateKeyError
	var bound *BoundError
	switch {
	case errors.As(err, &dup):
		dup.Pointer = "/" + escapePointer(segment) + dup.Pointer
	case errors.As(err, &bound):
		bound.Pointer = "/" + escapePointer(segment) + bound.Pointer
	}
	return err
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// plainASCII reports whether a key needs no unescaping and folds by ASCII case alone.
func plainASCII(raw []byte) bool {
	for _, c := range raw {
		if c >= utf8.RuneSelf || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// unquoteKey decodes a key's escapes exactly as encoding/json does (invalid UTF-8 becomes U+FFFD).
func unquoteKey(raw []byte) string {
	if plainASCII(raw) {
		return string(raw)
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return string(raw) // malformed: the full decode rejects the document
	}
	return s
}

// foldKey is encoding/json's foldName: two keys match the same field exactly when their folds are
// equal (ASCII letters upper-cased, every other rune replaced by the smallest rune of its fold set).
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// keyIs reports whether a JSON key matches name as encoding/json matches keys to fields.
func keyIs(key, name string) bool { return foldKey(key) == foldKey(name) }

// keyFolds is keyIs for a key as written (between the quotes, still escaped).
func keyFolds(raw []byte, name string) bool {
	if plainASCII(raw) {
		return asciiEqualFold(raw, []byte(name))
	}
	return keyIs(unquoteKey(raw), name)
}
