package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/memtest"
)

const (
	testRegistries = "/etc/containers/registries.conf"
	testPullSecret = "/var/lib/kubelet/config.json"
)

// recordedHost is a temp node root whose record holds registries and the pull secret.
func recordedHost(t *testing.T) apply.Host {
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	h := apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: actions.NoUnits{}}
	empty, err := diff.Decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
	require.NoError(t, err)
	cfg := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(testRegistries, []byte("# mirrors"), 0o644).File(testPullSecret, []byte(`{"auths":{}}`), 0o600)
	res, err := apply.Run(context.Background(), h, apply.Request{Desired: cfg.JSON(), Hash: "v1", Current: empty})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	return h
}

func TestDriftWatch(t *testing.T) {
	old := driftDebounce
	driftDebounce = 20 * time.Millisecond
	t.Cleanup(func() { driftDebounce = old })
	h := recordedHost(t)
	var mu sync.Mutex
	var found []string
	d := newDriftWatch(slog.New(slog.DiscardHandler), func() {}, func(p []string) {
		mu.Lock()
		found = append(found, p...)
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go d.run(ctx)
	delegated := map[string]string{testPullSecret: "the syncer's"}
	require.True(t, d.load(h, "v1", delegated))
	assert.False(t, d.load(h, "v1", delegated), "same record, same delegations: nothing reloaded")
	assert.Empty(t, d.report(), "a fresh record has no drift")

	host := func(p string) string { return filepath.Join(h.Root.Dir, p) }
	require.NoError(t, os.WriteFile(host(testPullSecret), []byte("the syncer's"), 0o600))
	require.NoError(t, os.WriteFile(host(testRegistries), []byte("by hand"), 0o644))
	require.Eventually(t, func() bool { return d.report() == testRegistries }, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	assert.Equal(t, []string{testRegistries}, found, "the delegated file is not drift")
	mu.Unlock()

	// A refresh's own writes are not drift; the check after it is.
	d.setBusy(true)
	require.NoError(t, os.WriteFile(host(testRegistries), []byte("# mirrors"), 0o644))
	d.check()
	assert.Equal(t, testRegistries, d.report(), "no check while busy")
	d.setBusy(false)
	require.Eventually(t, func() bool { return d.report() == "" }, 10*time.Second, 10*time.Millisecond)

	// Mode, and a file removed.
	require.NoError(t, os.Chmod(host(testRegistries), 0o600))
	require.Eventually(t, func() bool { return d.report() == testRegistries }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, os.Remove(host(testRegistries)))
	d.check()
	assert.Equal(t, testRegistries, d.report())

	// Without the delegation, the pull secret is watched too.
	require.True(t, d.load(h, "v1", nil))
	assert.Equal(t, testRegistries+","+testPullSecret, d.report())
}

// A watched file grown huge (a sparse 48 MiB registries.conf, or core's keys, which core can grow)
// is drift found from its size and stat, never read into memory; a file of the same size but other
// bytes is drift found by its streamed hash.
func TestDriftCheckNeverHoldsAFile(t *testing.T) {
	h := recordedHost(t)
	d := newDriftWatch(slog.New(slog.DiscardHandler), func() {}, func([]string) {})
	require.True(t, d.load(h, "v1", map[string]string{testPullSecret: "the syncer's"}))
	reg := filepath.Join(h.Root.Dir, testRegistries)
	require.NoError(t, os.Truncate(reg, 48<<20)) // under the payload budget: once read whole
	n := memtest.Allocated(d.check)
	assert.Equal(t, testRegistries, d.report())
	assert.Less(t, n, uint64(8<<20), "allocated %d bytes", n)
	require.NoError(t, os.WriteFile(reg, []byte("# mirror!"), 0o644)) // same size as "# mirrors"
	d.check()
	assert.Equal(t, testRegistries, d.report())
	require.NoError(t, os.WriteFile(reg, []byte("# mirrors"), 0o644))
	d.check()
	assert.Empty(t, d.report())
}
