package api

import (
	"fmt"
	"strings"
)

// NodeStatus is one node's refresh status: what its agent says in the Node's annotations. The agent
// writes it (Annotations), pacing, fleet, status and the controller read it (FromAnnotations); no
// one else parses the annotations.
type NodeStatus struct {
	Current string // AnnotationCurrent: the hash applied last
	Desired string // AnnotationDesired: the hash the agent works toward
	State   string // AnnotationState: StateDone, StateWorking, StateDegraded, StateUnreconcilable; "" when no agent reported
	// Reason says why, for a person (never file contents). A node waiting for a pacing slot has no
	// Reason: Waiting says it.
	Reason string
	// Drift lists the recorded files changed on the node, comma-separated; "" when none.
	Drift string
	// Waiting is set while the node is Working but waits for a pacing slot.
	Waiting *Waiting
}

// Waiting is a node's wait for one of its pool's pacing slots (docs/pacing.md).
type Waiting struct {
	InUse int `json:"inUse"` // slots in use, of the pool's Slots, as of the node's last attempt
	Slots int `json:"slots"`
	// Halted: as many of the pool's nodes failed for this content (and keep their slots) as it has
	// slots, so no slot frees until new content comes; Failed counts those nodes.
	Halted bool `json:"halted,omitempty"`
	Failed int  `json:"failed,omitempty"`
}

// On the wire a wait is the reason text String writes: "waiting for a refresh slot (N/M in use)",
// "(N/M in use; its turn in the pool's order has not come)" while a slot is free but another node's
// turn, then "; halted: K nodes failed" once the pool halted. parseWaiting reads every form agents
// wrote (before NodeStatus, and before the turn and the singular "1 node" were said).
const turnNotCome = "; its turn in the pool's order has not come"

// String is the wait as its reason text.
func (w Waiting) String() string {
	if w.Slots == 0 {
		return ReasonWaitingPrefix // read from a reason without counts
	}
	turn := ""
	if w.InUse < w.Slots {
		// A free slot is not this node's yet: the pool's order gives it to the node before it first.
		turn = turnNotCome
	}
	r := fmt.Sprintf("%s (%d/%d in use%s)", ReasonWaitingPrefix, w.InUse, w.Slots, turn)
	if w.Halted {
		r += "; halted: " + Count(w.Failed, "node") + " failed"
	}
	return r
}

// parseWaiting reads a wait back from its reason text; nil when reason is not one. A reason that
// says it waits but not in a form above (hand-written, or an agent of another version) is still a
// wait, with its counts unknown.
func parseWaiting(reason string) *Waiting {
	if !strings.HasPrefix(reason, ReasonWaitingPrefix) {
		return nil
	}
	var w Waiting
	head, halted, _ := strings.Cut(reason, "; halted: ")
	_, _ = fmt.Sscanf(strings.TrimPrefix(head, ReasonWaitingPrefix), " (%d/%d", &w.InUse, &w.Slots)
	if halted != "" {
		w.Halted = true
		_, _ = fmt.Sscanf(halted, "%d", &w.Failed)
	}
	return &w
}

// ReasonText is the reason annotation's value: the wait when waiting, else Reason.
func (s NodeStatus) ReasonText() string {
	if s.Waiting != nil {
		return s.Waiting.String()
	}
	return s.Reason
}

// Refreshing says the node shows itself changing the node: Working and not waiting for a slot.
func (s NodeStatus) Refreshing() bool { return s.State == StateWorking && s.Waiting == nil }

// Equal compares two statuses field by field (Waiting by value).
func (s NodeStatus) Equal(o NodeStatus) bool {
	if (s.Waiting == nil) != (o.Waiting == nil) || s.Waiting != nil && *s.Waiting != *o.Waiting {
		return false
	}
	s.Waiting, o.Waiting = nil, nil
	return s == o
}

// StatusAnnotations are the Node annotations a NodeStatus is written to; the agent owns them.
var StatusAnnotations = []string{AnnotationCurrent, AnnotationDesired, AnnotationState, AnnotationReason, AnnotationDrift}

// FromAnnotations reads a node's status from its annotations (nil reads as no status).
func FromAnnotations(a map[string]string) NodeStatus {
	s := NodeStatus{Current: a[AnnotationCurrent], Desired: a[AnnotationDesired], State: a[AnnotationState],
		Reason: a[AnnotationReason], Drift: a[AnnotationDrift]}
	if w := parseWaiting(s.Reason); w != nil {
		s.Waiting, s.Reason = w, ""
	}
	return s
}

// Annotations is the status as annotations, bounded (MaxReasonLen). AnnotationDrift is absent
// when there is no drift: the agent's patch removes it then.
func (s NodeStatus) Annotations() map[string]string {
	a := map[string]string{
		AnnotationCurrent: s.Current,
		AnnotationDesired: s.Desired,
		AnnotationState:   s.State,
		AnnotationReason:  Truncate(s.ReasonText(), MaxReasonLen),
	}
	if s.Drift != "" {
		a[AnnotationDrift] = Truncate(s.Drift, MaxReasonLen)
	}
	return a
}

// Bounded is s as FromAnnotations reads back what Annotations wrote: reason and drift cut to
// MaxReasonLen, a reason that reads as a wait a wait. Compare statuses in this form.
func (s NodeStatus) Bounded() NodeStatus {
	return FromAnnotations(s.Annotations())
}

// Outcome is how one refresh ended: apply's result, the agent's memory of it, and the
// refresh_agent_refreshes_total metric's result label.
type Outcome string

const (
	OutcomeApplied Outcome = "applied"
	OutcomeNoop    Outcome = "noop"
	OutcomeRefused Outcome = "refused" // a change needs a reboot or lies outside the policy: nothing written
	OutcomeFailed  Outcome = "failed"  // rolled back (or the rollback is kept for recovery)
	// OutcomeInvalid: the payload or its rules could not be decoded or planned (counted as failed
	// in metrics).
	OutcomeInvalid Outcome = "invalid"
	// OutcomePlanned: a dry run that would apply; nothing was written.
	OutcomePlanned Outcome = "planned"
	// OutcomeDeferred: a refresh held back behind a machine-config daemon update (metrics only).
	OutcomeDeferred Outcome = "deferred"
)

// Truncate cuts s to at most n bytes of valid UTF-8 on a rune boundary, marking the cut with "…". Reasons, Events,
// conditions and messages that quote a payload's keys all go through it.
func Truncate(s string, n int) string {
	// Invalid UTF-8 (a payload's key can hold any bytes) would come back from the API server as
	// U+FFFD: replaced here, so that what is written is what is read back.
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	const mark = "…"
	if n < len(mark) {
		return ""
	}
	// A rune split by the cut is dropped.
	return strings.TrimSpace(strings.ToValidUTF8(s[:n-len(mark)], "")) + mark
}

// Short is a hash as people read it: its first 12 characters.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
