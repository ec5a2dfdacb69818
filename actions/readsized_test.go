package actions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A large file is read into one buffer of its size (and a byte to see EOF): never the doubling
// growth that held two copies of a payload at the agent's peak.
func TestReadBoundedSizesItsBufferFromTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "payload")
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<20/16*3+7) // 3 MiB and a bit, not a power of two
	require.NoError(t, os.WriteFile(p, want, 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadBounded(f, 64<<20)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, len(want)+1, cap(got), "one allocation of the file's size")
}

// Over the bound, limit+1 bytes are read and no more, whatever the size.
func TestReadBoundedStopsAfterItsBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(p, make([]byte, 10000), 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadBounded(f, 100)
	require.NoError(t, err)
	require.Len(t, got, 101)
	require.LessOrEqual(t, cap(got), 512)
}

// A file whose size its filesystem does not report (procfs says 0) is read whole all the same.
func TestReadBoundedReadsAFileWithoutASize(t *testing.T) {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadBounded(f, 1<<20)
	require.NoError(t, err)
	require.Contains(t, string(got), "VmRSS:")
	require.True(t, bytes.HasSuffix(got, []byte("\n")))
}
