package actions_test

import (
	"errors"
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

// Recovery acts on what the journal names; a journal whose entries are not the managed paths' own
// side files is refused and left alone, never followed (adversarial run: a "committed" journal
// naming /etc/passwd as a backup had recovery delete it).
func TestHostileJournalIsNotFollowed(t *testing.T) {
	for name, entry := range map[string]string{
		"backup elsewhere": `{"path":"/etc/containers/registries.conf","backup":"/etc/passwd","hadOriginal":true}`,
		"temp elsewhere":   `{"path":"/etc/containers/registries.conf","temp":"/etc/passwd"}`,
		"unclean path":     `{"path":"/etc/../etc/passwd","backup":"/etc/../etc/.passwd.refresh-agent-backup"}`,
		"old-style backup": `{"path":"/etc/containers/registries.conf","backup":"../../../etc/passwd"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/containers"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(state, 0o700))
			version := "2"
			if name == "old-style backup" {
				version = "1"
			}
			j := `{"version":` + version + `,"phase":"committed","meta":{"hash":"x"},"entries":[` + entry + `]}`
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), []byte(j), 0o600))
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			_, err = actions.Recover(root, state, actions.Trust{})
			assert.ErrorContains(t, err, "is not one this agent wrote")
			data, err := os.ReadFile(filepath.Join(dir, "etc/passwd"))
			require.NoError(t, err)
			assert.Equal(t, "root:x:0:0::/root:/bin/sh\n", string(data))
		})
	}
}

// Each validity rule of the journal (journal.go, rules 1 to 11, 15, 16 and 18) has a journal that breaks it, and
// recovery refuses every one whole: no file is changed, removed or added, the journal stays. The
// node holds registries.conf ("live") and, beside it, its backup's name holding the only other copy
// of an original ("only copy").
func TestJournalValidityRules(t *testing.T) {
	const reg = "/etc/containers/registries.conf"
	temp, backup, _ := actions.SideFiles(reg)
	pol := "/etc/containers/policy.json"
	ptemp, pbackup, _ := actions.SideFiles(pol)
	e := func(extra string) string {
		return `{"path":"` + reg + `","temp":"` + temp + `","backup":"` + backup + `"` + extra + `}`
	}
	j := func(phase, entries, extra string) string {
		return `{"version":3,"phase":"` + phase + `","meta":{"hash":"x","actions":[]},"entries":[` + entries + `]` + extra + `}`
	}
	for _, tc := range []struct{ rule, journal string }{
		{"1 version", `{"version":0,"phase":"prepared","meta":{"hash":"x"},"entries":[]}`},
		{"1 phase", j("halfway", e(`,"hadOriginal":true`), "")},
		{"2 unclean path", j("prepared", `{"path":"/etc/containers/../ssh/sshd_config","hadOriginal":false}`, "")},
		{"2 side-file name as path", j("prepared", `{"path":"`+backup+`","hadOriginal":false}`, "")},
		{"3 one target twice (had and had not)", j("prepared", e(`,"hadOriginal":true,"origMode":420`)+","+e(`,"hadOriginal":false`), "")},
		{"3 one target twice (rolling back)", j("rollingback", e(`,"hadOriginal":true,"origMode":420`)+","+e(`,"hadOriginal":true,"origMode":420`), "")},
		{"4 temp elsewhere", j("prepared", `{"path":"`+reg+`","temp":"/etc/passwd","hadOriginal":false}`, "")},
		{"4 temp on a removal", j("prepared", `{"path":"`+reg+`","remove":true,"temp":"`+temp+`","hadOriginal":false}`, "")},
		{"5 backup of another file", j("prepared", `{"path":"`+pol+`","backup":"`+backup+`","hadOriginal":true}`, "")},
		{"5 shared backup (version 1)", `{"version":1,"phase":"prepared","meta":{"hash":"x"},"entries":[{"path":"` + reg + `","backup":"b","hadOriginal":true},{"path":"` + pol + `","backup":"b","hadOriginal":true}]}`},
		{"6 no original, yet its mode", j("prepared", e(`,"hadOriginal":false,"origMode":420`), "")},
		{"6 mode beyond permission bits", j("prepared", e(`,"hadOriginal":true,"origMode":8388845`), "")},
		{"7 created dir twice", j("prepared", e(`,"hadOriginal":true`), `,"createdDirs":["/etc/containers","/etc/containers"]`)},
		{"7 created dir no parent", j("prepared", e(`,"hadOriginal":true`), `,"createdDirs":["/etc/ssh"]`)},
		{"7 created dir id of no created dir", j("prepared", e(`,"hadOriginal":true`), `,"createdDirs":["/etc/containers"],"createdDirIds":[{"path":"/etc/ssh","dev":1,"ino":2}]`)},
		{"7 created dir id twice", j("prepared", e(`,"hadOriginal":true`), `,"createdDirs":["/etc/containers"],"createdDirIds":[{"path":"/etc/containers","dev":1,"ino":2},{"path":"/etc/containers","dev":1,"ino":2}]`)},
		{"7 version 6 prepared, a created dir without its id", strings.Replace(j("prepared", e(`,"hadOriginal":true,"origSHA256":"`+strings.Repeat("ab", 32)+`","newSHA256":"`+strings.Repeat("cd", 32)+`"`), `,"createdDirs":["/etc/containers"]`), `"version":3`, `"version":6`, 1)},
		{"8 payload file", `{"version":3,"phase":"prepared","meta":{"hash":"x","payloadFile":"../current.json"},"entries":[]}`},
		{"8 hash", `{"version":3,"phase":"prepared","meta":{"hash":"x y"},"entries":[]}`},
		{"9 finishing while prepared", j("prepared", e(`,"hadOriginal":true`), `,"finishing":true`)},
		{"9 committed phase, not committed", j("committed", e(`,"hadOriginal":true`), "")},
		{"18 unknown action kind", `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[{"unit":"crio.service","action":"Frobnicate"}]},"entries":[]}`},
		{"18 a start", `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[{"unit":"crio.service","action":"Start"}]},"entries":[]}`},
		{"18 an undo not the inverse", `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[{"unit":"a.service","action":"Stop","undo":"Mask"}]},"entries":[]}`},
		{"18 ifLoaded", `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[{"unit":"crio.service","action":"Reload","ifLoaded":true}]},"entries":[]}`},
		{"18 listed twice", `{"version":3,"phase":"prepared","meta":{"hash":"x","actions":[{"action":"DaemonReload"},{"action":"DaemonReload"}]},"entries":[]}`},
		{"10 no original, backup there (prepared)", j("prepared", e(`,"hadOriginal":false`), "")},
		{"10 no original, backup there (rolling back)", j("rollingback", e(`,"hadOriginal":false`), `,"committed":true`)},
		{"10 no original, backup there (rolled back)", j("rolledback", e(`,"hadOriginal":false`), "")},
		{"11 preparing, backup not the file's copy", j("preparing", e(""), "")},
		{"11 preparing, backup without its file", j("preparing", `{"path":"`+pol+`","temp":"`+filepath.Dir(pol)+`/x","backup":"`+pbackup+`"}`, "")},
		// Rules 15 and 16: NEWDEV and NEWINO stand for the device and inode of the file in place.
		{"15 committed, the file in place is not the new one", j("committed", e(`,"hadOriginal":true,"origMode":420,"newDev":NEWDEV,"newIno":1`), `,"committed":true`)},
		{"15 done, the file in place is not the new one", j("done", e(`,"hadOriginal":true,"origMode":420,"newDev":NEWDEV,"newIno":1`), `,"committed":true`)},
		{"15 committed, the file is missing", j("committed", `{"path":"`+pol+`","temp":"`+filepath.Dir(pol)+`/x","backup":"`+pbackup+`","hadOriginal":true,"origMode":420,"newDev":NEWDEV,"newIno":NEWINO}`, `,"committed":true`)},
		{"15 committed, a temp remains", j("committed", e(`,"hadOriginal":true,"origMode":420,"newDev":NEWDEV,"newIno":NEWINO`), `,"committed":true`)},
		{"16 committed, the payload is missing", `{"version":3,"phase":"committed","committed":true,"meta":{"hash":"x","payloadFile":"payloads/` + strings.Repeat("ab", 32) + `"},"entries":[` + e(`,"hadOriginal":true,"origMode":420,"newDev":NEWDEV,"newIno":NEWINO`) + `]}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc/containers"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, reg), []byte("live"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, backup), []byte("only copy"), 0o644))
			if strings.HasPrefix(tc.rule, "11") {
				require.NoError(t, os.WriteFile(filepath.Join(dir, pbackup), []byte("only copy of policy.json"), 0o644))
				tc.journal = strings.Replace(tc.journal, `"temp":"`+filepath.Dir(pol)+`/x",`, "", 1)
			}
			if strings.HasPrefix(tc.rule, "15") || strings.HasPrefix(tc.rule, "16") {
				tc.journal = strings.Replace(tc.journal, `"temp":"`+filepath.Dir(pol)+`/x",`, `"temp":"`+ptemp+`",`, 1)
				var st syscall.Stat_t
				require.NoError(t, syscall.Lstat(filepath.Join(dir, reg), &st))
				tc.journal = strings.NewReplacer("NEWDEV", strconv.FormatUint(uint64(st.Dev), 10), "NEWINO", strconv.FormatUint(st.Ino, 10)).Replace(tc.journal)
				if strings.Contains(tc.rule, "temp remains") {
					require.NoError(t, os.WriteFile(filepath.Join(dir, temp), []byte("new"), 0o644))
				}
			}
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(state, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal.json"), []byte(tc.journal), 0o600))
			before := tree(t, dir)
			root, err := actions.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()
			txn, err := actions.Recover(root, state, actions.Trust{})
			require.Error(t, err, "rule %s: the journal is refused", tc.rule)
			assert.Nil(t, txn)
			t.Log(err)
			assert.True(t, strings.Contains(err.Error(), "is not one this agent wrote") || errors.Is(err, actions.ErrHostile), err.Error())
			assert.Equal(t, before, tree(t, dir), "nothing touched")
		})
	}
	// A journal Prepare writes passes every rule (the table above is not refusing everything).
	r, dir := newRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, reg), []byte("live"), 0o644))
	state := filepath.Join(t.TempDir(), "state")
	txn, err := actions.Prepare(r, state, []actions.Op{{Path: reg, Data: []byte("new"), Mode: 0o644}, {Path: pol, Data: []byte("{}"), Mode: 0o644}}, actions.Meta{Hash: "x"})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	again, err := actions.Recover(r, state, actions.Trust{})
	require.NoError(t, err)
	require.NotNil(t, again)
	assert.Equal(t, actions.PhaseCommitted, again.Phase())
}

// tree maps every path under dir to its contents (directories to "dir").
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}
