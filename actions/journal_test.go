package actions_test

import (
	"os"
	"path/filepath"
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
