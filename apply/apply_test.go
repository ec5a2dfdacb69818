package apply_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// fakeUnits records the actions it runs and fails a unit's next fail[unit] runs (always when < 0).
// hook, when set, runs first and may fail the action itself.
type fakeUnits struct {
	mu   sync.Mutex
	ran  []plan.UnitAction
	fail map[string]int
	hook func(ctx context.Context, a plan.UnitAction) error
}

func (f *fakeUnits) Run(ctx context.Context, a plan.UnitAction) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, a)
	if f.hook != nil {
		if err := f.hook(ctx, a); err != nil {
			return err
		}
	}
	if n := f.fail[a.Unit]; n != 0 {
		f.fail[a.Unit] = n - 1
		return errors.New(string(a.Action) + " " + a.Unit + ": job result \"failed\"")
	}
	return nil
}
func (f *fakeUnits) Close() {}

const (
	registries = "/etc/containers/registries.conf"
	pullSecret = "/var/lib/kubelet/config.json"
)

func v1() *fixture.Config {
	return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(registries, []byte("# v1 mirrors"), 0o644).
		File(pullSecret, []byte(`{"auths":{"v1":{}}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one")
}

func v2() *fixture.Config {
	return v1().File(registries, []byte("# v2 mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"v2":{}}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one", "ssh-ed25519 BBBB two")
}

type node struct {
	apply.Host
	dir   string
	units *fakeUnits
}

// newNode returns a node root at v1 (files on disk, recorded as current).
func newNode(t *testing.T) *node {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	n := &node{dir: dir, units: &fakeUnits{fail: map[string]int{}}}
	n.Host = apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: n.units}
	res := n.run(t, v1().JSON(), "v1")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	n.units.ran = nil
	return n
}

func (n *node) run(t *testing.T, raw []byte, hash string) *apply.Result {
	t.Helper()
	cur := apply.Request{Desired: raw, Hash: hash}
	if apply.CurrentHash(n.StateDir) == "" {
		// First refresh on a fresh node: start from an empty config.
		c, err := decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
		require.NoError(t, err)
		cur.Current = c
	}
	res, err := apply.Run(context.Background(), n.Host, cur)
	require.NoError(t, err)
	return res
}

func (n *node) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.dir, p))
	require.NoError(t, err)
	return string(b)
}

func TestApplyWritesRecordsAndRunsActions(t *testing.T) {
	n := newNode(t)
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.True(t, res.Applied)
	assert.False(t, res.RolledBack)
	assert.Equal(t, "# v2 mirrors", n.read(t, registries))
	assert.Equal(t, `{"auths":{"v2":{}}}`, n.read(t, pullSecret))
	assert.Equal(t, "ssh-ed25519 AAAA one\nssh-ed25519 BBBB two\n", n.read(t, "var/home/core/.ssh/authorized_keys.d/ignition"))
	assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: "Reload"}}, n.units.ran)
	assert.Equal(t, "v2", apply.CurrentHash(n.StateDir))
	assert.Equal(t, 3, res.FilesWritten)
	assert.Empty(t, res.Warnings, "no drift")

	// Applying the same payload again changes nothing and runs nothing.
	n.units.ran = nil
	res = n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeNoop, res.Outcome)
	assert.Empty(t, n.units.ran)
}

func TestApplyRefusedWritesNothing(t *testing.T) {
	n := newNode(t)
	before, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	m := fixture.DefaultMachine()
	m.KernelArguments = []string{"nosmt"}
	res := n.run(t, v2().EmbedMachine(m).JSON(), "bad")
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.Contains(t, res.Reason, "kernel arguments")
	after, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the root tree is byte-identical")
	assert.Empty(t, n.units.ran)
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
}

func TestApplyRollsBackWhenAUnitFails(t *testing.T) {
	n := newNode(t)
	before, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	n.units.fail["crio.service"] = 1 // the reload fails on the new content, not on the old
	res := n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack)
	assert.False(t, res.RollbackIncomplete)
	assert.Zero(t, res.ActionsRun)
	assert.False(t, res.Applied)
	assert.Contains(t, res.Reason, "crio.service")
	assert.Contains(t, res.Reason, `"failed"`)
	assert.Equal(t, "# v1 mirrors", n.read(t, registries))
	after, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "every file restored and nothing left behind")
	assert.Len(t, n.units.ran, 2, "the action ran again after the restore")
	assert.Equal(t, "v1", apply.CurrentHash(n.StateDir))
}

func TestApplyReportsDrift(t *testing.T) {
	n := newNode(t)
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, registries), []byte("edited by hand"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(n.dir, pullSecret), 0o644))
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome)
	assert.Equal(t, 2, res.Drift)
	joined := strings.Join(res.Warnings, "\n")
	assert.Contains(t, joined, "drift: "+registries+" was changed on the node (contents differ)")
	assert.Contains(t, joined, "drift: "+pullSecret+" was changed on the node (mode 0644 on disk, 0600 in the current config)")
	assert.NotContains(t, joined, "edited by hand", "warnings never carry contents")
	assert.Equal(t, "# v2 mirrors", n.read(t, registries), "the desired content wins")
}

func TestApplyOwnersByName(t *testing.T) {
	n := newNode(t)
	// Owners other than root are within the ceiling only where the node policy's rule names them
	// (issue 27, class 4).
	n.Policy = allowlist.Default()
	for i, r := range n.Policy.Rules {
		switch r.Path {
		case "/etc/containers/registries.d/":
			n.Policy.Rules[i].Owner = "core:core"
		case "/etc/containers/policy.json":
			n.Policy.Rules[i].Owner = "nobody-here:root"
		}
	}
	des := v1().File("/etc/containers/registries.d/x.yaml", []byte("x"), 0o640).Owner("/etc/containers/registries.d/x.yaml", "core", "core")
	res := n.run(t, des.JSON(), "owners")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	fi, err := os.Stat(filepath.Join(n.dir, "etc/containers/registries.d/x.yaml"))
	require.NoError(t, err)
	uid, gid := ids(fi)
	assert.Equal(t, []int{1000, 1000}, []int{uid, gid})

	before, _ := fixture.TreeHash(n.dir)
	des = v1().File("/etc/containers/policy.json", []byte("x"), 0o644).Owner("/etc/containers/policy.json", "nobody-here", "root")
	res = n.run(t, des.JSON(), "unknown-owner")
	// An owner the node does not have is a refusal (issue 27, class 4): no retry can write it.
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.Contains(t, res.Reason, "nobody-here")
	after, _ := fixture.TreeHash(n.dir)
	assert.Equal(t, before, after)
}

func TestMCDCurrentConfigKeptCoherent(t *testing.T) {
	n := newNode(t)
	mcd := filepath.Join(n.dir, "etc/mcd-currentconfig.json")
	require.NoError(t, os.WriteFile(mcd, []byte(`{"stale":true}`), 0o644))
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	got := n.read(t, "etc/mcd-currentconfig.json")
	assert.Contains(t, got, `"kind":"MachineConfig"`)
	assert.NotContains(t, got, "stale")
}

func TestCurrentStateFallbacks(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	state := filepath.Join(dir, "var/lib/refresh-agent")

	_, err = apply.LoadCurrent(root, state)
	assert.ErrorContains(t, err, "no current config")

	mc := fixture.MachineConfigJSON(fixture.DefaultMachine(), v1().JSON())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/mcs-machine-config-content.json"), mc, 0o644))
	c, err := apply.LoadCurrent(root, state)
	require.NoError(t, err)
	assert.Equal(t, "/etc/mcs-machine-config-content.json", c.Source)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/mcd-currentconfig.json"), mc, 0o644))
	c, err = apply.LoadCurrent(root, state)
	require.NoError(t, err)
	assert.Equal(t, "/etc/mcd-currentconfig.json", c.Source)

	// With the MCD's config as current, a v2 payload is a plain eligible refresh.
	res, err := apply.Run(context.Background(), apply.Host{Root: root, StateDir: state, Units: actions.NoUnits{}},
		apply.Request{Desired: v2().JSON()})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.True(t, res.ActionsSkipped)
	c, err = apply.LoadCurrent(root, state)
	require.NoError(t, err)
	assert.Equal(t, apply.PayloadHash(v2().JSON()), c.Hash, "the default hash is the payload's sha256")
	assert.Contains(t, c.Source, "current.json")
}

func TestInvalidDesiredIsAnInvalidError(t *testing.T) {
	n := newNode(t)
	_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: []byte(`{"ignition":{"version":"9.9.9"}}`)})
	var inv *apply.InvalidError
	require.ErrorAs(t, err, &inv)
	assert.Contains(t, err.Error(), "9.9.9")
}

// The Decoded cache serves the recorded payload as decoding it would, is updated by a refresh that
// applied, and is not by one that rolled back.
func TestDecodedCacheFollowsTheRecord(t *testing.T) {
	n := newNode(t)
	n.Decoded = &apply.Decoded{}
	first, err := n.LoadCurrent() // decodes and caches v1
	require.NoError(t, err)
	again, err := n.LoadCurrent()
	require.NoError(t, err)
	assert.Same(t, first.Payload, again.Payload, "the second load is the cached decode")
	plain, err := apply.LoadCurrent(n.Root, n.StateDir)
	require.NoError(t, err)
	assert.Equal(t, plain.Payload.Config, first.Payload.Config, "cached = decoded")

	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	cur, err := n.LoadCurrent()
	require.NoError(t, err)
	assert.Same(t, res.Desired, cur.Payload, "the applied payload is the record's, decoded once")
	plain, err = apply.LoadCurrent(n.Root, n.StateDir)
	require.NoError(t, err)
	assert.Equal(t, plain.Payload.Config, cur.Payload.Config)

	n.units.fail["crio.service"] = 1 // v3 fails and rolls back: the record and the cache stay at v2
	res = n.run(t, v1().File(registries, []byte("# v3"), 0o644).JSON(), "v3")
	require.True(t, res.RolledBack, res.Reason)
	cur, err = n.LoadCurrent()
	require.NoError(t, err)
	assert.Equal(t, "v2", cur.Hash)
	plain, err = apply.LoadCurrent(n.Root, n.StateDir)
	require.NoError(t, err)
	assert.Equal(t, plain.Payload.Config, cur.Payload.Config)
}
