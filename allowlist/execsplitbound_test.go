package allowlist_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Round 9 (core 05): a unit's Exec*= words are counted while they are split (SplitExecUpTo), so a
// command of a million words costs what the bound allows, not what it holds. Within the bound the
// split is SplitExec's; past it, ErrTooManyWords, with no more than the bound's words held.
func TestSplitExecUpToStopsAtTheBound(t *testing.T) {
	for _, c := range []struct {
		line  string
		words int
	}{
		{"/bin/echo a b c", 4},
		{"/bin/echo a ; /bin/echo b c", 5},
		{"@/usr/bin/kmod insmod f", 4}, // judged as kmod and as insmod: two argv
		{"|echo a b c d e", 3},         // sh -c <rest>
		{`/bin/sh -c "a b c d"`, 3},
		{"-/bin/true", 1},
	} {
		all, err := allowlist.SplitExec(c.line)
		require.NoError(t, err, c.line)
		n := 0
		for _, a := range all {
			n += len(a)
		}
		require.Equal(t, c.words, n, c.line)
		got, err := allowlist.SplitExecUpTo(c.line, c.words)
		require.NoError(t, err, c.line)
		assert.Equal(t, all, got, c.line)
		_, err = allowlist.SplitExecUpTo(c.line, c.words-1)
		assert.ErrorIs(t, err, allowlist.ErrTooManyWords, c.line)
	}
	// A million words: refused having split at most the bound's.
	long := "/bin/echo " + strings.Repeat("x ", 1_000_000)
	var err error
	cost := memtest.Allocated(func() { _, err = allowlist.SplitExecUpTo(long, allowlist.MaxExecWords) })
	require.ErrorIs(t, err, allowlist.ErrTooManyWords)
	assert.Less(t, cost, uint64(4<<20), "%d bytes allocated", cost)
}

// FuzzSplitExecUpTo: within the bound SplitExecUpTo is SplitExec; past it, it fails with
// ErrTooManyWords (or with SplitExec's own error, when the line cannot be split at all).
func FuzzSplitExecUpTo(f *testing.F) {
	for _, s := range []string{"/bin/echo a b c", "/bin/echo a ; /bin/echo b", "@/usr/bin/kmod insmod f", "|echo a b",
		`/bin/sh -c "a b"`, "-@:+!/bin/x a", `/bin/echo "unterminated`, "/bin/echo a\\", "a ; ; b", "/bin/echo \\x41 \\s b"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, line string, limit int) {
		if len(line) > 4096 {
			return
		}
		limit = max(limit%64, -1)
		got, err := allowlist.SplitExecUpTo(line, limit)
		all, allErr := allowlist.SplitExec(line)
		n := 0
		for _, a := range all {
			n += len(a)
		}
		switch {
		case allErr == nil && n <= max(limit, 0):
			if err != nil || !reflect.DeepEqual(all, got) {
				t.Fatalf("%q up to %d: %q, %v; SplitExec %q", line, limit, got, err, all)
			}
		case allErr == nil:
			if !errors.Is(err, allowlist.ErrTooManyWords) {
				t.Fatalf("%q (%d words) up to %d: %q, %v", line, n, limit, got, err)
			}
		default:
			if err == nil {
				t.Fatalf("%q: SplitExec fails (%v), SplitExecUpTo(%d) gives %q", line, allErr, limit, got)
			}
		}
	})
}
