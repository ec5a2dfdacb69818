package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func snap(hash string) *Snapshot {
	return &Snapshot{Config: []byte("payload " + hash), Hash: hash}
}

func nodeWith(ann map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u1", Annotations: ann}}
}

// upgrading is a Node in the middle of an in-place upgrade.
func upgrading() *corev1.Node {
	return nodeWith(map[string]string{mcdDesiredConfig: "rendered-2", mcdCurrentConfig: "rendered-1"})
}

func outcome(s *Snapshot, result api.Outcome, reason string) LastRefresh {
	return LastRefresh{Seq: 7, Digest: s.digest(), Hash: s.Hash, Outcome: result, Reason: reason, Message: "applied " + s.Hash}
}

func TestDecide(t *testing.T) {
	v2 := snap("v2")
	badRules := snap("v2")
	badRules.NoRebootPaths = []byte(`[{"path": "/etc/x", "action": "Explode"}]`)
	retried := nodeWith(map[string]string{api.AnnotationRetry: "please"})
	deleting := nodeWith(nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}

	type want struct {
		action    Action
		state     string // "" for no report
		current   string
		desired   string
		reason    string // substring
		eventType string // "" for no event
		event     string // Event reason
		wait      bool
	}
	cases := []struct {
		name string
		in   Inputs
		want want
	}{
		{"nothing seen yet: the node keeps what it says", Inputs{RecordHash: "v1"}, want{}},
		{"an unsettled rollback: Degraded before anything else, recovery retried", Inputs{RecordHash: "v1", Snapshot: v2, Pending: "phase rollingback"},
			want{action: ActRefresh, state: api.StateDegraded, current: "v1", desired: "v2", reason: "not settled (phase rollingback)", eventType: "Warning", event: EventFailed}},
		{"an unsettled rollback with the record at the hash: never Done, recovery retried", Inputs{RecordHash: "v2", Snapshot: v2, Pending: "phase rollingback",
			Last: outcome(v2, api.OutcomeApplied, "")},
			want{action: ActRefresh, state: api.StateDegraded, current: "v2", desired: "v2", reason: "not settled", eventType: "Warning", event: EventFailed}},
		{"an unsettled rollback, retry backing off", Inputs{RecordHash: "v1", Snapshot: v2, Pending: "phase rollingback", Now: t0, MaxAttempts: 3,
			Backoff: Backoff{1, t0.Add(time.Minute)},
			Last:    outcome(v2, api.OutcomeFailed, "restore failed: read-only file system")},
			want{state: api.StateDegraded, current: "v1", desired: "v2", reason: "read-only file system", eventType: "Warning", event: EventFailed, wait: true}},
		{"an unsettled rollback, failure cap reached: gave up, no more attempts", Inputs{RecordHash: "v1", Snapshot: v2, Pending: "phase rolledback", Now: t0, MaxAttempts: 3,
			Backoff: Backoff{3, t0.Add(-time.Minute)},
			Last:    outcome(v2, api.OutcomeFailed, "Reload crio.service failed")},
			want{state: api.StateDegraded, current: "v1", desired: "v2", reason: "gave up after 3 attempts", eventType: "Warning", event: EventFailed}},
		{"an unsettled rollback before any payload: Degraded", Inputs{RecordHash: "v1", Pending: "phase rollingback"},
			want{state: api.StateDegraded, current: "v1", desired: "v1", reason: "not settled", eventType: "Warning", event: EventFailed}},
		{"no NodePool label and no fixed ConfigMap", Inputs{RecordHash: "v1", Snapshot: &Snapshot{NoPool: true, Problem: "no label"}},
			want{state: api.StateDegraded, current: "v1", desired: "v1", reason: ReasonNoNodePool, eventType: "Warning", event: EventFailed}},
		{"ConfigMap missing: the node stays at its record, an Event says why", Inputs{RecordHash: "v1", Snapshot: &Snapshot{Problem: "ConfigMap ns/x not found"},
			Last: outcome(v2, api.OutcomeRefused, "FIPS")},
			want{state: api.StateDone, current: "v1", desired: "v1", eventType: "Warning", event: EventFailed}},
		{"unparsable no-reboot-paths", Inputs{RecordHash: "v1", Snapshot: badRules},
			want{state: api.StateDegraded, current: "v1", desired: "v2", reason: "no-reboot-paths", eventType: "Warning", event: EventFailed}},
		{"in-place upgrade: deferred", Inputs{RecordHash: "v1", Snapshot: v2, Node: upgrading()},
			want{state: api.StateWorking, current: "v1", desired: "v2", reason: "deferred: an in-place upgrade", eventType: "Normal", event: EventDeferred}},
		{"deferred even when already there (the upgrade rewrites files)", Inputs{RecordHash: "v2", Snapshot: v2, Node: upgrading(),
			Last: outcome(v2, api.OutcomeApplied, "")},
			want{state: api.StateWorking, current: "v2", desired: "v2", reason: "deferred:", eventType: "Normal", event: EventDeferred}},
		{"node being deleted: deferred", Inputs{RecordHash: "v1", Snapshot: v2, Node: deleting},
			want{state: api.StateWorking, current: "v1", desired: "v2", reason: "being deleted", eventType: "Normal", event: EventDeferred}},
		{"new content: refresh", Inputs{RecordHash: "v1", Snapshot: v2, Node: nodeWith(nil)},
			want{action: ActRefresh, state: api.StateWorking, current: "v1", desired: "v2"}},
		{"no Node object: refresh anyway (the report waits for the Node)", Inputs{RecordHash: "v1", Snapshot: v2},
			want{action: ActRefresh, state: api.StateWorking, current: "v1", desired: "v2"}},
		{"record already at the hash (a restart): Done, nothing run", Inputs{RecordHash: "v2", Snapshot: v2},
			want{state: api.StateDone, current: "v2", desired: "v2"}},
		{"just applied: Done with the applied Event", Inputs{RecordHash: "v2", Snapshot: v2, Last: outcome(v2, api.OutcomeApplied, "")},
			want{state: api.StateDone, current: "v2", desired: "v2", eventType: "Normal", event: EventApplied}},
		{"noop: Done, no Event", Inputs{RecordHash: "v2", Snapshot: v2, Last: LastRefresh{Seq: 3, Digest: v2.digest(), Hash: "v2", Outcome: api.OutcomeNoop}},
			want{state: api.StateDone, current: "v2", desired: "v2"}},
		{"applied but the record was reset: refresh again", Inputs{RecordHash: "", Snapshot: v2, Last: outcome(v2, api.OutcomeApplied, "")},
			want{action: ActRefresh, state: api.StateWorking, current: "", desired: "v2"}},
		{"refused: Unreconcilable until the content changes", Inputs{RecordHash: "v1", Snapshot: v2, Last: outcome(v2, api.OutcomeRefused, "FIPS mode change requires a reboot")},
			want{state: api.StateUnreconcilable, current: "v1", desired: "v2", reason: "FIPS", eventType: "Warning", event: EventRefused}},
		{"refused, then new content: refresh", Inputs{RecordHash: "v1", Snapshot: snap("v3"), Last: outcome(v2, api.OutcomeRefused, "FIPS")},
			want{action: ActRefresh, state: api.StateWorking, current: "v1", desired: "v3"}},
		{"invalid payload: Degraded until the content changes", Inputs{RecordHash: "v1", Snapshot: v2, Last: outcome(v2, api.OutcomeInvalid, "desired payload: bad gzip")},
			want{state: api.StateDegraded, current: "v1", desired: "v2", reason: "invalid payload", eventType: "Warning", event: EventFailed}},
		{"failed, backing off", Inputs{RecordHash: "v1", Snapshot: v2, MaxAttempts: 3, Now: t0,
			Backoff: Backoff{1, t0.Add(time.Second)},
			Last:    outcome(v2, api.OutcomeFailed, "Reload crio.service: failed")},
			want{state: api.StateDegraded, current: "v1", desired: "v2", reason: "attempt 1 of 3", eventType: "Warning", event: EventFailed, wait: true}},
		{"failed, backoff over: refresh again", Inputs{RecordHash: "v1", Snapshot: v2, MaxAttempts: 3, Now: t0.Add(2 * time.Second),
			Backoff: Backoff{2, t0.Add(time.Second)},
			Last:    outcome(v2, api.OutcomeFailed, "Reload crio.service: failed")},
			want{action: ActRefresh, state: api.StateWorking, current: "v1", desired: "v2"}},
		{"failure cap reached: Degraded for good", Inputs{RecordHash: "v1", Snapshot: v2, MaxAttempts: 3, Now: t0.Add(time.Hour),
			Backoff: Backoff{3, t0},
			Last:    outcome(v2, api.OutcomeFailed, "Reload crio.service: failed")},
			want{state: api.StateDegraded, current: "v1", desired: "v2", reason: "gave up after 3 attempts", eventType: "Warning", event: EventFailed}},
		{"failure cap, an operator asks again", Inputs{RecordHash: "v1", Snapshot: v2, MaxAttempts: 3, Now: t0, Node: retried,
			Backoff: Backoff{3, t0.Add(time.Minute)},
			Last:    outcome(v2, api.OutcomeFailed, "Reload crio.service: failed")},
			want{action: ActRefresh, state: api.StateWorking, current: "v1", desired: "v2"}},
		{"failure cap, the content changes", Inputs{RecordHash: "v1", Snapshot: snap("v3"), MaxAttempts: 3, Now: t0,
			Backoff: Backoff{3, t0.Add(time.Minute)},
			Last:    outcome(v2, api.OutcomeFailed, "Reload crio.service: failed")},
			want{action: ActRefresh, state: api.StateWorking, current: "v1", desired: "v3"}},
		{"drift reported with the state", Inputs{RecordHash: "v2", Snapshot: v2, Drift: "/etc/containers/registries.conf"},
			want{state: api.StateDone, current: "v2", desired: "v2"}},
		{"drift healed when asked", Inputs{RecordHash: "v2", Snapshot: v2, Drift: "/etc/containers/registries.conf", Heal: true},
			want{action: ActHeal, state: api.StateDone, current: "v2", desired: "v2"}},
		{"a heal that did not help is not repeated", Inputs{RecordHash: "v2", Snapshot: v2, Drift: "/etc/a", Heal: true, LastHeal: "/etc/a"},
			want{state: api.StateDone, current: "v2", desired: "v2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.in)
			assert.Equal(t, c.want.action, d.Action, "action")
			if c.want.state == "" {
				assert.Nil(t, d.Report)
			} else {
				require.NotNil(t, d.Report)
				assert.Equal(t, c.want.state, d.Report.State)
				assert.Equal(t, c.want.current, d.Report.Current, "current")
				assert.Equal(t, c.want.desired, d.Report.Desired, "desired")
				assert.Contains(t, d.Report.Reason, c.want.reason)
				if c.want.reason == "" {
					assert.Empty(t, d.Report.Reason)
				}
				assert.Equal(t, c.in.Drift, d.Report.Drift, "drift is reported as found")
			}
			if c.want.eventType == "" {
				assert.Nil(t, d.Event)
			} else {
				require.NotNil(t, d.Event)
				assert.Equal(t, c.want.eventType, d.Event.Type)
				assert.Equal(t, c.want.event, d.Event.Reason)
				assert.NotEmpty(t, d.EventKey)
			}
			assert.Equal(t, c.want.wait, d.Wait > 0, "wait %s", d.Wait)
			// Every Degraded or Unreconcilable report comes with a Warning Event.
			if d.Report != nil && (d.Report.State == api.StateDegraded || d.Report.State == api.StateUnreconcilable) {
				require.NotNil(t, d.Event, "a %s report without an Event", d.Report.State)
				assert.Equal(t, corev1.EventTypeWarning, d.Event.Type)
			}
			// Deciding twice on the same facts gives the same answer (and the same Event key).
			assert.Equal(t, d, Decide(c.in))
		})
	}
}

