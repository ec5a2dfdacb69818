package actions

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A directory on the way to a target that its owner (core, for ~/.ssh/authorized_keys.d) swaps for
// a symlink to a root-owned directory inside the root, after the plan checked the path (adversary
// r11 core/06: root wrote the keys through it, os.Root follows a symlink that stays inside the
// root): every write is refused at the moment it is made, nothing lands in the linked directory,
// and a rollback leaves the real directory's original in place.
func TestDirectorySwappedForASymlinkIsNeverWrittenThrough(t *testing.T) {
	for _, when := range []string{"between prepare and commit", "while the backup is made"} {
		t.Run(when, func(t *testing.T) {
			dir, state := t.TempDir(), t.TempDir()
			keysDir := filepath.Join(dir, "var/home/core/.ssh/authorized_keys.d")
			keys := filepath.Join(keysDir, "ignition")
			victimDir := filepath.Join(dir, "etc/victim")
			victim := filepath.Join(victimDir, "ignition")
			require.NoError(t, os.MkdirAll(keysDir, 0o700))
			require.NoError(t, os.MkdirAll(victimDir, 0o755))
			require.NoError(t, os.WriteFile(keys, []byte("ssh-ed25519 OLD"), 0o600))
			require.NoError(t, os.WriteFile(victim, []byte("root's"), 0o644))
			swap := func() {
				require.NoError(t, os.Rename(keysDir, keysDir+".real"))
				require.NoError(t, os.Symlink("../../../../etc/victim", keysDir))
			}
			if when == "while the backup is made" {
				linkBackup = func(r *nofollowRoot, a, b string) error { swap(); return r.Link(a, b) }
				t.Cleanup(func() { linkBackup = (*nofollowRoot).Link })
			}
			r, err := OpenRoot(dir)
			require.NoError(t, err)
			defer r.Close()
			ops := []Op{{Path: "/var/home/core/.ssh/authorized_keys.d/ignition", Data: []byte("ssh-ed25519 NEW"), Mode: 0o600}}
			require.NoError(t, Check(r, t.TempDir(), ops, Meta{}))
			txn, err := Prepare(r, state, ops, Meta{Hash: "x"})
			if when == "between prepare and commit" {
				require.NoError(t, err)
				swap()
				err = txn.Commit()
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrSymlink), err.Error())
				rerr := txn.Rollback()
				t.Log("rollback:", rerr)
			} else {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrSymlink), err.Error())
			}
			entries, _ := os.ReadDir(victimDir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Equal(t, []string{"ignition"}, names, "nothing created in the linked directory")
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "root's", string(b), "nothing written through the symlink")
			b, err = os.ReadFile(filepath.Join(keysDir+".real", "ignition"))
			require.NoError(t, err)
			assert.Equal(t, "ssh-ed25519 OLD", string(b), "the real directory keeps its original")
		})
	}
}
