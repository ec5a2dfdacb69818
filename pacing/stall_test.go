package pacing

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openshift/refresh-agent/api"
)

// drive runs the pool's nodes for hash on the fake clock until every node concluded or the pool
// halted: a node in fail fails (Degraded, keeps its slot), the others are Done as soon as they hold
// a slot. When a round moves nothing the clock moves on by a quarter of a handover window. It
// returns the nodes Done, the nodes failed, and the time taken on the fake clock.
func drive(t *testing.T, f *fakeLeases, ps []*Pacer, nodes *fakeNodes, clk *clock, hash string, fail map[string]bool, m int) (done, failed []string, took time.Duration) {
	t.Helper()
	ctx := context.Background()
	start := clk.now()
	concluded := map[int]bool{}
	for idle := 0; len(concluded) < len(ps); {
		if clk.now().Sub(start) > time.Hour {
			t.Fatalf("not through in an hour: done %v failed %v holders %v", done, failed, f.holders())
		}
		moved := false
		waitingHalted := 0
		for i, p := range ps {
			if concluded[i] {
				continue
			}
			ok, waiting := p.Acquire(ctx, "p", hash)
			if !ok {
				if waiting != nil && waiting.Halted && waiting.Failed == m {
					waitingHalted++
				}
				continue
			}
			if held := len(f.holders()); held > m {
				t.Fatalf("%d slots held at once, limit %d: %v", held, m, f.holders())
			}
			shown := shownAs(api.StateDone, hash, hash, "")
			if fail[p.cfg.Node] {
				shown = shownAs(api.StateDegraded, "h0", hash, "reload failed")
				failed = append(failed, p.cfg.Node)
			} else {
				done = append(done, p.cfg.Node)
			}
			nodes.set(p.cfg.Node, shown)
			p.Settle(ctx, "p", hash, shown)
			concluded[i], moved = true, true
		}
		if len(failed) >= m && waitingHalted == len(ps)-len(concluded) {
			break // halted, and every waiting node says so
		}
		for _, p := range ps { // the handover windows of Done holders run out
			if s := p.mineLocked(); s != nil && !fail[p.cfg.Node] {
				p.Settle(ctx, "p", hash, shownAs(api.StateDone, hash, hash, ""))
			}
		}
		time.Sleep(time.Millisecond) // the follow watches
		if !moved {
			idle++
			clk.add(ps[0].handover() / 4)
		}
	}
	return done, failed, clk.now().Sub(start)
}

// queue lists the nodes of slot q's queue in the pool's order (position mod m).
func queue(names []string, m, q int) []string {
	var out []string
	for i, n := range strings.Split(orderList(names), ",") {
		if i%m == q {
			out = append(out, n)
		}
	}
	return out
}

// A failure never idles a free slot: with the failing nodes all in one slot's queue, or spread
// over the queues, the pool goes on until as many nodes failed as it has slots, whatever their
// place in the order; every other node refreshes, none waits for ever, and never more than m at
// once.
func TestAFailureNeverIdlesAFreeSlot(t *testing.T) {
	const n, m = 40, 2
	names := newFakeNodes(n).names
	q0, q1 := queue(names, m, 0), queue(names, m, 1)
	for _, c := range []struct {
		name string
		fail []string
		halt bool
	}{
		{"one failure early in a queue", []string{q0[1]}, false},
		{"one failure, the first node of a queue", []string{q0[0]}, false},
		{"m failures in one queue", []string{q0[2], q0[7]}, true},
		{"m failures, one per queue", []string{q0[3], q1[5]}, true},
		{"five failures in one queue (every 2m-th node)", []string{q0[2], q0[4], q0[6], q0[8], q0[10]}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ps, nodes, clk := orderedPool(t, n, fmt.Sprint(m))
			fail := map[string]bool{}
			for _, x := range c.fail {
				fail[x] = true
			}
			done, failed, took := drive(t, f, ps, nodes, clk, "h1", fail, m)
			t.Logf("%d done, failed %v, in %s (fake clock; handover window %s)", len(done), failed, took, ps[0].handover())
			// The clock moves only when nothing else can: a few windows in all, not one per node
			// behind the failure (it was 2 to 6 windows per node, 4 minutes here).
			if limit := 10 * ps[0].handover(); took > limit {
				t.Errorf("took %s of waiting on the fake clock, want at most %s", took, limit)
			}
			if !c.halt {
				if len(done) != n-len(c.fail) || len(failed) != len(c.fail) {
					t.Fatalf("done %d, failed %v: want every other node done", len(done), failed)
				}
				return
			}
			if len(failed) != m {
				t.Fatalf("failed %v: want the pool halted after exactly %d failures", failed, m)
			}
			// Halted with every slot kept by a failed node: none idles.
			var holders []string
			for _, h := range f.holders() {
				if !fail[h] {
					t.Errorf("halted, and %s (not failed) holds a slot", h)
				}
				holders = append(holders, h)
			}
			if len(holders) != m {
				t.Errorf("halted with %d slots held (%v), want %d", len(holders), holders, m)
			}
			if len(done)+len(failed) < len(c.fail) {
				t.Errorf("only %d nodes concluded", len(done)+len(failed))
			}
		})
	}
}
