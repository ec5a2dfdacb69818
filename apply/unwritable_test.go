package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// What the real run would fail on half way, the dry run refuses first (issue 27 item 7, adversary
// F5 and adv20 #8): a target that is a directory or a FIFO, a target or its directory immutable or
// append-only, a missing parent under an immutable directory, an immutable state dir, an immutable
// /var/lib where the state dir would be created. Both refuse (exit 3) with the same reason naming
// the path, and nothing is written.
func TestDryRunRefusesWhatTheWriteWouldFailOn(t *testing.T) {
	newConf := "/etc/containers/registries.d/new.conf"
	for _, tc := range []struct {
		name    string
		desired *fixture.Config
		setup   func(t *testing.T, n *node)
		names   string
	}{
		{"target is a directory", v2(), func(t *testing.T, n *node) {
			require.NoError(t, os.Remove(filepath.Join(n.dir, registries)))
			require.NoError(t, os.Mkdir(filepath.Join(n.dir, registries), 0o755))
		}, registries},
		{"target is a fifo", v2(), func(t *testing.T, n *node) {
			require.NoError(t, os.Remove(filepath.Join(n.dir, registries)))
			require.NoError(t, syscall.Mkfifo(filepath.Join(n.dir, registries), 0o644))
		}, registries},
		{"target immutable", v2(), func(t *testing.T, n *node) { fixture.Chattr(t, "+i", filepath.Join(n.dir, pullSecret)) }, pullSecret},
		{"target append-only", v2(), func(t *testing.T, n *node) { fixture.Chattr(t, "+a", filepath.Join(n.dir, pullSecret)) }, pullSecret},
		{"target dir immutable", v2(), func(t *testing.T, n *node) { fixture.Chattr(t, "+i", filepath.Join(n.dir, "etc/containers")) }, registries},
		{"ancestor immutable", v2().File(newConf, []byte("x"), 0o644), func(t *testing.T, n *node) {
			fixture.Chattr(t, "+i", filepath.Join(n.dir, "etc/containers"))
		}, "/etc/containers"},
		{"state dir immutable", v2(), func(t *testing.T, n *node) { fixture.Chattr(t, "+i", n.StateDir) }, "var/lib/refresh-agent"},
		{"state dir immutable, no lock file yet", v2(), func(t *testing.T, n *node) {
			require.NoError(t, os.Remove(filepath.Join(n.StateDir, "lock")))
			fixture.Chattr(t, "+i", n.StateDir)
		}, "var/lib/refresh-agent"},
		{"var/lib immutable, no state dir", v2(), func(t *testing.T, n *node) {
			n.StateDir = filepath.Join(n.dir, "var/lib/refresh-agent-new")
			fixture.Chattr(t, "+i", filepath.Join(n.dir, "var/lib"))
		}, "var/lib"},
		// Adversary round 9 core 03: a stale side file beside a target, immutable or append-only:
		// the transaction's unlink of it fails (EPERM) half way, leaving a journal.
		{"stale temp immutable", v2(), staleSide(pullSecret, "tmp", "+i", false), "tmp"},
		{"stale temp append-only", v2(), staleSide(pullSecret, "tmp", "+a", false), "tmp"},
		{"stale backup (the target's copy) immutable", v2(), staleSide(pullSecret, "backup", "+i", true), "backup"},
		{"stale restore (the target's copy) immutable", v2(), staleSide(pullSecret, "restore", "+i", true), "restore"},
		// Adversary round 9 core 04: the state dir's own names taken by an immutable regular file.
		{".journal.json.tmp immutable", v2(), stateName(".journal.json.tmp", "+i", nil), ".journal.json.tmp"},
		{".current.json.tmp immutable", v2(), stateName(".current.json.tmp", "+i", nil), ".current.json.tmp"},
		{".current.json.tmp append-only", v2(), stateName(".current.json.tmp", "+a", nil), ".current.json.tmp"},
		{"payloads/<sha256> of other bytes immutable", v2(), stateName("payloads/"+apply.PayloadHash(v2().JSON()), "+i", []byte("WRONG")), apply.PayloadHash(v2().JSON())},
		// Adversary round 14 a/03: a version 2 journal's side names (.NAME.refresh-agent-KIND)
		// holding what the sweep keeps: a foreign backup or restore's copy, an immutable temp.
		{"legacy backup foreign", v2(), staleLegacy(pullSecret, "backup", ""), ".config.json.refresh-agent-backup"},
		{"legacy restore foreign", v2(), staleLegacy(pullSecret, "restore", ""), ".config.json.refresh-agent-restore"},
		{"legacy temp immutable", v2(), staleLegacy(pullSecret, "tmp", "+i"), ".config.json.refresh-agent-tmp"},
		// Adversary round 14 a/02: the root's owner record, written before the journal by a state
		// dir other than the default (or removed by the default one), where the record cannot go.
		{"owner record's temp a directory", v2(), otherState(func(t *testing.T, def string) {
			require.NoError(t, os.Mkdir(filepath.Join(def, ".root-owner.tmp"), 0o700))
		}), ".root-owner.tmp"},
		{"stale owner record immutable", v2(), otherState(func(t *testing.T, def string) { staleOwner(t, def, "+i") }), "root-owner"},
		{"stale owner record append-only", v2(), otherState(func(t *testing.T, def string) { staleOwner(t, def, "+a") }), "root-owner"},
		{"default state dir immutable, another state dir", v2(), otherState(func(t *testing.T, def string) { fixture.Chattr(t, "+i", def) }), "var/lib/refresh-agent"},
		{"default state dir append-only, another state dir", v2(), otherState(func(t *testing.T, def string) { fixture.Chattr(t, "+a", def) }), "var/lib/refresh-agent"},
		{"stale owner record immutable, the default state dir removes it", v2(), func(t *testing.T, n *node) { staleOwner(t, n.StateDir, "+i") }, "root-owner"},
		{"payloads/.<sha256>.tmp immutable", v2(), stateName("payloads/."+apply.PayloadHash(v2().JSON())+".tmp", "+i", nil), ".tmp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			tc.setup(t, n)
			before := n.treeHash(t)
			req := apply.Request{Desired: tc.desired.JSON(), Hash: "v2"}
			if apply.CurrentHash(n.StateDir) == "" {
				cur, err := diff.Decode(v1().JSON())
				require.NoError(t, err)
				req.Current = cur
			}
			dryReq := req
			dryReq.DryRun = true
			dry, err := apply.Run(context.Background(), n.Host, dryReq)
			require.NoError(t, err)
			res, err := apply.Run(context.Background(), n.Host, req)
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the same reason")
			assert.Contains(t, res.Reason, tc.names)
			assert.Equal(t, before, n.treeHash(t), "nothing written")
		})
	}
}

