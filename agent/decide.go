package agent

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
)

// ReasonNoNodePool is the Degraded reason of a node without the NodePool label when no fixed
// ConfigMap was given: it cannot know which payload is its own, so it writes nothing.
const ReasonNoNodePool = "no NodePool label"

// LastRefresh is what the last refresh concluded: with the work queue's backoff (Backoff), the
// loop's only memory between decisions.
type LastRefresh struct {
	Seq     int    // counts refreshes; keys each one's Event
	Digest  string // the snapshot content refreshed (Snapshot.digest)
	Hash    string
	Outcome api.Outcome // applied, noop, refused, failed or invalid
	Reason  string      // why it was refused or failed
	// Message is the applied Event's text.
	Message string
	// RetryToken is the Node's api.AnnotationRetry when a failure concluded: a new value asks for
	// another attempt, and starts the failures' count (Backoff) over.
	RetryToken string
}

// Inputs are everything a decision depends on.
type Inputs struct {
	Snapshot    *Snapshot    // nil until the source delivered one
	RecordHash  string       // the hash the node's record says was applied last ("" when none)
	Node        *corev1.Node // the Node as the watch has it (nil when it does not exist)
	Last        LastRefresh
	Backoff     Backoff // the work queue's: the failures in a row and when the next attempt may start
	MaxAttempts int
	Drift       string // the drift watch's finding, reported as is
	// Heal asks to write drifted files back (--drift=heal); LastHeal is the finding healed last, so
	// a heal that did not help is not repeated for the same finding.
	Heal     bool
	LastHeal string
	Now      time.Time
	// Pending names an unfinished transaction on the node (actions.Pending): a rollback that could
	// not complete, its journal and backups kept. "" when there is none.
	Pending string
}

// Action is what the loop does after a decision.
type Action int

const (
	ActNone Action = iota
	ActRefresh
	ActHeal // write the record's drifted files back
)

func (a Action) String() string {
	switch a {
	case ActRefresh:
		return "refresh"
	case ActHeal:
		return "heal"
	}
	return "none"
}

// Event is one Event on the Node.
type Event struct{ Type, Reason, Message string }

// Decision is what to do and what to report.
type Decision struct {
	Action Action
	// Report is what the node's annotations must say; nil leaves them as they are.
	Report *api.NodeStatus
	// Event goes out once per EventKey: deciding again on the same facts repeats nothing.
	Event    *Event
	EventKey string
	// Wait asks to decide again after this long (a failure's backoff); 0: only when something changes.
	Wait time.Duration
	// Rules are the parsed no-reboot-paths, for the refresh.
	Rules []allowlist.Rule
}

// Decide is the agent's level-triggered logic: from the desired content, the node's record, the Node
// and the last outcome, what to do and what the Node must say. It has no side effects; the loop runs
// it after every change and after every refresh, so whatever state the Node was left in (recreated,
// edited by hand, a deferral that ended without new content) converges to the same answer.
func Decide(in Inputs) Decision {
	d := decide(in)
	if d.Report != nil {
		d.Report.Drift = in.Drift
	}
	return d
}

