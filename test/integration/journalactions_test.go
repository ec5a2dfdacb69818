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

// A forged committed journal whose actions the policy allows, on a unit the manager now reports as
// one the executor refuses (a drop-in on the node orders it After=shutdown.target), is refused up
// front as hostile, touching nothing: the unit is not restarted, and no rollback runs half-way into
// the executor's refusal (adversary round 10, other/02: "incomplete rollback").
func TestForgedJournalOnAUnitTheExecutorRefusesTouchesNothing(t *testing.T) {
	n, mgr := stateHost(t, true)
	_, err := mgr.Systemctl("start", failingUnit)
	require.NoError(t, err)
	dropins := filepath.Join(mgr.UnitDir, failingUnit+".d")
	require.NoError(t, os.MkdirAll(dropins, 0o755))
	t.Cleanup(func() { _ = os.RemoveAll(dropins); _, _ = mgr.Systemctl("daemon-reload") })
	require.NoError(t, os.WriteFile(filepath.Join(dropins, "late.conf"), []byte("[Unit]\nAfter=shutdown.target\n"), 0o644))
	_, err = mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	before := systemctl(t, mgr, "show", "-P", "InvocationID", failingUnit)
	require.NotEmpty(t, before)

	raw := []byte(`{"ignition":{"version":"3.2.0"}}`)
	sum := sha256.Sum256(raw)
	sha := hex.EncodeToString(sum[:])
	require.NoError(t, os.MkdirAll(filepath.Join(n.StateDir, "payloads"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "payloads", sha), raw, 0o600))
	j := `{"version":5,"phase":"committed","committed":true,"meta":{"hash":"` + sha + `","payloadFile":"payloads/` + sha +
		`","actions":[{"unit":"` + failingUnit + `","action":"Restart"}]},"entries":[]}`
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
	_, err = apply.Recover(context.Background(), n)
	require.Error(t, err)
	assert.ErrorIs(t, err, actions.ErrHostile)
	assert.Contains(t, err.Error(), "the executor would refuse it")
	assert.Contains(t, err.Error(), "touching nothing")
	assert.Equal(t, before, systemctl(t, mgr, "show", "-P", "InvocationID", failingUnit), "not restarted")
	_, err = os.Stat(filepath.Join(n.StateDir, "journal.json"))
	assert.NoError(t, err, "the journal stays")
}
