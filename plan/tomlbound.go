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
	// tomlNameCost is what one byte of a key's full name (its table's name, the names of the
	// inline tables and arrays around it, and its own dotted parts) may cost once parsed: the parser
	// keeps each key's full name as a string of its own, so one long header over many short keys
	// costs their product, whatever the file's size (measured: a 500 KB header over 2 000 keys,
	// 515 KB of file, took 1.9 GB). The sum over all keys times it must fit the payload budget.
	tomlNameCost = 12
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
	// The full names' bytes: tableLen is the current header's, ctx the keys' whose values (arrays,
	// inline tables) are open around i, pushed by depth (fixed size: the scan allocates nothing).
	var names int64
	var pushed [tomlMaxDepth + 1]int
	keyStart, tableLen, ctx, lastKey := 0, 0, 0, 0
	name := func(n int) error {
		if names += int64(n); names*tomlNameCost > diff.MaxPayloadSize {
			return fmt.Errorf("line %d: keys' full names (table, inline tables and key) add up to more than %d bytes, beyond the %d byte payload budget (--max-payload-bytes) once parsed", line, diff.MaxPayloadSize/tomlNameCost, diff.MaxPayloadSize)
		}
		return nil
	}
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
			start := i
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
				inKey, header, parts, keyStart = true, false, 1, start
			}
			lineStart = false
			continue
		}
		if lineStart && depth == 0 {
			lineStart = false
			keys++
			inKey, header, parts, keyStart = true, c == '[', 1, i
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
			if inKey {
				// Each of a dotted key's prefixes is a table of its own, and the parser names each
				// one again per part (measured: a 4-part key costs 26 times its length).
				lastKey = i - keyStart
				if err := name(tableLen + ctx + lastKey*parts*parts); err != nil {
					return err
				}
			}
			inKey = false
		case ']':
			if inKey && header {
				tableLen = i - keyStart
				if err := name(tableLen * parts * parts); err != nil {
					return err
				}
				inKey, header = false, false // the end of a header ([[a]] ends with two)
				if i+1 < len(data) && data[i+1] == ']' {
					i++
				}
				continue
			}
			fallthrough
		case '}':
			if depth--; depth >= 0 {
				ctx -= pushed[depth]
			}
			lastKey = 0
		case '[', '{':
			if depth >= tomlMaxDepth {
				return fmt.Errorf("line %d: arrays or inline tables nested more than %d deep", line, tomlMaxDepth)
			}
			// The value's key names every key inside it (an array's inline tables too).
			pushed[depth], ctx, lastKey = lastKey, ctx+lastKey, 0
			depth++
			keys++
			if c == '{' {
				inKey, parts, keyStart = true, 1, i+1
			}
		case ',':
			keys++
			if depth > 0 {
				inKey, parts, keyStart = true, 1, i+1 // the next key of an inline table (or an array element)
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
