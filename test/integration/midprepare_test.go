package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Adversary r15 a/04: a directory on a managed path swapped for a symlink while the refresh is
// preparing (core owns ~/.ssh/authorized_keys.d and can do it) made Prepare fail with its journal and
// temp files kept, and the result said refused (exit 3, "nothing written") without cleanupPending.
// At every step of the prepare: a result that says refused leaves no journal, and one that keeps its
// journal says failed with cleanupPending (exit 1); recover settles the node once the directory is
// back.
func TestAMidPrepareSwapIsNeverARefusalThatKeepsItsJournal(t *testing.T) {
	requireMountNS(t)
	f := newFaultNode(t, 3)
	st := steps(3)
	for _, step := range []string{"temp", "backup"} {
	steps:
		for k := 1; k <= st[step]; k++ {
			trial := fmt.Sprintf("%s:%d", step, k)
			dir := t.TempDir()
			f.copyTo(t, dir)
			p := startProc(t, []string{stopEnv + "=" + trial}, applyArgs(dir, f.v2File, "v2")...)
			if !p.waitStop(t) {
				require.Greater(t, k, 1, "%s: never stopped: %s %s", trial, p.out(), p.errOut())
				break steps // steps counts a removal's temp and an addition's backup: there are fewer
			}
			regs := filepath.Join(dir, "etc/containers/registries.d")
			require.NoError(t, os.Rename(regs, regs+".moved"))
			require.NoError(t, os.Symlink("/tmp", regs))
			p.wait(t)
			var o outcome
			require.NoError(t, json.Unmarshal([]byte(p.out()), &o), "%s: %s %s", trial, p.out(), p.errOut())
			_, jerr := os.Stat(filepath.Join(stateOf(dir), "journal.json"))
			if jerr == nil {
				assert.Equal(t, 1, p.code, "%s: a kept journal is no refusal: %s", trial, p.out())
				assert.Equal(t, "failed", o.Outcome, trial)
				assert.True(t, o.CleanupPending, "%s: what is kept is said: %s", trial, p.out())
			}
			require.NoError(t, os.Remove(regs))
			require.NoError(t, os.Rename(regs+".moved", regs))
			f.settle(t, trial, dir, o)
		}
	}
}
