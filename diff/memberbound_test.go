package diff

import (
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// members is n JSON object members "<hex>":"" (keys distinct), comma-separated.
func members(n int) string {
	var b strings.Builder
	b.Grow(n * 10)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%x":""`, i)
	}
	return b.String()
}

// mcWith is a MachineConfig payload carrying its Ignition config, with extra inside metadata.
func mcWith(metadata string) string {
	return `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"x"` + metadata + `},` +
		`"spec":{"config":{"ignition":{"version":"3.2.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOld k"]}]}}}}`
}

// ignWithMCS is an Ignition config whose machine-config server content file is mc.
func ignWithMCS(mc string) string {
	return `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"` + MachineConfigContentPath + `","contents":{"source":"data:,` + url.PathEscape(mc) + `"}}]}}`
}

// nested is objects n deep, each with m members besides the one holding the next.
func nested(n, m int) string {
	var b strings.Builder
	for range n {
		b.WriteString(`{` + members(m) + `,"next":`)
	}
	b.WriteString(`0`)
	b.WriteString(strings.Repeat("}", n))
	return b.String()
}

// allocated is what f allocates, in bytes (TotalAlloc: every allocation, freed or not).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Round 12, core/01: a MachineConfig's metadata.annotations of 4.5 million members (52 MB, within
// the 64 MiB budget) cost 1.1 GB and 45 s to decode. Every object is bounded by its members
// (maxMembers) and every member is charged (memberCost) while the duplicate-key scan reads it, before
// any decoder turns it into a map: the refusal names the object.
func TestObjectMembersAreBounded(t *testing.T) {
	over := members(maxMembers + 1)
	cases := map[string]struct{ raw, want string }{
		"annotations": {mcWith(`,"annotations":{` + over + `}`), "metadata.annotations: more than 10000 members"},
		"labels":      {mcWith(`,"labels":{` + over + `}`), "metadata.labels: more than 10000 members"},
		"yaml machineconfig": {"apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  annotations:\n" +
			yamlMembers(maxMembers+1) + "spec:\n  config:\n    ignition:\n      version: 3.2.0\n",
			"metadata.annotations: more than 10000 members"},
		"unknown top-level member": {`{"kind":"MachineConfig","status":{` + over + `},"spec":{"config":{"ignition":{"version":"3.2.0"}}}}`,
			"status: more than 10000 members"},
		"ignition unknown keys": {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a",` + over + `}]}}`,
			"storage.files.0: more than 10000 members"},
		"top level": {`{"ignition":{"version":"3.2.0"},` + over + `}`, "(top level): more than 10000 members"},
		"embedded content file": {ignWithMCS(mcWith(`,"annotations":{` + over + `}`)),
			MachineConfigContentPath + ": metadata.annotations: more than 10000 members"},
		// Objects each within maxMembers, stacked: the scan's key sets of every enclosing object
		// are alive at once; the members are charged, so the budget stops it.
		"stacked objects": {`{"kind":"MachineConfig","status":` + nested(200, maxMembers-1) + `,"spec":{"config":{"ignition":{"version":"3.2.0"}}}}`,
			"once decoded exceeds the 67108864 byte payload budget"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(tc.raw))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, len(err.Error()), 1024, "short")
		})
	}
	// At the bound, accepted.
	p, err := Decode([]byte(mcWith(`,"annotations":{` + members(maxMembers) + `}`)))
	require.NoError(t, err)
	require.NotNil(t, p.MachineConfig)
	_, err = p.MachineConfigJSON()
	require.NoError(t, err)
}

func yamlMembers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "    k%x: \"\"\n", i)
	}
	return b.String()
}

// What the worst objects cost stays within the payload budget, measured by what the decode allocates
// (TotalAlloc, freed or not): the refused 52 MB payload of round 12 and its node-file form, objects
// at the member bound stacked up to the budget, and the largest annotations accepted, whose cost a
// member must not exceed memberCost.
func TestObjectMemberCostIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds payloads of up to 52 MB")
	}
	require.Equal(t, int64(64<<20), MaxPayloadSize)
	cases := map[string]struct {
		raw    string
		refuse string
	}{
		"52 MB of annotations (round 12)": {mcWith(`,"annotations":{` + members(4_500_000) + `}`), "metadata.annotations: more than"},
		"annotations at the bound, under objects at the bound up to the budget": {
			`{"kind":"MachineConfig","status":` + nested(400, maxMembers-1) + `,"metadata":{"annotations":{` + members(maxMembers) + `}},"spec":{"config":{"ignition":{"version":"3.2.0"}}}}`,
			"once decoded exceeds the"},
		"objects at the bound side by side, up to the budget": {
			`{"kind":"MachineConfig","status":[` + strings.Repeat(`{`+members(maxMembers-1)+`},`, 400) + `0],"spec":{"config":{"ignition":{"version":"3.2.0"}}}}`,
			"once decoded exceeds the"},
		"embedded content file": {ignWithMCS(mcWith(`,"annotations":{` + members(500_000) + `}`)), "metadata.annotations: more than"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw := []byte(tc.raw)
			var err error
			cost := allocated(func() { _, err = Decode(raw) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.refuse)
			t.Logf("%d MB payload: %d MiB allocated: %s", len(raw)>>20, cost>>20, err)
			assert.Less(t, cost, uint64(MaxPayloadSize), "within the budget")
		})
	}
	// Accepted: every member costs less than it is charged.
	const n = maxMembers
	small := []byte(mcWith(`,"annotations":{` + members(1) + `}`))
	large := []byte(mcWith(`,"annotations":{` + members(n) + `},"labels":{` + members(n) + `}`))
	decode := func(raw []byte) func() {
		return func() {
			p, err := Decode(raw)
			require.NoError(t, err)
			_, err = p.MachineConfigJSON()
			require.NoError(t, err)
		}
	}
	perMember := (allocated(decode(large)) - allocated(decode(small))) / (2 * n)
	t.Logf("%d bytes allocated a member (charged %d and its key)", perMember, memberCost)
	assert.Less(t, perMember, uint64(memberCost))
}
