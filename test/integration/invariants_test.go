package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The invariant checker of the fault tests. It reuses none of the project's code: it knows each
// managed file's old and new bytes from how the test built them, reads the record and the state dir
// as files, and judges the command's JSON by what is on disk.

// nodeModel is what a node root must hold: each managed path's bytes before (old) and after (new)
// the refresh, nil for absent, and the payloads the two records name.
type nodeModel struct {
	old, new       map[string][]byte
	oldHash        string // the hash recorded for old
	newHash        string
	oldRaw, newRaw []byte // the payloads as given to apply
}

// modelFor builds crashPayloads(n)'s model: its v1 and v2, recorded as "v1" and "v2".
func modelFor(t *testing.T, n int) (m nodeModel, v1File, v2File string) {
	v1, v2, managed := crashPayloads(n)
	m = nodeModel{old: map[string][]byte{}, new: map[string][]byte{}, oldHash: "v1", newHash: "v2", oldRaw: v1.JSON(), newRaw: v2.JSON()}
	// The same bytes crashPayloads writes, spelled out again here.
	m.old[pullSecret], m.new[pullSecret] = []byte("v1"), []byte("v2")
	for i, p := range managed[1:] {
		m.old[p], m.new[p] = nil, nil
		if i < n-1 || n == 1 {
			m.old[p] = []byte(fmt.Sprintf("v1 %d %s", i, strings.Repeat("x", i*97)))
		}
		if i > 0 || n == 1 {
			m.new[p] = []byte(fmt.Sprintf("v2 %d %s", i, strings.Repeat("y", i*89)))
		}
	}
	dir := t.TempDir()
	v1File, v2File = filepath.Join(dir, "v1.ign"), filepath.Join(dir, "v2.ign")
	require.NoError(t, os.WriteFile(v1File, m.oldRaw, 0o644))
	require.NoError(t, os.WriteFile(v2File, m.newRaw, 0o644))
	return m, v1File, v2File
}

// files says which version the managed files hold: "old", "new", or "mixed: ..." naming the odd ones.
func (m nodeModel) files(root string) string {
	var isOld, isNew, odd []string
	for p := range m.old {
		got, err := os.ReadFile(filepath.Join(root, p))
		if err != nil && !os.IsNotExist(err) {
			odd = append(odd, p+": "+err.Error())
			continue
		}
		if os.IsNotExist(err) {
			got = nil
		}
		o, n := same(got, err == nil, m.old[p]), same(got, err == nil, m.new[p])
		switch {
		case o && n:
		case o:
			isOld = append(isOld, p)
		case n:
			isNew = append(isNew, p)
		default:
			odd = append(odd, p+" is neither old nor new")
		}
	}
	switch {
	case len(odd) > 0:
		sort.Strings(odd)
		return "mixed: " + strings.Join(odd, "; ")
	case len(isOld) > 0 && len(isNew) > 0:
		sort.Strings(isOld)
		sort.Strings(isNew)
		return fmt.Sprintf("mixed: old %v, new %v", isOld, isNew)
	case len(isNew) > 0:
		return "new"
	}
	return "old"
}

func same(got []byte, exists bool, want []byte) bool {
	if want == nil {
		return !exists
	}
	return exists && string(got) == string(want)
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// record reads the state dir's record as a file: the hash, and whether the payload it names is there
// holding the bytes its name says.
func record(stateDir string) (hash string, payload []byte, problem string) {
	data, err := os.ReadFile(filepath.Join(stateDir, "current.json"))
	if err != nil {
		return "", nil, "no record: " + err.Error()
	}
	var rec struct{ Hash, Payload string }
	if err := json.Unmarshal(data, &rec); err != nil {
		return "", nil, "record unreadable: " + err.Error()
	}
	payload, err = os.ReadFile(filepath.Join(stateDir, rec.Payload))
	if err != nil {
		return rec.Hash, nil, "the record's payload is gone: " + err.Error()
	}
	if filepath.Base(rec.Payload) != sha(payload) {
		return rec.Hash, payload, "the record's payload does not hold the bytes its name says"
	}
	return rec.Hash, payload, ""
}

// leftovers lists what a settled node must not hold: any file of the agent's outside the state dir
// (a temp, backup or restore file beside a target), and in the state dir anything but the lock, the
// record, the payload it names, and the cordon marker; the journal only when allowJournal.
func leftovers(root, stateDir string, allowJournal bool) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == stateDir {
			return filepath.SkipDir
		}
		if strings.Contains(d.Name(), "refresh-agent") {
			out = append(out, p)
		}
		return nil
	})
	_, payload, _ := record(stateDir)
	_ = filepath.WalkDir(stateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == stateDir {
			return nil
		}
		rel, _ := filepath.Rel(stateDir, p)
		switch {
		case rel == "lock", rel == "current.json", rel == "payloads", rel == "cordoned":
		case rel == "journal.json" && allowJournal:
		case strings.HasPrefix(rel, "payloads/") && payload != nil && rel == "payloads/"+sha(payload):
		default:
			out = append(out, p)
		}
		return nil
	})
	return out
}

