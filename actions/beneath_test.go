package actions

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// beneathTree is a root holding every kind of way a path resolves: directories, files, symlinks
// relative and absolute, inside and out of the root, to files and to directories, dangling, a loop.
func beneathTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "f"), []byte("out"), 0o644))
	for _, d := range []string{"a/b/c", "e", "d 1"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"a/f", "a/b/g", "a/b/c/h", "e/x"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(f), 0o640))
	}
	links := map[string]string{"l": "a", "a/up": "..", "a/b/l2": "../../e", "abs": "/a", "out": outside,
		"dotdot": "../x", "dangling": "nowhere", "lf": "a/f", "loop": "loop", "a/b/c/deep": "../../../a/b", "e/self": "."}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	return root
}

// beneathPaths are the paths the differential tests resolve: every name of the tree, each one
// under every other, and some random joins.
func beneathPaths() []string {
	names := []string{"a", "a/b", "a/b/c", "a/f", "a/b/g", "a/b/c/h", "e", "e/x", "d 1", "l", "a/up", "a/b/l2", "abs",
		"out", "dotdot", "dangling", "lf", "loop", "a/b/c/deep", "e/self", "missing", "a/missing", "a/f/x"}
	out := slices0(names)
	for _, n := range names {
		for _, m := range []string{"f", "b", "x", "h", "c/h", "missing", "self/x"} {
			out = append(out, n+"/"+m)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		k := 1 + rng.IntN(4)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = strings.Split(names[rng.IntN(len(names))], "/")[0]
		}
		out = append(out, strings.Join(parts, "/"))
	}
	return out
}

func slices0(s []string) []string { return append([]string(nil), s...) }

// Lstat's fast path says what os.Root says, for every path: the same file (device, inode, mode,
// name) or the same error, word for word.
func TestLstatBeneathIsOsRootsLstat(t *testing.T) {
	root := beneathTree(t)
	r, err := openNofollowRoot(root)
	require.NoError(t, err)
	defer r.Close()
	if !r.beneath {
		t.Skip("openat2 is not available here: Lstat is os.Root's own")
	}
	for _, p := range beneathPaths() {
		fast, ferr := r.Lstat(p)
		slow, serr := r.Root.Lstat(p)
		if serr != nil || ferr != nil {
			assert.Equal(t, fmt.Sprint(serr), fmt.Sprint(ferr), p)
			continue
		}
		fs, ss := fast.Sys().(*syscall.Stat_t), slow.Sys().(*syscall.Stat_t)
		assert.Equal(t, [3]uint64{ss.Dev, ss.Ino, uint64(ss.Mode)}, [3]uint64{fs.Dev, fs.Ino, uint64(fs.Mode)}, p)
		assert.Equal(t, slow.Name(), fast.Name(), p)
		assert.Equal(t, slow.Mode(), fast.Mode(), p)
	}
}

// parent's fast path opens the directory the component walk opens, and refuses what it refuses,
// with the walk's own error (a symlink anywhere on the way: ErrSymlink naming the component).
func TestParentBeneathIsTheWalk(t *testing.T) {
	root := beneathTree(t)
	r, err := openNofollowRoot(root)
	require.NoError(t, err)
	defer r.Close()
	if !r.beneath {
		t.Skip("openat2 is not available here: parent is the walk")
	}
	walk := *r
	walk.beneath = false
	for _, p := range beneathPaths() {
		fd, fb, ferr := r.parent("open", p)
		wd, wb, werr := walk.parent("open", p)
		assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(ferr), p)
		if ferr == nil && werr == nil {
			var fst, wst unix.Stat_t
			require.NoError(t, unix.Fstat(fd, &fst))
			require.NoError(t, unix.Fstat(wd, &wst))
			assert.Equal(t, [2]uint64{wst.Dev, wst.Ino}, [2]uint64{fst.Dev, fst.Ino}, p)
			assert.Equal(t, wb, fb, p)
		}
		if ferr == nil {
			unix.Close(fd)
		}
		if werr == nil {
			unix.Close(wd)
		}
	}
}
