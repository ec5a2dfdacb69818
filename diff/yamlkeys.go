package diff

import (
	"fmt"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	yamlv3 "go.yaml.in/yaml/v3"
)

// checkNodes walks a parsed YAML document before it is converted: no anchor or alias (an alias can
// expand a small document without bound), and every mapping key one JSON key of its own. The
// conversion (sigs.k8s.io/yaml, on yaml.v2) turns each key into a string (1 and '1' both "1",
// yes and true both "true") and keeps one value of those that collide, whichever its map iteration
// meets last: the record and the diff would depend on chance (adversary r14 d/03). A key with no
// string form (null, a mapping, a sequence) failed it with "%!s(<nil>)" (d/04).
func checkNodes(n *yamlv3.Node) error {
	if n.Kind == yamlv3.AliasNode || n.Anchor != "" {
		return fmt.Errorf("YAML anchor or alias at line %d: not accepted (an alias can expand a small document without bound)", n.Line)
	}
	if n.Kind == yamlv3.MappingNode {
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			key, err := jsonKey(k)
			if err != nil {
				return err
			}
			if line, dup := seen[key]; dup {
				return fmt.Errorf("YAML key %s at line %d: %s already set at line %d (a key given twice, once converted to JSON)", quoteKey(k.Value), k.Line, quoteKey(key), line)
			}
			seen[key] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := checkNodes(c); err != nil {
			return err
		}
	}
	return nil
}

// yamlV2Words are the plain scalars yaml.v2 reads as a boolean, a null or a merge key, whatever
// yaml.v3 makes of them (YAML 1.1: yes, on, off are booleans there).
var yamlV2Words = map[string]bool{}

func init() {
	for _, w := range []string{"y", "yes", "n", "no", "true", "false", "on", "off", "null"} {
		for _, f := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			yamlV2Words[f] = true
		}
	}
	yamlV2Words["~"], yamlV2Words["<<"], yamlV2Words[""] = true, true, true
}

// jsonKey is the JSON key the conversion makes of the mapping key k, as sigs.k8s.io/yaml makes it
// from yaml.v2's reading, or an error naming the line when it makes none or one not from k's text.
func jsonKey(k *yamlv3.Node) (string, error) {
	if k.Kind != yamlv3.ScalarNode {
		return "", fmt.Errorf("YAML key at line %d is a %s: a JSON key is a string", k.Line, kindName(k.Kind))
	}
	switch {
	case k.Style&(yamlv3.DoubleQuotedStyle|yamlv3.SingleQuotedStyle|yamlv3.LiteralStyle|yamlv3.FoldedStyle) != 0 && k.Style&yamlv3.TaggedStyle == 0:
		return k.Value, nil
	case k.Style&yamlv3.TaggedStyle != 0:
		if k.Tag == "!!str" || k.Tag == "tag:yaml.org,2002:str" {
			return k.Value, nil
		}
		return "", fmt.Errorf("YAML key at line %d has the tag %s: a JSON key is a string (quote it)", k.Line, k.Tag)
	case yamlV2Words[k.Value]:
		return "", fmt.Errorf("YAML key %s at line %d is read as a boolean, a null or a merge key, not a string: quote it", quoteKey(k.Value), k.Line)
	case !strings.ContainsAny(k.Value[:1], "+-.0123456789"):
		return k.Value, nil // a string to yaml.v2: nothing else it resolves starts so
	}
	// A plain scalar that may be a number: read as yaml.v2 reads it, written as the conversion
	// writes it (strconv, a float at 32 bits).
	var v any
	if err := yamlv2.Unmarshal([]byte(k.Value), &v); err != nil {
		return "", fmt.Errorf("YAML key at line %d: %s", k.Line, oneLine(err))
	}
	switch t := v.(type) {
	case string:
		if t == k.Value {
			return t, nil
		}
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case uint64:
		return strconv.FormatUint(t, 10), nil
	case float64:
		switch s := strconv.FormatFloat(t, 'g', -1, 32); s {
		case "+Inf":
			return ".inf", nil
		case "-Inf":
			return "-.inf", nil
		case "NaN":
			return ".nan", nil
		default:
			return s, nil
		}
	}
	return "", fmt.Errorf("YAML key %s at line %d is not read as a string or a number: quote it", quoteKey(k.Value), k.Line)
}

func kindName(k yamlv3.Kind) string {
	switch k {
	case yamlv3.MappingNode:
		return "mapping"
	case yamlv3.SequenceNode:
		return "sequence"
	case yamlv3.AliasNode:
		return "alias"
	}
	return "node"
}

// quoteKey quotes a key for a message, cut to 64 bytes: keys name fields and hosts, but a key can
// be as long as the document.
func quoteKey(k string) string {
	if len(k) > 64 {
		return strconv.Quote(k[:64]) + "…"
	}
	return strconv.Quote(k)
}
