// Package fleet computes a NodePool's ConfigRefresh conditions from its nodes' refresh annotations.
package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
)

// Condition types.
const (
	ConditionProgressing = "ConfigRefreshProgressing"
	ConditionComplete    = "ConfigRefreshComplete"
	ConditionDegraded    = "ConfigRefreshDegraded"
)

// Condition reasons.
const (
	ReasonRefreshing     = "Refreshing"
	ReasonAsExpected     = "AsExpected"
	ReasonComplete       = "RefreshComplete"
	ReasonIncomplete     = "RefreshIncomplete"
	ReasonNodesDegraded  = "NodesDegraded"
	ReasonUnreconcilable = "NodesUnreconcilable"
	ReasonNoNodes        = "NoNodes"
	// ReasonNotReporting: no node is refreshing, but some carry no refresh annotation at all (no
	// agent has reported on them): what they run is unknown.
	ReasonNotReporting = "NodesNotReporting"
	// ReasonHalted: a paced pool stopped by itself, as many nodes having failed the hash as it has
	// refresh slots (each failed node keeps its slot until new content comes).
	ReasonHalted = "Halted"
)

// MaxMessageLen bounds a condition message.
const MaxMessageLen = 1024

// Node is one node of the pool: its name and the status its agent reports.
type Node struct {
	Name string
	api.NodeStatus
}

// Phase is where a node stands relative to the NodePool's desired hash (its state is about the
// hash it names, which may be another).
type Phase string

const (
	PhaseComplete       Phase = "Complete"       // running the desired hash, Done
	PhaseRefreshing     Phase = "Refreshing"     // not there yet: not seen, working, deferred or retrying
	PhaseDegraded       Phase = "Degraded"       // failed for the desired hash
	PhaseUnreconcilable Phase = "Unreconcilable" // refused the desired hash
	// PhaseNoAgent: the node carries no refresh annotation at all. No agent has reported on it (no
	// pod there yet, or the DaemonSet does not reach it), so what it runs is unknown: it is not
	// counted as refreshing.
	PhaseNoAgent Phase = "NoAgent"
)

// Read returns a node's status from its annotations.
func Read(n corev1.Node) Node {
	return Node{Name: n.Name, NodeStatus: api.FromAnnotations(n.Annotations)}
}

// PhaseOf places a node relative to hash. A node whose annotations speak of another hash has not
// picked up the new one yet: it is still refreshing, whatever it said about the old one.
func PhaseOf(s api.NodeStatus, hash string) Phase {
	switch {
	case s.Current == "" && s.Desired == "" && s.State == "":
		return PhaseNoAgent
	case s.Current == hash && s.State == api.StateDone:
		return PhaseComplete
	case s.Desired != hash:
		return PhaseRefreshing
	case s.State == api.StateDegraded:
		return PhaseDegraded
	case s.State == api.StateUnreconcilable:
		return PhaseUnreconcilable
	default:
		return PhaseRefreshing
	}
}

// Summary counts the nodes by phase.
type Summary struct {
	Hash  string           `json:"hash"`
	Total int              `json:"total"`
	Nodes []Node           `json:"nodes"`
	By    map[Phase][]Node `json:"-"`
}

