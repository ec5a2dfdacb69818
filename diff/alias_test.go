package diff_test

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// sameDecode holds Decode (long sources aliased into raw) to DecodeWhole (every string copied by
// encoding/json), error for error and field for field, and returns the aliased decode.
func sameDecode(t *testing.T, raw []byte) *diff.Payload {
	t.Helper()
	p, err := diff.Decode(raw)
	w, werr := diff.DecodeWhole(raw)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("aliased decode: %v; whole decode: %v", err, werr)
	}
	if err != nil {
		return nil
	}
	if !reflect.DeepEqual(p.Config, w.Config) || !reflect.DeepEqual(p.Machine, w.Machine) ||
		!bytes.Equal(p.MachineConfig, w.MachineConfig) || p.Bytes != w.Bytes {
		t.Fatal("the aliased decode differs from the whole decode")
	}
	for _, f := range p.Config.Storage.Files {
		if p.DirtyPath(f.Path) != w.DirtyPath(f.Path) {
			t.Fatalf("%s: dirty %v, whole decode %v", f.Path, p.DirtyPath(f.Path), w.DirtyPath(f.Path))
		}
	}
	if got, want := diff.CheckEmbedded(p), diff.CheckEmbedded(w); got != want {
		t.Fatalf("embedded check %q, whole decode %q", got, want)
	}
	return p
}

// within reports whether s's bytes lie inside b's memory.
func within(s string, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

func longText(n int) []byte { return bytes.Repeat([]byte("registry.example.com/mirror "), n/28+1)[:n] }

// A served payload's long sources share the payload's memory (no second copy), and the payload
// decodes exactly as with every string copied; short, escaped and invalid-UTF-8 sources are copied.
func TestAliasedSources(t *testing.T) {
	add := func(c *fixture.Config) {
		c.File("/etc/long.conf", longText(4096), 0o644)
		c.GzipFile("/etc/long.gz", longText(8192), 0o644)
		c.File("/etc/short.conf", []byte("x"), 0o644)
	}
	c := served(add)
	add(c) // in the outer config as in the embedded one
	raw := c.JSON()
	p := sameDecode(t, raw)
	require.Empty(t, diff.CheckEmbedded(p))
	aliased := map[string]bool{}
	for _, f := range p.Config.Storage.Files {
		aliased[f.Path] = f.Contents.Source != nil && within(*f.Contents.Source, raw)
	}
	assert.True(t, aliased["/etc/long.conf"])
	assert.True(t, aliased["/etc/long.gz"])
	assert.True(t, aliased[diff.MachineConfigContentPath], "the content MachineConfig, the largest source")
	assert.False(t, aliased["/etc/short.conf"])

	long := `data:,` + strings.Repeat("a", 300)
	for name, doc := range map[string]string{
		"escaped":          `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + `\u0041"}}]}}`,
		"invalid UTF-8":    `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + "\xff" + `"}}]}}`,
		"case-folded keys": `{"ignition":{"version":"3.4.0"},"Storage":{"FILES":[{"PATH":"/etc/a","Contents":{"SOURCE":"` + long + `"}}]}}`,
		"placeholder-like": `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,refresh-agent-source-` + strings.Repeat("b", 300) + `-0"}}]}}`,
		"source in append": `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","append":[{"source":"` + long + `"}],"contents":{"source":"` + long + `"}}]}}`,
		"no path":          `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"contents":{"source":"` + long + `"}}]}}`,
		"invalid data URL": `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:` + strings.Repeat("a", 300) + `"}}]}}`,
		"bad hash":         `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + `","verification":{"hash":"sha512-00"}}}]}}`,
		"mode type error":  `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","mode":"x","contents":{"source":"` + long + `"}}]}}`,
		"syntax error":     `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + `"}},]}}`,
		"spec 3.0":         `{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + `"}}]}}`,
		"dirty path":       `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/../a","contents":{"source":"` + long + `"}}]}}`,
		"unknown field":    `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + `","x":1}}]}}`,
		"machineconfig":    `{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"` + long + `"}}]}}}}`,
	} {
		t.Run(name, func(t *testing.T) { sameDecode(t, []byte(doc)) })
	}
}

// The real served payloads decode alike aliased and whole.
func TestAliasedRealServedPayloads(t *testing.T) {
	for _, f := range realPayloads(t) {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		sameDecode(t, raw)
	}
}

// FuzzAliasedSources mutates a payload with long sources anywhere in its bytes: the aliased decode
// and the whole decode must agree on every input (the same error, or the same payload).
func FuzzAliasedSources(f *testing.F) {
	add := func(c *fixture.Config) {
		c.File("/etc/long.conf", longText(600), 0o644)
		c.GzipFile("/etc/long.gz", longText(900), 0o644)
	}
	c := served(add)
	add(c)
	base := c.JSON()
	f.Add(0, []byte{})
	for _, marker := range []string{`"source"`, `"path"`, `"files"`, `"storage"`, `data:`, `"contents"`, `"mode"`} {
		if i := bytes.Index(base, []byte(marker)); i >= 0 {
			f.Add(i+1, []byte("S"))
			f.Add(i+len(marker)+2, []byte(`\u0041`))
			f.Add(i, []byte(`"x":1,`))
		}
	}
	f.Add(bytes.LastIndex(base, []byte(`"source"`))+10, []byte{0xff})
	f.Fuzz(func(t *testing.T, at int, insert []byte) {
		at = min(max(at, 0), len(base))
		raw := append(append(append([]byte{}, base[:at]...), insert...), base[at:]...)
		sameDecode(t, raw)
	})
}
