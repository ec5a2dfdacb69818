package apply_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
)

// fakeDrainer logs drain and uncordon into the same log as the unit actions, with what
// registries.conf held at the time, so the order (drain, write, reload, uncordon) shows.
type fakeDrainer struct {
	n        *node
	log      *[]string
	drainErr error
	blocks   bool // the drain waits until its context ends (a pod that will not go)
}

func (d *fakeDrainer) Drain(ctx context.Context) error {
	*d.log = append(*d.log, "drain with "+onDisk(d.n, registries))
	if d.blocks {
		<-ctx.Done()
		return ctx.Err()
	}
	return d.drainErr
}

func (d *fakeDrainer) Uncordon(context.Context) error {
	*d.log = append(*d.log, "uncordon with "+onDisk(d.n, registries))
	return nil
}

func onDisk(n *node, p string) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, p))
	return string(b)
}

const (
	regV1      = "[[registry]]\nlocation = \"quay.io/x\"\n[[registry.mirror]]\nlocation = \"m1.example.com\"\npull-from-mirror = \"digest-only\"\n"
	regAdded   = regV1 + "[[registry.mirror]]\nlocation = \"m2.example.com\"\npull-from-mirror = \"digest-only\"\n"
	regRemoved = "[[registry]]\nlocation = \"quay.io/x\"\n"
)

// drainNode is a node whose registries.conf is regV1, with a drainer and a unit log.
func drainNode(t *testing.T) (*node, *[]string, *fakeDrainer) {
	n := newNode(t)
	require.Equal(t, api.OutcomeApplied, n.run(t, v1().File(registries, []byte(regV1), 0o644).JSON(), "r1").Outcome)
	log := &[]string{}
	d := &fakeDrainer{n: n, log: log}
	n.Drainer = d
	n.units.ran = nil
	n.units.hook = func(_ context.Context, a plan.UnitAction) error {
		*log = append(*log, string(a.Action)+" "+a.Unit+" with "+onDisk(n, registries))
		return nil
	}
	return n, log, d
}

func TestRegistriesMirrorAddedReloadsOnly(t *testing.T) {
	n, log, _ := drainNode(t)
	res := n.run(t, v1().File(registries, []byte(regAdded), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.False(t, res.Drain)
	assert.Equal(t, []string{"Reload crio.service with " + regAdded}, *log)
}

func TestRegistriesMirrorRemovedDrainsThenReloads(t *testing.T) {
	n, log, _ := drainNode(t)
	res := n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.True(t, res.Drain)
	assert.Equal(t, []string{"drain with " + regV1, "Reload crio.service with " + regRemoved, "uncordon with " + regRemoved}, *log)
}

func TestUncordonedAfterARollback(t *testing.T) {
	n, log, _ := drainNode(t)
	n.units.fail["crio.service"] = 1
	res := n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack, res.Reason)
	assert.Equal(t, []string{"drain with " + regV1, "Reload crio.service with " + regRemoved, "Reload crio.service with " + regV1, "uncordon with " + regV1}, *log)
}

func TestFailedDrainWritesNothingAndUncordons(t *testing.T) {
	n, log, d := drainNode(t)
	d.drainErr = errors.New("2 pods not evicted within 10m0s: ns/a (a PodDisruptionBudget blocks it)")
	res := n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.Contains(t, res.Reason, "PodDisruptionBudget")
	assert.Contains(t, res.Reason, "nothing written")
	assert.Equal(t, []string{"drain with " + regV1, "uncordon with " + regV1}, *log)
	assert.Equal(t, regV1, n.read(t, registries))
	assert.Equal(t, "r1", apply.CurrentHash(n.StateDir))
}

func TestApplyWithoutADrainerSkipsTheDrainAndSaysSo(t *testing.T) {
	n, log, _ := drainNode(t)
	n.Drainer = nil
	res := n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.True(t, res.DrainSkipped)
	assert.True(t, strings.Contains(strings.Join(res.Warnings, "\n"), "drain skipped"), res.Warnings)
	assert.Equal(t, regRemoved, n.read(t, registries))
	*log = nil
	res = n.run(t, v1().JSON(), "r1b")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	*log = nil
	n.Drained = true
	res = n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, []string{"Reload crio.service with " + regRemoved}, *log)
}

func TestACordonLeftByACrashIsUndoneByTheNextRun(t *testing.T) {
	n, log, d := drainNode(t)
	d.drainErr = nil
	res := n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	_, err := os.Stat(filepath.Join(n.StateDir, "cordoned"))
	assert.True(t, os.IsNotExist(err), "no marker once uncordoned")
	// Now the crash: the marker is there, as after a SIGKILL between cordon and uncordon.
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "cordoned"), nil, 0o600))
	*log = nil
	res = n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	require.Equal(t, api.OutcomeNoop, res.Outcome, res.Reason)
	assert.Equal(t, []string{"uncordon with " + regRemoved}, *log)
	// A node cordoned by someone else (no marker) is left alone.
	*log = nil
	n.run(t, v1().File(registries, []byte(regRemoved), 0o644).JSON(), "r2")
	assert.Empty(t, *log)
}

// A drain stopped by the gate (the agent's pacing slot was taken over) ends the refresh with
// Proceed's error: nothing written, the node uncordoned, not a failure.
func TestAbortedDrainStopsWithNothingWritten(t *testing.T) {
	n, log, d := drainNode(t)
	d.blocks = true
	lost := errors.New("slot lost")
	abort := make(chan struct{})
	proceed := func(context.Context) error {
		select {
		case <-abort:
			return lost
		default:
			return nil
		}
	}
	time.AfterFunc(50*time.Millisecond, func() { close(abort) })
	prep, err := apply.Prepare(context.Background(), n.Host, apply.Request{Desired: v1().File(registries, []byte(regRemoved), 0o644).JSON(),
		Hash: "r2"})
	require.NoError(t, err)
	res, err := prep.Execute(context.Background(), gate{lost: abort, proceed: proceed})
	require.ErrorIs(t, err, lost)
	assert.Nil(t, res)
	assert.Equal(t, []string{"drain with " + regV1, "uncordon with " + regV1}, *log)
	assert.Equal(t, regV1, n.read(t, registries))
	assert.Equal(t, "r1", apply.CurrentHash(n.StateDir))
}

// gate is an apply.Gate from a channel and a function.
type gate struct {
	lost    chan struct{}
	proceed func(context.Context) error
}

func (g gate) Lost() <-chan struct{}             { return g.lost }
func (g gate) Proceed(ctx context.Context) error { return g.proceed(ctx) }
