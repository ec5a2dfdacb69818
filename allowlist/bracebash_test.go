package allowlist

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// braceWords against bash itself (adversary r21 a/04: sequences {c..e} were read as text, so
// /etc/sha{c..e}ow named /etc/shadow unseen): the words bash's brace expansion makes, in order.
func TestBraceWordsAgreeWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, w := range []string{
		"/etc/sha{c..e}ow", "/etc/sha{e..c}ow", "/var/lib/kube{l..l}et", "/x{1..3}", "/x{3..1}", "/x{01..10..3}",
		"/x{-2..2}", "/x{1..10..-4}", "/x{a..e..2}", "/x{X..Z}", "/x{Z..a..3}", "/x{a,b}{1..2}", "/x{a..c,z}", "/x{1..2}{a,b}/y",
		"/x{a..}", "/x{..a}", "/x{1..b}", "/x{aa..c}", "/x{}", "/x{a}", "/x{1..3..0}", "/x{+1..3}", "/x{007..9}",
	} {
		out, err := exec.Command(bash, "-c", "printf '%s\\n' "+w).Output()
		require.NoError(t, err, w)
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		got, ok := braceWords(w, 64)
		require.True(t, ok, w)
		assert.Equal(t, want, got, w)
	}
	_, ok := braceWords("/x{1..100000}", 64)
	assert.False(t, ok, "past the limit")
	_, ok = braceWords("/x{1..99999999999999999999}", 64)
	assert.False(t, ok, "past any limit")
}
