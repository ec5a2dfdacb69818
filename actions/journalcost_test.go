package actions

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Validation is linear in the journal (adversary r13 c/06): a journal of many entries each under
// many created directories was checked in entries × dirs, under the node lock, on every start.
// Checking a created directory is a look-up in the entries' ancestors, and each rule still holds.
func TestJournalCheckIsLinear(t *testing.T) {
	build := func(n, k int) *journal {
		j := &journal{Version: journalVersion, Phase: PhasePreparing, Root: &DirID{Path: "/", Dev: 1, Ino: 2}}
		for i := range n {
			p := fmt.Sprintf("/etc/containers/registries.d/%d", i)
			for range k {
				j.CreatedDirs = append(j.CreatedDirs, p)
				j.CreatedDirIDs = append(j.CreatedDirIDs, DirID{Path: p, Dev: 1, Ino: uint64(i + 1)})
				p += "/a"
			}
			j.Entries = append(j.Entries, Entry{Path: p + "/x"})
		}
		return j
	}
	j := build(8000, 10) // the finding's 11.9 MB hostile journal took 67 s of CPU
	start := time.Now()
	if err := j.check(); err != nil {
		t.Fatalf("a well-formed journal refused: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("checking %d entries under %d created dirs took %v", len(j.Entries), len(j.CreatedDirs), d)
	}
	// The look-up still refuses what the pass over the entries refused.
	for name, mutate := range map[string]func(j *journal){
		"a dir no entry is under": func(j *journal) {
			j.CreatedDirs = append(j.CreatedDirs, "/etc/kubernetes/manifests")
		},
		"an entry's own path": func(j *journal) { j.CreatedDirs = append(j.CreatedDirs, j.Entries[0].Path) },
		"a sibling sharing a prefix": func(j *journal) {
			j.CreatedDirs = append(j.CreatedDirs, strings.TrimSuffix(j.Entries[0].Path, "/x")+"/x2")
		},
		"the root":      func(j *journal) { j.CreatedDirs = append(j.CreatedDirs, "/") },
		"a dir twice":   func(j *journal) { j.CreatedDirs = append(j.CreatedDirs, j.CreatedDirs[3]) },
		"an unclean":    func(j *journal) { j.CreatedDirs = append(j.CreatedDirs, "/etc/containers/registries.d/0/") },
		"an id twice":   func(j *journal) { j.CreatedDirIDs = append(j.CreatedDirIDs, j.CreatedDirIDs[0]) },
		"an id of none": func(j *journal) { j.CreatedDirIDs = append(j.CreatedDirIDs, DirID{Path: "/etc", Dev: 1, Ino: 9}) },
	} {
		j := build(3, 3)
		mutate(j)
		if err := j.check(); err == nil {
			t.Errorf("%s: a created directory accepted", name)
		}
	}
}
