package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary r15 a/02: a directory the transaction creates in a directory at ext4's link limit
// (without dir_nlink every subdirectory is a link to it, at most 65000) failed EMLINK half way,
// after the dry run had said planned. Both refuse it now, naming the directory, writing nothing;
// one subdirectory fewer, it fits.
func TestACreatedDirectoryAtTheLinkLimitIsRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	fixture.Ext4(t, dir, 160<<20, "-O", "^dir_nlink", "-b", "1024", "-N", "70000")
	certs := filepath.Join(dir, "etc/docker/certs.d")
	require.NoError(t, os.MkdirAll(certs, 0o755))
	for i := 0; i < 64996; i++ { // with . and its entry in its parent: 64998 links
		require.NoError(t, os.Mkdir(filepath.Join(certs, fmt.Sprint(i)), 0o755))
	}
	r, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	op := func(name string) []actions.Op {
		return []actions.Op{{Path: "/etc/docker/certs.d/" + name + "/ca.crt", Data: []byte("x"), Mode: 0o644}}
	}
	state := filepath.Join(t.TempDir(), "state")
	// 64998 links: one more directory fits (65000 is the most), the next is refused.
	txn, err := actions.Prepare(r, state, op("fits"), actions.Meta{Hash: "h"})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.MarkDone())
	require.NoError(t, txn.Finish())
	require.NoError(t, os.Mkdir(filepath.Join(certs, "last"), 0o755)) // now at 65000

	err = actions.Check(r, state, op("over"), actions.Meta{Hash: "h2"})
	require.ErrorIs(t, err, actions.ErrUnwritable)
	assert.True(t, actions.IsRefusal(err))
	assert.Contains(t, err.Error(), "/etc/docker/certs.d has 65000 links")
	_, perr := actions.Prepare(r, state, op("over"), actions.Meta{Hash: "h2"})
	require.Error(t, perr)
	assert.Equal(t, err.Error(), perr.Error(), "the real run refuses as the dry run does")
	_, serr := os.Lstat(filepath.Join(certs, "over"))
	assert.True(t, os.IsNotExist(serr), "nothing made")
	_, jerr := os.Stat(filepath.Join(state, "journal.json"))
	assert.True(t, os.IsNotExist(jerr), "no journal")
}