// outcome is the part of apply's and recover's JSON the checker reads.
type outcome struct {
	Outcome            string
	Found              bool
	Applied            bool
	RolledBack         bool
	RollbackIncomplete bool
	Recorded           bool
	CleanupPending     bool
	Reason             string
}

// checkHonest judges an apply that exited (not killed) by what is on disk right after it, before
// any recovery: exit 0 is applied and clean; exit 1 says in JSON on stdout what happened, and what it
// says is what the disk holds; exit 1 with nothing on stdout only for an error before anything
// started (then the files are old). It returns what the apply claimed, for the check after recovery.
func checkHonest(t *testing.T, trial string, m nodeModel, root, stateDir string, code int, stdout, stderr string) outcome {
	t.Helper()
	files := m.files(root)
	hash, payload, problem := record(stateDir)
	var o outcome
	if strings.TrimSpace(stdout) == "" {
		require.Equal(t, 1, code, "%s: exit %d with nothing on stdout; stderr: %s", trial, code, stderr)
		require.NotEmpty(t, strings.TrimSpace(stderr), "%s: exit 1 with no reason anywhere", trial)
		require.Equal(t, "old", files, "%s: an error before anything started leaves the files old (stderr: %s)", trial, stderr)
		return o
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &o), "%s: stdout is not the JSON result: %s", trial, stdout)
	switch {
	case code == 0:
		require.Equal(t, "applied", o.Outcome, trial)
		require.Equal(t, "new", files, "%s: exit 0", trial)
		require.Equal(t, m.newHash, hash, "%s: exit 0 and the record says otherwise (%s)", trial, problem)
		require.Equal(t, string(m.newRaw), string(payload), trial)
		require.Empty(t, leftovers(root, stateDir, false), "%s: exit 0 and leftovers", trial)
	case code != 1:
		t.Fatalf("%s: exit %d: %s %s", trial, code, stdout, stderr)
	case o.Applied:
		require.Equal(t, "new", files, "%s: says applied", trial)
		require.True(t, o.CleanupPending, "%s: exit 1 with applied must say what is pending", trial)
		require.NotEmpty(t, o.Reason, trial)
		// Recorded says what a read of the record shows: never "not recorded" with the record
		// naming the new hash, never "recorded" without.
		require.Equal(t, o.Recorded, hash == m.newHash, "%s: says recorded=%v, the record names %q (%s)", trial, o.Recorded, hash, problem)
	case o.RolledBack:
		require.Equal(t, "old", files, "%s: says rolled back", trial)
		require.Equal(t, m.oldHash, hash, trial)
		if o.CleanupPending {
			// Every original back, only the clean-up failed (adversary r18 d/03): it says so, and
			// keeps the journal for the next recovery to finish.
			require.NotEmpty(t, o.Reason, trial)
			require.False(t, o.RollbackIncomplete, "%s: says rolled back and incomplete", trial)
		} else {
			require.Empty(t, leftovers(root, stateDir, false), "%s: says rolled back, yet leftovers", trial)
		}
	case o.RollbackIncomplete:
		require.NotEmpty(t, o.Reason, trial)
		_, err := os.Stat(filepath.Join(stateDir, "journal.json"))
		require.NoError(t, err, "%s: an incomplete rollback keeps its journal", trial)
	default:
		require.Equal(t, "failed", o.Outcome, trial)
		require.Equal(t, "old", files, "%s: failed before the commit", trial)
		require.Equal(t, m.oldHash, hash, trial)
	}
	return o
}

// checkSettled checks a node after a successful recover: every managed file old or new as one, never
// undoing an apply that said applied, the record naming the files' version with its payload intact,
// and nothing left behind.
func checkSettled(t *testing.T, trial string, m nodeModel, root, stateDir string, claimed outcome) string {
	t.Helper()
	files := m.files(root)
	require.Contains(t, []string{"old", "new"}, files, trial)
	if claimed.Applied {
		require.Equal(t, "new", files, "%s: the apply said applied; recovery must never undo it", trial)
	}
	if claimed.RolledBack {
		require.Equal(t, "old", files, "%s: the apply said rolled back", trial)
	}
	hash, payload, problem := record(stateDir)
	require.Empty(t, problem, trial)
	want, raw := m.oldHash, m.oldRaw
	if files == "new" {
		want, raw = m.newHash, m.newRaw
	}
	require.Equal(t, want, hash, "%s: the record names the files' version", trial)
	require.Equal(t, string(raw), string(payload), trial)
	require.Empty(t, leftovers(root, stateDir, false), "%s: nothing left behind after a successful recover", trial)
	return files
}
