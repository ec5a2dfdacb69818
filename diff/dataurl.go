package diff

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openshift/refresh-agent/api"
)

// decodeDataURL returns the data of the data URL s exactly as dataurl.DecodeString (the parser
// Ignition validates and reads inline contents with) does, the same bytes, and refuses exactly the
// inputs it refuses, without ever calling it: that parser runs its lexer in a goroutine, and when
// its parser refuses what the lexer accepted (a bad percent escape in a parameter value or in the
// data, a quoted value strconv cannot unquote, bad base64) it returns with the lexer blocked for
// good on its next item, holding the string it lexed (a source aliasing the payload: the whole
// payload). Here the header is read byte for byte as that lexer reads it (every state of which
// refuses a byte past ASCII) and checked as its parser checks it, and the data is checked and
// decoded in one pass over a byte table. FuzzDataURL holds the two equal; the errors are this
// checker's own (never quoting the source).
//
// A header (media type and parameters) over maxDataURLHeader bytes or maxDataURLParams parameters
// is refused before any of it is parsed (checkDataURLHeader).
func decodeDataURL(s string) ([]byte, error) {
	if err := checkDataURLHeader(s); err != nil {
		return nil, err
	}
	comma, base64Data, err := dataURLHead(s)
	if err != nil {
		return nil, err
	}
	data := s[comma+1:]
	if base64Data {
		// The lexer takes base64's alphabet, '=' and '\n' (which base64.StdEncoding skips, as it
		// does '\r', which the lexer refuses); the parser decodes with base64.StdEncoding.
		for i := 0; i < len(data); i++ {
			if !base64Char[data[i]] {
				return nil, badDataURL("a character base64 data cannot have (at byte %d of the data)", i)
			}
		}
		out, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			var at base64.CorruptInputError
			errors.As(err, &at)
			return nil, badDataURL("bad base64 (at byte %d of the data)", int64(at))
		}
		return out, nil
	}
	n := 0 // decoded length
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !urlChar[c] {
			return nil, badDataURL("a character the data cannot have unescaped (at byte %d of the data)", i)
		}
		if c == '%' {
			if i+2 >= len(data) || !isHexDigit(data[i+1]) || !isHexDigit(data[i+2]) {
				return nil, badDataURL("bad percent escape (at byte %d of the data)", i)
			}
			i += 2
		}
		n++
	}
	out := make([]byte, n)
	j := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '%' {
			c = unhexDigit(data[i+1])<<4 | unhexDigit(data[i+2])
			i += 2
		}
		out[j] = c
		j++
	}
	return out, nil
}

// badDataURL is a data URL refused by decodeDataURL.
func badDataURL(format string, args ...any) error {
	return fmt.Errorf("invalid data URL: "+format, args...)
}

