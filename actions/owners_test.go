package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// A root with no /etc/passwd at all (not a booted node) takes core as RHCOS creates it; a passwd
// that lacks the user, or any other user, is an error.
func TestLookupUserWithoutPasswd(t *testing.T) {
	dir := t.TempDir()
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	u, err := root.LookupUser("core")
	require.NoError(t, err)
	assert.Equal(t, actions.User{Name: "core", UID: 1000, GID: 1000, Home: "/var/home/core"}, u)
	_, err = root.LookupUser("root")
	assert.Error(t, err)

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
	_, err = root.LookupUser("core")
	assert.ErrorContains(t, err, "not in the node's /etc/passwd")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("core:x:1001:1002::/home/core:/bin/sh\n"), 0o644))
	u, err = root.LookupUser("core")
	require.NoError(t, err)
	assert.Equal(t, 1001, u.UID)
}

// An id the kernel cannot store is a malformed entry, never truncated on write (adversary r21
// d/04: uid 2^32+1000 was written as core's 1000, -1 as "unchanged").
func TestNodeIDsOutOfRangeAreMalformed(t *testing.T) {
	dir := t.TempDir()
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	for _, id := range []string{"4294968296", "-1", "4294967295", "+1000", "1e3", " 1000", "18446744073709552616"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("core:x:"+id+":1000::/var/home/core:/bin/sh\n"), 0o644))
		_, err := root.LookupUser("core")
		assert.ErrorContains(t, err, "malformed /etc/passwd entry", "uid %q", id)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("core:x:"+id+":\n"), 0o644))
		_, err = root.LookupGroup("core")
		assert.ErrorContains(t, err, "malformed /etc/group entry", "gid %q", id)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("core:x:4294967294:\n"), 0o644))
	gid, err := root.LookupGroup("core")
	require.NoError(t, err)
	assert.Equal(t, 4294967294, gid, "the largest id the kernel stores")
	for _, s := range []string{"0", "1000", "4294967294"} {
		_, err := actions.ParseID(s)
		assert.NoError(t, err, s)
	}
}

// The first line of a name decides, as glibc's files lookup reads it: a short first line is that
// user's, never skipped for a later line of the name (adversary r22 d/04: app's 4-field line was
// skipped, and the file went to a stale app line's uid 1000, bob's).
func TestTheFirstLineOfANameDecides(t *testing.T) {
	dir := t.TempDir()
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"),
		[]byte("app:x:1001:1001\nbob:x:1000:1000::/home/bob:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\nshort:x\n"), 0o644))
	u, err := root.LookupUser("app")
	require.NoError(t, err)
	assert.Equal(t, []int{1001, 1001}, []int{u.UID, u.GID})
	assert.Empty(t, u.Home)
	_, err = root.LookupUser("short")
	assert.ErrorContains(t, err, "malformed /etc/passwd entry")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("app:x\napp:x:1000:\n"), 0o644))
	_, err = root.LookupGroup("app")
	assert.ErrorContains(t, err, "malformed /etc/group entry")
}
