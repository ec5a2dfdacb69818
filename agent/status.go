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
}

func (s Status) annotations() map[string]string {
	return map[string]string{
		AnnotationCurrent: s.Current,
		AnnotationDesired: s.Desired,
		AnnotationState:   s.State,
		AnnotationReason:  truncate(s.Reason, MaxReasonLen),
	}
}

// statusOf reads a Status back from annotations.
func statusOf(ann map[string]string) Status {
	return Status{Current: ann[AnnotationCurrent], Desired: ann[AnnotationDesired], State: ann[AnnotationState], Reason: ann[AnnotationReason]}
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
