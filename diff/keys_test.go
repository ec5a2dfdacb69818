package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDuplicateKeysAreInvalid(t *testing.T) {
	mcs := func(content string) string {
		return `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/mcs-machine-config-content.json","contents":{"source":"data:,` +
			url.PathEscape(content) + `"}}]}}`
	}
	cases := map[string]struct{ raw, want string }{
		"top-level ignition twice": {`{"ignition":{"version":"3.5.0"},"ignition":{"version":"3.0.0"}}`,
			`duplicate key "ignition" at /ignition (offset 32)`},
		"case variant": {`{"ignition":{"version":"3.5.0"},"Ignition":{"version":"3.0.0"}}`,
			`duplicate key "Ignition" at /Ignition (offset 32): equal to "ignition" but for case`},
		"path twice in a file": {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","path":"/etc/b"}]}}`,
			`duplicate key "path" at /storage/files/0/path`},
		"unicode fold (long s)": {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","contents":{},"content\u017f":{}}]}}`,
			`duplicate key "contentſ" at /storage/files/0/contentſ`},
		"kelvin sign": {`{"ignition":{"version":"3.5.0"},"kernelArguments":{},"\u212AernelArguments":{}}`,
			`equal to "kernelArguments" but for case`},
		"escaped key": {`{"ignition":{"version":"3.5.0"},"\u0069gnition":{"version":"3.0.0"}}`,
			`duplicate key "ignition" at /ignition`},
		"unknown keys too": {`{"ignition":{"version":"3.5.0"},"x":{"a":1,"A":2}}`, `duplicate key "A" at /x/A`},
		"inside spec.config": {`{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"3.2.0"},"passwd":{},"passwd":{}}}}`,
			`duplicate key "passwd" at /spec/config/passwd`},
		"machineconfig spec twice": {`{"kind":"MachineConfig","spec":{"fips":true},"spec":{"config":{"ignition":{"version":"3.2.0"}}}}`,
			`duplicate key "spec" at /spec`},
		"machineconfig yaml":    {"kind: MachineConfig\nspec:\n  fips: true\n  fips: false\n", `"fips" already set`},
		"machineconfig yaml ci": {"kind: MachineConfig\nspec:\n  fips: true\n  FIPS: false\n", `but for case`},
		"embedded machineconfig": {mcs(`{"kind":"MachineConfig","spec":{"fips":false,"fips":true}}`),
			`/etc/mcs-machine-config-content.json: duplicate key "fips" at /spec/fips`},
		"pointer escaping": {`{"ignition":{"version":"3.5.0"},"a/b~":{"k":1,"k":2}}`, `at /a~1b~0/k`},
		"many keys":        {`{"ignition":{"version":"3.5.0"},"x":{` + manyKeysJSON(40) + `,"K7":0}}`, `duplicate key "K7" at /x/K7 (offset 356): equal to "k7"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(tc.raw))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func manyKeysJSON(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('0'+i/10)) + string(rune('0'+i%10)) + `":0`)
	}
	return strings.ReplaceAll(b.String(), `"k07"`, `"k7"`)
}

// Keys that match a MachineConfig field only when case is ignored are read by encoding/json and
// ignored by the machine-config operator: invalid.
func TestMachineConfigCaseVariantKeys(t *testing.T) {
	for raw, want := range map[string]string{
		`{"kind":"MachineConfig","Spec":{"config":{"ignition":{"version":"3.2.0"}}}}`:                    "/Spec",
		`{"kind":"MachineConfig","spec":{"FIPS":true,"config":{"ignition":{"version":"3.2.0"}}}}`:        "/spec/FIPS",
		`{"kind":"MachineConfig","spec":{"Config":{"ignition":{"version":"3.2.0"}}}}`:                    "/spec/Config",
		`{"Kind":"ConfigMap","kind":"MachineConfig","spec":{"config":{"ignition":{"version":"3.2.0"}}}}`: "duplicate key",
	} {
		_, err := Decode([]byte(raw))
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), want, raw)
	}
	// A case variant that reads the same either way changes nothing.
	_, err := Decode([]byte(`{"kind":"MachineConfig","spec":{"FIPS":false,"config":{"ignition":{"version":"3.2.0"}}}}`))
	require.NoError(t, err)
}