// dataURLHead reads the header of the data URL s as the data URL parser's lexer and parser do,
// returning the index of the comma before the data and whether the data is base64. The lexer's
// states, in order: the "data:" prefix (case and all); a media type, type/subtype, or none (a
// parameter or the comma right after the prefix); parameters, each ";attr=value" with a token
// value or a quoted one, but for a last ";base64" with no value. A type is a token, x- or X- and a
// token, or a token that begins with text, image, audio, video, application, message or multipart
// (as the lexer compares them); a subtype is a token, possibly empty. The parser unescapes a token
// value (a bad percent escape refuses the URL) and strconv-unquotes a quoted one, "\"" + value +
// "\"" (as a Go string literal: a refusal refuses the URL).
func dataURLHead(s string) (comma int, base64Data bool, err error) {
	if !strings.HasPrefix(s, "data:") {
		return 0, false, badDataURL("no data: prefix")
	}
	i := len("data:")
	if i >= len(s) {
		return 0, false, badDataURL("no comma before the data")
	}
	if c := s[i]; c != ';' && c != ',' {
		// The media type. The lexer takes "x" or "X" not followed by "-" as the first letter of a
		// discrete type (none begins with x): refused here as there.
		start, xToken := i, false
		switch {
		case (c == 'x' || c == 'X') && i+1 < len(s) && s[i+1] == '-':
			xToken, i = true, i+2
		case tokenChar[c]:
			i++
		default:
			return 0, false, badDataURL("a character a media type cannot have (at byte %d)", i)
		}
		for ; i < len(s) && s[i] != '/'; i++ {
			if !tokenChar[s[i]] {
				return 0, false, badDataURL("a character a media type cannot have (at byte %d)", i)
			}
		}
		if i >= len(s) {
			return 0, false, badDataURL("no slash in the media type")
		}
		if t := s[start:i]; !xToken && !hasAnyPrefix(t, "text", "image", "audio", "video", "application", "message", "multipart") {
			return 0, false, badDataURL("media type neither a registered top-level type nor x-")
		}
		for i++; i < len(s) && s[i] != ';' && s[i] != ','; i++ {
			if !tokenChar[s[i]] {
				return 0, false, badDataURL("a character a media subtype cannot have (at byte %d)", i)
			}
		}
		if i >= len(s) {
			return 0, false, badDataURL("no comma before the data")
		}
	}
	for s[i] == ';' {
		i++
		start := i
		for ; i < len(s) && s[i] != '=' && s[i] != ','; i++ {
			if !tokenChar[s[i]] {
				return 0, false, badDataURL("a character a parameter name cannot have (at byte %d)", i)
			}
		}
		switch {
		case i >= len(s):
			return 0, false, badDataURL("unterminated parameter")
		case i == start:
			return 0, false, badDataURL("a parameter with no name (at byte %d)", i)
		case s[i] == ',':
			if s[start:i] != "base64" {
				return 0, false, badDataURL("a parameter with no value that is not base64 (at byte %d)", start)
			}
			return i, true, nil
		}
		i++ // '='
		switch {
		case i >= len(s):
			return 0, false, badDataURL("no comma before the data")
		case s[i] == '"':
			i++
			start := i
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] >= utf8.RuneSelf:
					return 0, false, badDataURL("a character a quoted parameter value cannot have (at byte %d)", i)
				case s[i] == '\\':
					if i++; i < len(s) && s[i] >= utf8.RuneSelf {
						return 0, false, badDataURL("a character a quoted parameter value cannot have (at byte %d)", i)
					}
				}
			}
			if i >= len(s) {
				return 0, false, badDataURL("unclosed quoted parameter value")
			}
			if i > start {
				if _, err := strconv.Unquote(`"` + s[start:i] + `"`); err != nil {
					return 0, false, badDataURL("bad escape in a quoted parameter value (at byte %d)", start)
				}
			}
			i++
		case tokenChar[s[i]]:
			for ; i < len(s) && s[i] != ';' && s[i] != ','; i++ {
				if !tokenChar[s[i]] {
					return 0, false, badDataURL("a character a parameter value cannot have (at byte %d)", i)
				}
				if s[i] == '%' && (i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2])) {
					return 0, false, badDataURL("bad percent escape in a parameter value (at byte %d)", i)
				}
			}
		default:
			return 0, false, badDataURL("a character a parameter value cannot have (at byte %d)", i)
		}
		switch {
		case i >= len(s):
			return 0, false, badDataURL("no comma before the data")
		case s[i] != ';' && s[i] != ',':
			return 0, false, badDataURL("neither a semicolon nor a comma after a parameter (at byte %d)", i)
		}
	}
	return i, false, nil
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// maxDataURLHeader and maxDataURLParams bound a data URL's header, between "data:" and the comma
// before the data: the parser Ignition validates with lexes it rune by rune through a channel, about
// 700 ns a byte (a header of 5.5 million ";a=b" parameters, 22 MB in a 29 KB ConfigMap, cost 8 to
// 16 s of CPU a plan: adversary r12 core/04). Real payloads' headers are at most 37 bytes with two
// (text/plain;charset=utf-8;base64); a media type's type and subtype are at most 127 characters each
// (RFC 6838).
const (
	maxDataURLHeader = 512
	maxDataURLParams = 16
)

// checkDataURLHeader refuses a data URL s whose header is over the bounds, reading at most
// maxDataURLHeader bytes of it. The header ends at the first comma outside a quoted parameter value,
// as the lexer reads it; s that is no data URL, or whose header ends (or s does) within the bound, is
// left to the parser.
func checkDataURLHeader(s string) error {
	_, err := dataURLHeader(s)
	return err
}

