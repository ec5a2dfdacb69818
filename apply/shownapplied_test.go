package apply_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// A journal rolled forward records its payload only when the node's files show it applied: every
// file and unit file the payload defines under the policy holds its contents (adversary round 7a
// F6: a forged committed journal with no entries was recorded as current over the old files). Not
// shown, the journal is settled, the record stays, recover fails naming the file, and the next
// refresh plans the payload again.
func TestRecoveryRecordsOnlyWhatTheNodeShows(t *testing.T) {
	unit := "iri-registry.service"
	unitFile := "/etc/systemd/system/" + unit
	for _, c := range []struct {
		name    string
		onNode  []string // the payload's files written on the node by hand before recovery
		missing string   // the file recovery names, "" when it records
	}{
		{"nothing applied", nil, registries},
		{"files but not the unit", []string{registries, pullSecret}, unitFile},
		{"everything", []string{registries, pullSecret, unitFile}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newNode(t)
			des := v1().File(registries, []byte("# v2 mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600).
				Unit(unit, "[Service]\nExecStart=/usr/bin/true\n")
			raw := des.JSON()
			contents := map[string]string{registries: "# v2 mirrors", pullSecret: `{"auths":{"v2":{}}}`, unitFile: "[Service]\nExecStart=/usr/bin/true\n"}
			for _, p := range c.onNode {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(n.dir, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(n.dir, p), []byte(contents[p]), 0o600))
			}
			sum := sha256.Sum256(raw)
			name := hex.EncodeToString(sum[:])
			require.NoError(t, os.MkdirAll(filepath.Join(n.StateDir, "payloads"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "payloads", name), raw, 0o600))
			j := fmt.Sprintf(`{"version":5,"phase":"committed","committed":true,"meta":{"hash":"v2","payloadFile":"payloads/%s","actions":[]},"entries":[]}`, name)
			require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
			rec, err := apply.Recover(context.Background(), n.Host)
			if c.missing == "" {
				require.NoError(t, err)
				assert.True(t, rec.Recorded)
				assert.Equal(t, "v2", apply.CurrentHash(n.StateDir))
				return
			}
			require.ErrorIs(t, err, apply.ErrNotShownApplied)
			assert.ErrorContains(t, err, c.missing)
			assert.False(t, rec.Recorded)
			assert.Equal(t, api.OutcomeFailed, rec.Outcome)
			assert.Equal(t, "v1", apply.CurrentHash(n.StateDir), "the record stays")
			assert.Equal(t, "", n.journalPhase(t), "the journal is settled")
			// The next refresh plans the payload against the old record and writes it.
			res := n.run(t, raw, "v2")
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			b, err := os.ReadFile(filepath.Join(n.dir, registries))
			require.NoError(t, err)
			assert.Equal(t, "# v2 mirrors", string(b))
		})
	}
}
