package diff

import (
	"encoding/binary"
	"errors"
)

// walker reads a JSON document as strictly as encoding/json's scanner accepts it (FuzzWalker holds
// the two equal), without decoding it: it finds where values are, so that a caller can decode only
// the few it needs. Strings are checked eight bytes at a time; encoding/json's scanner costs a
// function call per byte, the bulk of reading a megabytes-long embedded config.
type walker struct {
	js    []byte
	pos   int
	depth int
}

var errSyntax = errors.New("invalid JSON")

// validJSON reports whether encoding/json accepts js as one JSON value.
func validJSON(js []byte) bool {
	w := walker{js: js}
	if w.value() != nil {
		return false
	}
	w.ws()
	return w.pos == len(js)
}

func (w *walker) ws() {
	for w.pos < len(w.js) {
		switch w.js[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (w *walker) peek() byte {
	w.ws()
	if w.pos >= len(w.js) {
		return 0
	}
	return w.js[w.pos]
}

// value skips one value (after whitespace), checking it.
func (w *walker) value() error {
	switch w.peek() {
	case '{':
		return w.object(func([]byte) error { return w.value() })
	case '[':
		return w.array(func(int) error { return w.value() })
	case '"':
		_, err := w.str()
		return err
	case 't':
		return w.literal("true")
	case 'f':
		return w.literal("false")
	case 'n':
		return w.literal("null")
	default:
		return w.number()
	}
}

func (w *walker) literal(lit string) error {
	if len(w.js)-w.pos < len(lit) || string(w.js[w.pos:w.pos+len(lit)]) != lit {
		return errSyntax
	}
	w.pos += len(lit)
	return nil
}

func (w *walker) digits() int {
	start := w.pos
	for w.pos < len(w.js) && '0' <= w.js[w.pos] && w.js[w.pos] <= '9' {
		w.pos++
	}
	return w.pos - start
}

// number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *walker) number() error {
	if w.pos < len(w.js) && w.js[w.pos] == '-' {
		w.pos++
	}
	switch {
	case w.pos >= len(w.js):
		return errSyntax
	case w.js[w.pos] == '0':
		w.pos++
	case '1' <= w.js[w.pos] && w.js[w.pos] <= '9':
		w.digits()
	default:
		return errSyntax
	}
	if w.pos < len(w.js) && w.js[w.pos] == '.' {
		w.pos++
		if w.digits() == 0 {
			return errSyntax
		}
	}
	if w.pos < len(w.js) && (w.js[w.pos] == 'e' || w.js[w.pos] == 'E') {
		w.pos++
		if w.pos < len(w.js) && (w.js[w.pos] == '+' || w.js[w.pos] == '-') {
			w.pos++
		}
		if w.digits() == 0 {
			return errSyntax
		}
	}
	return nil
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainWord reports whether none of 8 bytes is a control character, a quote or a backslash.
func plainWord(x uint64) bool {
	less := (x - lows*0x20) & ^x & highs // a byte < 0x20
	q := x ^ (lows * '"')
	quote := (q - lows) & ^q & highs
	b := x ^ (lows * '\\')
	backslash := (b - lows) & ^b & highs
	return less|quote|backslash == 0
}

// str reads a string at pos, returning its contents between the quotes, still escaped.
func (w *walker) str() ([]byte, error) {
	if w.pos >= len(w.js) || w.js[w.pos] != '"' {
		return nil, errSyntax
	}
	start := w.pos + 1
	i := start
	for {
		for i+8 <= len(w.js) && plainWord(binary.LittleEndian.Uint64(w.js[i:])) {
			i += 8
		}
		if i >= len(w.js) {
			return nil, errSyntax
		}
		switch c := w.js[i]; {
		case c == '"':
			w.pos = i + 1
			return w.js[start:i], nil
		case c < 0x20:
			return nil, errSyntax
		case c == '\\':
			if i+1 >= len(w.js) {
				return nil, errSyntax
			}
			switch w.js[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(w.js) {
					return nil, errSyntax
				}
				for _, h := range w.js[i+2 : i+6] {
					if !isHexDigit(h) {
						return nil, errSyntax
					}
				}
				i += 6
			default:
				return nil, errSyntax
			}
		default:
			i++
		}
	}
}

// object reads an object at pos (after whitespace), calling member with each key (between the
// quotes, still escaped) with pos at its value, which member must read.
func (w *walker) object(member func(key []byte) error) error {
	if w.peek() != '{' {
		return errSyntax
	}
	if w.depth++; w.depth > maxDepth {
		return errSyntax
	}
	w.pos++
	if w.peek() == '}' {
		w.pos++
		w.depth--
		return nil
	}
	for {
		w.ws()
		key, err := w.str()
		if err != nil {
			return err
		}
		if w.peek() != ':' {
			return errSyntax
		}
		w.pos++
		w.ws()
		if err := member(key); err != nil {
			return err
		}
		switch w.peek() {
		case ',':
			w.pos++
		case '}':
			w.pos++
			w.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// array reads an array at pos (after whitespace), calling elem for each element with pos at it.
func (w *walker) array(elem func(i int) error) error {
	if w.peek() != '[' {
		return errSyntax
	}
	if w.depth++; w.depth > maxDepth {
		return errSyntax
	}
	w.pos++
	if w.peek() == ']' {
		w.pos++
		w.depth--
		return nil
	}
	for i := 0; ; i++ {
		w.ws()
		if err := elem(i); err != nil {
			return err
		}
		switch w.peek() {
		case ',':
			w.pos++
		case ']':
			w.pos++
			w.depth--
			return nil
		default:
			return errSyntax
		}
	}
}
