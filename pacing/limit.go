// Package pacing keeps at most N nodes of a NodePool refreshing at once, with no controller: the
// agents take slots, coordination.k8s.io/v1 Leases named api.SlotName(pool, i) in their namespace,
// before changing anything on their node, and give them back once their Done is on the Node. A node
// whose refresh failed keeps its slot, so that N failures halt the pool by themselves; new content
// releases it. A slot whose holder stopped renewing for the TTL is taken over.
package pacing

import (
	"fmt"
	"strconv"
	"strings"
)

// Limit is --max-concurrent: a number of nodes, or a percentage of the pool's nodes. The zero Limit
// is unpaced (no slots, no Lease requests).
type Limit struct {
	N       int
	Percent int
	percent bool
}

// ParseLimit parses "N" (0: unpaced) or "P%" (1..100).
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 || v > 100 {
			return Limit{}, fmt.Errorf("--max-concurrent %q: a percentage must be 1%% to 100%%", s)
		}
		return Limit{Percent: v, percent: true}, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return Limit{}, fmt.Errorf("--max-concurrent %q: want a number of nodes (0: unpaced) or a percentage like 10%%", s)
	}
	return Limit{N: v}, nil
}

// Unpaced says no slot is ever needed.
func (l Limit) Unpaced() bool { return !l.percent && l.N == 0 }

// IsPercent says the limit scales with the pool's size.
func (l Limit) IsPercent() bool { return l.percent }

// Slots is the number of slots of a pool of size nodes: a percentage rounds down, as the MCO rounds
// maxUnavailable, but is at least 1 so that a pool always progresses.
func (l Limit) Slots(size int) int {
	if !l.percent {
		return l.N
	}
	return max(size*l.Percent/100, 1)
}

func (l Limit) String() string {
	if l.percent {
		return strconv.Itoa(l.Percent) + "%"
	}
	return strconv.Itoa(l.N)
}
