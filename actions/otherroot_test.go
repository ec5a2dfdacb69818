package actions

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A journal records the root it was made on, from the first write (rule 19, adversary r13 c/01),
// and recovery on any other root refuses it, touching nothing; a version 7 journal without a
// well-formed root is not one the agent writes.
func TestJournalOfAnotherRootIsRefusedWhole(t *testing.T) {
	for name, r := range map[string]*DirID{
		"no root":       nil,
		"inode 0":       {Path: "/host", Dev: 1},
		"relative path": {Path: "host", Dev: 1, Ino: 2},
		"unclean path":  {Path: "/host/", Dev: 1, Ino: 2},
	} {
		j := &journal{Version: 7, Phase: PhasePreparing, Root: r}
		if err := j.check(); err == nil {
			t.Errorf("%s: a version 7 journal accepted", name)
		}
	}
	if err := (&journal{Version: 6, Phase: PhasePreparing}).check(); err != nil {
		t.Errorf("a version 6 journal, which records no root, is read as before: %v", err)
	}

	dirA, dirB, state := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "state")
	for _, d := range []string{dirA, dirB} {
		if err := os.MkdirAll(filepath.Join(d, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "etc/a.conf"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rootA, rootB := openTestRoot(t, dirA), openTestRoot(t, dirB)
	txn, err := Prepare(rootA, state, []Op{{Path: "/etc/a.conf", Data: []byte("new"), Mode: 0o644}}, Meta{Hash: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if txn.j.Root == nil || txn.j.Root.Path != rootA.Dir {
		t.Fatalf("the journal records root %+v, not %s", txn.j.Root, rootA.Dir)
	}
	disk, err := readJournal(state)
	if err != nil || disk.Root == nil || *disk.Root != *txn.j.Root {
		t.Fatalf("the journal on disk records root %+v (%v)", disk, err)
	}
	journal, _ := os.ReadFile(filepath.Join(state, journalFile))
	if _, err := Recover(rootB, state, Trust{}); !errors.Is(err, ErrOtherRoot) {
		t.Fatalf("recovered on another root: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(state, journalFile)); string(got) != string(journal) {
		t.Fatal("the journal changed")
	}
	if got, _ := os.ReadFile(filepath.Join(dirA, "etc/a.conf")); string(got) != "old" {
		t.Fatal("A's file changed")
	}
	back, err := Recover(rootA, state, Trust{})
	if err != nil || back == nil {
		t.Fatalf("A's own recovery: %v", err)
	}
	if err := back.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := back.Finish(); err != nil {
		t.Fatal(err)
	}
}
