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

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Limit is --max-concurrent: a number of nodes, or a percentage of the pool's nodes, as an
// IntOrString like a Deployment's maxUnavailable. The zero Limit is unpaced (no slots, no Lease
// requests).
type Limit struct {
	v intstr.IntOrString
}

// ParseLimit parses "N" (0: unpaced, at most 2^31-1) or "P%" (1..100), with apimachinery's intstr.
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	v := intstr.Parse(s)
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, false)
	if v.Type == intstr.String && strings.HasSuffix(s, "%") {
		if err != nil || n < 1 || n > 100 {
			return Limit{}, fmt.Errorf("--max-concurrent %q: a percentage must be 1%% to 100%%", s)
		}
		return Limit{v: intstr.FromString(strconv.Itoa(n) + "%")}, nil
	}
	if err != nil || n < 0 {
		return Limit{}, fmt.Errorf("--max-concurrent %q: want a number of nodes (0: unpaced) or a percentage like 10%%", s)
	}
	return Limit{v: v}, nil
}

// Unpaced says no slot is ever needed.
func (l Limit) Unpaced() bool { return !l.IsPercent() && l.v.IntValue() == 0 }

// IsPercent says the limit scales with the pool's size.
func (l Limit) IsPercent() bool { return l.v.Type == intstr.String }

// Slots is the number of slots of a pool of size nodes: a percentage rounds down, as the MCO rounds
// maxUnavailable, but is at least 1 so that a pool always progresses.
func (l Limit) Slots(size int) int {
	n, _ := intstr.GetScaledValueFromIntOrPercent(&l.v, size, false) // validated by ParseLimit
	if l.IsPercent() {
		return max(n, 1)
	}
	return n
}

func (l Limit) String() string { return l.v.String() }
