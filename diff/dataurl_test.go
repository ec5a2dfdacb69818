package diff

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vincent-petithory/dataurl"
)

var dataURLSeeds = []string{
	"data:,",
	"data:,hello%20world%0A",
	"data:,%7B%22a%22%3A1%7D",
	"data:,%",
	"data:,%4",
	"data:,%4g",
	"data:,%41%",
	"data:,a b",
	"data:,a#b",
	"data:,caf\xc3\xa9",
	"data:,\xff",
	"data:,\x7f",
	"data:;base64,aGVsbG8=",
	"data:;base64,aGVs\nbG8=",
	"data:;base64,aGVs\rbG8=",
	"data:;base64,aGVsbG8",
	"data:;base64,a===",
	"data:;base64,aGVs=bG8=",
	"data:text/plain;charset=utf-8;base64,dW5xdWFsaWZpZWQ=",
	"data:text/plain;charset=utf-8,x%41",
	"data:text/plain;charset=\"utf,8\";base64,aGk=",
	"data:text/plain;charset=\"utf-8\",a,b",
	"data:application/octet-stream;base64,AAEC",
	"data:x-foo/bar,x",
	"data:foo/bar,x",
	"data:text/,x",
	"data:text/plain;,x",
	"data:text/plain;a=,x",
	"data:text/plain;base65,x",
	"data:text/plain;base64;a=b,x",
	"data:;a=b;base64,aGk=",
	"DATA:,x",
	"data:",
	"data",
	"",
	"data:,a,b,c",
	"data:;base64,a,b",
	"data:text/plain;charset=%41,x",
	"data:text/plain;charset=%4,x",
	// The header bounds (checkDataURLHeader): one parameter over, one byte over, a quoted value's
	// semicolons and commas (not parameters, still the header's bytes), and each just within.
	"data:text/plain" + strings.Repeat(";a=b", maxDataURLParams) + ",x",
	"data:text/plain" + strings.Repeat(";a=b", maxDataURLParams+1) + ",x",
	"data:text/" + strings.Repeat("a", maxDataURLHeader-len("text/")) + ",x",
	"data:text/" + strings.Repeat("a", maxDataURLHeader-len("text/")+1) + ",x",
	`data:text/plain;a="` + strings.Repeat(`;,\"`, 40) + `",x`,
	`data:text/plain;a="` + strings.Repeat(`;,\"`, 200) + `",x`,
}

// decodeDataURL is dataurl.DecodeString's verdict and data, byte for byte, without calling it:
// every input the parser accepts is accepted with the same data (but for a header over the bounds,
// refused first), and every input accepted is one the parser accepts, and on which its lexer runs
// to completion (its goroutine is gone once the parser returns). On an input refused the parser may
// leave its lexer's goroutine blocked (the reason decodeDataURL never calls it): tolerated here,
// in the parser's call only.
func FuzzDataURL(f *testing.F) {
	for _, s := range dataURLSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDataURL(t, s, false)
	})
}

func TestDataURLAsTheParser(t *testing.T) {
	for _, s := range dataURLSeeds {
		checkDataURL(t, s, true)
	}
	// Every single byte after each header form, and in each place of a header.
	for _, head := range []string{"data:,", "data:;base64,", "data:text/plain;base64,aGk", "data:text/plain,%"} {
		for c := 0; c < 256; c++ {
			checkDataURL(t, head+string([]byte{byte(c)}), false)
			checkDataURL(t, head+string([]byte{byte(c)})+"=", false)
			checkDataURL(t, head+"%"+string([]byte{byte(c)})+"1", false)
		}
	}
	for _, form := range []string{"data:%c,x", "data:x%c/y,x", "data:text/%c,x", "data:text%c/y,x", "data:;%c=b,x", "data:;a=%c,x",
		"data:;a=b%c,x", `data:;a="%c",x`, `data:;a="\%c",x`, `data:;a="\%c\%c",x`, "data:;base6%c,x", "data:X%c-/y,x", "data:x-%c/y,x"} {
		for c := 0; c < 256; c++ {
			checkDataURL(t, strings.ReplaceAll(form, "%c", string([]byte{byte(c)})), false)
		}
	}
}

