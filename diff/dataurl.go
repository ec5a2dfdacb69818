package diff

import (
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/vincent-petithory/dataurl"
)

// decodeDataURL returns the data of the data URL s exactly as dataurl.DecodeString (the parser
// Ignition validates and reads inline contents with) does: the same bytes, and an error for exactly
// the same inputs, with the same message. That parser lexes the data rune by rune through a channel
// and unescapes it rune by rune into a growing buffer (~40 ns a byte: 0.5 s for the content
// MachineConfig of a 500-file payload); here only the header, up to the data comma, goes through it,
// and the data is checked and decoded in one pass over a byte table. Anything unusual (a quoted
// parameter, a character the lexer refuses) is left to the parser itself, which also words errors.
// FuzzDataURL holds the two equal.
func decodeDataURL(s string) ([]byte, error) {
	comma := strings.IndexByte(s, ',')
	// Without a quoted parameter value the first comma ends the header, or the header is invalid
	// before it: every other lexer state refuses a comma.
	if comma < 0 || !strings.HasPrefix(s, "data:") || strings.IndexByte(s[:comma], '"') >= 0 {
		return slowDataURL(s)
	}
	base64Data := false
	if comma > len("data:") { // "data:," is the common header, and valid
		head, err := dataurl.DecodeString(s[:comma+1])
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
