package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
)

func node(name, current, desired, state, reason string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		api.AnnotationCurrent: current, api.AnnotationDesired: desired, api.AnnotationState: state, api.AnnotationReason: reason}}}
}

type want struct {
	progressing, complete, degraded metav1.ConditionStatus
	message                         map[string]string // condition type -> substring
}

func TestConditions(t *testing.T) {
	done := func(n, h string) corev1.Node { return node(n, h, h, api.StateDone, "") }
	cases := []struct {
		name  string
		nodes []corev1.Node
		hash  string
		want  want
	}{
		{"new hash seen by no node yet", []corev1.Node{done("a", "h1"), done("b", "h1"), done("c", "h1")}, "h2",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{ConditionProgressing: "Refreshing 3/3 nodes", ConditionComplete: "0/3 nodes run h2"}}},
		{"progressing", []corev1.Node{node("a", "h1", "h2", api.StateWorking, ""), done("b", "h1"), done("c", "h1")}, "h2",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, nil}},
		{"per-node completion", []corev1.Node{done("a", "h2"), node("b", "h1", "h2", api.StateWorking, ""), done("c", "h1"), done("d", "h1"), done("e", "h1")}, "h2",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{ConditionProgressing: "Refreshing 4/5 nodes", ConditionComplete: "1/5 nodes run h2"}}},
		{"all complete", []corev1.Node{done("a", "h2"), done("b", "h2"), done("c", "h2")}, "h2",
			want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, map[string]string{ConditionComplete: "All 3 nodes run h2"}}},
		{"a failure", []corev1.Node{done("a", "h2"), node("b", "h1", "h2", api.StateDegraded, "Reload crio.service: job result \"failed\"; rolled back"), done("c", "h2")}, "h2",
			want{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, map[string]string{ConditionDegraded: `b (Degraded: Reload crio.service: job result "failed"; rolled back)`}}},
		{"a refusal", []corev1.Node{done("a", "h1"), node("b", "h1", "h2", api.StateUnreconcilable, "FIPS mode change requires a reboot (false -> true)"), node("c", "h1", "h2", api.StateWorking, "")}, "h2",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionTrue, map[string]string{ConditionDegraded: "b (Unreconcilable: FIPS mode change"}}},
		{"deferred node is still refreshing", []corev1.Node{done("a", "h2"), node("b", "h1", "h2", api.StateWorking, "deferred: an in-place upgrade is in progress")}, "h2",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{ConditionProgressing: "Refreshing 1/2 nodes"}}},
		// Issue 24: a node no agent reported on is not refreshing; what it runs is unknown.
		{"node added mid-refresh, no agent on it yet", []corev1.Node{done("a", "h2"), done("b", "h2"), node("new", "", "", "", "")}, "h2",
			want{metav1.ConditionUnknown, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{
				ConditionProgressing: "1/3 nodes not reporting (no refresh annotation: no agent has run there): new",
				ConditionComplete:    "2/3 nodes run h2; 1 node not reporting (no agent): new"}}},
		{"refreshing beside a node without an agent", []corev1.Node{node("a", "h1", "h2", api.StateWorking, ""), node("new", "", "", "", "")}, "h2",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{
				ConditionProgressing: "Refreshing 1/2 nodes toward h2; 1 node not reporting (no agent): new"}}},
		{"node removed mid-refresh", []corev1.Node{done("a", "h2"), done("b", "h2")}, "h2",
			want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, nil}},
		{"new hash supersedes an unfinished one", []corev1.Node{
			node("a", "h1", "h2", api.StateDegraded, "old failure"), done("b", "h2"), node("c", "h1", "h2", api.StateWorking, "")}, "h3",
			want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{ConditionProgressing: "Refreshing 3/3 nodes"}}},
		// Issue 24: no nodes is never Complete (the controller says False NoNodes too).
		{"no nodes", nil, "h1", want{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse, map[string]string{ConditionProgressing: "No nodes", ConditionComplete: "No nodes selected"}}},
		{"one node, singular", []corev1.Node{done("a", "h2")}, "h2",
			want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, map[string]string{ConditionComplete: "The 1 node runs h2"}}},
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := Conditions(tc.nodes, tc.hash, nil, now)
			require.Len(t, conds, 3)
			for typ, status := range map[string]metav1.ConditionStatus{ConditionProgressing: tc.want.progressing, ConditionComplete: tc.want.complete, ConditionDegraded: tc.want.degraded} {
				c := meta.FindStatusCondition(conds, typ)
				require.NotNil(t, c, typ)
				assert.Equal(t, status, c.Status, "%s: %s", typ, c.Message)
				assert.NotEmpty(t, c.Reason)
				assert.LessOrEqual(t, len(c.Message), MaxMessageLen)
			}
			if tc.nodes == nil {
				assert.Equal(t, ReasonNoNodes, meta.FindStatusCondition(conds, ConditionComplete).Reason)
			}
			for typ, sub := range tc.want.message {
				assert.Contains(t, meta.FindStatusCondition(conds, typ).Message, sub)
			}
		})
	}
}

