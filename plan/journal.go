package plan

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/openshift/refresh-agent/diff"
)

// MaxJournalBytes is the most a transaction's journal may take on disk: a recovery reads no larger
// one (actions.MaxJournalBytes is this bound), so the transaction refuses, writing nothing, a plan
// whose journal could grow over it.
const MaxJournalBytes = 16 << 20

// ErrJournalTooLarge's words: the plan's refusal and the transaction's say the same.
const journalTooLarge = "the transaction's journal would be larger than recovery reads"

// JournalFloor is the least the journal of p's file writes takes: each write's entry with its path
// and its two side files' paths (the temp and the backup beside it) at their JSON length, nothing
// else. The transaction's bound (actions.journalBound) counts every one of these bytes and more (the
// removals, core's keys, the daemon's record, created directories, fields set later): a plan over
// MaxJournalBytes by this floor is one the transaction refuses on every node, so the plan refuses it
// first, off the node (`diff`, `publish --dry-run`, the controller) as on it.
func JournalFloor(files []FileOp) int64 {
	var n int64
	for _, f := range files {
		if f.Remove {
			continue // dropped by the transaction when its parent is missing
		}
		side := path.Join(SideDir(path.Dir(f.Path)), SidePrefix+strings.Repeat("0", 24)+"-")
		n += int64(jsonLen(f.Path) + jsonLen(side+"tmp") + jsonLen(side+"backup") + len(`{"path":,"temp":,"backup":,"hadOriginal":false},`))
	}
	return n
}

func jsonLen(s string) int {
	data, _ := json.Marshal(s)
	return len(data)
}

// checkJournal refuses a plan whose journal the transaction would refuse on every node as larger
// than a recovery reads (adversary round 9 core 01: diff said eligible, apply refused).
func (p *Plan) checkJournal() {
	if n := JournalFloor(p.Files); n > MaxJournalBytes {
		writes := 0
		for _, f := range p.Files {
			if !f.Remove {
				writes++
			}
		}
		p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
			"%s: %d files would make a journal of at least %d bytes, over the %d a recovery reads: split the change", journalTooLarge, writes, n, MaxJournalBytes)})
	}
}
