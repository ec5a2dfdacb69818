package apply_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// immutable makes p impossible to remove (chattr +i: even root's unlink fails with EPERM) until the
// cleanup, or skips where the file system has no such flag.
func immutable(t *testing.T, p string) func() {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", p).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	undo := func() { _ = exec.Command("chattr", "-i", p).Run() }
	t.Cleanup(undo)
	return undo
}

// The previous payload (an older pull secret and keys) that cannot be removed once the record moved
// is cleanup pending, never a clean "applied" with it left behind (CI: an EMFILE listing payloads/
// left it, exit 0); the next recover removes it.
func TestThePreviousPayloadLeftIsCleanupPending(t *testing.T) {
	for name, desired := range map[string]func() []byte{
		"files change": func() []byte { return v2().JSON() },
		"nothing to write": func() []byte {
			return append(v1().JSON(), ' ') // another payload, the same files: only the record moves
		},
	} {
		t.Run(name, func(t *testing.T) {
			n := newNode(t)
			old := filepath.Join(n.StateDir, "payloads", apply.PayloadHash(v1().JSON()))
			require.FileExists(t, old)
			undo := immutable(t, old)
			raw := desired()
			res := n.run(t, raw, "v2")
			assert.True(t, res.Applied, res.Reason)
			assert.True(t, res.Recorded, res.Reason)
			assert.True(t, res.CleanupPending, "the old payload is still there: %s", res.Reason)
			assert.Contains(t, res.Reason, "payloads/"+apply.PayloadHash(v1().JSON()))
			assert.NotEqual(t, api.OutcomeFailed, res.Outcome)
			assert.Equal(t, "v2", apply.CurrentHash(n.StateDir))

			undo()
			_, err := apply.Recover(context.Background(), n.Host)
			require.NoError(t, err)
			assert.Equal(t, []string{apply.PayloadHash(raw)}, names(t, filepath.Join(n.StateDir, "payloads")), "the sweep removed it")
		})
	}
}

// Something in payloads/ that is not the agent's (a directory) stays and never fails a refresh.
func TestAForeignDirectoryInPayloadsNeverFailsARefresh(t *testing.T) {
	n := newNode(t)
	require.NoError(t, os.Mkdir(filepath.Join(n.StateDir, "payloads", "lost+found"), 0o700))
	res := n.run(t, v2().JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.False(t, res.CleanupPending, res.Reason)
	assert.ElementsMatch(t, []string{"lost+found", apply.PayloadHash(v2().JSON())}, names(t, filepath.Join(n.StateDir, "payloads")))
}
