package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/diff"
)

// A parser's quoted value is cut by its length even when it holds a quote (Go's %q writes \") or is
// never closed (adversary r23 c/03: `parsing time "\"<a JWT>\""` showed the JWT twice); a short one
// stays.
func TestQuotedCutCutsEscapedAndUnclosedValues(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0"
	for _, msg := range []string{
		`parsing time "\"` + jwt + `\"" as "2006-01-02T15:04:05Z07:00": cannot parse "\"` + jwt + `\"" as "2006"`,
		`cannot decode "` + jwt,
		"cannot decode `" + jwt,
	} {
		got := diff.QuotedCut(msg)
		assert.NotContains(t, got, jwt, msg)
		assert.NotContains(t, got, jwt[:20], msg)
		assert.Contains(t, got, "bytes not shown", msg)
	}
	short := `cannot unmarshal "abc" into "bool"`
	assert.Equal(t, short, diff.QuotedCut(short))
	assert.Equal(t, `x "\"ab\"" y`, diff.QuotedCut(`x "\"ab\"" y`))
	assert.False(t, strings.Contains(diff.QuotedCut(`"`+strings.Repeat("k", 30)), "k"))
}