// The daemon's record a directory: the plan keeps it coherent and reads it, and the refresh is a
// refusal naming it in both runs (the adversary's g_dry "mcd record is a dir": failed, exit 1).
func TestDaemonRecordTakenIsARefusal(t *testing.T) {
	n := newNode(t)
	mcd := filepath.Join(n.dir, apply.MCDCurrentConfig)
	_ = os.Remove(mcd)
	require.NoError(t, os.MkdirAll(filepath.Join(mcd, "x"), 0o755))
	dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
	require.NoError(t, err)
	res := n.run(t, v2().JSON(), "v2")
	if dry.Outcome == api.OutcomePlanned {
		t.Skip("this payload does not touch the daemon's record")
	}
	assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
	assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Equal(t, dry.Reason, res.Reason)
	assert.Contains(t, res.Reason, apply.MCDCurrentConfig)
}

// staleSide leaves a regular file at p's side file name of kind (the target's own copy when copy:
// same bytes, mode and owner, which the plan would remove as harmless), with flag set on it.
func staleSide(p, kind, flag string, copy bool) func(t *testing.T, n *node) {
	return func(t *testing.T, n *node) {
		temp, backup, restore := actions.SideFiles(p)
		side := map[string]string{"tmp": temp, "backup": backup, "restore": restore}[kind]
		data := []byte("STALE")
		mode := os.FileMode(0o600)
		if copy {
			fi, err := os.Stat(filepath.Join(n.dir, p))
			require.NoError(t, err)
			data, err = os.ReadFile(filepath.Join(n.dir, p))
			require.NoError(t, err)
			mode = fi.Mode().Perm()
		}
		f := filepath.Join(n.dir, side)
		require.NoError(t, os.WriteFile(f, data, mode))
		require.NoError(t, os.Chmod(f, mode))
		fixture.Chattr(t, flag, f)
	}
}

// staleLegacy leaves a foreign regular file at p's version 2 side file name of kind, with flag set
// on it when not "".
func staleLegacy(p, kind, flag string) func(t *testing.T, n *node) {
	return func(t *testing.T, n *node) {
		f := filepath.Join(n.dir, filepath.Dir(p), "."+filepath.Base(p)+".refresh-agent-"+kind)
		require.NoError(t, os.WriteFile(f, []byte("FOREIGN"), 0o600))
		if flag != "" {
			fixture.Chattr(t, flag, f)
		}
	}
}

