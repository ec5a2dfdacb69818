package allowlist_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/memtest"
)

// adv27 round 4, F1: the unit reader's cost is bounded. The adversary's shapes (each cheap to send
// gzip-compressed, each costing go-systemd's lexer hundreds of MiB to GiB) are refused before the
// lexer, naming the bound, for a few bytes of allocation; the worst texts within every bound lex
// within a small budget.
func TestUnitOptionsCostIsBounded(t *testing.T) {
	over := map[string]string{
		"60 MB of [S] lines (f5_short)":            strings.Repeat("[S]\n", 15_000_000),
		"[Service] and 20 M A= lines (f5_keys)":    "[Service]\n" + strings.Repeat("A=\n", 20_000_000),
		"6 M [Service] lines (f5_service)":         strings.Repeat("[Service]\n", 6_000_000),
		"3 M [Service] headers in a unit (f4)":     "[Unit]\nDescription=x\n" + strings.Repeat("[Service]\n", 3_000_000),
		"7 M [X] headers":                          strings.Repeat("[X]\n", 7_000_000),
		"14 M comment lines":                       strings.Repeat("#\n", 14_000_000),
		"sections within the size":                 strings.Repeat("[S]\n", allowlist.MaxJudgedFile/4),
		"settings within the size":                 "[Service]\n" + strings.Repeat("A=\n", allowlist.MaxJudgedFile/3-4),
		"one continued line of the whole size":     "[Service]\nExecStart=/bin/true" + strings.Repeat(" \\\n", allowlist.MaxJudgedFile/3),
		"a line over the lexer's before the lexer": "[Service]\nExecStart=" + strings.Repeat("a", 1<<16) + "\n",
	}
	for name, text := range over {
		t.Run(name, func(t *testing.T) {
			var err error
			cost := memtest.Allocated(func() { _, err = allowlist.UnitOptions(text) })
			var be *diff.UnitBoundError
			require.True(t, errors.As(err, &be), "refused by a bound, not by the lexer: %v", err)
			assert.Contains(t, err.Error(), "more than the")
			assert.Less(t, cost, uint64(64<<10), "refused before lexing: %d bytes allocated", cost)
		})
	}
	fill := func(prefix, line string, n int) string {
		return prefix + strings.Repeat(line, (n-len(prefix))/len(line))
	}
	within := map[string]string{
		"256 sections and 4096 settings": strings.Repeat("[Service]\n", 256) + strings.Repeat("Environment=A=1\n", 4096),
		"4096 settings of long values":   "[Service]\n" + strings.Repeat("Environment=A="+strings.Repeat("v", 15)+"\n", 4096),
		"a value continued over the whole size": "[Service]\nExecStart=/bin/true" +
			strings.Repeat(" "+strings.Repeat("a", 2000)+" \\\n", allowlist.MaxJudgedFile/2004-1) + "\n",
		"the whole size in spaces":   fill("[Service]\n", strings.Repeat(" ", 2046)+"\n", allowlist.MaxJudgedFile),
		"32768 lines of comments":    fill("[Service]\n", "#a\\\n", allowlist.MaxJudgedFile-1),
		"the whole size of settings": "[Service]\n" + strings.Repeat("A="+strings.Repeat("v", 28)+"\n", 4096-1),
	}
	for name, text := range within {
		t.Run("within/"+name, func(t *testing.T) {
			require.LessOrEqual(t, len(text), allowlist.MaxJudgedFile)
			var err error
			cost := memtest.Allocated(func() { _, err = allowlist.UnitOptions(text) })
			require.NoError(t, err)
			t.Logf("%d bytes: %d KiB allocated", len(text), cost>>10)
			// The lexer's work on the largest text it is given: a few MiB, ~50x its bytes at most.
			assert.Less(t, cost, uint64(8<<20), "within the bounds the lexer costs little")
		})
	}
}

// Differential: within the bounds UnitOptions returns exactly what go-systemd's lexer returns (it
// is that lexer, behind a count), and whatever it accepts the lexer accepts; it never panics.
func FuzzUnitOptions(f *testing.F) {
	for _, s := range []string{
		"[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n", "[Service]\nExecStart=/bin/a \\\n  b\n",
		"#c\\\n[S]\nA=\n;[T]\n[U]  \nB = 3 \\\n\n", "[S]\r\nA=1\r\n", "[S]\nA=\\", "x[S]\n", "[S\n]\nA=1\n",
		"[S]\n" + strings.Repeat("a", 2047) + "=\n", "[S]\n" + strings.Repeat("a", 2048) + "=\n", "\xef\xbb\xbf[S]\nA=1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		opts, err := allowlist.UnitOptions(text)
		ref, refErr := unit.DeserializeOptions(strings.NewReader(text))
		if err != nil {
			var be *diff.UnitBoundError
			if !errors.As(err, &be) && refErr == nil {
				t.Fatalf("refused, not by a bound, what the lexer reads: %v", err)
			}
			return
		}
		if refErr != nil {
			t.Fatalf("accepted what the lexer refuses (%v)", refErr)
		}
		if !reflect.DeepEqual(opts, ref) {
			t.Fatalf("options differ from the lexer's")
		}
	})
}
