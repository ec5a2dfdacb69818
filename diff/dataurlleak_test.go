package diff

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// invalidDataURLs are data URLs the data URL parser (github.com/vincent-petithory/dataurl) lexes
// whole and then refuses in its parser: each such refusal left the lexer's goroutine blocked for
// good on its next item, holding the string it lexed (a source aliasing the payload: the payload).
// pad is what each carries besides (the data of a real file).
func invalidDataURLs(pad string) map[string]string {
	return map[string]string{
		"bad percent escape in the data":           "data:," + pad + "%zz",
		"percent escape cut short":                 "data:," + pad + "%4",
		"bad percent escape in a parameter value":  "data:text/plain;charset=%zz," + pad,
		"bad escape in a quoted parameter value":   `data:text/plain;charset="\q",` + pad,
		"bad base64 padding":                       "data:;base64," + strings.Repeat("QUJD", len(pad)/4) + "QQ",
		"base64 padding inside":                    "data:text/plain;base64,QQ==" + strings.Repeat("QUJD", len(pad)/4),
		"parameter escape, base64 data":            "data:text/plain;a=%g0;base64," + strings.Repeat("QUJD", len(pad)/4),
		"quoted parameter value, bad percent data": `data:text/plain;a="x,y",` + pad + "%",
	}
}

// invalidDataURLPayloads puts src in every place of a config Ignition's validation, or the
// decode, reads a data URL source from.
func invalidDataURLPayloads(src string) map[string]string {
	q := quoted(src)
	return map[string]string{
		"contents":             ignFile(src, ""),
		"contents, 3.0":        `{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":` + q + `}}]}}`,
		"append":               `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","append":[{"source":` + q + `}]}]}}`,
		"merged config":        `{"ignition":{"version":"3.2.0","config":{"merge":[{"source":` + q + `}]}}}`,
		"replaced by":          `{"ignition":{"version":"3.5.0","config":{"replace":{"source":` + q + `}}}}`,
		"CA":                   `{"ignition":{"version":"3.4.0","security":{"tls":{"certificateAuthorities":[{"source":` + q + `}]}}}}`,
		"CA, 3.0":              `{"ignition":{"version":"3.0.0","security":{"tls":{"certificateAuthorities":[{"source":` + q + `}]}}}}`,
		"LUKS key file":        `{"ignition":{"version":"3.3.0"},"storage":{"luks":[{"name":"a","device":"/dev/sda","keyFile":{"source":` + q + `}}]}}`,
		"machineconfig":        `{"kind":"MachineConfig","spec":{"config":` + ignFile(src, "") + `}}`,
		"merge, machineconfig": `{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"3.2.0","config":{"merge":[{"source":` + q + `}]}}}}}`,
	}
}

// settledGoroutines is the goroutine count once it is at most floor (a lexer that ran to completion
// exits just after its parser returns), or has not fallen for 20 ms, waiting at most a second.
// floor < 0: until it has not fallen.
func settledGoroutines(floor int) int { return settled(runtime.NumGoroutine, floor) }

func settled(count func() int, floor int) int {
	n := count()
	low, since := n, time.Now()
	for deadline := time.Now().Add(time.Second); n > floor && time.Now().Before(deadline); n = count() {
		if n < low {
			low, since = n, time.Now()
		} else if time.Since(since) > 20*time.Millisecond {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	return n
}

// lexerGoroutines counts the goroutines running the data URL parser's lexer, from a goroutine
// profile (consistent, unlike runtime.NumGoroutine while goroutines exit).
func lexerGoroutines() int {
	recs := make([]runtime.StackRecord, runtime.NumGoroutine()+64)
	for {
		n, ok := runtime.GoroutineProfile(recs)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.StackRecord, n+64)
	}
	count := 0
	for _, r := range recs {
		for _, pc := range r.Stack() {
			if isLexerPC(pc) {
				count++
				break
			}
		}
	}
	return count
}

var lexerPCs sync.Map // pc: whether it is in the data URL parser's package

func isLexerPC(pc uintptr) bool {
	if v, ok := lexerPCs.Load(pc); ok {
		return v.(bool)
	}
	f := runtime.FuncForPC(pc)
	is := f != nil && strings.HasPrefix(f.Name(), "github.com/vincent-petithory/dataurl.")
	lexerPCs.Store(pc, is)
	return is
}

// settledLexers is settledGoroutines for lexerGoroutines.
func settledLexers(floor int) int { return settled(lexerGoroutines, floor) }

// The reason for all this: the data URL parser leaves one lexer blocked for good per refusal of
// each shape (a teeth check of lexerGoroutines too; a version of the parser that stops leaking
// fails it, and docs/security.md's residual with it).
func TestTheParserLeaksOnEachShape(t *testing.T) {
	for shape, src := range invalidDataURLs("aaaa") {
		before := settledLexers(-1)
		_, err, _ := libraryDecode(t, src)
		require.Error(t, err, shape)
		assert.Equal(t, before+1, lexerGoroutines(), shape)
		_, err = decodeDataURL(src)
		assert.Error(t, err, shape)
	}
}

// Decoding an invalid data URL source, wherever it is, leaks nothing: 1000 refusals of each shape in
// each place leave the goroutine count where it was, and the refusal names the field.
func TestInvalidDataURLsLeakNothing(t *testing.T) {
	// runtime.NumGoroutine is read without stopping the world: it may be off by a few while
	// goroutines exit. The lexers are counted exactly.
	const n, slack = 1000, 8
	for shape, src := range invalidDataURLs(strings.Repeat("a", 64)) {
		for place, raw := range invalidDataURLPayloads(src) {
			t.Run(shape+"/"+place, func(t *testing.T) {
				before, lexers := settledGoroutines(-1), lexerGoroutines()
				payload := []byte(raw)
				var err error
				for range n {
					_, err = Decode(payload)
				}
				require.Error(t, err)
				assert.Contains(t, err.Error(), "invalid data URL")
				assert.NotContains(t, err.Error(), "aaaaaaaa", "never the contents")
				assert.LessOrEqual(t, settledLexers(lexers), lexers, "data URL lexers left by %d decodes", n)
				after := settledGoroutines(before)
				assert.LessOrEqual(t, after, before+slack, "%d goroutines left by %d decodes", after-before, n)
			})
		}
	}
	// An embedded MachineConfig's config is decoded by CheckEmbedded.
	src := invalidDataURLs("a")["bad percent escape in the data"]
	p, err := Decode([]byte(ignWithMCS(`{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"3.2.0","config":{"merge":[{"source":` + quoted(src) + `}]}}}}}`)))
	require.NoError(t, err)
	before, lexers := settledGoroutines(-1), lexerGoroutines()
	for range n {
		assert.Contains(t, CheckEmbedded(p), "invalid data URL")
	}
	assert.LessOrEqual(t, settledLexers(lexers), lexers, "data URL lexers left by %d embedded checks", n)
	after := settledGoroutines(before)
	assert.LessOrEqual(t, after, before+slack, "%d goroutines left by %d embedded checks", after-before, n)
}

// Nor does the memory of the refused payloads stay: 40 refusals of a 1 MiB source hold nothing
// once collected.
func TestInvalidDataURLsHoldNoMemory(t *testing.T) {
	pad := strings.Repeat("a", 1<<20)
	for shape, src := range invalidDataURLs(pad) {
		t.Run(shape, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range 40 {
				_, err := Decode([]byte(ignFile(src, "")))
				require.Error(t, err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			assert.Less(t, held, int64(4<<20), "%d MiB held after 40 refusals of a 1 MiB source", held>>20)
		})
	}
}
