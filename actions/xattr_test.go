package actions_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary r15 a/05: an original at ext4's 65 000 links gets a copied backup, and a rollback put
// that copy back with the right contents, mode and owner but none of the original's extended
// attributes (user.*, and security.* where SELinux labels live), which the docs promise a restore
// keeps. The copy carries them now, on the backup and on the restored file.
func TestACopiedBackupKeepsTheExtendedAttributes(t *testing.T) {
	dir := t.TempDir()
	fixture.Ext4(t, dir, 32<<20)
	r, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	const conf = "/etc/containers/registries.conf"
	host := filepath.Join(dir, conf)
	require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
	require.NoError(t, os.WriteFile(host, []byte("old"), 0o644))
	attrs := map[string]string{"user.label": "system_u:object_r:etc_t:s0", "user.empty": "", "user.big": string(make([]byte, 600))}
	for k, v := range attrs {
		require.NoError(t, unix.Setxattr(host, k, []byte(v), 0))
	}
	links := filepath.Join(dir, "links")
	require.NoError(t, os.Mkdir(links, 0o755))
	for i := 1; i < 65000; i++ {
		require.NoError(t, os.Link(host, filepath.Join(links, strconv.Itoa(i))))
	}
	require.ErrorIs(t, os.Link(host, filepath.Join(links, "one-more")), syscall.EMLINK, "ext4's limit")

	txn, err := actions.Prepare(r, filepath.Join(dir, "state"), []actions.Op{{Path: conf, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	assertXattrs(t, filepath.Join(dir, backupOf(conf)), attrs, "the backup copy")
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.Rollback())
	assert.Equal(t, "old", readOr(host))
	assertXattrs(t, host, attrs, "the restored original")
}

func assertXattrs(t *testing.T, p string, want map[string]string, what string) {
	t.Helper()
	for k, v := range want {
		buf := make([]byte, 4096)
		n, err := unix.Getxattr(p, k, buf)
		if assert.NoError(t, err, "%s: %s", what, k) {
			assert.Equal(t, v, string(buf[:n]), "%s: %s", what, k)
		}
	}
}