func TestTransitionTimesAreKept(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	nodes := []corev1.Node{node("a", "h1", "h2", api.StateWorking, "")}
	conds := Conditions(nodes, "h2", nil, t0)
	conds = Conditions(nodes, "h2", conds, t0.Add(time.Minute))
	assert.Equal(t, t0, meta.FindStatusCondition(conds, ConditionProgressing).LastTransitionTime.Time.UTC(), "unchanged status keeps its time")
	conds = Conditions([]corev1.Node{node("a", "h2", "h2", api.StateDone, "")}, "h2", conds, t0.Add(2*time.Minute))
	assert.Equal(t, t0.Add(2*time.Minute), meta.FindStatusCondition(conds, ConditionComplete).LastTransitionTime.Time.UTC())
}

func TestDegradedMessageIsBounded(t *testing.T) {
	var nodes []corev1.Node
	for i := 0; i < 200; i++ {
		nodes = append(nodes, node("node-"+strings.Repeat("x", 20)+string(rune('a'+i%26)), "h1", "h2", api.StateDegraded, strings.Repeat("reason ", 100)))
	}
	c := meta.FindStatusCondition(Conditions(nodes, "h2", nil, time.Now()), ConditionDegraded)
	assert.LessOrEqual(t, len(c.Message), MaxMessageLen)
	assert.Contains(t, c.Message, "200 nodes failed")
	assert.Contains(t, c.Message, "more")
}

func TestPacedPoolHalts(t *testing.T) {
	node := func(name, cur, des, state, reason string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{api.AnnotationCurrent: cur,
			api.AnnotationDesired: des, api.AnnotationState: state, api.AnnotationReason: reason}}}
	}
	nodes := []corev1.Node{
		node("a", "h0", "h1", api.StateDegraded, "reload failed"),
		node("b", "h0", "h1", api.StateDegraded, "reload failed"),
		node("c", "h0", "h1", api.StateWorking, "waiting for a refresh slot (2/2 in use)"),
		node("d", "h1", "h1", api.StateDone, ""),
	}
	progressing := func(cs []metav1.Condition) metav1.Condition {
		for _, c := range cs {
			if c.Type == ConditionProgressing {
				return c
			}
		}
		t.Fatal("no Progressing condition")
		return metav1.Condition{}
	}
	now := time.Unix(1000, 0)
	c := progressing(PacedConditions(nodes, "h1", nil, now, 2))
	if c.Reason != ReasonHalted || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "halted: 2 nodes failed") {
		t.Fatalf("2 failed of 2 slots: %+v", c)
	}
	if c := progressing(PacedConditions(nodes, "h1", nil, now, 3)); c.Reason != ReasonRefreshing {
		t.Fatalf("2 failed of 3 slots is not halted: %+v", c)
	}
	if c := progressing(Conditions(nodes, "h1", nil, now)); c.Reason != ReasonRefreshing {
		t.Fatalf("unknown slots, no node says halted: %+v", c)
	}
	// Without the limit, the waiting nodes' reason says it (their agents count the failed slots).
	nodes[2] = node("c", "h0", "h1", api.StateWorking, "waiting for a refresh slot (2/2 in use); halted: 2 nodes failed")
	if c := progressing(Conditions(nodes, "h1", nil, now)); c.Reason != ReasonHalted {
		t.Fatalf("a waiting node says halted: %+v", c)
	}
}
