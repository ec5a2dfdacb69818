package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// The round-4 adversary's F2, exactly: a real apply of many files SIGKILLed once the journal says
// prepared (some targets renamed), the journal untouched, the backup beside a target swapped for a
// symlink to the host's /etc/shadow or for a foreign file. Beside a target still its original,
// recover must leave every original byte-identical (the tampered one the very inode it was): its new
// file still at the temp's name, no restore needs the backup, so the rollback completes and lists the
// tampered name, kept. Beside a target already replaced, recover refuses (exit 1, no rolled back):
// the new file stays in place (its backup is not the original) and every other original comes back.
func TestCrashAtPreparedWithATamperedBackup(t *testing.T) {
	bin := agentBinary(t)
	v1, v2, managed := crashPayloads(120)
	tmpl := t.TempDir()
	require.NoError(t, fixture.NodeRoot(tmpl))
	prepareV1(t, bin, tmpl, v1)
	v2File := filepath.Join(t.TempDir(), "v2.ign")
	require.NoError(t, os.WriteFile(v2File, v2.JSON(), 0o644))
	for _, which := range []string{"untouched", "replaced"} {
		for _, tamper := range []string{"symlink", "foreign file"} {
			t.Run(which+"/"+tamper, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "root")
				require.NoError(t, exec.Command("cp", "-a", tmpl, dir).Run())
				cmd := exec.Command(bin, "apply", "--root", dir, "--desired", v2File, "--hash", "v2", "--systemd", "none")
				cmd.Env = append(os.Environ(), crashEnv+"=rename:60")
				out, err := cmd.CombinedOutput()
				require.True(t, killed(err), "%s", out)
				state := filepath.Join(dir, "var/lib/refresh-agent")
				data, err := os.ReadFile(filepath.Join(state, "journal.json"))
				require.NoError(t, err)
				var j struct {
					Phase   string
					Entries []struct {
						Path, Backup string
						Remove       bool
						HadOriginal  bool
						NewIno       uint64
					}
				}
				require.NoError(t, json.Unmarshal(data, &j))
				require.Equal(t, "prepared", j.Phase)
				target, backup := "", ""
				for _, e := range j.Entries {
					fi, err := os.Lstat(filepath.Join(dir, e.Path))
					if err != nil || e.Remove || !e.HadOriginal {
						continue
					}
					replaced := fi.Sys().(*syscall.Stat_t).Ino == e.NewIno
					if replaced == (which == "replaced") {
						target, backup = e.Path, e.Backup
					}
				}
				require.NotEmpty(t, target, "an entry %s at the crash", which)
				before := map[string][]byte{}
				for _, m := range managed {
					if b, err := os.ReadFile(filepath.Join(dir, m)); err == nil {
						before[m] = b
					}
				}
				targetIno := inode(t, filepath.Join(dir, target))
				secret := filepath.Join(t.TempDir(), "shadow")
				require.NoError(t, os.WriteFile(secret, []byte("root:!locked::0:99999:7:::\n"), 0o600))
				bk := filepath.Join(dir, backup)
				require.NoError(t, os.Remove(bk))
				if tamper == "symlink" {
					require.NoError(t, os.Symlink(secret, bk))
				} else {
					require.NoError(t, os.WriteFile(bk, []byte("FOREIGN"), 0o644))
				}

				rec, err := exec.Command(bin, "recover", "--root", dir, "--systemd", "none").Output()
				var r struct {
					Found, RolledBack, RollbackIncomplete bool
					KeptSideFiles                         []string
				}
				if which == "untouched" {
					// Its new file is still at the temp's name: the original never moved and no
					// restore needs the backup, so the rollback completes; the tampered name is
					// kept and reported, and the plan refuses the target until it is removed.
					require.NoError(t, err, "recover completes: %s", rec)
					require.NoError(t, json.Unmarshal(rec, &r), "%s", rec)
					require.True(t, r.Found && r.RolledBack && !r.RollbackIncomplete, "%s", rec)
				} else {
					require.Error(t, err, "recover refuses: %s", rec)
					require.NoError(t, json.Unmarshal(rec, &r), "%s", rec)
					require.True(t, r.Found && !r.RolledBack && r.RollbackIncomplete, "%s", rec)
				}
				require.Len(t, r.KeptSideFiles, 1, "%s", rec)
				require.Contains(t, r.KeptSideFiles[0], backup)
				fi, err := os.Lstat(bk)
				require.NoError(t, err, "the tampered backup is kept")
				require.Equal(t, tamper == "symlink", fi.Mode()&os.ModeSymlink != 0)
				b, _ := os.ReadFile(secret)
				require.Equal(t, "root:!locked::0:99999:7:::\n", string(b))
				want, err := diffDecodePayload(v1)
				require.NoError(t, err)
				for _, m := range managed {
					got, err := os.ReadFile(filepath.Join(dir, m))
					fi, lerr := os.Lstat(filepath.Join(dir, m))
					if m == target {
						require.NoError(t, lerr)
						require.True(t, fi.Mode().IsRegular(), "%s is never the tampered backup", m)
						require.Equal(t, targetIno, inode(t, filepath.Join(dir, m)), "%s: left as it is", m)
						require.Equal(t, string(before[m]), string(got), "%s: left as it is", m)
						continue
					}
					w, ok := want[m]
					if !ok {
						require.True(t, os.IsNotExist(err), "%s did not exist before", m)
						continue
					}
					require.NoError(t, err, m)
					require.Equal(t, string(w), string(got), fmt.Sprintf("%s: the original, byte for byte", m))
				}
				if which == "untouched" {
					require.Equal(t, "v1", version(t, dir, v1, v2, managed), "every original in place")
				}
				// Again: the same outcome (a refusal, or nothing left to recover), still nothing replaced.
				_, err = exec.Command(bin, "recover", "--root", dir, "--systemd", "none").Output()
				if which == "untouched" {
					require.NoError(t, err)
				} else {
					require.Error(t, err)
				}
				require.Equal(t, targetIno, inode(t, filepath.Join(dir, target)))
			})
		}
	}
}
