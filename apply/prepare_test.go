package apply_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Prepare is the whole truth and no effect: its Result is what --dry-run prints, nothing is written
// until Execute, and Execute does exactly the writes Prepare listed.
func TestPrepareIsTheDryRunThenExecuteDoesIt(t *testing.T) {
	n := newNode(t)
	// A hand edit, so that the node adds a warning of its own to the plan.
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, registries), []byte("# edited"), 0o644))
	req := apply.Request{Desired: v2().JSON(), Hash: "v2"}

	dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: req.Desired, Hash: req.Hash, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, api.OutcomePlanned, dry.Outcome)

	prep, err := apply.Prepare(context.Background(), n.Host, req)
	require.NoError(t, err)
	assert.True(t, prep.Writes())
	got := prep.Result()
	assert.Empty(t, got.Outcome, "no outcome before Execute")
	assert.Equal(t, dry.Writes, got.Writes)
	assert.Equal(t, dry.Warnings, got.Warnings)
	assert.Contains(t, got.Warnings[0], "drift: "+registries)
	assert.Equal(t, dry.Actions, got.Actions)
	assert.Equal(t, "# edited", n.read(t, registries), "Prepare wrote")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
	assert.Empty(t, n.units.ran)

	res, err := prep.Execute(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, dry.Writes, res.Writes, "Execute did what Prepare said")
	assert.Equal(t, "# v2 mirrors", n.read(t, registries))

	// The plan Execute carried out is the one Prepare showed: a second Prepare of the same payload
	// is a no-op that writes nothing.
	again, err := apply.Prepare(context.Background(), n.Host, req)
	require.NoError(t, err)
	assert.False(t, again.Writes())
	again.Close()
}

// A refusal is known at Prepare: nothing to execute, no slot to take, nothing written.
func TestPrepareRefusedNeedsNoExecution(t *testing.T) {
	n := newNode(t)
	m := fixture.DefaultMachine()
	m.KernelArguments = []string{"nosmt"}
	prep, err := apply.Prepare(context.Background(), n.Host, apply.Request{Desired: v2().EmbedMachine(m).JSON(), Hash: "k"})
	require.NoError(t, err)
	assert.False(t, prep.Writes())
	assert.Equal(t, api.OutcomeRefused, prep.Result().Outcome)
	res, err := prep.Execute(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.Equal(t, "# v1 mirrors", n.read(t, registries))
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
}

// A prepared refresh holds the node lock until Execute or Close: what it planned cannot go stale
// under a second process.
func TestPreparedHoldsTheNodeLock(t *testing.T) {
	n := newNode(t)
	prep, err := apply.Prepare(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	other := n.Host
	other.LockWait = 100 * time.Millisecond
	_, err = apply.Prepare(ctx, other, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.Error(t, err, "a second Prepare got the lock while the first held it")
	prep.Close()
	prep.Close() // twice is fine
	second, err := apply.Prepare(context.Background(), other, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.NoError(t, err)
	second.Close()
}

// A refusal the node adds (a symlinked path) is in the Result as in the JSON the CLI prints, and
// leaves the drift and drain warnings beside it.
func TestPrepareRefusesOnTheNode(t *testing.T) {
	n := newNode(t)
	target := filepath.Join(n.dir, "etc/containers")
	require.NoError(t, os.RemoveAll(target))
	require.NoError(t, os.Symlink("/tmp", target))
	prep, err := apply.Prepare(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.NoError(t, err)
	defer prep.Close()
	res := prep.Result()
	assert.False(t, prep.Writes())
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.False(t, res.Eligible)
	assert.Empty(t, res.Actions)
	assert.Empty(t, res.Writes)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var out struct {
		Eligible bool
		Refused  []struct{ Reason string }
	}
	require.NoError(t, json.Unmarshal(b, &out))
	assert.False(t, out.Eligible)
	require.NotEmpty(t, out.Refused)
	assert.Contains(t, out.Refused[len(out.Refused)-1].Reason, "symlink")
}