// libraryDecode is dataurl.DecodeString(s), called in a goroutine of its own so that a panic or a
// hang of the parser is a failure of the test, not of the run; it returns that goroutine's id too,
// the one the parser's lexer is created by (lexerOf).
func libraryDecode(t *testing.T, s string) (*dataurl.DataURL, error, string) {
	t.Helper()
	type result struct {
		du    *dataurl.DataURL
		err   error
		panic any
		id    string
	}
	done := make(chan result, 1)
	go func() {
		buf := make([]byte, 64)
		id, _, _ := strings.Cut(strings.TrimPrefix(string(buf[:runtime.Stack(buf, false)]), "goroutine "), " ")
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: p, id: id}
			}
		}()
		du, err := dataurl.DecodeString(s)
		done <- result{du: du, err: err, id: id}
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			t.Fatalf("%q: the parser panics: %v", s, r.panic)
		}
		return r.du, r.err, r.id
	case <-time.After(10 * time.Second):
		t.Fatalf("%q: the parser does not return", s)
		return nil, nil, ""
	}
}

// lexerOf reports whether a lexer created by goroutine id is still there after a second.
func lexerOf(id string) bool {
	mark := "created by github.com/vincent-petithory/dataurl.lex in goroutine " + id + "\n"
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		buf := make([]byte, 1<<20)
		for n := runtime.Stack(buf, true); n == len(buf); n = runtime.Stack(buf, true) {
			buf = make([]byte, 2*len(buf))
		}
		if !strings.Contains(string(buf), mark) || time.Now().After(deadline) {
			return strings.Contains(string(buf), mark)
		}
	}
}

// checkDataURL holds decodeDataURL(s) to the parser's. exact counts the parser's lexers from a
// goroutine profile (a walk of every goroutine, the refused inputs' blocked lexers included: the
// seeds); otherwise (the byte sweeps, fuzzing) the goroutine count is read, which may be off by a
// few while goroutines exit, and waited for.
func checkDataURL(t *testing.T, s string, exact bool) {
	t.Helper()
	count, settled := runtime.NumGoroutine, settledGoroutines
	if exact {
		count, settled = lexerGoroutines, settledLexers
	}
	got, err := decodeDataURL(s) // no goroutine of its own: TestInvalidDataURLsLeakNothing counts them
	if herr := checkDataURLHeader(s); herr != nil {
		// Over the header bounds: refused before anything parses it.
		if err == nil || err.Error() != herr.Error() {
			t.Fatalf("%q: over the header bounds, yet %v", s, err)
		}
		return
	}
	if err != nil && !strings.HasPrefix(err.Error(), "invalid data URL: ") {
		t.Fatalf("%q: error %q", s, err)
	}
	before := count()
	want, wantErr, id := libraryDecode(t, s)
	switch {
	case err == nil && wantErr != nil:
		t.Fatalf("%q: accepted (%q), the parser refuses it: %v", s, got, wantErr)
	case err != nil && wantErr == nil:
		t.Fatalf("%q: refused (%v), the parser accepts it: %q", s, err, want.Data)
	case err == nil && (!bytes.Equal(got, want.Data) || got == nil):
		t.Fatalf("%q: data %q, the parser's %q", s, got, want.Data)
	case err == nil:
		// Accepted: the parser's lexer ran to the end and its goroutine is gone.
		// Fuzzing starts goroutines of its own: a count that stays up is confirmed by the stacks.
		if n := settled(before); n > before && (exact || lexerOf(id)) {
			t.Fatalf("%q: accepted, yet the parser left %d goroutines", s, n-before)
		}
	}
}
