package diff

import (
	"encoding/json"
	"strings"
	"testing"
)

var walkerSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `-`, `01`, `1.`, `1.5e`, `1.5e+3`, `1E-0`, `.5`, `+1`, `tru`, `true `, ` null`, `nul`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":}`, `{,}`, `{"a":1 "b":2}`, `["\u00e9\n\t\/\\\""]`, `"\u12g4"`, `"\x"`,
	"\"a\tb\"", "\"a\x7fb\xffc\"", `"` + strings.Repeat("abcdefgh", 9) + `\"` + `"`, `{"a":[{"b":{"c":[true,false,null]}}]}`,
	`[` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `]`, strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000),
	"{}\x00", `{} {}`, "\"" + strings.Repeat("a", 15) + "\x01\"",
}

// The walker accepts exactly what encoding/json accepts.
func FuzzWalker(f *testing.F) {
	for _, s := range walkerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		if got, want := validJSON(js), json.Valid(js); got != want {
			t.Fatalf("%q: walker says valid %t, encoding/json %t", js, got, want)
		}
	})
}

func TestWalkerAsEncodingJSON(t *testing.T) {
	for _, s := range walkerSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("%.80q: walker says valid %t, encoding/json %t", s, got, want)
		}
	}
	// Every byte at every offset of an 8-byte word inside a string.
	for c := 0; c < 256; c++ {
		for off := 0; off < 17; off++ {
			s := `"` + strings.Repeat("a", off) + string([]byte{byte(c)}) + strings.Repeat("b", 17-off) + `"`
			if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Fatalf("%q: walker says valid %t, encoding/json %t", s, got, want)
			}
		}
	}
}
