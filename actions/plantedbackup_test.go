package actions_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Adversary round 13 core 02: a proven backup proves only what it holds, never what it would
// replace. A journal that plants its own backup beside the pull secret and names that file's hash
// as the original's (anyone who wrote the file knows it) must not have it renamed over the node's
// real pull secret: the target is neither the backup's inode nor the agent's new file (inode and
// contents), so the restore leaves both as they are and the rollback does not complete. The same
// holds for a journal before version 5, which names the real file's inode as its new file's (an
// inode anyone can stat), and for a file changed in place after the commit.
func TestAPlantedBackupNeverReplacesAFileTheAgentDidNotWrite(t *testing.T) {
	const secret = "/var/lib/kubelet/config.json"
	for _, tc := range []struct {
		name   string
		forge  func(j map[string]any, realIno uint64)
		commit bool
	}{
		{name: "prepared journal, planted backup and its hash", forge: func(map[string]any, uint64) {}},
		{name: "rolling back, planted backup and its hash", forge: func(j map[string]any, _ uint64) { j["phase"] = "rollingback" }},
		{name: "version 4, the real file's inode named as the new file's", forge: func(j map[string]any, realIno uint64) {
			j["version"] = 4
			delete(j, "root")
			e := j["entries"].([]any)[0].(map[string]any)
			delete(e, "newSHA256")
			e["newIno"] = realIno
		}},
		{name: "committed, then the new file rewritten in place by another", commit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := newRoot(t)
			state := filepath.Join(t.TempDir(), "state")
			host := func(p string) string { return filepath.Join(dir, p) }
			require.NoError(t, os.MkdirAll(filepath.Dir(host(secret)), 0o755))
			require.NoError(t, os.WriteFile(host(secret), []byte(`{"auths":{}}`), 0o600))
			txn, err := actions.Prepare(r, state, []actions.Op{{Path: secret, Data: []byte(`{"auths":{"r":{}}}`), Mode: 0o600}}, actions.Meta{Hash: "h"})
			require.NoError(t, err)

			real := []byte(`{"auths":{"quay.io":{"auth":"REAL-NODE-SECRET"}}}`)
			if tc.commit {
				require.NoError(t, txn.Commit())
				// Rewritten in place: the agent's inode, not its contents.
				require.NoError(t, os.WriteFile(host(secret), real, 0o600))
				err = txn.Rollback()
			} else {
				// The node's real pull secret, a new inode the agent never made; the stage gone.
				require.NoError(t, os.WriteFile(host(secret)+".x", real, 0o600))
				require.NoError(t, os.Rename(host(secret)+".x", host(secret)))
				require.NoError(t, os.Remove(host(tempOf(secret))))
				planted := []byte(`{"auths":{"evil.example":{"auth":"ATTACKER"}}}`)
				require.NoError(t, os.Remove(host(backupOf(secret))))
				require.NoError(t, os.WriteFile(host(backupOf(secret)), planted, 0o600))
				sum := sha256.Sum256(planted)
				editJournal(t, state, func(j map[string]any) {
					j["entries"].([]any)[0].(map[string]any)["origSHA256"] = hex.EncodeToString(sum[:])
					tc.forge(j, ino(t, host(secret)))
				})
				var got *actions.Txn
				got, err = actions.Recover(r, state, actions.Trust{})
				if err == nil {
					require.NotNil(t, got)
					err = got.Rollback()
				}
			}
			require.Error(t, err, "the rollback does not complete")
			if !assert.ErrorIs(t, err, actions.ErrNotRestored) {
				assert.ErrorIs(t, err, actions.ErrHostile)
			}
			assert.Contains(t, err.Error(), secret, "the error names the file")
			assert.Equal(t, string(real), readOr(host(secret)), "the node's pull secret is never replaced")
			_, err = os.Lstat(host(backupOf(secret)))
			assert.NoError(t, err, "the backup is kept for the operator")
		})
	}
}
