package agent

import (
	"strings"
	"unicode/utf8"

	"github.com/openshift/refresh-agent/api"
)

// Aliases of the shared contract in package api, for the agent's callers and tests.
const (
	AnnotationCurrent = api.AnnotationCurrent
	AnnotationDesired = api.AnnotationDesired
	AnnotationState   = api.AnnotationState
	AnnotationReason  = api.AnnotationReason
	AnnotationDrift   = api.AnnotationDrift
	// AnnotationRetry is set by an operator (any new value) to make a node that gave up on a payload
	// after --max-attempts failures try it again.
	AnnotationRetry = "hypershift.openshift.io/refreshRetry"

	StateDone           = api.StateDone
	StateWorking        = api.StateWorking
	StateDegraded       = api.StateDegraded
	StateUnreconcilable = api.StateUnreconcilable

	MaxReasonLen = api.MaxReasonLen
)

// Status is what the node's annotations say.
type Status struct {
	Current, Desired, State, Reason string
	// Drift lists the recorded files changed on the node (comma-separated, bounded); empty when none.
	Drift string
}

// annotations is the merge patch's annotations: the four states, and the drift annotation removed
// (null) when there is no drift.
func (s Status) annotations() map[string]any {
	var drift any
	if s.Drift != "" {
		drift = truncate(s.Drift, MaxReasonLen)
	}
	return map[string]any{
		AnnotationCurrent: s.Current,
		AnnotationDesired: s.Desired,
		AnnotationState:   s.State,
		AnnotationReason:  truncate(s.Reason, MaxReasonLen),
		AnnotationDrift:   drift,
	}
}

// statusOf reads a Status back from annotations.
func statusOf(ann map[string]string) Status {
	return Status{Current: ann[AnnotationCurrent], Desired: ann[AnnotationDesired], State: ann[AnnotationState],
		Reason: ann[AnnotationReason], Drift: ann[AnnotationDrift]}
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	s = s[:n-len(mark)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s) + mark
}
