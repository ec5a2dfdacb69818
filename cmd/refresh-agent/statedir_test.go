package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// A --state-dir inside the root is the agent's own, wherever it is: with a ceiling as wide as /etc/
// and /var/, the ConfigMap still cannot write into it (journal, record, payloads) or at its place,
// in diff, dry run and apply alike, whether the root or the state dir is named through a symlink.
func TestStateDirInsideTheRootIsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, data, 0o600))
		return f
	}
	base := func() *fixture.Config { return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()) }
	cur := write("cur.ign", base().JSON())
	policy := write("policy.yaml", []byte("configMapCeiling:\n  - {prefix: /etc/, actions: [None]}\n  - {prefix: /var/, actions: [None]}\n"))
	for _, target := range []string{"/var/lib/ra-state/journal.json", "/var/lib/ra-state/current.json", "/var/lib/ra-state/payloads/x", "/var/lib/ra-state"} {
		des := write("des.ign", base().File(target, []byte("x\n"), 0o644).JSON())
		nrp := write("nrp.json", []byte(`[{"path": "`+target+`", "action": "None"}]`))
		root := nodeRoot(t)
		link := filepath.Join(t.TempDir(), "host")
		require.NoError(t, os.Symlink(root, link))
		for name, flags := range map[string][]string{
			"plain":               {"--root", root, "--state-dir", filepath.Join(root, "var/lib/ra-state")},
			"root via a symlink":  {"--root", link, "--state-dir", filepath.Join(root, "var/lib/ra-state")},
			"state via a symlink": {"--root", root, "--state-dir", filepath.Join(link, "var/lib/ra-state")},
		} {
			for _, dry := range []bool{true, false} {
				args := append([]string{"apply", "--current", cur, "--desired", des, "--no-reboot-paths", nrp, "--policy", policy, "--systemd", "none", "--cri-socket", "none"}, flags...)
				if dry {
					args = append(args, "--dry-run")
				}
				before, err := fixture.TreeHash(root)
				require.NoError(t, err)
				code, out, stderr := run(t, args...)
				assert.Equal(t, exitRefused, code, "%s %s dry=%v: %s%s", target, name, dry, out, stderr)
				assert.Contains(t, out, "refused: file "+target+": path is in the agent's state dir /var/lib/ra-state", "%s %s", target, name)
				after, err := fixture.TreeHash(root)
				require.NoError(t, err)
				assert.Equal(t, before, after, "%s %s dry=%v: nothing written", target, name, dry)
			}
		}
		code, out, _ := run(t, "diff", "--current", cur, "--desired", des, "--no-reboot-paths", nrp, "--policy", policy, "--state-dir", "/var/lib/ra-state")
		assert.Equal(t, exitRefused, code, target)
		assert.Contains(t, out, "refused: file "+target+": path is in the agent's state dir /var/lib/ra-state", target)
	}

	// Its siblings stay writable under the ceiling: the guard is the state dir, not its neighbourhood.
	root := nodeRoot(t)
	des := write("des.ign", base().File("/var/lib/ra-state-x/a.conf", []byte("x\n"), 0o644).JSON())
	nrp := write("nrp.json", []byte(`[{"path": "/var/lib/ra-state-x/a.conf", "action": "None"}]`))
	code, out, stderr := run(t, "apply", "--root", root, "--state-dir", filepath.Join(root, "var/lib/ra-state"), "--current", cur, "--desired", des,
		"--no-reboot-paths", nrp, "--policy", policy, "--systemd", "none", "--cri-socket", "none")
	require.Equal(t, exitOK, code, out+stderr)
	_, err := os.Stat(filepath.Join(root, "var/lib/ra-state-x/a.conf"))
	assert.NoError(t, err)

	// A node policy rule reaching the state dir fails at start, naming both.
	bad := write("bad.yaml", []byte("paths:\n  - {path: /var/lib/ra-state/x, action: None}\n"))
	code, _, stderr = run(t, "apply", "--root", root, "--state-dir", filepath.Join(root, "var/lib/ra-state"), "--current", cur, "--desired", cur,
		"--policy", bad, "--systemd", "none", "--cri-socket", "none")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "node policy rule 0 (/var/lib/ra-state/x) reaches the agent's state dir /var/lib/ra-state")
}
