package publish

// Following a pool's refresh as `kubectl rollout status` follows a rollout: a watch on the pool's
// Nodes (a reflector: one list, then a watch; no polling), the conditions computed after every
// change, one line when the line changes, and an outcome.

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/fleet"
)

// Outcome is how following a pool ended.
type Outcome int

const (
	Complete Outcome = iota // every node runs the hash
	Failed                  // a node is Degraded or Unreconcilable for the hash, or the paced pool halted
	TimedOut                // the timeout passed first
	NoNodes                 // no node matches the selector
)

// Progress is the pool as one change of its Nodes left it.
type Progress struct {
	Hash       string
	Summary    fleet.Summary
	Conditions []metav1.Condition
}

// Line says where the pool stands, in one line: "4/10 updated, 1 refreshing (node-7), 0 degraded".
func (p Progress) Line() string {
	s := p.Summary
	refreshing := s.By[fleet.PhaseRefreshing]
	degraded := len(s.By[fleet.PhaseDegraded]) + len(s.By[fleet.PhaseUnreconcilable])
	line := fmt.Sprintf("%d/%d updated, %d refreshing%s, %d degraded", len(s.By[fleet.PhaseComplete]), s.Total,
		len(refreshing), nodeNames(working(refreshing)), degraded)
	if n := s.By[fleet.PhaseNoAgent]; len(n) > 0 {
		line += fmt.Sprintf(", %d not reporting%s", len(n), nodeNames(n))
	}
	if c := meta.FindStatusCondition(p.Conditions, fleet.ConditionProgressing); c != nil && c.Reason == fleet.ReasonHalted {
		line += ", halted"
	}
	return line
}

// working keeps the nodes that are refreshing right now (Working toward the hash and not waiting
// for a slot): the names worth printing.
func working(nodes []fleet.Node) []fleet.Node {
	var out []fleet.Node
	for _, n := range nodes {
		if n.State == api.StateWorking && n.Waiting == nil {
			out = append(out, n)
		}
	}
	return out
}

func nodeNames(nodes []fleet.Node) string {
	if len(nodes) == 0 {
		return ""
	}
	names := make([]string, 0, min(len(nodes), 5))
	for i, n := range nodes {
		if i == 5 {
			names = append(names, fmt.Sprintf("+%d", len(nodes)-i))
			break
		}
		names = append(names, n.Name)
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// Outcome says whether p ends the wait, and how.
func (p Progress) Outcome() (Outcome, bool) {
	cond := func(t string) *metav1.Condition { return meta.FindStatusCondition(p.Conditions, t) }
	switch {
	case p.Summary.Total == 0:
		return NoNodes, true
	case cond(fleet.ConditionComplete).Status == metav1.ConditionTrue:
		return Complete, true
	case cond(fleet.ConditionDegraded).Status == metav1.ConditionTrue,
		cond(fleet.ConditionProgressing).Reason == fleet.ReasonHalted:
		return Failed, true
	}
	return 0, false
}

// Why says what ended a wait badly: the Degraded message (the nodes and their reasons), or the
// halted one.
func (p Progress) Why() string {
	var parts []string
	for _, t := range []string{fleet.ConditionProgressing, fleet.ConditionDegraded} {
		c := meta.FindStatusCondition(p.Conditions, t)
		if c != nil && (c.Reason == fleet.ReasonHalted || t == fleet.ConditionDegraded && c.Status == metav1.ConditionTrue) {
			parts = append(parts, c.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// Follow watches the Nodes matching selector until the pool reaches hash (Complete), fails, or ctx
// ends (TimedOut). show gets the pool after every change of its Nodes; slots is the pool's slot
// count for halting (0: from the nodes' reasons only, see fleet.Halted).
func Follow(ctx context.Context, client cache.Getter, selector, hash string, slots func(nodes int) int, show func(Progress)) (Outcome, Progress) {
	changed := make(chan []corev1.Node, 1)
	store := cache.NewUndeltaStore(func(items []any) {
		nodes := make([]corev1.Node, 0, len(items))
		for _, it := range items {
			if n, ok := it.(*corev1.Node); ok {
				nodes = append(nodes, *n)
			}
		}
		select { // only the newest list matters
		case <-changed:
		default:
		}
		changed <- nodes
	}, cache.MetaNamespaceKeyFunc)
	lw := cache.NewFilteredListWatchFromClient(client, "nodes", "", func(o *metav1.ListOptions) { o.LabelSelector = selector })
	r := cache.NewReflectorWithOptions(lw, &corev1.Node{}, store, cache.ReflectorOptions{Name: "follow " + selector})
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go r.RunWithContext(wctx)

	var last Progress
	for {
		select {
		case <-ctx.Done():
			return TimedOut, last
		case nodes := <-changed:
			n := 0
			if slots != nil {
				n = slots(len(nodes))
			}
			last = Progress{Hash: hash, Summary: fleet.Summarize(nodes, hash),
				Conditions: fleet.PacedConditions(nodes, hash, nil, time.Now(), n)}
			show(last)
			if o, done := last.Outcome(); done {
				return o, last
			}
		}
	}
}

// Bar draws a progress bar of width cells for done of total.
func Bar(done, total, width int) string {
	fill := 0
	if total > 0 {
		fill = done * width / total
	}
	return "[" + strings.Repeat("#", fill) + strings.Repeat("-", width-fill) + "]"
}
