package diff_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/openshift/refresh-agent/diff"
)

// Adversary r14 d/03-04: YAML keys that differ in YAML but not once converted to JSON (1 and '1',
// yes and true, 0x1 and 1) had the conversion keep whichever value its map iteration met last, so
// one payload decoded to two configs by chance; a null key failed with "%!s(<nil>)". Each is now
// invalid, naming the key and its line; keys that stay distinct convert as before.
func TestYAMLKeysAreOneJSONKeyEach(t *testing.T) {
	for _, tc := range []struct{ doc, err string }{
		{"a:\n  1: x\n  '1': y\n", `"1" already set at line 2`},
		{"a:\n  \"1\": x\n  1: y\n", `"1" already set at line 2`},
		{"a:\n  0x1: x\n  1: y\n", `"1" already set at line 2`},
		{"a:\n  1.0: x\n  '1': y\n", `"1" already set at line 2`},
		{"a:\n  01: x\n  '1': y\n", `already set at line 2`},
		{"a:\n  +1: x\n  '1': y\n", `already set at line 2`},
		{"a:\n  b: x\n  'b': y\n", `"b" already set at line 2`},
		{"a:\n  !!str b: x\n  b: y\n", `"b" already set at line 2`},
		{"a:\n  yes: x\n", `"yes" at line 2 is read as a boolean`},
		{"a:\n  On: x\n", `"On" at line 2 is read as a boolean`},
		{"a:\n  ~: x\n", `"~" at line 2 is read as a boolean, a null`},
		{"a:\n  null: x\n", `line 2 is read as a boolean, a null`},
		{"a:\n  ? \n  : x\n", `is read as a boolean, a null`},
		{"a:\n  <<: {b: 1}\n", `"<<" at line 2`},
		{"a:\n  ? [b]\n  : x\n", `line 2 is a sequence`},
		{"a:\n  ? {b: 1}\n  : x\n", `line 2 is a mapping`},
		{"a:\n  !!int 1: x\n", `tag !!int`},
		{"a:\n  !!binary YQ==: x\n", `tag !!binary`},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			_, err := diff.YAMLToJSON([]byte(tc.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.NotContains(t, err.Error(), "%!")
		})
	}
	for _, doc := range []string{
		"a:\n  '1': x\n  '01': y\n  \"yes\": z\n  'true': w\n",
		"a:\n  1: x\n  2: y\n  1.5: z\n  -3: w\n",
		"a:\n  name: x\n  files: y\n  overwrite: z\n  tls: w\n  nope: v\n  Yesterday: u\n",
		"a:\n  .5: x\n  '0.5': y\n",
		"apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  labels:\n    machineconfiguration.openshift.io/role: worker\n",
	} {
		t.Run(doc, func(t *testing.T) {
			out, err := diff.YAMLToJSON([]byte(doc))
			if strings.HasPrefix(doc, "a:\n  .5:") {
				// .5 is the float 0.5 to yaml.v2, written "0.5": the same key as '0.5'.
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, yamlEntries(t, []byte(doc)), jsonMembers(t, out), "every key one JSON member")
		})
	}
}

// FuzzYAMLKeys holds the conversion to an invariant that does not reuse it: a document it accepts
// converts to JSON with as many object members as the document has mapping entries (no two keys
// folded into one), the same every time.
func FuzzYAMLKeys(f *testing.F) {
	for _, s := range []string{"a: 1\n'a': 2\n", "1: x\n'1': y\n", "x:\n  0o7: a\n  7: b\n", "y: 1\nY: 2\n", "1e2: a\n100: b\n",
		"0b11: a\n3: b\n", "1_0: a\n10: b\n", ".inf: a\n'.inf': b\n", "2001-12-14: a\n'2001-12-14': b\n", "- {1: a, '1': b}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 4096 {
			return
		}
		out, err := diff.YAMLToJSON(doc)
		if err != nil {
			return
		}
		var n yamlv3.Node
		if yamlv3.Unmarshal(doc, &n) != nil {
			t.Fatalf("accepted, yet yaml.v3 refuses it")
		}
		want := entries(&n)
		if got := jsonMembers(t, out); got != want {
			t.Fatalf("%d mapping entries became %d JSON members: %s", want, got, out)
		}
		again, err := diff.YAMLToJSON(doc)
		if err != nil || string(again) != string(out) {
			t.Fatalf("converted twice, differently: %s / %s (%v)", out, again, err)
		}
	})
}

func yamlEntries(t *testing.T, doc []byte) int {
	var n yamlv3.Node
	require.NoError(t, yamlv3.Unmarshal(doc, &n))
	return entries(&n)
}

func entries(n *yamlv3.Node) int {
	c := 0
	if n.Kind == yamlv3.MappingNode {
		c = len(n.Content) / 2
	}
	for _, k := range n.Content {
		c += entries(k)
	}
	return c
}

func jsonMembers(t *testing.T, out []byte) int {
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("the conversion wrote JSON that does not parse: %v", err)
	}
	return members(v)
}

func members(v any) int {
	c := 0
	switch t := v.(type) {
	case map[string]any:
		c = len(t)
		for _, e := range t {
			c += members(e)
		}
	case []any:
		for _, e := range t {
			c += members(e)
		}
	}
	return c
}
