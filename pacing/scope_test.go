package pacing

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openshift/refresh-agent/api"
)

// A node of an ordered pool watches the order Lease and its own queue's slot by name, never the
// pool's Leases: the Lease events it gets per refresh are bounded by its queue's length (10 at 10%),
// the same at 40 nodes as at 400, where watching the pool's Leases gave each node about 1.1 x the
// pool's size.
func TestAnOrderedNodeWatchesItsQueueOnly(t *testing.T) {
	for _, n := range []int{40, 400} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f, ps, nodes, _ := orderedPool(t, n, "10%")
			if most := runPool(t, f, ps, nodes, "h1"); most > n/10 {
				t.Fatalf("%d holders at once", most)
			}
			perNode := float64(f.delivered.Load()) / float64(n)
			t.Logf("%d nodes: %.2f Lease events per node, %d watches opened", n, perNode, len(f.opened))
			if perNode > 12 {
				t.Errorf("%.2f Lease events per node per refresh, want at most the queue's length (10) and a few", perNode)
			}
			for _, w := range f.opened {
				if strings.HasSuffix(w, "/") { // "node selector/": the pool's Leases
					t.Fatalf("a node of the order watched the pool's Leases (%q)", w)
				}
			}
			if len(f.opened) > 2*n {
				t.Errorf("%d watches opened by %d nodes, want at most 2 each (the order, its slot)", len(f.opened), n)
			}
			for _, p := range ps {
				own := api.SlotName("p", p.order.position(p.cfg.Node)%(n/10))
				if !p.scope.names[own] || p.scope.wide || len(p.scope.names) != 2 {
					t.Fatalf("%s watches %+v, want the order and %s", p.cfg.Node, p.scope, own)
				}
			}
		})
	}
}

// A node widens to the pool's Leases only while its queue is stalled (its slot kept by a failed
// node): then it goes to any free slot. New content narrows it again.
func TestAStalledQueueWidensAndNarrowsAgain(t *testing.T) {
	const n, m = 12, 2
	f, ps, nodes, clk := orderedPool(t, n, fmt.Sprint(m))
	q0 := queue(nodes.names, m, 0)
	byName := map[string]*Pacer{}
	for _, p := range ps {
		byName[p.cfg.Node] = p
	}
	done, failed, _ := drive(t, f, ps, nodes, clk, "h1", map[string]bool{q0[1]: true}, m)
	if len(failed) != 1 || len(done) != n-1 {
		t.Fatalf("done %d, failed %v", len(done), failed)
	}
	// The nodes behind the failure widened (to go to the other slot, or to follow the one that did);
	// the nodes before it, the failed node itself and the other queue's nodes (whose slot no node of
	// another queue took before their queue was over) never did.
	wide := map[string]int{}
	for _, w := range f.opened {
		if node, sel, _ := strings.Cut(w, " "); strings.HasSuffix(sel, "/") {
			wide[node]++
		}
	}
	t.Logf("watches of the pool's Leases opened, by node: %v", wide)
	for i, name := range q0 {
		if i <= 1 && wide[name] > 0 {
			t.Errorf("%s (before or at the failure) watched the pool's Leases", name)
		}
		if i == 2 && wide[name] != 1 {
			t.Errorf("%s (right behind the failure) opened %d watches of the pool's Leases, want 1", name, wide[name])
		}
	}
	if len(wide) > len(q0)-2 {
		t.Errorf("%d nodes watched the pool's Leases, want the %d behind the failure at most", len(wide), len(q0)-2)
	}
	// New content: every node narrows to the order and its slot.
	for _, p := range ps {
		p.Settle(context.Background(), "p", "h2", shownAs(api.StateDone, "h1", "h1", ""))
		if p.scope.wide {
			t.Errorf("%s still watches the pool's Leases after new content", p.cfg.Node)
		}
	}
}