// The reported bug: Done, then an in-place upgrade (desiredConfig != currentConfig) with no new
// payload, then the upgrade ends. The node must end Done, not stay Working.
func TestDecideDeferralEndsDoneWithoutNewContent(t *testing.T) {
	v2 := snap("v2")
	last := outcome(v2, api.OutcomeApplied, "")
	steady := nodeWith(map[string]string{mcdDesiredConfig: "rendered-1", mcdCurrentConfig: "rendered-1", mcdState: "Done"})
	d := Decide(Inputs{RecordHash: "v2", Snapshot: v2, Node: steady, Last: last})
	assert.Equal(t, api.StateDone, d.Report.State)
	d = Decide(Inputs{RecordHash: "v2", Snapshot: v2, Node: upgrading(), Last: last})
	assert.Equal(t, api.StateWorking, d.Report.State)
	done := nodeWith(map[string]string{mcdDesiredConfig: "rendered-2", mcdCurrentConfig: "rendered-2", mcdState: "Done"})
	d = Decide(Inputs{RecordHash: "v2", Snapshot: v2, Node: done, Last: last})
	assert.Equal(t, ActNone, d.Action)
	assert.Equal(t, api.NodeStatus{Current: "v2", Desired: "v2", State: api.StateDone}, *d.Report)
}

