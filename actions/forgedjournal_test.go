package actions_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Forged journals that had recovery delete originals (adversary F6): an entry saying "no original"
// for the pull secret, core's keys or the daemon's record, with the derived side names and no
// backup on disk, in every phase that rolls back; a version 1 journal of bare entries; a journal
// whose payload does not hash to its name. Recovery refuses each, touching nothing.
func TestForgedNoOriginalNeverDeletes(t *testing.T) {
	secret := "/var/lib/kubelet/config.json"
	keys := "/var/home/core/.ssh/authorized_keys.d/ignition"
	mcd := "/etc/mcd-currentconfig.json"
	entry := func(p, extra string) string {
		temp, backup, _ := actions.SideFiles(p)
		return fmt.Sprintf(`{"path":%q,"temp":%q,"backup":%q,"hadOriginal":false%s}`, p, temp, backup, extra)
	}
	all := entry(secret, "") + "," + entry(keys, "") + "," + entry(mcd, "")
	sum := sha256.Sum256([]byte("not the payload"))
	cases := map[string]string{
		"prepared":        `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[]},"entries":[` + all + `]}`,
		"rollingback":     `{"version":3,"phase":"rollingback","committed":true,"meta":{"hash":"x","actions":[]},"entries":[` + all + `]}`,
		"rolledback":      `{"version":3,"phase":"rolledback","meta":{"hash":"x","actions":[]},"entries":[` + all + `]}`,
		"forged inode":    `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[]},"entries":[` + entry(secret, `,"newDev":1,"newIno":2`) + `]}`,
		"removal":         `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[]},"entries":[{"path":"` + secret + `","remove":true,"backup":"` + side(secret) + `","hadOriginal":false}]}`,
		"version 1 bare":  `{"version":1,"phase":"prepared","meta":{},"entries":[{"path":"` + secret + `","hadOriginal":false},{"path":"` + keys + `","hadOriginal":false}]}`,
		"version 2 bare":  `{"version":2,"phase":"rollingback","meta":{},"entries":[{"path":"` + secret + `","hadOriginal":false}]}`,
		"foreign payload": `{"version":3,"phase":"committed","committed":true,"meta":{"hash":"x","payloadFile":"payloads/` + hex.EncodeToString(sum[:]) + `","actions":[]},"entries":[]}`,
	}
	for name, j := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, p := range []string{secret, keys, mcd} {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("original of "+p), 0o600))
			}
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(filepath.Join(state, "payloads"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(state, "payloads", hex.EncodeToString(sum[:])), []byte("something else"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), []byte(j), 0o600))
			before := tree(t, dir)
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			txn, err := actions.Recover(root, state, actions.Trust{})
			require.Error(t, err)
			t.Log(err)
			assert.Nil(t, txn)
			assert.True(t, strings.Contains(err.Error(), "is not one this agent wrote") || strings.Contains(err.Error(), "hostile"), err.Error())
			assert.Equal(t, before, tree(t, dir), "nothing touched")
		})
	}
}

func side(p string) string { _, b, _ := actions.SideFiles(p); return b }

// A transaction's own rollback removes a target that had no original only when it is the file the
// transaction wrote: one put there by someone else meanwhile stays (the rollback says so and keeps
// the journal).
func TestRollbackRemovesOnlyItsOwnNewFile(t *testing.T) {
	r, dir := newRoot(t)
	state := t.TempDir()
	p := "/etc/containers/new.conf"
	txn, err := actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "x"})
	require.NoError(t, err)
	// Not committed: someone else creates the file before the rollback. The agent's new file is
	// still at its temp's name, so nothing of the agent's is at the target: it stays, and the
	// rollback completes.
	require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("someone else's"), 0o644))
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
	b, err := os.ReadFile(filepath.Join(dir, p))
	require.NoError(t, err)
	assert.Equal(t, "someone else's", string(b))
	require.NoError(t, os.Remove(filepath.Join(dir, p)))

	// Renamed into place and then replaced by someone else: neither the temp nor the target is the
	// agent's, so the rollback leaves the file and does not complete.
	txn, err = actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "x"})
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Join(dir, tempOf(p)), filepath.Join(dir, p)))
	require.NoError(t, os.Remove(filepath.Join(dir, p)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("someone else's"), 0o644))
	require.Error(t, txn.Rollback())
	b, err = os.ReadFile(filepath.Join(dir, p))
	require.NoError(t, err)
	assert.Equal(t, "someone else's", string(b))
	require.NoError(t, os.Remove(filepath.Join(dir, p)))
	txn, err = actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())

	// Committed: the new file is the transaction's, and goes.
	txn, err = actions.Prepare(r, state, []actions.Op{{Path: p, Data: []byte("new"), Mode: 0o644}}, actions.Meta{Hash: "x"})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
	_, err = os.Lstat(filepath.Join(dir, p))
	assert.True(t, os.IsNotExist(err))
}
