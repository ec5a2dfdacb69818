package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The round-7a adversary's F2 on the binary: a forged prepared journal, every name the agent's own,
// saying the pull secret had no original, with newDev/newIno set to the pull secret's own inode
// (anyone can stat it). recover unlinked it, exit 0, rolledBack. Now a file is the agent's new one
// only when its contents hash to the journal's newSHA256 too: a version 5 journal naming another is
// refused, touching nothing; an older one (inode only) keeps the file, rollbackIncomplete; exit 1
// both, the pull secret byte-identical.
func TestRecoverForgedNoOriginalNamingItsInode(t *testing.T) {
	f := newFaultNode(t, 1)
	guess := sha256.Sum256([]byte("a guess"))
	for _, tc := range []struct {
		name    string
		version int
		extra   string
	}{
		{"v5 with a guessed hash", 5, fmt.Sprintf(`,"newSHA256":%q`, hex.EncodeToString(guess[:]))},
		{"v5 without a hash", 5, ""},
		{"v4, inode only", 4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f.copyTo(t, dir)
			secret := filepath.Join(dir, pullSecret)
			want, err := os.ReadFile(secret)
			require.NoError(t, err)
			fi, err := os.Stat(secret)
			require.NoError(t, err)
			st := fi.Sys().(*syscall.Stat_t)
			j := fmt.Sprintf(`{"version":%d,"phase":"prepared","meta":{"hash":"v2","actions":[]},"entries":[{"path":%q,"temp":%q,"backup":%q,"hadOriginal":false,"newDev":%d,"newIno":%d%s}]}`,
				tc.version, pullSecret, side(pullSecret, "tmp"), side(pullSecret, "backup"), uint64(st.Dev), st.Ino, tc.extra)
			require.NoError(t, os.WriteFile(filepath.Join(stateOf(dir), "journal.json"), []byte(j), 0o600))
			before := snapshot(t, dir)
			o := recoverFails(t, dir)
			require.False(t, o.RolledBack, "never rolled back over a file it cannot prove its own")
			require.Contains(t, o.Reason, pullSecret)
			got, err := os.ReadFile(secret)
			require.NoError(t, err, "the pull secret is never deleted")
			require.Equal(t, want, got)
			require.Equal(t, inode(t, secret), st.Ino, "the very inode it was")
			if tc.version >= 5 {
				require.Contains(t, o.Reason, "touching nothing")
				require.Equal(t, before, snapshot(t, dir), "recover touched nothing")
			} else {
				require.True(t, o.RollbackIncomplete)
			}
		})
	}
}

// The round-7a adversary's F6 on the binary: a forged {"phase":"committed","entries":[]} with the
// desired payload saved under payloads/<its sha256>: recover said applied, recorded, and the next
// apply said nothing to do over the old files. Now recovery records a payload only when the node's
// files show it applied: exit 1, not recorded, the record still the old state; the next apply plans
// the payload again and writes it.
func TestRecoverForgedCommittedRecordsNothing(t *testing.T) {
	f := newFaultNode(t, 3)
	for _, entries := range []string{"empty", "one genuine-looking entry"} {
		t.Run(entries, func(t *testing.T) {
			dir := t.TempDir()
			f.copyTo(t, dir)
			raw, err := os.ReadFile(f.v2File)
			require.NoError(t, err)
			sum := sha256.Sum256(raw)
			name := hex.EncodeToString(sum[:])
			require.NoError(t, os.MkdirAll(filepath.Join(stateOf(dir), "payloads"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(stateOf(dir), "payloads", name), raw, 0o600))
			list := ""
			if entries != "empty" {
				// An entry for a file whose contents anyone may know (the forger wrote them down): its
				// proof holds, and says nothing of the payload's other files.
				p := "/etc/containers/registries.d/f000.yaml"
				data, err := os.ReadFile(filepath.Join(dir, p))
				require.NoError(t, err)
				fi, err := os.Stat(filepath.Join(dir, p))
				require.NoError(t, err)
				st := fi.Sys().(*syscall.Stat_t)
				h := sha256.Sum256(data)
				list = fmt.Sprintf(`{"path":%q,"temp":%q,"backup":%q,"hadOriginal":false,"newDev":%d,"newIno":%d,"newSHA256":%q}`,
					p, side(p, "tmp"), side(p, "backup"), uint64(st.Dev), st.Ino, hex.EncodeToString(h[:]))
			}
			j := fmt.Sprintf(`{"version":5,"phase":"committed","committed":true,"meta":{"hash":"v2","payloadFile":"payloads/%s","actions":[]},"entries":[%s]}`, name, list)
			require.NoError(t, os.WriteFile(filepath.Join(stateOf(dir), "journal.json"), []byte(j), 0o600))
			o := recoverFails(t, dir)
			require.False(t, o.Recorded)
			require.NotEqual(t, "applied", o.Outcome)
			require.Contains(t, o.Reason, "not recorded")
			require.Equal(t, "old", f.m.files(dir))
			rec, err := os.ReadFile(filepath.Join(stateOf(dir), "current.json"))
			require.NoError(t, err)
			require.Contains(t, string(rec), `"hash":"v1"`, "the record stays at the old state")
			a := runProc(t, nil, applyArgs(dir, f.v2File, "v2")...)
			require.Equal(t, 0, a.code, "%s %s", a.out(), a.errOut())
			require.Equal(t, "new", f.m.files(dir), "the next apply writes the payload")
		})
	}
}
