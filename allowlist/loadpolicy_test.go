package allowlist_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Round 11 (core 02): the policy file was read whole before its 1 MiB limit said no (3 GB: 3.1 GB
// RSS). It is read up to the limit and a byte; over it, the error names the file.
func TestOversizedPolicyFileIsNeverReadWhole(t *testing.T) {
	for name, size := range map[string]int64{"3 GB sparse": 3 << 30, "one byte over": allowlist.MaxRulesSize + 1} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "policy.yaml")
			require.NoError(t, os.WriteFile(f, []byte("paths:\n"), 0o600))
			require.NoError(t, os.Truncate(f, size))
			var err error
			n := memtest.Allocated(func() { _, err = allowlist.LoadPolicy(f) })
			require.Error(t, err)
			assert.ErrorContains(t, err, f)
			assert.ErrorContains(t, err, "larger than")
			assert.Less(t, n, uint64(64<<20))
		})
	}
	_, err := allowlist.LoadPolicy(filepath.Join(t.TempDir(), "absent.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
