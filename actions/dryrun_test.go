package actions

import (
	"strings"
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

// The plan's journal floor (plan.JournalFloor, what `diff` refuses by off the node) is never over
// the transaction's bound for the same writes: the plan refuses only what the transaction would,
// on any node (paths with bytes JSON escapes, removals, missing parents among them).
func TestThePlansJournalFloorIsUnderTheBound(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := []string{"a.conf", `q"uote.conf`, "<html>&.conf", "ü.conf", "back\\slash", strings.Repeat("n", 255)}
	var ops []Op
	var files []plan.FileOp
	for i, n := range names {
		for _, d := range []string{"/etc/containers", "/etc/containers/new/deeper"} {
			p := d + "/" + n
			rm := i%3 == 2
			ops = append(ops, Op{Path: p, Remove: rm, Data: []byte("x"), Mode: 0o644})
			files = append(files, plan.FileOp{Path: p, Remove: rm})
			j, _, _, err := planTxn(r, t.TempDir(), ops, Meta{})
			if err != nil {
				t.Fatal(err)
			}
			assert.LessOrEqual(t, plan.JournalFloor(files), journalBound(&j), p)
		}
	}
}