// The Node's own annotations never steer the decision: a hand-edited or recreated Node gets the same
// report as one that says the truth, and the reporter then corrects it.
func TestDecideIgnoresTheNodesOwnAnnotations(t *testing.T) {
	v2 := snap("v2")
	last := outcome(v2, api.OutcomeApplied, "")
	truthful := Decide(Inputs{RecordHash: "v2", Snapshot: v2, Last: last,
		Node: nodeWith(map[string]string{api.AnnotationCurrent: "v2", api.AnnotationDesired: "v2", api.AnnotationState: api.StateDone})})
	for _, n := range []*corev1.Node{
		nodeWith(map[string]string{api.AnnotationCurrent: "v1", api.AnnotationDesired: "v9", api.AnnotationState: api.StateDegraded, api.AnnotationReason: "edited"}),
		nodeWith(nil), // recreated
	} {
		assert.Equal(t, *truthful.Report, *Decide(Inputs{RecordHash: "v2", Snapshot: v2, Last: last, Node: n}).Report)
	}
}

// TestNextOutcomeCountsAttemptsPerContent runs the loop's accounting of refreshes that conclude one
// after another (concluded, the backoff's conclude, and work's rate-limited requeue of a failure) and
// reads the attempts as Decide does, from the work queue's limiter.
func TestNextOutcomeCountsAttemptsPerContent(t *testing.T) {
	v2, v3 := snap("v2"), snap("v3")
	r := newRetries(time.Hour, 10*time.Hour) // long delays: "the next attempt is later" holds however slow the machine
	var last LastRefresh
	step := func(s *Snapshot, result api.Outcome, n *corev1.Node) int {
		out := concluded(last, s.digest(), s.Hash, result, "boom", n)
		r.conclude(last, out)
		if result == api.OutcomeFailed {
			assert.Positive(t, r.When(workKey)) // work: a failed reconcile comes back rate-limited
		}
		last = out
		return r.state(workKey).Failures
	}
	for i := 1; i <= 3; i++ {
		assert.Equal(t, i, step(v2, api.OutcomeFailed, nil))
		assert.Equal(t, i, last.Seq)
		assert.True(t, r.state(workKey).Until.After(time.Now()), "the next attempt is the limiter's")
	}
	retried := nodeWith(map[string]string{api.AnnotationRetry: "1"})
	assert.Equal(t, 1, step(v2, api.OutcomeFailed, retried), "an operator's retry starts the count over")
	assert.Equal(t, "1", last.RetryToken)
	assert.Equal(t, 2, step(v2, api.OutcomeFailed, retried))
	assert.Equal(t, 1, step(v3, api.OutcomeFailed, retried), "new content starts the count over")
	assert.Zero(t, step(v3, api.OutcomeApplied, retried))
	assert.Zero(t, r.state(workKey).Until, "a success leaves no retry pending")
}

