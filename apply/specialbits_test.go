package apply_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/mcs"
)

// Adversary r19 a/02: on a first refresh (the disk is the baseline), a node file holding the
// payload's contents under set-user-ID, set-group-ID or sticky bits was "no change": the bits were
// dropped from the comparison, the file kept -rwsr-sr-x and the payload recorded as applied. The
// disk's whole mode is compared: the file is rewritten with the payload's mode, the change shown.
func TestFirstRefreshRewritesAFileWithSpecialBits(t *testing.T) {
	ca := []byte("registry ca\n")
	target := mcs.CertsD + "/quay.io/ca.crt"
	for name, bits := range map[string]fs.FileMode{"setuid": fs.ModeSetuid, "setgid": fs.ModeSetgid, "sticky": fs.ModeSticky} {
		t.Run(name, func(t *testing.T) {
			n := provision(t, mcs.Base())
			// The node holds the payload's new file already, its contents exact, under special bits.
			p := filepath.Join(n.dir, target)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, ca, 0o644))
			require.NoError(t, os.Chmod(p, 0o644|bits)) // the served mode, 0644, with the bits
			des := mcs.Base()
			des.RegistryCAs = map[string][]byte{"quay.io": ca}
			res := n.apply(t, des.Served(), "P2")
			require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Changes)
			found := false
			for _, c := range res.Changes {
				if c.Path == target {
					found = true
					assert.Contains(t, c.Detail, "mode")
				}
			}
			assert.True(t, found, "the mode change is shown: %+v", res.Changes)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Zero(t, fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), "a special bit stays: %v", fi.Mode())
		})
	}
}
