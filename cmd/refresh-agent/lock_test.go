package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Another holder of the node lock: apply and recover give up after --lock-timeout with a message
// naming the holder's pid, and touch nothing; recover still says what it found.
func TestNodeLockHeldElsewhere(t *testing.T) {
	root := nodeRoot(t)
	code, _, stderr := run(t, "apply", "--root", root, "--current", examples+"current.ign", "--desired", examples+"desired-eligible.ign.gz.b64",
		"--no-reboot-paths", examples+"no-reboot-paths.json", "--systemd", "none")
	require.Equal(t, exitOK, code, stderr)
	state := filepath.Join(root, "var/lib/refresh-agent")
	l, err := actions.LockState(context.Background(), state, 0)
	require.NoError(t, err)
	defer l.Unlock()
	before, err := fixture.TreeHash(root)
	require.NoError(t, err)

	code, out, stderr := run(t, "apply", "--root", root, "--desired", examples+"current.ign", "--systemd", "none", "--lock-timeout", "0", "-o", "json")
	assert.Equal(t, exitFailed, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, fmt.Sprintf("held by pid %d on ", os.Getpid()))
	assert.Contains(t, stderr, "--lock-timeout")

	code, out, stderr = run(t, "recover", "--root", root, "--systemd", "none", "--lock-timeout", "10ms")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, stderr, fmt.Sprintf("held by pid %d on ", os.Getpid()))
	var rec struct {
		Found  bool
		Reason string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rec), out)
	assert.False(t, rec.Found, "no journal")
	assert.Contains(t, rec.Reason, "not acted on")

	code, _, stderr = run(t, "apply", "--root", root, "--desired", examples+"current.ign", "--systemd", "none", "--lock-timeout", "0", "--dry-run")
	assert.Equal(t, exitFailed, code, "a dry run waits for a writer too")
	assert.Contains(t, stderr, "held by pid")

	after, err := fixture.TreeHash(root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing touched")
}