// Ignition reads keys case-insensitively; so does the decode (the same bytes, the same config).
func TestIgnitionKeysMatchCaseInsensitively(t *testing.T) {
	p, err := Decode([]byte(`{"IGNITION":{"Version":"3.5.0"},"Storage":{"FILES":[{"pATH":"/etc/a"}]}}`))
	require.NoError(t, err)
	require.Len(t, p.Config.Storage.Files, 1)
	assert.Equal(t, "/etc/a", p.Config.Storage.Files[0].Path)
}

func TestMalformedJSONIsReportedAsJSON(t *testing.T) {
	for _, raw := range []string{`{"a":1,}`, `{"a" 1}`, `{"a":[1,}`, `{"a":"x`, `{"a":1}}`, `{"a":1} {}`} {
		_, err := checkKeys([]byte(raw))
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), "invalid JSON at offset", raw)
	}
}

// refDuplicate is the reference for checkKeys on valid JSON: encoding/json's own tokenizer, and a map
// of folded keys per object. Slow, plainly right.
func refDuplicate(js []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	type frame struct {
		object bool
		seen   map[string]bool
		key    bool // next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, errEOF) || err.Error() == "EOF" {
				return false, nil
			}
			return false, err
		}
		top := func() *frame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if f := top(); f != nil && f.object {
					f.key = true
				}
				stack = append(stack, &frame{object: true, seen: map[string]bool{}, key: true})
				continue
			case '[':
				if f := top(); f != nil && f.object {
					f.key = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				if f := top(); f != nil && f.object {
					f.key = true
				}
				continue
			}
		case string:
			if f := top(); f != nil && f.object && f.key {
				k := foldKey(v)
				if f.seen[k] {
					return true, nil
				}
				f.seen[k] = true
				f.key = false
				continue
			}
		}
		if f := top(); f != nil && f.object {
			f.key = true
		}
	}
}

var errEOF = errors.New("EOF")

// FuzzCheckKeys: on valid JSON, checkKeys finds a duplicate exactly when encoding/json's tokenizer
// does; on anything else it fails (malformed JSON is never passed as checked).
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `{"a":{"b":[{"c":1},{"c":2,"C":3}]}}`, `{"\u017f":1,"s":2}`,
		`{"a\\":"\"","a\\\\":1}`, `[1,"x",{"k":true,"K":null}]`, `{"a":"\\\"}","b":1}`, `{"\u212a":1,"k":2}`, `{"\ud800":1,"\ufffd":2}`,
		"{\"a\xff\":1,\"a\xfe\":2}",
		// Past manyKeys (the scan's key set is a map): a case variant of an earlier key, found by
		// its offset; and an object past maxMembers (a *BoundError, not a duplicate).
		`{` + manyKeysJSON(20) + `,"K03":0}`, `{"x":{` + manyKeysJSON(17) + `,"\u212a01":1}}`, `{"m":{` + members(maxMembers+1) + `}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		cost, err := checkKeys(js)
		var bound *BoundError
		if errors.As(err, &bound) {
			if !strings.Contains(bound.What, "members") {
				t.Fatalf("over the budget of %d bytes: %v", MaxPayloadSize, err)
			}
			return // an object of more than maxMembers members: refused, whatever else it holds
		}
		if err == nil {
			// Within its own cost the scan passes; with less, it passes or is refused by the bound.
			if _, e := checkKeysWithin(js, cost); e != nil {
				t.Fatalf("refused within its cost %d: %v", cost, e)
			}
			if _, e := checkKeysWithin(js, cost/2); e != nil && !errors.As(e, &bound) {
				t.Fatalf("with half its cost: %v", e)
			}
		}
		if !json.Valid(js) {
			if err == nil {
				// The scan does not check spelling of literals; the decode after it does.
				var v any
				if json.Unmarshal(js, &v) == nil {
					t.Fatal("json.Valid and json.Unmarshal disagree")
				}
			}
			return
		}
		want, rerr := refDuplicate(js)
		if rerr != nil {
			t.Skip(rerr) // e.g. nesting beyond the tokenizer's stack
		}
		var dup *DuplicateKeyError
		got := errors.As(err, &dup)
		if err != nil && !got {
			t.Fatalf("valid JSON failed the scan: %v", err)
		}
		if got != want {
			t.Fatalf("duplicate: scan %v (%v), reference %v", got, err, want)
		}
	})
}

func TestDuplicateKeyMessageIsShort(t *testing.T) {
	long := strings.Repeat("k", 1<<20)
	_, err := Decode([]byte(`{"ignition":{"version":"3.5.0"},"` + long + `":1,"` + long + `":2}`))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400)
	assert.Contains(t, err.Error(), "duplicate key")
}