// Summarize places every node relative to hash, sorted by name.
func Summarize(nodes []corev1.Node, hash string) Summary {
	s := Summary{Hash: hash, Total: len(nodes), By: map[Phase][]Node{}}
	for _, n := range nodes {
		st := Read(n)
		s.Nodes = append(s.Nodes, st)
	}
	slices.SortFunc(s.Nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	for _, st := range s.Nodes {
		p := PhaseOf(st.NodeStatus, hash)
		s.By[p] = append(s.By[p], st)
	}
	return s
}

// Conditions computes the three conditions for the nodes toward hash. Previous conditions keep their
// LastTransitionTime when their status does not change (meta.SetStatusCondition semantics). A pool
// whose waiting nodes say it halted is reported halted (see PacedConditions).
func Conditions(nodes []corev1.Node, hash string, previous []metav1.Condition, now time.Time) []metav1.Condition {
	return PacedConditions(nodes, hash, previous, now, 0)
}

// Halted says whether a paced pool stopped by itself: at least slots nodes Degraded for the hash
// (slots > 0), or a node waiting for a slot says so (its agent counts the failed slots' holders).
// It returns the number of failed nodes.
func Halted(s Summary, slots int) (bool, int) {
	failed := len(s.By[PhaseDegraded])
	if slots > 0 && failed >= slots {
		return true, failed
	}
	for _, n := range s.By[PhaseRefreshing] {
		if n.Desired == s.Hash && n.State == api.StateWorking && n.Waiting != nil && n.Waiting.Halted {
			return failed > 0, failed
		}
	}
	return false, failed
}

// PacedConditions is Conditions for a pool paced with slots refresh slots (0: unknown).
func PacedConditions(nodes []corev1.Node, hash string, previous []metav1.Condition, now time.Time, slots int) []metav1.Condition {
	s := Summarize(nodes, hash)
	halted, failed := Halted(s, slots)
	out := slices.Clone(previous)
	set := func(c metav1.Condition) {
		c.LastTransitionTime = metav1.NewTime(now)
		meta.SetStatusCondition(&out, c)
	}
	complete, refreshing := len(s.By[PhaseComplete]), len(s.By[PhaseRefreshing])
	degraded, refused, silent := s.By[PhaseDegraded], s.By[PhaseUnreconcilable], s.By[PhaseNoAgent]
	notReporting := ""
	if len(silent) > 0 {
		notReporting = fmt.Sprintf("; %s not reporting (no agent): %s", api.Count(len(silent), "node"), names(silent))
	}

	switch {
	case s.Total == 0:
		set(metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonNoNodes, Message: "No nodes selected"})
	case refreshing > 0 && halted:
		set(metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonHalted,
			Message: fmt.Sprintf("halted: %s failed; %d/%d nodes wait for new content toward %s", api.Count(failed, "node"), refreshing, s.Total, hash)})
	case refreshing > 0:
		set(metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: ReasonRefreshing,
			Message: fmt.Sprintf("Refreshing %d/%d nodes toward %s%s", refreshing, s.Total, hash, notReporting)})
	case len(silent) > 0:
		// Nothing says these nodes are refreshing, nor that they are not: Unknown, never True.
		set(metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionUnknown, Reason: ReasonNotReporting,
			Message: fmt.Sprintf("%d/%d nodes not reporting (no refresh annotation: no agent has run there): %s", len(silent), s.Total, names(silent))})
	default:
		set(metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonAsExpected,
			Message: fmt.Sprintf("No node is refreshing toward %s", hash)})
	}

	switch {
	case s.Total == 0:
		// Nothing runs the hash: a pool-name typo or an empty pool is never Complete.
		set(metav1.Condition{Type: ConditionComplete, Status: metav1.ConditionFalse, Reason: ReasonNoNodes, Message: "No nodes selected"})
	case complete == s.Total:
		msg := fmt.Sprintf("All %d nodes run %s", s.Total, hash)
		if s.Total == 1 {
			msg = "The 1 node runs " + hash
		}
		set(metav1.Condition{Type: ConditionComplete, Status: metav1.ConditionTrue, Reason: ReasonComplete, Message: msg})
	default:
		set(metav1.Condition{Type: ConditionComplete, Status: metav1.ConditionFalse, Reason: ReasonIncomplete,
			Message: fmt.Sprintf("%d/%d nodes run %s%s", complete, s.Total, hash, notReporting)})
	}

	if len(degraded)+len(refused) > 0 {
		reason := ReasonNodesDegraded
		if len(degraded) == 0 {
			reason = ReasonUnreconcilable
		}
		set(metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: reason,
			Message: degradedMessage(append(slices.Clone(degraded), refused...))})
	} else {
		set(metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionFalse, Reason: ReasonAsExpected, Message: "No node is degraded"})
	}
	return out
}

// degradedMessage names the nodes and their reasons within MaxMessageLen.
func degradedMessage(nodes []Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed to refresh: ", api.Count(len(nodes), "node"))
	for i, n := range nodes {
		entry := fmt.Sprintf("%s (%s: %s)", n.Name, n.State, api.Truncate(n.ReasonText(), 200))
		if i > 0 {
			entry = "; " + entry
		}
		if b.Len()+len(entry) > MaxMessageLen-32 {
			fmt.Fprintf(&b, "; and %d more", len(nodes)-i)
			break
		}
		b.WriteString(entry)
	}
	return b.String()
}

// names lists nodes by name, at most ten of them.
func names(nodes []Node) string {
	var b strings.Builder
	for i, n := range nodes {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(nodes)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.Name)
	}
	return b.String()
}
