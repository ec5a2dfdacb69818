package agent

import (
	"strings"
	"unicode/utf8"
)

// Node annotations the agent owns. The NodePool's ConfigRefresh conditions are computed from them.
const (
	AnnotationCurrent = "hypershift.openshift.io/currentRefreshConfig"
	AnnotationDesired = "hypershift.openshift.io/desiredRefreshConfig"
	AnnotationState   = "hypershift.openshift.io/refreshState"
	AnnotationReason  = "hypershift.openshift.io/refreshReason"
)

// State values of AnnotationState.
const (
	StateDone           = "Done"
	StateWorking        = "Working"
	StateDegraded       = "Degraded"
	StateUnreconcilable = "Unreconcilable"
)

// MaxReasonLen bounds AnnotationReason.
const MaxReasonLen = 1024

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
