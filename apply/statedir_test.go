package apply_test

import (
	"context"
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
)

// The dry run makes every check the real run makes on the state dir too (issue 27 item 7, the
// adversary's dryrun-statedir case): a name the agent writes there (the journal's and the record's
// temp files, the payload and its temp file, the payloads directory) taken by something it would
// fail on is a refusal naming it, the same in both, with nothing written; the obstacle is left for
// the operator (the agent never removes what it did not make), and once it is gone the refresh applies.
func TestStateDirObstacleRefusedByTheDryRunToo(t *testing.T) {
	sha := apply.PayloadHash(v2().JSON())
	for _, tc := range []struct {
		name string
		make func(p string) error
	}{
		{".journal.json.tmp", func(p string) error { return os.Mkdir(p, 0o700) }},
		{".current.json.tmp", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"payloads/" + sha, func(p string) error { return os.Mkdir(p, 0o700) }},
		{"payloads/." + sha + ".tmp", func(p string) error { return os.MkdirAll(filepath.Join(p, "x"), 0o700) }},
		{"payloads/" + sha + " (symlink)", func(p string) error { return os.Symlink("/etc/shadow", strings.TrimSuffix(p, " (symlink)")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			p := filepath.Join(n.StateDir, tc.name)
			require.NoError(t, tc.make(p))
			before := n.treeHash(t)
			dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
			assert.Contains(t, dry.Reason, strings.TrimSuffix(p, " (symlink)"))
			res := n.run(t, v2().JSON(), "v2")
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the dry run is the whole truth")
			assert.Equal(t, before, n.treeHash(t), "nothing written")
			assert.Equal(t, "# v1 mirrors", n.read(t, registries))
			rec, err := apply.Recover(context.Background(), n.Host)
			require.NoError(t, err)
			assert.False(t, rec.Found)
			require.NoError(t, os.RemoveAll(strings.TrimSuffix(p, " (symlink)")))
			res = n.run(t, v2().JSON(), "v2")
			assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			assert.Equal(t, "v2", apply.CurrentHash(n.StateDir))
		})
	}
}

// A stale backup beside a managed file with no journal (issue 20 item 3, the adversary's sweep
// case) may be an original: recover keeps it and says so, the dry run and the real run refuse the
// file's refresh naming it (the next apply used to remove it), and a temp file beside it (payload
// bytes) is gone after the recover. A stale backup that is the file under a second name is removed.
func TestStaleBackupIsKeptAndReported(t *testing.T) {
	n := newNode(t)
	temp, backup, _ := actions.SideFiles(registries)
	_, secretBackup, _ := actions.SideFiles(pullSecret)
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, temp), []byte("SECRET"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, backup), []byte("# an older original"), 0o644))
	require.NoError(t, os.Link(filepath.Join(n.dir, pullSecret), filepath.Join(n.dir, secretBackup)))
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	require.Len(t, rec.KeptSideFiles, 1, "%v", rec.KeptSideFiles)
	assert.Contains(t, rec.KeptSideFiles[0], backup)
	assert.NoFileExists(t, filepath.Join(n.dir, temp), "no payload bytes after a successful recover")
	assert.NoFileExists(t, filepath.Join(n.dir, secretBackup), "a second name of the live file is removed")
	assert.Equal(t, "# an older original", n.read(t, backup))

	before := n.treeHash(t)
	dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeRefused, dry.Outcome)
	assert.Contains(t, dry.Reason, backup)
	res := n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.Equal(t, dry.Reason, res.Reason)
	assert.Equal(t, before, n.treeHash(t))
	assert.Equal(t, "# an older original", n.read(t, backup), "the next apply keeps it")

	require.NoError(t, os.Remove(filepath.Join(n.dir, backup))) // the operator compared and removed it
	res = n.run(t, v2().JSON(), "v2")
	assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
}

// A drift heal (Request.Heal) plans from the record read under the node lock, without the healed
// files: exactly they are written back, and nothing else changes.
func TestHealWritesBackFromTheRecord(t *testing.T) {
	n := newNode(t)
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, registries), []byte("# changed by hand"), 0o644))
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v1().JSON(), Hash: "v1", Heal: []string{registries}})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, "# v1 mirrors", n.read(t, registries))
	var paths []string
	for _, w := range res.Writes {
		paths = append(paths, w.Path)
	}
	assert.Contains(t, paths, registries)
	assert.NotContains(t, paths, pullSecret, "only the healed file is written")
}

// Round 8 (units A2): the node's unit links are the units they link to. A policy naming a link is
// refused (NodePolicy fails naming the unit the link is); a dependency a payload adds on a link is
// judged as the unit linked to (the plan's checks with the node policy).
func TestNodeUnitLinksAreTheUnitsTheyLinkTo(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"etc/systemd/system", "usr/lib/systemd/system"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	etc, lib := filepath.Join(dir, "etc/systemd/system"), filepath.Join(dir, "usr/lib/systemd/system")
	require.NoError(t, os.WriteFile(filepath.Join(lib, "systemd-portabled.service"), []byte("[Unit]\n"), 0o644))
	require.NoError(t, os.Symlink("/usr/lib/systemd/system/systemd-portabled.service", filepath.Join(etc, "vendor-portable.service")))
	require.NoError(t, os.Symlink("/usr/lib/systemd/system/crio.service", filepath.Join(etc, "crio-alias.service")))
	require.NoError(t, os.Symlink("/dev/null", filepath.Join(etc, "masked.service")))
	require.NoError(t, os.MkdirAll(filepath.Join(etc, "multi-user.target.wants"), 0o755))

	links := apply.NodeUnitAliases(dir)
	assert.Equal(t, map[string]string{"vendor-portable.service": "systemd-portabled.service", "crio-alias.service": "crio.service"}, links)

	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	for _, u := range []string{"vendor-portable.service", "crio-alias.service"} {
		pol, err := allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  units:\n  - name: " + u + "\n    actions: [{type: DaemonReload}]\n"))
		require.NoError(t, err, "by name alone %s loads", u)
		_, err = apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Policy: pol}.NodePolicy()
		if assert.Error(t, err, u) {
			assert.Contains(t, err.Error(), "a link to")
		}
	}
	pol, err := apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Policy: allowlist.Default()}.NodePolicy()
	require.NoError(t, err, "the built-in policy names no link")
	real, ok := pol.UnitAlias("vendor-portable.service")
	assert.True(t, ok)
	assert.Equal(t, "systemd-portabled.service", real)
	assert.NoError(t, allowlist.DependencyIdentity("vendor-portable.service"), "by name alone")
	assert.Error(t, allowlist.DependencyIdentity(real))
}
