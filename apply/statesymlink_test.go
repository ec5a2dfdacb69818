package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// A symlink where the agent keeps a file of its own in the state dir (the adversary's
// payloads-symlink, statedir-names and dryrun-journal cases): payloads/ out of the root,
// payloads/<sha>, journal.json, current.json. None is ever followed: the dry run and the real run
// refuse alike, naming the path, writing nothing through it and quoting nothing of what it points
// at; recover leaves it for the operator.
func TestStateDirSymlinksAreNeverFollowed(t *testing.T) {
	sha := apply.PayloadHash(v2().JSON())
	for _, tc := range []struct {
		name, link string
	}{
		{"payloads out of the root", "payloads"},
		{"payload", "payloads/" + sha},
		{"journal", "journal.json"},
		{"record", "current.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			outside := t.TempDir()
			host := filepath.Join(outside, "host-file")
			// A host file that is valid JSON would be read as the agent's own; one that is not
			// would have its first byte quoted.
			require.NoError(t, os.WriteFile(host, []byte("root:x:0:0:SECRET-HOST"), 0o600))
			p := filepath.Join(n.StateDir, tc.link)
			target := host
			if tc.link == "payloads" {
				require.NoError(t, os.Rename(p, filepath.Join(outside, "p")))
				target = filepath.Join(outside, "p")
			} else {
				require.NoError(t, os.RemoveAll(p))
			}
			require.NoError(t, os.Symlink(target, p))
			before := n.treeHash(t)
			outBefore := treeOf(t, outside)

			dry, derr := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
			res, rerr := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
			for _, r := range []struct {
				res *apply.Result
				err error
			}{{dry, derr}, {res, rerr}} {
				msg := ""
				if r.err != nil {
					msg = r.err.Error()
				} else {
					assert.Equal(t, api.OutcomeRefused, r.res.Outcome, r.res.Reason)
					msg = r.res.Reason
				}
				assert.Contains(t, msg, p, "names the path")
				assert.Contains(t, msg, "symlink")
				assert.NotContains(t, msg, "invalid character", "never quotes what it points at")
				assert.NotContains(t, msg, "SECRET")
			}
			assert.Equal(t, (derr == nil), (rerr == nil), "the dry run says what the real run does: %v / %v", derr, rerr)
			assert.Equal(t, before, n.treeHash(t), "nothing written")
			assert.Equal(t, outBefore, treeOf(t, outside), "nothing written or removed through the link")
			assert.Equal(t, "# v1 mirrors", n.read(t, registries))
			_, _ = apply.Recover(context.Background(), n.Host)
			assert.Equal(t, outBefore, treeOf(t, outside), "recover follows no link")
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&os.ModeSymlink, "left for the operator")
		})
	}
}

// A symlink at one of the agent's own temp names in the state dir (.journal.json.tmp,
// .current.json.tmp, payloads/.<sha>.tmp) is the agent's name taken: the dry run says planned,
// the real run unlinks the link (never its target) and applies, recorded, with no clean-up pending
// (the adversary's repro-curtmp-symlink case: recorded false and every recover failing with ELOOP).
func TestStateDirTempSymlinksAreUnlinked(t *testing.T) {
	sha := apply.PayloadHash(v2().JSON())
	for _, name := range []string{".journal.json.tmp", ".current.json.tmp", "payloads/." + sha + ".tmp"} {
		t.Run(name, func(t *testing.T) {
			n := newNode(t)
			victim := filepath.Join(t.TempDir(), "victim")
			require.NoError(t, os.WriteFile(victim, []byte("host"), 0o644))
			p := filepath.Join(n.StateDir, name)
			require.NoError(t, os.Symlink(victim, p))
			dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
			require.NoError(t, err)
			assert.Equal(t, api.OutcomePlanned, dry.Outcome, dry.Reason)
			res := n.run(t, v2().JSON(), "v2")
			assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			assert.True(t, res.Recorded)
			assert.False(t, res.CleanupPending, res.Reason)
			assert.Equal(t, "v2", apply.CurrentHash(n.StateDir))
			_, err = os.Lstat(p)
			assert.True(t, os.IsNotExist(err), "the link is gone")
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "host", string(b), "its target untouched")
		})
	}
	// Recover alone sweeps one too.
	n := newNode(t)
	p := filepath.Join(n.StateDir, ".current.json.tmp")
	require.NoError(t, os.Symlink("/nonexistent", p))
	_, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	_, err = os.Lstat(p)
	assert.True(t, os.IsNotExist(err))
}

// A record naming a payload whose bytes do not hash to its name is not the agent's (the
// adversary's forge-payload case: the forged baseline had the next apply remove a file the agent
// never managed): no plan is made against it, and nothing is written.
func TestRecordedPayloadMustHashToItsName(t *testing.T) {
	n := newNode(t)
	rec, err := os.ReadFile(filepath.Join(n.StateDir, "current.json"))
	require.NoError(t, err)
	forged := strings.Repeat("ab", 32)
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "payloads", forged), v2().JSON(), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "current.json"),
		[]byte(`{"hash":"v1","payload":"payloads/`+forged+`"}`), 0o600))
	_, _ = apply.Recover(context.Background(), n.Host) // sweeps the payload the record no longer names
	before := n.treeHash(t)
	_, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not hash to its name")
	assert.Equal(t, before, n.treeHash(t))
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "current.json"), rec, 0o600))
}

func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		}
		out[p] = fi.Mode().Type().String()
		return nil
	}))
	return out
}
