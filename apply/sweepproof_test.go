package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// The state dir's sweep removes only names the agent writes (adversary r21 b2/05: it removed any
// file in payloads/ the record did not name, and backup/** whatever it held): another's files
// there stay, through a recover and a refresh; the agent's own leftovers go.
func TestTheSweepRemovesOnlyTheAgentsNames(t *testing.T) {
	n := newNode(t)
	sha := apply.PayloadHash([]byte("an older payload"))
	foreign := []string{"payloads/notes.txt", "payloads/" + sha[:63], "payloads/" + sha + ".bak", "payloads/.x.tmp",
		".operator-notes.tmp", "backup/keep/0", "backup/README", "my.tmp",
		"backup/0"} // an old agent's backup without its version 1 journal: no proof it is a copy (adversary r22 b/01)
	ours := []string{"payloads/" + sha, "payloads/." + sha + ".tmp", ".journal.json.tmp", ".current.json.tmp", ".cordoned.tmp"}
	for _, p := range append(append([]string{}, foreign...), ours...) {
		require.NoError(t, os.MkdirAll(filepath.Join(n.StateDir, filepath.Dir(p)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, p), []byte("x"), 0o600))
	}
	_, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.False(t, res.CleanupPending, res.Reason)
	for _, p := range foreign {
		assert.FileExists(t, filepath.Join(n.StateDir, p), "another's file stays")
	}
	for _, p := range ours {
		assert.NoFileExists(t, filepath.Join(n.StateDir, p), "the agent's leftover goes")
	}
	assert.ElementsMatch(t, []string{apply.PayloadHash(v2().JSON()), sha + ".bak", sha[:63], ".x.tmp", "notes.txt"}, names(t, filepath.Join(n.StateDir, "payloads")))
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
