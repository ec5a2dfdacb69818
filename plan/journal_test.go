package plan_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary round 9 core 01: 3,000 files (1,500 here) of ~4,037-byte paths under /etc/docker/certs.d (a
// built-in rule) make a 12 MB payload within the budget whose journal the transaction refuses
// (over the 16 MiB a recovery reads) on every node: diff said eligible. The plan refuses it, by the
// journal's floor (each write's entry, path and side files), off the node as on it; a real payload's
// worth of files stays eligible.
func TestPlanRefusesAJournalOverTheBound(t *testing.T) {
	dir := "/etc/docker/certs.d"
	for len(dir)+251 < 4000 {
		dir += "/" + strings.Repeat("d", 250)
	}
	// As the adversary's: a plain Ignition config (an embedded MachineConfig copy would double it
	// over the payload budget).
	plain := func() *fixture.Config { return fixture.Ignition("3.2.0").SSHKeys("ssh-ed25519 AAAA one") }
	des := plain()
	for i := 0; i < 1500; i++ {
		des.File(dir+"/"+strings.Repeat(fmt.Sprintf("f%06d", i), (4040-len(dir))/7), []byte("x"), 0o644)
	}
	p := build(t, plain(), des, "")
	require.False(t, p.Eligible)
	require.Len(t, p.Refused, 1)
	assert.Contains(t, p.Refused[0].Reason, "journal would be larger than recovery reads: 1500 files would make a journal of at least")
	assert.Empty(t, p.Files, "refused whole")

	des = base()
	for i := 0; i < 2000; i++ {
		des.File(fmt.Sprintf("/etc/docker/certs.d/registry-%04d.example.com/ca.crt", i), []byte("x"), 0o644)
	}
	p = build(t, base(), des, "")
	assert.True(t, p.Eligible, "%v", p.Refused)
	assert.Less(t, plan.JournalFloor(p.Files), int64(plan.MaxJournalBytes/20))
}

// Adversary r13 c/05: files ~1 900 missing directories deep (a 2.7 KB ConfigMap value) were
// eligible off the node and made the transaction build a 1.5 GB would-be journal; 1 000 of them cost
// `diff` 11 s (checkNesting cleaned every ancestor's path anew). A path of more than
// MaxPathComponents components is refused naming it, and writes in more than MaxDirs distinct
// directories are refused naming the field, each at a cost linear in the payload.
func TestPlanRefusesDeepPathsWithABoundedCost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files int
		depth int
		want  string
	}{
		{"components", 1000, 1900, "more than 128 path components (1905)"},
		{"directories", 200, 120, "storage.files: the files are in more than 10000 directories"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			des := plain()
			for i := 0; i < tc.files; i++ {
				des.File(fmt.Sprintf("/etc/containers/registries.d/d%d/%sx.yaml", i, strings.Repeat("a/", tc.depth)), []byte("x"), 0o644)
			}
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			p := build(t, plain(), des, "")
			runtime.ReadMemStats(&m1)
			require.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, tc.want)
			assert.Contains(t, p.Refused[0].Reason, "/etc/containers/registries.d/d", "names the file")
			assert.Empty(t, p.Files, "refused whole")
			// The payload's own decode is most of it (its JSON is up to 4 MB here).
			assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(256<<20), "bytes allocated by the plan")
		})
	}
	// A real payload's shape stays eligible: 2 000 files, 11 components, in 2 000 directories.
	des := plain()
	for i := 0; i < 2000; i++ {
		des.File(fmt.Sprintf("/etc/containers/registries.d/a/b/c/d/e/f/g%04d/x.yaml", i), []byte("x"), 0o644)
	}
	p := build(t, plain(), des, "")
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