// dataURLHeader is checkDataURLHeader that also returns the header's length as far as it read it.
func dataURLHeader(s string) (int, error) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return 0, nil
	}
	params, quoted := 0, false
	for i := 5; i < len(s); i++ {
		if i-5 > maxDataURLHeader {
			return i - 5, fmt.Errorf("data URL media type longer than %d bytes (the header before the data's comma; real ones are under 40)", maxDataURLHeader)
		}
		c := s[i]
		switch {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ';':
			if params++; params > maxDataURLParams {
				return i - 5, fmt.Errorf("data URL media type with more than %d parameters (real ones have at most 2)", maxDataURLParams)
			}
		case c == ',':
			return i - 5, nil
		}
	}
	return len(s) - 5, nil
}

// maxDataURLHeaders bounds the headers of a config's data URLs together: each is lexed again by
// every reader of its contents (0.2 s a pass at the bound); 2000 files of the longest real header
// are 74 KB.
const maxDataURLHeaders = 256 << 10

// DataURLError is a data URL source of a config that is refused, named by its field
// (storage.files[/etc/x].contents.source): over checkDataURLHeader's bounds, or invalid
// (decodeDataURL).
type DataURLError struct {
	Field string
	Err   error
}

func (e *DataURLError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *DataURLError) Unwrap() error { return e.Err }

// checkDataURLs refuses a config (of any 3.x spec) with a data URL source over the header bounds
// in any of its resources (files' contents and append entries, merged and replacing configs,
// certificate authorities, LUKS key files), and one that is invalid in any but the files'
// contents (forValidation checks those, decoding them once), before Ignition's validation reads
// any of them: it passes every source it reads as a data URL (isDataScheme) to the data URL
// parser, which leaves a goroutine blocked for good, holding the source, on most invalid ones
// (decodeDataURL). So that parser only ever sees sources it accepts whole.
func checkDataURLs(cfg any) error {
	total := 0
	return dataURLsIn(reflect.ValueOf(cfg), "", false, &total)
}

func dataURLsIn(v reflect.Value, at string, contents bool, total *int) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return dataURLsIn(v.Elem(), at, contents, total)
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			seg := fmt.Sprintf(".%d", i)
			if e.Kind() == reflect.Struct {
				if p := e.FieldByName("Path"); p.IsValid() && p.Kind() == reflect.String {
					seg = "[" + api.Truncate(p.String(), 256) + "]"
				}
			}
			if err := dataURLsIn(e, at+seg, false, total); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fa := at
			switch {
			case f.Anonymous:
			case name != "":
				fa = strings.TrimPrefix(at+"."+name, ".")
			default:
				fa = strings.TrimPrefix(at+"."+f.Name, ".")
			}
			fv := v.Field(i)
			if f.Name == "Source" {
				// *string, but a string in 3.0's certificate authorities.
				src := fv
				if src.Kind() == reflect.Pointer && src.Type().Elem().Kind() == reflect.String {
					if src.IsNil() {
						continue
					}
					src = src.Elem()
				}
				if src.Kind() == reflect.String {
					if err := checkSource(src.String(), !contents, total); err != nil {
						return &DataURLError{Field: fa, Err: err}
					}
					continue
				}
			}
			if err := dataURLsIn(fv, fa, !f.Anonymous && name == "contents" || f.Anonymous && contents, total); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSource checks a source's data URL header against the bounds (total: the config's headers so
// far), and, whole, a source Ignition's validation reads as a data URL.
func checkSource(s string, whole bool, total *int) error {
	n, err := dataURLHeader(s)
	if *total += n; err == nil && *total > maxDataURLHeaders {
		err = fmt.Errorf("data URL media types of the config together longer than %d bytes (this one past it)", maxDataURLHeaders)
	}
	if err == nil && whole && isDataScheme(s) {
		_, err = decodeDataURL(s)
	}
	return err
}

// isDataScheme reports whether Ignition's validation (its validateURL) reads s as a data URL
// source, passing it to the data URL parser: net/url parses it, with scheme data (in any case).
// Every other source it refuses or accepts without that parser.
func isDataScheme(s string) bool {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "data"
}

// urlChar is the data URL lexer's isURLCharRune for bytes: printable ASCII but for its delimiters and
// "unwise" characters.
var urlChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`<>#"{}|\^[]`+"`", rune(c))
	}
	return t
}()

// tokenChar is the lexer's isTokenRune for bytes: printable ASCII but for space and RFC 2045's
// tspecials.
var tokenChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`()<>@,;:\"/[]?=`, rune(c))
	}
	return t
}()

// base64Char is the lexer's isBase64Rune for bytes.
var base64Char = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n") {
		t[c] = true
	}
	return t
}()

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhexDigit(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
