package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// A failure never idles a free slot, against the real API server: 8 nodes, 2 slots (the order's
// queues are nodes 0, 2, 4, 6 and 1, 3, 5, 7). One failure leaves the pool going on through the
// other slot until every other node is Done; two failures halt it, whether both are in one queue
// or one in each, with both slots kept by the failed nodes and every other node Done or waiting.
func TestAFailureNeverIdlesAFreeSlotOfThePool(t *testing.T) {
	const size, slots = 8, 2
	for _, c := range []struct {
		name string
		fail []int
	}{
		{"one-failure", []int{2}},
		{"two-in-one-queue", []int{2, 4}},
		{"one-per-queue", []int{2, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns, pool := "refresh-stall-"+c.name, "stall"+strings.ReplaceAll(c.name, "-", "")
			e := pacedPool(t, ns, pool, size, slots, 30*time.Second)
			ctx := context.Background()
			require.True(t, kubetest.WaitFor(ctx, 60*time.Second, e.all("v1", api.StateDone)), "all Done v1")
			failing := map[string]bool{}
			for _, i := range c.fail {
				failing[e.nodes[i].name] = true
			}
			for _, n := range e.nodes {
				if !failing[n.name] {
					// The healthy nodes' units watch a file no payload writes: only the failing
					// nodes fail on the marker (no unit has run on any node since the setup).
					n.units.Path = "/etc/containers/no-marker-here"
				}
			}
			e.pub(base().File(registries, []byte("# v2 "+fixture.FailMarker), 0o644), "v2")

			done := func(s wireStatus) bool { return s.Current == "v2" && s.State == api.StateDone }
			degraded := func(s wireStatus) bool { return s.Desired == "v2" && s.State == api.StateDegraded }
			halted := func(s wireStatus) bool {
				return s.State == api.StateWorking && strings.Contains(s.Reason, fmt.Sprintf("halted: %d nodes failed", slots))
			}
			settled := func() bool {
				if len(c.fail) < slots {
					return e.pw.count(done) == size-len(c.fail) && e.pw.count(degraded) == len(c.fail)
				}
				return e.pw.count(degraded) == slots && e.pw.count(done)+e.pw.count(halted) == size-slots
			}
			start := time.Now()
			require.True(t, kubetest.WaitFor(ctx, 90*time.Second, settled), "not settled: %d Done, %d Degraded, %d halted",
				e.pw.count(done), e.pw.count(degraded), e.pw.count(halted))
			t.Logf("%s: %d Done, %d Degraded, %d waiting halted, in %s", c.name, e.pw.count(done), e.pw.count(degraded),
				e.pw.count(halted), time.Since(start).Round(time.Millisecond))
			time.Sleep(2 * time.Second) // and nothing else moves
			assert.True(t, settled())
			for _, n := range e.nodes {
				if failing[n.name] {
					assert.Equal(t, "# v1 mirrors", read(t, n.root, registries), "%s rolled back", n.name)
				}
			}
			held := holders(t, e.admin, ns, pool)
			assert.Len(t, held, len(c.fail), "slots held: %v", held)
			for _, h := range held {
				assert.True(t, failing[h[strings.Index(h, "=")+1:]], "a slot held by a node that did not fail: %v", held)
			}
			e.pw.mu.Lock()
			most := e.pw.maxWorking
			e.pw.mu.Unlock()
			assert.LessOrEqual(t, most, slots, "nodes refreshing at once")
		})
	}
}