// otherState runs the refresh with a state dir other than the default one (inside the root), after
// setup on the default state dir, which holds the root's owner record.
func otherState(setup func(t *testing.T, def string)) func(t *testing.T, n *node) {
	return func(t *testing.T, n *node) {
		def := n.StateDir
		n.StateDir = filepath.Join(n.dir, "var/lib/refresh-agent-other")
		setup(t, def)
	}
}

// staleOwner leaves an owner record in def naming a state dir whose transaction is settled (its
// journal gone), with flag set on it.
func staleOwner(t *testing.T, def, flag string) {
	f := filepath.Join(def, actions.OwnerFile)
	require.NoError(t, os.WriteFile(f, []byte(`{"stateDir":"/var/lib/gone","inRoot":true}`+"\n"), 0o600))
	fixture.Chattr(t, flag, f)
}

// stateName leaves a regular file at name in the state dir (data, or "X"), with flag set on it.
func stateName(name, flag string, data []byte) func(t *testing.T, n *node) {
	return func(t *testing.T, n *node) {
		if data == nil {
			data = []byte("X")
		}
		f := filepath.Join(n.StateDir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o700))
		require.NoError(t, os.WriteFile(f, data, 0o600))
		fixture.Chattr(t, flag, f)
	}
}

// The neighbours the refusals above must not catch: the payload saved already (its bytes hash to
// its name) immutable is kept as it is, never rewritten, and the refresh applies; a stale regular
// temp file (no flag) is removed and the refresh applies, in the dry run as in the real run.
func TestImmutableSavedPayloadAndPlainStaleTempApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, n *node)
	}{
		{"saved payload immutable", stateName("payloads/"+apply.PayloadHash(v2().JSON()), "+i", v2().JSON())},
		{"stale temp, no flag", func(t *testing.T, n *node) {
			temp, _, _ := actions.SideFiles(pullSecret)
			require.NoError(t, os.WriteFile(filepath.Join(n.dir, temp), []byte("STALE"), 0o600))
		}},
		{"legacy backup that is the file's copy, legacy temp", func(t *testing.T, n *node) {
			dir, base := filepath.Join(n.dir, filepath.Dir(pullSecret)), filepath.Base(pullSecret)
			require.NoError(t, os.Link(filepath.Join(dir, base), filepath.Join(dir, "."+base+".refresh-agent-backup")))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "."+base+".refresh-agent-tmp"), []byte("STALE"), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			tc.setup(t, n)
			dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
			require.NoError(t, err)
			assert.Equal(t, api.OutcomePlanned, dry.Outcome, dry.Reason)
			res := n.run(t, v2().JSON(), "v2")
			assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			assert.False(t, res.CleanupPending, res.Reason)
			assert.Equal(t, `{"auths":{"v2":{}}}`, n.read(t, pullSecret))
		})
	}
}

// Adversary round 9 core 01, its second shape: 900 files (a 3.4 MB payload) each under 15 new
// 250-byte directories: the plan's floor cannot see the directories (the node may have them), but
// the journal lists every one it creates. The dry run builds the journal the real run would (the same
// entries and created directories, actions.Check) and refuses it with the same reason; before, it
// said planned and the real run refused. (600 files here: 9 000 directories, under the plan's
// plan.MaxDirs, which refuses 900 off the node already.)
func TestDryRunRefusesAJournalOverTheBound(t *testing.T) {
	n := newNode(t)
	des := v1()
	for i := 0; i < 600; i++ {
		p := "/etc/docker/certs.d"
		for j := 0; len(p)+256+60 < 4000; j++ {
			p += "/" + (fmt.Sprintf("%05d_%02d_", i, j) + strings.Repeat("d", 246))[:250]
		}
		des.File(p+"/ca.crt", []byte("x"), 0o644)
	}
	before := n.treeHash(t)
	dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: des.JSON(), Hash: "big", DryRun: true})
	require.NoError(t, err)
	res := n.run(t, des.JSON(), "big")
	assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
	assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Equal(t, dry.Reason, res.Reason, "the same reason")
	assert.Contains(t, res.Reason, "journal would be larger than recovery reads")
	assert.Equal(t, before, n.treeHash(t), "nothing written")
}
