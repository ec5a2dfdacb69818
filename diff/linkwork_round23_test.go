package diff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

func linksPayload(n int, chain bool) []byte {
	var b strings.Builder
	b.WriteString(`{"ignition":{"version":"3.2.0"},"storage":{"links":[`)
	p := "/etc/c"
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if chain {
			p += "/l"
		} else {
			p = fmt.Sprintf("/etc/c/l%d", i)
		}
		fmt.Fprintf(&b, `{"path":%q,"target":"/tmp/x"}`, p)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// Ignition's check of every path against every link is quadratic, with a report entry per failing
// pair: a chain of links below one another (adversary r23 c/06: 3 000 links, 2.7 GB) and many
// flat links (c/02: 21 000, 10 s) are invalid before it runs, the error naming storage.links; a
// payload with a few links beside many files still decodes.
func TestManyLinksAreRefusedBeforeIgnitionsQuadraticCheck(t *testing.T) {
	for _, raw := range [][]byte{linksPayload(3000, true), linksPayload(21000, false)} {
		_, err := diff.Decode(raw)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "storage.links")
	}
	var files strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&files, `,{"path":"/etc/f%d","contents":{"source":"data:,x"}}`, i)
	}
	few := strings.Replace(string(linksPayload(10, false)), `"links":[`, `"files":[`+files.String()[1:]+`],"links":[`, 1)
	p, err := diff.Decode([]byte(few))
	require.NoError(t, err)
	assert.Len(t, p.Config.Storage.Links, 10)
}
