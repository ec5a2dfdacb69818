package actions

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A target swapped for a symlink while the transaction runs, after the plan checked it (the
// adversary's repro-symlink-backup case: the backup was a hard link of the symlink, the refresh said
// applied and the -backup symlink stayed): the backup is checked at the moment it is made, the
// transaction fails with nothing committed and no side file left, and the symlink is not followed.
func TestBackupOfATargetSwappedForASymlink(t *testing.T) {
	for _, when := range []string{"between the check and the link"} {
		t.Run(when, func(t *testing.T) {
			dir, state := t.TempDir(), t.TempDir()
			secret := filepath.Join(dir, "var/lib/kubelet/config.json")
			require.NoError(t, os.MkdirAll(filepath.Dir(secret), 0o755))
			require.NoError(t, os.WriteFile(secret, []byte("old"), 0o600))
			outside := filepath.Join(t.TempDir(), "outside")
			require.NoError(t, os.WriteFile(outside, []byte("host"), 0o600))
			swap := func() {
				require.NoError(t, os.Remove(secret))
				require.NoError(t, os.Symlink(outside, secret))
			}
			if when == "between the check and the link" {
				linkBackup = func(r *nofollowRoot, a, b string) error { swap(); return r.Link(a, b) }
				t.Cleanup(func() { linkBackup = (*nofollowRoot).Link })
			}
			r, err := OpenRoot(dir)
			require.NoError(t, err)
			defer r.Close()
			ops := []Op{{Path: "/var/lib/kubelet/config.json", Data: []byte("new"), Mode: 0o600}}
			require.NoError(t, Check(r, t.TempDir(), ops, Meta{}))
			txn, err := Prepare(r, state, ops, Meta{Hash: "x"})
			require.Error(t, err)
			assert.Nil(t, txn)
			assert.True(t, errors.Is(err, ErrSymlink) && IsRefusal(err), err.Error())
			entries, _ := os.ReadDir(filepath.Dir(secret))
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Equal(t, []string{"config.json"}, names, "no side file left")
			b, err := os.ReadFile(outside)
			require.NoError(t, err)
			assert.Equal(t, "host", string(b))
			_, err = os.Lstat(filepath.Join(state, "journal.json"))
			assert.True(t, os.IsNotExist(err), "no journal left")
		})
	}
}
