package diff

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// yamlToJSON converts one YAML document to JSON, strictly. Anchors and aliases are refused before
// anything is expanded: an alias copies its anchor's whole value, so a few hundred bytes can expand
// to gigabytes (the budget would only see the result). No MachineConfig or Ignition config needs
// them. A second document is refused too: it would be silently ignored, and what is ignored is not
// what was checked.
func yamlToJSON(data []byte) ([]byte, error) { return yamlToJSONWithin(data, MaxPayloadSize) }

// yamlToJSON is yamlToJSON for a conversion within a decode, whose cost must fit what the decode has
// left of its budget (limit): the conversion's nodes are freed when it ends, its JSON is charged by
// the caller.
func (d *decoder) yamlToJSON(data []byte) ([]byte, error) { return yamlToJSONWithin(data, d.budget) }

// yamlToJSONWithin is yamlToJSON at a cost of at most limit bytes.
func yamlToJSONWithin(data []byte, limit int64) ([]byte, error) {
	if err := checkYAMLCost(data, limit); err != nil {
		return nil, err
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc yamlv3.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return []byte("null"), nil // no document (empty, or comments only): as the strict conversion says
	} else if err != nil {
		return nil, fmt.Errorf("YAML: %s", oneLine(err))
	}
	if err := checkNodes(&doc); err != nil {
		return nil, err
	}
	var next yamlv3.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("YAML: %s", oneLine(err))
		}
		return nil, fmt.Errorf("YAML holds more than one document (line %d): only one is read, so only one is accepted", next.Line)
	}
	// Strict: a key given twice in YAML is invalid, as in JSON.
	return yaml.YAMLToJSONStrict(data)
}

// ErrYAMLCost marks a YAML document refused before parsing: what it would cost to convert exceeds
// the payload budget.
var ErrYAMLCost = errors.New("YAML too costly to parse")

// checkYAMLCost charges, before parsing, what converting data can cost at most: each node (parsing
// builds one per scalar, key and collection, each far larger than its bytes: counted by what can
// start one), each byte (a long scalar is copied by the reader, the scanner, the node, the second
// parse and the JSON encoder: a 20 MiB scalar cost 190 MiB), and more for each byte that can grow
// once converted: '<', '>' and '&' the JSON encoder writes as six bytes (\u003c), a backslash starts
// a two-byte escape of YAML's (\L, \0) that becomes six, and 0xe2 leads U+2028 and U+2029, which
// JSON escapes too. The sum must fit the payload budget, or what a decode has left of it (limit).
func checkYAMLCost(data []byte, limit int64) error {
	nodes, escaped := int64(0), int64(0)
	for _, c := range data {
		switch c {
		case '\n', '-', ':', ',', '[', '{':
			nodes++
		case '<', '>', '&', '\\', 0xe2:
			escaped++
		}
	}
	budget := fmt.Sprintf("the %d byte budget (--max-payload-bytes)", MaxPayloadSize)
	if limit < MaxPayloadSize {
		budget = fmt.Sprintf("the %d bytes the decode has left of the %d byte budget (--max-payload-bytes)", max(limit, 0), MaxPayloadSize)
	}
	if nodes*yamlNodeCost > limit {
		return fmt.Errorf("%w: YAML with up to %d nodes exceeds %s once parsed", ErrYAMLCost, nodes, budget)
	}
	if cost := nodes*yamlNodeCost + int64(len(data))*yamlByteCost + escaped*yamlEscapeCost; cost > limit {
		return fmt.Errorf("%w: YAML of %d bytes (%d nodes, %d bytes that grow once converted: <, >, &, \\, U+2xxx) exceeds %s once parsed "+
			"(%d bytes a node, %d a byte, %d more for each of those; at most %d bytes of plain YAML)",
			ErrYAMLCost, len(data), nodes, escaped, budget, yamlNodeCost, yamlByteCost, yamlEscapeCost, max(limit, 0)/yamlByteCost)
	}
	return nil
}

// yamlByteCost and yamlEscapeCost are what one byte of YAML, and one the JSON encoder escapes, cost
// to convert at most (measured: a plain or double-quoted scalar 15-17 bytes a byte, a "\L" escape
// 45, '<' 56:
// TestYAMLScalarCostIsBounded), with a margin so that the worst shapes at the bound stay under
// 45 MiB for the default budget.
const (
	yamlByteCost   = 28
	yamlEscapeCost = 96
)

// yamlNodeCost is what one YAML node costs to convert, at most: yaml.v3 parses it into a Node (about
// 200 bytes), then the strict conversion and the JSON it yields allocate again (measured: 88 MiB for
// 131 000 nodes of a block mapping, TestYAMLConversionCostIsBounded).
const yamlNodeCost = 1024

func countAny(b []byte, chars string) int {
	n := 0
	for _, c := range b {
		if bytes.IndexByte([]byte(chars), c) >= 0 {
			n++
		}
	}
	return n
}

// YAMLToJSON converts one untrusted YAML (or JSON) document to JSON strictly, at a bounded cost: the
// number of nodes it can hold is bounded by the payload budget (--max-payload-bytes) before it is
// parsed, anchors and aliases are refused, a second document too. The node policy file goes
// through it as payloads do.
func YAMLToJSON(data []byte) ([]byte, error) { return yamlToJSON(data) }

// YAMLNodes bounds how many nodes a YAML document can hold, counting what can start one, without
// parsing it.
func YAMLNodes(data []byte) int { return countAny(data, "\n-:,[{") }
