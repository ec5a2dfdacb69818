package allowlist

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An overlay's layers count against the reads' limit like every other read: past it the scan
// says so (ok false), never returns more than the limit.
func TestOverlayLayersKeepTheReadLimit(t *testing.T) {
	text := "[Mount]\nWhat=overlay\nWhere=/x\nOptions=lowerdir=" + strings.Repeat("/a:", 20) + "/b\n"
	reads, ok, err := NodeReadsOf("x.mount", "f", text, 5)
	assert.NoError(t, err)
	assert.False(t, ok, "more layers than the limit")
	assert.LessOrEqual(t, len(reads), 5)
}
