package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 24 (c/07): --out writes a 0600 file whatever was at the name: an existing 0644 file's mode
// is not kept, and a symlink is replaced, never followed.
func TestOutIsAlwaysANew0600File(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.cfg")
	require.NoError(t, os.WriteFile(old, []byte("x"), 0o644))
	require.NoError(t, writeOut(old, []byte("secret"), &bytes.Buffer{}))
	fi, err := os.Stat(old)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	target := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte("x"), 0o644))
	link := filepath.Join(dir, "link.cfg")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, writeOut(link, []byte("secret"), &bytes.Buffer{}))
	b, _ := os.ReadFile(target)
	assert.Equal(t, "x", string(b), "the link's target is untouched")
	fi, err = os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 3, "no temp left")
}
