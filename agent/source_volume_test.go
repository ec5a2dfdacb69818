package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeGeneration(t *testing.T, dir, gen, config, hash string) {
	t.Helper()
	require.NoError(t, os.Mkdir(filepath.Join(dir, gen), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, gen, KeyConfig), []byte(config), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, gen, KeyHash), []byte(hash), 0o644))
}

func swapData(t *testing.T, dir, gen string) {
	t.Helper()
	require.NoError(t, os.Symlink(gen, filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
}

func TestVolumeSourceReadsOneGeneration(t *testing.T) {
	dir := t.TempDir()
	writeGeneration(t, dir, "..gen1", "config one", "h1")
	writeGeneration(t, dir, "..gen2", "config two", "h2")
	swapData(t, dir, "..gen1")
	// The per-key links are what a reader racing a swap goes through; point one at the other
	// generation to show they are not used: every key comes from the generation ..data names.
	require.NoError(t, os.Symlink(filepath.Join("..data", KeyConfig), filepath.Join(dir, KeyConfig)))
	require.NoError(t, os.Symlink(filepath.Join("..gen2", KeyHash), filepath.Join(dir, KeyHash)))
	s := &VolumeSource{Dir: dir}
	snap := s.read()
	require.Empty(t, snap.Problem)
	assert.Equal(t, "config one", string(snap.Config))
	assert.Equal(t, "h1", snap.Hash)

	swapData(t, dir, "..gen2")
	snap = s.read()
	assert.Equal(t, "config two", string(snap.Config))
	assert.Equal(t, "h2", snap.Hash)
}

func TestVolumeSourcePlainDirectoryAndBadLink(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, KeyConfig), []byte("c"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, KeyHash), []byte("h"), 0o644))
	snap := (&VolumeSource{Dir: dir}).read()
	assert.Equal(t, "h", snap.Hash, "a directory without ..data is read as is")

	require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "..data")))
	snap = (&VolumeSource{Dir: dir}).read()
	assert.Contains(t, snap.Problem, "outside the volume")
}

// A key of the volume is read up to the payload budget: a node path may hold anything (a sparse
// file of gigabytes), and the problem names the key's file.
func TestVolumeSourceKeyOverTheBudget(t *testing.T) {
	dir := t.TempDir()
	writeGeneration(t, dir, "..gen1", "c", "h")
	swapData(t, dir, "..gen1")
	big := filepath.Join(dir, "..gen1", KeyConfig)
	require.NoError(t, os.Truncate(big, 4<<30))
	snap := (&VolumeSource{Dir: dir}).read()
	assert.Contains(t, snap.Problem, KeyConfig)
	assert.Contains(t, snap.Problem, "byte budget")
	assert.Empty(t, snap.Config)
}
