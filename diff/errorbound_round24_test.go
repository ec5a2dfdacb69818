package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

// Round 24 (c/08): a decode error never carries a long word of the payload whole (a number
// literal, a path): it shows the word's start and length, and the message stays short.
func TestDecodeErrorsNeverCarryALongWord(t *testing.T) {
	for name, raw := range map[string]string{
		"number literal": `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","mode":1` + strings.Repeat("1", 1<<20) + `}]}}`,
		"long path":      `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/` + strings.Repeat("a", 1<<20) + `","contents":{"compression":"gzip","source":"data:,x"}}]}}`,
	} {
		_, err := diff.Decode([]byte(raw))
		require.Error(t, err, name)
		assert.Less(t, len(err.Error()), 4096, name)
		assert.NotContains(t, err.Error(), strings.Repeat("1", 100), name)
		assert.NotContains(t, err.Error(), strings.Repeat("a", 100), name)
	}
}
