package actions

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// The journal's bound does not depend on what the real run adds to the dry run's meta (adversary
// round 9 core 01): each unit action is charged its widest undo whether it is set or not, so the dry
// run (Check, before the units are asked) and Prepare refuse the same plans, at the boundary too.
func TestJournalBoundIsTheSameWithTheUndo(t *testing.T) {
	j := journal{Version: journalVersion, Phase: PhasePreparing, Meta: Meta{Hash: "h", Actions: []plan.UnitAction{
		{Unit: "crio.service", Action: allowlist.ActionReload},
		{Unit: "myapp.service", Action: allowlist.ActionEnable},
		{Unit: "other.service", Action: allowlist.ActionMask},
	}}}
	for _, p := range []string{"/etc/containers/registries.conf", "/var/lib/kubelet/config.json"} {
		j.Entries = append(j.Entries, Entry{Path: p, Temp: sideName(p, sideTemp), Backup: sideName(p, sideBackup)})
	}
	dry := journalBound(&j)
	real := j
	real.Meta.Actions = []plan.UnitAction{j.Meta.Actions[0], j.Meta.Actions[1], j.Meta.Actions[2]}
	real.Meta.Actions[1].Undo = allowlist.ActionDisable
	real.Meta.Actions[2].Undo = allowlist.ActionUnmask
	assert.Equal(t, dry, journalBound(&real))
	assert.Empty(t, j.Meta.Actions[1].Undo, "the journal itself is not edited")
	// The widest undo fits the slack charged for it.
	for _, a := range []allowlist.Action{allowlist.ActionEnable, allowlist.ActionDisable, allowlist.ActionMask, allowlist.ActionUnmask, allowlist.ActionStop} {
		assert.LessOrEqual(t, len(`,"undo":"`+string(a)+`"`), undoSlack, a)
	}
}
