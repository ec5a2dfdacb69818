package apply_test

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
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
)

// Recovery runs only the unit actions a plan under the node's policy could have journaled (issue
// 27, class 5; adversary round 9, 08: a forged committed journal saying Stop or Mask of crio.service
// had recovery stop or mask crio, exit 0; unknown kinds looped as rollbackIncomplete). Each is
// refused as hostile, naming the action, touching nothing and running nothing, and no refresh
// starts over it.
func TestForgedJournalUnitActionsAreRefused(t *testing.T) {
	for name, c := range map[string]struct{ actions, names string }{
		"stop crio":       {`{"unit":"crio.service","action":"Stop"}`, `"Stop" of "crio.service"`},
		"mask crio":       {`{"unit":"crio.service","action":"Mask"}`, `"Mask" of "crio.service"`},
		"disable crio":    {`{"unit":"crio.service","action":"Disable"}`, `"Disable" of "crio.service"`},
		"enable crio":     {`{"unit":"crio.service","action":"Enable"}`, `"Enable" of "crio.service"`},
		"unmask crio":     {`{"unit":"crio.service","action":"Unmask"}`, `"Unmask" of "crio.service"`},
		"start crio":      {`{"unit":"crio.service","action":"Start"}`, `"Start" of "crio.service"`},
		"isolate":         {`{"unit":"crio.service","action":"Isolate"}`, `"Isolate" of "crio.service"`},
		"frobnicate":      {`{"unit":"crio.service","action":"Frobnicate"}`, `"Frobnicate" of "crio.service"`},
		"pod etcd":        {`{"pod":"kube-system/etcd","action":"Restart"}`, `"Restart" of static pod "kube-system/etcd"`},
		"restart sshd":    {`{"unit":"sshd.service","action":"Restart"}`, `"Restart" of "sshd.service"`},
		"stop after good": {`{"unit":"crio.service","action":"Reload"},{"unit":"kubelet.service","action":"Stop","undo":"Start"}`, `unit action 1 ("Stop" of "kubelet.service")`},
		"ifLoaded":        {`{"unit":"crio.service","action":"Reload","ifLoaded":true}`, `"Reload" of "crio.service"`},
	} {
		t.Run(name, func(t *testing.T) {
			n := newNode(t)
			raw := []byte(`{"ignition":{"version":"3.2.0"}}`)
			sum := sha256.Sum256(raw)
			sha := hex.EncodeToString(sum[:])
			require.NoError(t, os.MkdirAll(filepath.Join(n.StateDir, "payloads"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "payloads", sha), raw, 0o600))
			j := `{"version":5,"phase":"committed","committed":true,"meta":{"hash":"` + sha + `","payloadFile":"payloads/` + sha + `","actions":[` + c.actions + `]},"entries":[]}`
			require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
			before := n.treeHash(t)
			rec, err := apply.Recover(context.Background(), n.Host)
			require.Error(t, err)
			t.Log(err)
			assert.True(t, errors.Is(err, actions.ErrHostile) || strings.Contains(err.Error(), "is not one this agent wrote"), err.Error())
			assert.ErrorContains(t, err, c.names, "the refusal names the action")
			assert.ErrorContains(t, err, "touching nothing")
			assert.Empty(t, n.units.ran, "no unit action run")
			assert.Equal(t, before, n.treeHash(t), "nothing touched, the journal kept")
			assert.NotEqual(t, api.OutcomeApplied, rec.Outcome)
			assert.False(t, rec.RollbackIncomplete, "refused, not a rollback that loops")
			_, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
			require.Error(t, err, "nothing starts over a hostile journal")
			assert.Empty(t, n.units.ran)
			assert.Equal(t, before, n.treeHash(t))
		})
	}
}

// The agent's own journals still recover: one taken while a refresh ran its unit actions (state
// actions under the built-in unit rule, the daemon-reload, reloads and restarts) is rolled forward
// and its actions run again.
func TestOwnJournalActionsAreRecovered(t *testing.T) {
	n := newNode(t)
	var journal []byte
	n.units.hook = func(_ context.Context, a plan.UnitAction) error {
		if journal == nil {
			b, err := os.ReadFile(filepath.Join(n.StateDir, "journal.json"))
			require.NoError(t, err)
			journal = b
		}
		return nil
	}
	des := v2().File("/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", []byte("ca"), 0o644).
		Unit(allowlist.UnitIRIRegistry, "[Service]\nExecStart=/usr/bin/true\n")
	res := n.run(t, des.JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	ran := n.units.ran
	require.NotEmpty(t, journal)
	assert.Contains(t, ran, plan.UnitAction{Unit: allowlist.UnitIRIRegistry, Action: allowlist.ActionEnable, Undo: allowlist.ActionDisable})
	assert.Contains(t, ran, plan.UnitAction{Action: allowlist.ActionDaemonReload})
	assert.Contains(t, ran, plan.UnitAction{Unit: allowlist.UnitCrio, Action: allowlist.ActionRestart})

	n.units.hook, n.units.ran = nil, nil
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), journal, 0o600))
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err, "the agent's own journal is trusted")
	assert.Equal(t, api.OutcomeApplied, rec.Outcome, rec.Reason)
	assert.Equal(t, ran, n.units.ran, "its actions run again")
	assert.Equal(t, "", n.journalPhase(t))
}

// A dry run over a pending journal says its phase plainly (adversary round 9: the message printed
// "phase preparing<nil>"), and an unreadable one why.
func TestPendingJournalMessage(t *testing.T) {
	n := newNode(t)
	j := `{"version":5,"phase":"preparing","meta":{"hash":"x","actions":[]},"entries":[]}`
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
	_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
	require.Error(t, err)
	assert.ErrorContains(t, err, "an interrupted refresh is pending (phase preparing): run refresh-agent recover first")
	assert.NotContains(t, err.Error(), "<nil>")
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(`{"version":5,"phase":"later"}`), 0o600))
	_, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
	require.Error(t, err)
	assert.ErrorContains(t, err, "its journal cannot be used: ")
	assert.ErrorContains(t, err, `unknown phase "later"`)
	assert.NotContains(t, err.Error(), "<nil>")
}
