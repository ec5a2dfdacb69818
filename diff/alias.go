package diff

import (
	"crypto/rand"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// A payload is nearly all file contents: data URLs that encoding/json would copy into the decoded
// config string by string (a second copy of the payload, held as long as the decoded payload is).
// The decode unmarshals the document with each long storage.files[i].contents.source, whose JSON
// string is read as its bytes (no escape, valid UTF-8), replaced by a placeholder, and puts the
// source back as a string that shares the payload's memory, right after unmarshalling and before
// anything else reads the config: translation, Ignition's validation (which sees the source as
// before), the budget and hash checks. encoding/json, the Ignition types and Ignition's validation
// still read every other byte. Anything the walk cannot settle (invalid JSON, a placeholder not
// where the walk put it, an unmarshal error, whose wording needs the whole document) is decoded
// whole, as before. FuzzAliasedSources holds the two decodes equal.
//
// The decoded payload's sources therefore point into the bytes it was decoded from: a caller must
// not modify them afterwards (Decode and DecodeAgainst say so).

// minAliased is the shortest source worth a placeholder (one is ~40 bytes).
const minAliased = 128

// aliasedSources is a document with its long sources replaced by placeholders, and the sources.
type aliasedSources struct {
	doc     []byte
	prefix  string         // a placeholder is prefix + the file's index (a nonce of this decode's own)
	sources map[int]string // by file index, sharing the original document's memory
}

// aliasSources walks an Ignition config's JSON and replaces its long plain sources, or returns nil
// when there is nothing to replace or the walk cannot settle the document.
func aliasSources(raw []byte) *aliasedSources {
	spans, _, err := sourceSpans(raw)
	if err != nil {
		return nil
	}
	a := &aliasedSources{sources: map[int]string{}}
	keep := spans[:0]
	for _, s := range spans {
		body := raw[s.start+1 : s.end-1]
		if len(body) < minAliased || !plainString(body) {
			continue
		}
		keep = append(keep, s)
		a.sources[s.index] = unsafe.String(&body[0], len(body))
	}
	if len(keep) == 0 {
		return nil
	}
	a.prefix = "data:,refresh-agent-source-" + rand.Text() + "-"
	a.doc = withPlaceholders(raw, keep, a.prefix)
	return a
}

// plainString reports whether a JSON string's body (checked as JSON) reads as its bytes: no escape,
// and valid UTF-8 (encoding/json replaces invalid bytes with U+FFFD).
func plainString(body []byte) bool {
	for _, c := range body {
		if c == '\\' {
			return false
		}
	}
	return utf8.Valid(body)
}

// put sets the sources back into cfg (a Config of any 3.x spec, just unmarshalled from a.doc),
// checking that every placeholder decoded exactly where the walk put it: the file of that index,
// and nowhere else among the files' contents.
func (a *aliasedSources) put(cfg any) error {
	files := reflect.ValueOf(cfg).Elem().FieldByName("Storage").FieldByName("Files")
	if !files.IsValid() {
		return errPlaceholder
	}
	n := 0
	for i := range files.Len() {
		src := files.Index(i).FieldByName("Contents").FieldByName("Source")
		if src.IsNil() {
			continue
		}
		s := src.Elem().String()
		if !strings.HasPrefix(s, a.prefix) {
			continue
		}
		want, ok := a.sources[i]
		if !ok || s != a.prefix+strconv.Itoa(i) {
			return errPlaceholder
		}
		src.Set(reflect.ValueOf(&want))
		n++
	}
	if n != len(a.sources) {
		return errPlaceholder
	}
	return nil
}
