package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// A mask removes the unit file and links its name to /dev/null (MaskUnitFiles); a rollback
// restores files before it undoes unit actions, so the file's backup goes back over that link. It
// does so only over the mask the journal's own Mask made: a link to /dev/null (it holds nothing to
// lose) at /etc/systemd/system/<unit>, for a unit the journal masks. Any other link, or a mask no
// action of the journal made, stays with its backup (rule 17: the CI's unit-state rollback failed
// when the rule first refused every link).
func TestRollbackRestoresAUnitFileOverTheAgentsOwnMaskOnly(t *testing.T) {
	const unit = "app.service"
	const file = "/etc/systemd/system/" + unit
	for _, tc := range []struct {
		name     string
		target   string
		actions  []plan.UnitAction
		restored bool
	}{
		{name: "the journal's mask", target: "/dev/null", actions: []plan.UnitAction{{Unit: unit, Action: allowlist.ActionMask, Undo: allowlist.ActionUnmask}}, restored: true},
		{name: "a mask the journal never made", target: "/dev/null", actions: []plan.UnitAction{{Unit: unit, Action: allowlist.ActionRestart}}},
		{name: "another unit's mask action", target: "/dev/null", actions: []plan.UnitAction{{Unit: "other.service", Action: allowlist.ActionMask}}},
		{name: "a link elsewhere", target: "/etc/kubernetes/kubeconfig", actions: []plan.UnitAction{{Unit: unit, Action: allowlist.ActionMask}}},
		{name: "a relative link", target: "../../../dev/null", actions: []plan.UnitAction{{Unit: unit, Action: allowlist.ActionMask}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := newRoot(t)
			state := filepath.Join(t.TempDir(), "state")
			host := filepath.Join(dir, file)
			orig := "[Service]\nExecStart=/bin/true\n"
			require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
			require.NoError(t, os.WriteFile(host, []byte(orig), 0o644))
			txn, err := actions.Prepare(r, state, []actions.Op{{Path: file, Remove: true}}, actions.Meta{Hash: "h", Actions: tc.actions})
			require.NoError(t, err)
			require.NoError(t, txn.Commit())
			require.NoError(t, os.Symlink(tc.target, host))

			err = txn.Rollback()
			if tc.restored {
				require.NoError(t, err)
				assert.Equal(t, orig, readOr(host), "the unit file is back over the mask")
				return
			}
			require.ErrorIs(t, err, actions.ErrNotRestored)
			assert.Contains(t, err.Error(), file)
			got, err := os.Readlink(host)
			require.NoError(t, err, "the link stays")
			assert.Equal(t, tc.target, got)
			_, err = os.Lstat(filepath.Join(dir, backupOf(file)))
			assert.NoError(t, err, "the backup is kept")
		})
	}
}
