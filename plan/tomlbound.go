package plan

import (
	"fmt"

	"github.com/openshift/refresh-agent/diff"
)

// Bounds on a registries.conf before it is parsed. BurntSushi/toml's cost grows with nesting and
// dotted names far faster than with size (measured: 20 KB of nested inline tables take 6 GB and a
// minute, a 10 000-part dotted header 2.6 GB), and every node of a pool plans the same payload at
// once, before any pacing slot: the parse must cost what the file's size allows, nothing more. A
// real registries.conf nests 2 deep (mirror = [{…}]), names 2 parts (registry.mirror) and holds a
// few hundred keys.
const (
	tomlMaxDepth = 8    // nested arrays and inline tables
	tomlMaxParts = 4    // parts of one dotted key or table header
	tomlMaxKeys  = 5000 // keys, table headers and array elements together
	// tomlByteCost is what one byte of TOML may cost once parsed, at most (measured on the worst
	// inputs within the other bounds: TestRegistriesParseCostIsBounded); the file's size times it
	// must fit the payload budget.
	tomlByteCost = 48
)

// checkTOMLBounds scans data as TOML's lexer would (strings, literal strings, multi-line strings
// and comments skipped) and refuses, before any parsing, a document nested deeper, with longer
// dotted names or more entries than the bounds, or too large for the payload budget once parsed.
// The scan is one pass, allocation-free.
func checkTOMLBounds(data []byte) error {
	if n := int64(len(data)); n*tomlByteCost > diff.MaxPayloadSize {
		return fmt.Errorf("%d bytes of TOML exceed the %d byte payload budget (--max-payload-bytes) once parsed", n, diff.MaxPayloadSize)
	}
	depth, keys, parts := 0, 0, 1
	line := 1
	lineStart := true // only blanks so far on this line (at depth 0: a header or a key may start)
	inKey := false    // inside a key or header name, counting its dots
	header := false   // the name is a table header's
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\n':
			line++
			lineStart, inKey, header, parts = depth == 0, false, false, 1
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '"' || c == '\'':
			end, err := skipString(data, i)
			if err != nil {
				return fmt.Errorf("line %d: %v", line, err)
			}
			for _, b := range data[i:end] {
				if b == '\n' {
					line++
				}
			}
			i = end - 1
			if lineStart && depth == 0 {
				keys++ // a quoted key starts the line
				inKey, header, parts = true, false, 1
			}
			lineStart = false
			continue
		}
		if lineStart && depth == 0 {
			lineStart = false
			keys++
			inKey, header, parts = true, c == '[', 1
			if c == '[' {
				// A table header: [a.b] or [[a.b]]; its dots are counted until the closing bracket.
				if i+1 < len(data) && data[i+1] == '[' {
					i++
				}
				continue
			}
		}
		switch c {
		case '.':
			if inKey {
				if parts++; parts > tomlMaxParts {
					return fmt.Errorf("line %d: a dotted key or table header with more than %d parts", line, tomlMaxParts)
				}
			}
		case '=':
			inKey = false
		case ']':
			if inKey && header {
				inKey, header = false, false // the end of a header ([[a]] ends with two)
				if i+1 < len(data) && data[i+1] == ']' {
					i++
				}
				continue
			}
			depth--
		case '}':
			depth--
		case '[', '{':
			if depth++; depth > tomlMaxDepth {
				return fmt.Errorf("line %d: arrays or inline tables nested more than %d deep", line, tomlMaxDepth)
			}
			keys++
			if c == '{' {
				inKey, parts = true, 1
			}
		case ',':
			keys++
			if depth > 0 {
				inKey, parts = true, 1 // the next key of an inline table (or an array element)
			}
		}
		if depth < 0 {
			return fmt.Errorf("line %d: unbalanced brackets", line)
		}
		if keys > tomlMaxKeys {
			return fmt.Errorf("more than %d keys, headers and array elements", tomlMaxKeys)
		}
	}
	return nil
}

// skipString returns the index just past the string starting at data[i] (basic or literal, single-
// or multi-line).
func skipString(data []byte, i int) (int, error) {
	q := data[i]
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		for j := i + 3; j+2 < len(data); j++ {
			if q == '"' && data[j] == '\\' {
				j++
				continue
			}
			if data[j] == q && data[j+1] == q && data[j+2] == q {
				// Up to two more quotes may close it ("""a"""" is a, then ").
				end := j + 3
				for k := 0; k < 2 && end < len(data) && data[end] == q; k++ {
					end++
				}
				return end, nil
			}
		}
		return 0, fmt.Errorf("unterminated multi-line string")
	}
	for j := i + 1; j < len(data); j++ {
		switch {
		case q == '"' && data[j] == '\\':
			j++
		case data[j] == q:
			return j + 1, nil
		case data[j] == '\n':
			return 0, fmt.Errorf("unterminated string")
		}
	}
	return 0, fmt.Errorf("unterminated string")
}