func TestDecideEventKeysChangeWithEachOutcome(t *testing.T) {
	v2 := snap("v2")
	in := Inputs{RecordHash: "v1", Snapshot: v2, MaxAttempts: 3, Now: t0, Backoff: Backoff{1, t0.Add(time.Second)},
		Last: outcome(v2, api.OutcomeFailed, "boom")}
	first := Decide(in)
	in.Last.Seq, in.Backoff.Failures = 8, 2
	second := Decide(in)
	assert.NotEqual(t, first.EventKey, second.EventKey, "each failed attempt has its Event")
	in.Backoff.Failures, in.Now = 3, t0.Add(time.Hour)
	capped := Decide(in)
	assert.NotEqual(t, second.EventKey, capped.EventKey, "giving up is announced")
	assert.True(t, strings.Contains(capped.Event.Message, api.AnnotationRetry), "the Event says how to retry")
}

func TestAppliedMessage(t *testing.T) {
	p := &plan.Plan{Actions: []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload}},
		Changes: []plan.Change{{Path: GlobalPullSecretPath, Delegated: true, Reason: "owned by the syncer"}}}
	r := &apply.Result{Plan: p, Hash: "v2", FilesWritten: 2}
	assert.Equal(t, "applied v2: 2 files, 1 unit action, no reboot; 1 delegated, not written: /var/lib/kubelet/config.json (owned by the syncer)", appliedMessage(r))
	r.ActionsSkipped = true
	assert.Contains(t, appliedMessage(r), "1 unit action skipped")
	assert.Equal(t, []string(nil), delegatedChanges(&apply.Result{Plan: &plan.Plan{}}))
}
