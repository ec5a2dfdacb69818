package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/apply"
)

// What a crash or a power cut leaves in the state dir (an atomic write's temp file, a copy of a
// payload no record names) is removed by the next recovery: none of it survives a recover that
// exits 0. The recorded payload stays, and so does anything that is not a regular file.
func TestRecoverSweepsTheStateDir(t *testing.T) {
	n := newNode(t)
	payloads := filepath.Join(n.StateDir, "payloads")
	entries, err := os.ReadDir(payloads)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	recorded := entries[0].Name()
	for _, f := range []string{".journal.json.tmp", ".current.json.tmp", ".cordoned.tmp", "payloads/." + recorded + ".tmp",
		"payloads/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, f), []byte(`{"auths":{"secret":{}}}`), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(n.StateDir, ".odd.tmp"), 0o700))
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	assert.False(t, rec.Found)
	var left []string
	_ = filepath.WalkDir(n.StateDir, func(p string, d os.DirEntry, err error) error {
		if p != n.StateDir {
			rel, _ := filepath.Rel(n.StateDir, p)
			left = append(left, rel)
		}
		return nil
	})
	assert.ElementsMatch(t, []string{".odd.tmp", "current.json", "lock", "payloads", "payloads/" + recorded}, left)
}
