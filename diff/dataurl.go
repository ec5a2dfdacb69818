package diff

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/vincent-petithory/dataurl"

	"github.com/openshift/refresh-agent/api"
)

// decodeDataURL returns the data of the data URL s exactly as dataurl.DecodeString (the parser
// Ignition validates and reads inline contents with) does: the same bytes, and an error for exactly
// the same inputs, with the same message. That parser lexes the data rune by rune through a channel
// and unescapes it rune by rune into a growing buffer (~40 ns a byte: 0.5 s for the content
// MachineConfig of a 500-file payload); here only the header, up to the data comma, goes through it,
// and the data is checked and decoded in one pass over a byte table. Anything unusual (a quoted
// parameter, a character the lexer refuses) is left to the parser itself, which also words errors.
// FuzzDataURL holds the two equal.
//
// A header (media type and parameters) over maxDataURLHeader bytes or maxDataURLParams parameters
// is refused before any of it is parsed (checkDataURLHeader).
func decodeDataURL(s string) ([]byte, error) {
	if err := checkDataURLHeader(s); err != nil {
		return nil, err
	}
	comma := strings.IndexByte(s, ',')
	// Without a quoted parameter value the first comma ends the header, or the header is invalid
	// before it: every other lexer state refuses a comma.
	if comma < 0 || !strings.HasPrefix(s, "data:") || strings.IndexByte(s[:comma], '"') >= 0 {
		return slowDataURL(s)
	}
	base64Data := false
	if comma > len("data:") { // "data:," is the common header, and valid
		// A copy: the parser returns on a bad parameter value with its lexer's goroutine blocked for
		// good on its next item, holding the string it lexes (a slice of s would be all of s).
		head, err := dataurl.DecodeString(strings.Clone(s[:comma+1]))
		if err != nil {
			return slowDataURL(s)
		}
		base64Data = head.Encoding == dataurl.EncodingBase64
	}
	data := s[comma+1:]
	if base64Data {
		// The lexer takes base64's alphabet, '=' and '\n'; DecodeString also skips '\r'.
		if strings.IndexByte(data, '\r') >= 0 {
			return slowDataURL(s)
		}
		out, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return slowDataURL(s)
		}
		return out, nil
	}
	n := 0 // decoded length
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !urlChar[c] {
			return slowDataURL(s)
		}
		if c == '%' {
			if i+2 >= len(data) || !isHexDigit(data[i+1]) || !isHexDigit(data[i+2]) {
				return slowDataURL(s)
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

// DataURLHeaderError is a data URL source of a config over checkDataURLHeader's bounds, named by
// its field (storage.files[/etc/x].contents.source).
type DataURLHeaderError struct {
	Field string
	Err   error
}

func (e *DataURLHeaderError) Error() string { return e.Field + ": " + e.Err.Error() }

// checkDataURLHeaders refuses a config (of any 3.x spec) with a data URL source over the header
// bounds in any of its resources (files' contents and append entries, merged and replacing configs,
// certificate authorities, LUKS key files), before Ignition's validation parses each one.
func checkDataURLHeaders(cfg any) error {
	total := 0
	return dataURLHeadersIn(reflect.ValueOf(cfg), "", &total)
}

func dataURLHeadersIn(v reflect.Value, at string, total *int) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return dataURLHeadersIn(v.Elem(), at, total)
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			seg := fmt.Sprintf(".%d", i)
			if e.Kind() == reflect.Struct {
				if p := e.FieldByName("Path"); p.IsValid() && p.Kind() == reflect.String {
					seg = "[" + api.Truncate(p.String(), 256) + "]"
				}
			}
			if err := dataURLHeadersIn(e, at+seg, total); err != nil {
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
			if f.Name == "Source" && fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.String {
				if !fv.IsNil() {
					n, err := dataURLHeader(fv.Elem().String())
					if *total += n; err == nil && *total > maxDataURLHeaders {
						err = fmt.Errorf("data URL media types of the config together longer than %d bytes (this one past it)", maxDataURLHeaders)
					}
					if err != nil {
						return &DataURLHeaderError{Field: fa, Err: err}
					}
				}
				continue
			}
			if err := dataURLHeadersIn(fv, fa, total); err != nil {
				return err
			}
		}
	}
	return nil
}

func slowDataURL(s string) ([]byte, error) {
	du, err := dataurl.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return du.Data, nil
}

// validDataURL reports whether Ignition's validation accepts s as a data URL source (its
// validateURL: net/url parses it with scheme data, and the data URL parser reads it), returning the
// data so that a caller reading it does not decode it twice.
func validDataURL(s string) ([]byte, bool) {
	if !strings.HasPrefix(s, "data:") {
		return nil, false
	}
	if u, err := url.Parse(s); err != nil || u.Scheme != "data" {
		return nil, false
	}
	data, err := decodeDataURL(s)
	return data, err == nil
}

// urlChar is the data URL lexer's isURLCharRune for bytes: printable ASCII but for its delimiters and
// "unwise" characters.
var urlChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`<>#"{}|\^[]`+"`", rune(c))
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
