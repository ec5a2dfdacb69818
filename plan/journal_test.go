package plan_test

import (
	"fmt"
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
