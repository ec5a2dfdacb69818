package edit

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

// unwrap inflates a gzip layer only up to the payload budget, as the decoder does: a bomb is an
// error naming the limit, never inflated whole.
func TestUnwrapBoundsGzip(t *testing.T) {
	saved := diff.MaxPayloadSize
	t.Cleanup(func() { diff.MaxPayloadSize = saved })
	diff.MaxPayloadSize = 1 << 20
	gz := func(n int) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte("{"))
		_, _ = w.Write(make([]byte, n-1))
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	_, _, err := unwrap(gz(1<<20 + 1))
	assert.ErrorContains(t, err, "exceeds the 1048576 byte limit")
	_, doc, err := unwrap(gz(1 << 20))
	require.NoError(t, err)
	assert.Len(t, doc, 1<<20)
}
