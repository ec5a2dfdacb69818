package actions_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Round 11 (core 03): a journal's createdDirs naming a directory the node already had (empty: an
// /etc/kubernetes/manifests with no pod yet, an sshd_config.d) had recovery remove it. A clean-up
// removes a created directory only when the directory in place is the one the transaction made,
// by the device and inode recorded as it was made; a journal that merely names one leaves it.
func TestForgedCreatedDirIsNeverRemoved(t *testing.T) {
	const d = "/etc/kubernetes/manifests"
	entry := `{"path":"` + d + `/x.yaml"}`
	for name, journal := range map[string]string{
		"version 5, no ids":          `{"version":5,"phase":"preparing","meta":{"hash":"x"},"entries":[` + entry + `],"createdDirs":["/etc/kubernetes","` + d + `"]}`,
		"version 6, no ids yet":      `{"version":6,"phase":"preparing","meta":{"hash":"x"},"entries":[` + entry + `],"createdDirs":["` + d + `"]}`,
		"version 6, another inode":   `{"version":6,"phase":"preparing","meta":{"hash":"x"},"entries":[` + entry + `],"createdDirs":["` + d + `"],"createdDirIds":[{"path":"` + d + `","dev":DEV,"ino":1}]}`,
		"version 6, another device":  `{"version":6,"phase":"preparing","meta":{"hash":"x"},"entries":[` + entry + `],"createdDirs":["` + d + `"],"createdDirIds":[{"path":"` + d + `","dev":1,"ino":INO}]}`,
		"finishing after a rollback": `{"version":6,"phase":"rolledback","finishing":true,"meta":{"hash":"x"},"entries":[],"createdDirs":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, dir := newRoot(t)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
			var st syscall.Stat_t
			require.NoError(t, syscall.Lstat(filepath.Join(dir, d), &st))
			journal = strings.NewReplacer("DEV", strconv.FormatUint(uint64(st.Dev), 10), "INO", strconv.FormatUint(st.Ino, 10)).Replace(journal)
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(state, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), []byte(journal), 0o600))
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			if txn, err := actions.Recover(root, state, actions.Trust{}); err == nil && txn != nil {
				_ = txn.Rollback()
				_ = txn.Finish()
			}
			fi, err := os.Stat(filepath.Join(dir, d))
			require.NoError(t, err, "the node's own directory is never removed")
			assert.True(t, fi.IsDir())
		})
	}
}

// The directories a transaction made are still removed by a recovery: from the prepared phase on
// the journal records each one's device and inode, and the one in place is it.
func TestRecoveryRemovesTheDirectoriesItMade(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	_, err := actions.Prepare(r, state, []actions.Op{{Path: "/etc/kubernetes/manifests/x.yaml", Data: []byte("x"), Mode: 0o644}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(state, "journal.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"createdDirIds":[{"path":"/etc/kubernetes"`)
	// The process dies here (the Txn is dropped): a recovery rolls the prepared journal back.
	settle(t, r, state)
	_, err = os.Stat(filepath.Join(dir, "etc/kubernetes"))
	assert.True(t, os.IsNotExist(err), "the directories it made are removed: %v", err)
	assertNoLeftovers(t, dir, state)

	// A directory it made that was replaced meanwhile (removed and made again by someone else) is
	// not the one it made: left.
	_, err = actions.Prepare(r, state, []actions.Op{{Path: "/etc/kubernetes/manifests/x.yaml", Data: []byte("x"), Mode: 0o644}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	m := filepath.Join(dir, "etc/kubernetes/manifests")
	// The new directory is made before the old one goes, so that it cannot get the old one's inode
	// number back (a filesystem reuses a freed one at once).
	require.NoError(t, os.Mkdir(m+"-new", 0o755))
	require.NoError(t, os.RemoveAll(m))
	require.NoError(t, os.Rename(m+"-new", m))
	settle(t, r, state)
	fi, err := os.Stat(m)
	require.NoError(t, err, "someone else's directory stays")
	assert.True(t, fi.IsDir())
}

// settle recovers the journal in state and settles it as the agent does: roll back, finish.
func settle(t *testing.T, r *actions.Root, state string) {
	t.Helper()
	txn, err := actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NotNil(t, txn)
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
}
