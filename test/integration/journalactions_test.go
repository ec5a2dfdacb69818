package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/apply"
)

// A forged committed journal whose unit actions no plan under the policy could have journaled (a
// Stop, Mask or Disable of a unit no unit rule names; an unknown kind) is refused as hostile against
// the real manager, and the unit stays as it was: running, enabled, unmasked (adversary round 9, 08:
// recovery stopped and masked crio.service, exit 0).
func TestForgedJournalActionsRunNothingOnTheManager(t *testing.T) {
	n, mgr := stateHost(t, true)
	// failingUnit is a file rule's unit (restarted), never a unit rule's; started, it succeeds while
	// the trigger is not "bad".
	_, err := mgr.Systemctl("start", failingUnit)
	require.NoError(t, err)
	raw := []byte(`{"ignition":{"version":"3.2.0"}}`)
	sum := sha256.Sum256(raw)
	sha := hex.EncodeToString(sum[:])
	require.NoError(t, os.MkdirAll(filepath.Join(n.StateDir, "payloads"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "payloads", sha), raw, 0o600))
	for _, act := range []string{
		`{"unit":"` + failingUnit + `","action":"Stop"}`,
		`{"unit":"` + failingUnit + `","action":"Mask"}`,
		`{"unit":"` + failingUnit + `","action":"Disable"}`,
		`{"unit":"` + failingUnit + `","action":"Frobnicate"}`,
		`{"unit":"` + stateUnit + `","action":"Start"}`,
	} {
		j := `{"version":5,"phase":"committed","committed":true,"meta":{"hash":"` + sha + `","payloadFile":"payloads/` + sha + `","actions":[` + act + `]},"entries":[]}`
		require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
		_, err := apply.Recover(context.Background(), n)
		require.Error(t, err, act)
		assert.True(t, errors.Is(err, actions.ErrHostile) || strings.Contains(err.Error(), "is not one this agent wrote"), "%s: %v", act, err)
		assert.Contains(t, err.Error(), "touching nothing")
		assert.Equal(t, "active", systemctl(t, mgr, "is-active", failingUnit), act)
		assert.NotEqual(t, "masked", systemctl(t, mgr, "is-enabled", failingUnit), act)
		assert.Equal(t, "active", systemctl(t, mgr, "is-active", stateUnit), act)
		assert.Equal(t, "enabled", systemctl(t, mgr, "is-enabled", stateUnit), act)
	}
}
