package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// Journal rule 0 (adversary round 4 F6: a 400 MB journal cost 30 s and 3.3 GB before it was
// refused): a journal over MaxJournalBytes is refused as hostile without being read, touching
// nothing. Measured by what the refusal allocates, never by time: a 400 MB journal (sparse: it
// costs no disk) costs recovery well under a MiB.
func TestJournalOverTheBoundIsNotRead(t *testing.T) {
	for _, size := range []int64{actions.MaxJournalBytes + 1, 400 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			r, dir := newRoot(t)
			reg := filepath.Join(dir, "etc/containers/registries.conf")
			require.NoError(t, os.WriteFile(reg, []byte("live"), 0o644))
			state := filepath.Join(dir, "var/lib/refresh-agent")
			require.NoError(t, os.MkdirAll(state, 0o700))
			f, err := os.Create(filepath.Join(state, "journal.json"))
			require.NoError(t, err)
			_, err = f.WriteString(`{"version":4,"phase":"prepared","meta":{"hash":"`)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(size))
			require.NoError(t, f.Close())
			before := snapshot(t, dir)

			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			txn, rerr := actions.Recover(r, state, actions.Trust{})
			_, _, perr := actions.Peek(state)
			runtime.ReadMemStats(&m1)
			require.Error(t, rerr)
			assert.Nil(t, txn)
			assert.ErrorIs(t, rerr, actions.ErrHostile)
			assert.ErrorIs(t, rerr, actions.ErrStateTooLarge)
			assert.ErrorIs(t, perr, actions.ErrStateTooLarge)
			assert.Contains(t, rerr.Error(), "journal.json")
			assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(1<<20), "bytes allocated by the refusals")
			assert.Equal(t, before, snapshot(t, dir), "nothing touched")
		})
	}
}

// Every other state file is bounded too: the record (current.json) at 64 KiB, a saved payload at
// the payload budget.
func TestStateFilesAreReadWithABound(t *testing.T) {
	state := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(state, "current.json"), []byte(`{"hash":"x","payload":""}`+strings.Repeat(" ", 64<<10)), 0o600))
	_, err := actions.ReadStateFile(state, "current.json")
	assert.ErrorIs(t, err, actions.ErrStateTooLarge)
	require.NoError(t, os.WriteFile(filepath.Join(state, "current.json"), []byte(`{"hash":"x","payload":""}`), 0o600))
	_, err = actions.ReadStateFile(state, "current.json")
	assert.NoError(t, err)
}

// Prepare writes no journal a recovery would refuse: a plan whose journal could grow over
// MaxJournalBytes (here 1,500 files of the longest paths a filesystem holds) is refused before
// anything is written.
func TestPrepareRefusesAJournalOverTheBound(t *testing.T) {
	r, dir := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	var ops []actions.Op
	long := strings.Repeat(strings.Repeat("d", 250)+"/", 15)
	for i := 0; i < 1500; i++ {
		ops = append(ops, actions.Op{Path: fmt.Sprintf("/etc/containers/%s%04d", long, i), Data: []byte("x"), Mode: 0o644})
	}
	// The dry run (Check) refuses it as Prepare does, with the same reason (adversary round 9
	// core 01: apply --dry-run said planned what the real run refused).
	dryErr := actions.Check(r, state, ops, actions.Meta{Hash: "h"})
	require.ErrorIs(t, dryErr, actions.ErrJournalTooLarge)
	_, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
	require.ErrorIs(t, err, actions.ErrJournalTooLarge)
	assert.True(t, actions.IsRefusal(err))
	assert.Equal(t, dryErr.Error(), err.Error())
	_, err = os.Stat(state)
	assert.True(t, os.IsNotExist(err), "nothing written")
	_, err = os.Stat(filepath.Join(dir, "etc/containers/dddd"))
	assert.True(t, os.IsNotExist(err))
	// A real payload's worth fits (500 files here; the adversary's 3,000 apply in test/integration).
	ops = ops[:0]
	for i := 0; i < 500; i++ {
		ops = append(ops, actions.Op{Path: fmt.Sprintf("/etc/myapp/f%04d.conf", i), Data: []byte("x"), Mode: 0o644})
	}
	txn, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	require.NoError(t, txn.Rollback())
	require.NoError(t, txn.Finish())
}

// Adversary r13 c/05: ops whose parents are all missing, each 120 directories deep (under the
// 128-component bound), so that the journal's created directories, not its entries, pass the
// bound. The dry run and Prepare refuse it at the op that passes it, having built no more of the
// journal than the bound: allocation stays a small multiple of MaxJournalBytes, not the gigabytes
// the whole would-be journal took. Past MaxDirs created directories the refusal comes first.
func TestPrepareRefusesManyCreatedDirectoriesWithABoundedCost(t *testing.T) {
	r, _ := newRoot(t)
	state := filepath.Join(t.TempDir(), "state")
	for _, tc := range []struct {
		name  string
		files int
		seg   string
		want  string
	}{
		// 300 files × 120 directories of ~30-byte paths each: 36 000 directories, past MaxDirs.
		{"directories", 300, "a/", "would create more than 10000 directories"},
		// 80 files × 120 directories of 32-byte names (~2 KiB average path): ~40 MiB of
		// directories in the journal, under MaxDirs, past MaxJournalBytes.
		{"journal", 80, strings.Repeat("b", 31) + "/", "would make a journal of more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ops []actions.Op
			for i := 0; i < tc.files; i++ {
				ops = append(ops, actions.Op{Path: fmt.Sprintf("/etc/containers/d%d/%sx", i, strings.Repeat(tc.seg, 120)), Data: []byte("x"), Mode: 0o644})
			}
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			dryErr := actions.Check(r, state, ops, actions.Meta{Hash: "h"})
			runtime.ReadMemStats(&m1)
			require.ErrorIs(t, dryErr, actions.ErrJournalTooLarge)
			assert.True(t, actions.IsRefusal(dryErr))
			assert.Contains(t, dryErr.Error(), tc.want)
			assert.Contains(t, dryErr.Error(), "/etc/containers/d", "names the op")
			assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(8*actions.MaxJournalBytes), "bytes allocated by the refusal")
			_, err := actions.Prepare(r, state, ops, actions.Meta{Hash: "h"})
			require.ErrorIs(t, err, actions.ErrJournalTooLarge)
			assert.Equal(t, dryErr.Error(), err.Error())
			_, err = os.Stat(state)
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}
}