func decide(in Inputs) Decision {
	rec, s, last := in.RecordHash, in.Snapshot, in.Last
	if in.Pending != "" {
		return pending(in)
	}
	if s == nil {
		return Decision{} // nothing seen yet: the Node keeps what it says
	}
	if s.NoPool {
		return Decision{Report: &api.NodeStatus{Current: rec, Desired: rec, State: api.StateDegraded, Reason: ReasonNoNodePool},
			Event:    &Event{corev1.EventTypeWarning, EventFailed, "nothing refreshed: " + s.Problem},
			EventKey: "nopool"}
	}
	if s.Problem != "" {
		// A deleted ConfigMap or a missing key changes nothing on the node: it stays at its record,
		// with nothing to work toward (an earlier verdict about other content no longer applies).
		// The Event says why.
		return Decision{Report: &api.NodeStatus{Current: rec, Desired: rec, State: api.StateDone},
			Event:    &Event{corev1.EventTypeWarning, EventFailed, "no desired payload: " + s.Problem},
			EventKey: "problem/" + s.Problem}
	}
	digest := s.digest()
	rules, err := allowlist.ParseRules(s.NoRebootPaths)
	if err != nil {
		reason := "no-reboot-paths: " + err.Error()
		return Decision{Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateDegraded, Reason: reason},
			Event:    &Event{corev1.EventTypeWarning, EventFailed, reason},
			EventKey: "rules/" + digest}
	}
	if r := deferReason(in.Node); r != "" {
		return Decision{Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateWorking, Reason: "deferred: " + r},
			Event:    &Event{corev1.EventTypeNormal, EventDeferred, "refresh deferred: " + r},
			EventKey: "deferred/" + s.Hash + "/" + r}
	}
	mine := last.Seq > 0 && last.Digest == digest
	seq := strconv.Itoa(last.Seq)
	if rec == s.Hash {
		d := Decision{Report: &api.NodeStatus{Current: rec, Desired: rec, State: api.StateDone}}
		if mine && (last.Outcome == api.OutcomeApplied || last.Outcome == api.OutcomeNoop) && last.Message != "" {
			d.Event, d.EventKey = &Event{corev1.EventTypeNormal, EventApplied, last.Message}, "outcome/"+seq
		}
		if in.Heal && in.Drift != "" && in.Drift != in.LastHeal {
			d.Action = ActHeal
		}
		return d
	}
	if mine {
		switch last.Outcome {
		case api.OutcomeRefused:
			return Decision{Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateUnreconcilable, Reason: last.Reason},
				Event:    &Event{corev1.EventTypeWarning, EventRefused, "refused: " + last.Reason},
				EventKey: "outcome/" + seq}
		case api.OutcomeInvalid:
			reason := "invalid payload: " + last.Reason
			return Decision{Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateDegraded, Reason: reason},
				Event:    &Event{corev1.EventTypeWarning, EventFailed, reason},
				EventKey: "outcome/" + seq}
		case api.OutcomeFailed:
			retryAsked, b := retryToken(in.Node) != last.RetryToken, in.Backoff
			if b.Failures >= max(in.MaxAttempts, 1) && !retryAsked {
				reason := fmt.Sprintf("%s (gave up after %d attempts; set the annotation %s to a new value to retry)",
					last.Reason, b.Failures, api.AnnotationRetry)
				return Decision{Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateDegraded, Reason: reason},
					Event:    &Event{corev1.EventTypeWarning, EventFailed, "failed, giving up: " + reason},
					EventKey: "outcome/" + seq + "/cap"}
			}
			if !retryAsked && in.Now.Before(b.Until) {
				reason := fmt.Sprintf("%s (attempt %d of %d; retrying)", last.Reason, b.Failures, max(in.MaxAttempts, 1))
				return Decision{Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateDegraded, Reason: reason},
					Event:    &Event{corev1.EventTypeWarning, EventFailed, "failed: " + reason},
					EventKey: "outcome/" + seq, Wait: b.Until.Sub(in.Now)}
			}
		}
		// Applied or noop, yet the record names another hash (the state dir was reset): again.
	}
	return Decision{Action: ActRefresh, Report: &api.NodeStatus{Current: rec, Desired: s.Hash, State: api.StateWorking}, Rules: rules}
}

// retryToken is the operator's retry annotation on the Node.
func retryToken(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	return n.Annotations[api.AnnotationRetry]
}

// concluded is what the loop remembers of a refresh of digest that ended with result (the failures'
// count is the backoff's: retries.conclude).
func concluded(last LastRefresh, digest, hash string, result api.Outcome, reason string, node *corev1.Node) LastRefresh {
	out := LastRefresh{Seq: last.Seq + 1, Digest: digest, Hash: hash, Outcome: result, Reason: reason}
	if result == api.OutcomeFailed {
		out.RetryToken = retryToken(node)
	}
	return out
}

// pending decides for a node whose last transaction is not settled (a rollback that could not
// complete): whatever the record says, it is Degraded until recovery completes, and recovery is
// retried (a refresh settles it first) with the failure backoff.
func pending(in Inputs) Decision {
	rec, s, last := in.RecordHash, in.Snapshot, in.Last
	reason := "an interrupted refresh is not settled (" + in.Pending + "): its journal and backups are kept and recovery is retried"
	if last.Outcome == api.OutcomeFailed && last.Reason != "" {
		reason += ": " + last.Reason
	}
	desired := rec
	if s != nil && s.Problem == "" && !s.NoPool {
		desired = s.Hash
	}
	d := Decision{Report: &api.NodeStatus{Current: rec, Desired: desired, State: api.StateDegraded, Reason: reason},
		Event:    &Event{corev1.EventTypeWarning, EventFailed, reason},
		EventKey: "pending/" + in.Pending}
	if s == nil || s.Problem != "" || s.NoPool {
		return d
	}
	rules, err := allowlist.ParseRules(s.NoRebootPaths)
	if err != nil {
		return d
	}
	if last.Outcome == api.OutcomeFailed {
		retryAsked, b := retryToken(in.Node) != last.RetryToken, in.Backoff
		if b.Failures >= max(in.MaxAttempts, 1) && !retryAsked {
			// The same cap as any failure: a unit that always fails is not restarted forever.
			d.Report.Reason = fmt.Sprintf("%s (gave up after %d attempts; set the annotation %s to a new value to retry)",
				reason, b.Failures, api.AnnotationRetry)
			d.Event = &Event{corev1.EventTypeWarning, EventFailed, "failed, giving up: " + d.Report.Reason}
			d.EventKey += "/cap"
			return d
		}
		if !retryAsked && in.Now.Before(b.Until) {
			d.Wait = b.Until.Sub(in.Now)
			return d
		}
	}
	d.Action, d.Rules = ActRefresh, rules
	return d
}
