package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/fleet"
)

func node(name, current, desired, state, reason string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.LabelNodePool: "p"},
		Annotations: map[string]string{api.AnnotationCurrent: current, api.AnnotationDesired: desired,
			api.AnnotationState: state, api.AnnotationReason: reason}}}
}

func TestConditionsCountNodes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nodes := []corev1.Node{node("a", "v2", "v2", api.StateDone, ""), node("b", "v1", "v2", api.StateWorking, ""),
		node("c", "v1", "v2", api.StateDegraded, "crio.service: reload failed")}
	conds := Conditions("p", "v2", Decision{}, nodes, nil, 3, now)
	require.Len(t, conds, 3)
	p := meta.FindStatusCondition(conds, fleet.ConditionProgressing)
	assert.Equal(t, metav1.ConditionTrue, p.Status)
	assert.Contains(t, p.Message, "1/3 nodes updated, 1 degraded")
	c := meta.FindStatusCondition(conds, fleet.ConditionComplete)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	d := meta.FindStatusCondition(conds, fleet.ConditionDegraded)
	assert.Equal(t, metav1.ConditionTrue, d.Status)
	assert.Contains(t, d.Message, "c (Degraded: crio.service: reload failed)")
	assert.NotContains(t, d.Message, "a (")
	assert.Equal(t, int64(3), d.ObservedGeneration)

	// Later, all done: Complete flips, Degraded flips; a condition whose status stays keeps its time.
	later := now.Add(time.Minute)
	nodes = []corev1.Node{node("a", "v2", "v2", api.StateDone, ""), node("b", "v2", "v2", api.StateDone, ""), node("c", "v2", "v2", api.StateDone, "")}
	paused := Decision{Reason: ReasonPaused, Message: "paused: MachineDeployment ns/p is rolling out (1/3 replicas updated)"}
	next := Conditions("p", "v2", paused, nodes, conds, 3, later)
	c = meta.FindStatusCondition(next, fleet.ConditionComplete)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Contains(t, c.Message, "3/3 nodes updated, 0 degraded")
	assert.True(t, c.LastTransitionTime.Time.Equal(later))
	p = meta.FindStatusCondition(next, fleet.ConditionProgressing)
	assert.Equal(t, ReasonPaused, p.Reason)
	assert.Contains(t, p.Message, "rolling out")
	assert.Equal(t, metav1.ConditionFalse, p.Status)
	assert.True(t, p.LastTransitionTime.Time.Equal(later), "True -> False")

	again := Conditions("p", "v2", paused, nodes, next, 3, later.Add(time.Hour))
	assert.True(t, sameConditions(again, next), "unchanged: no write, times kept")
}

func TestConditionsWithoutNodesOrPublication(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	conds := Conditions("p", "v2", Decision{}, nil, nil, 1, now)
	c := meta.FindStatusCondition(conds, fleet.ConditionComplete)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, ReasonNoNodes, c.Reason)
	assert.Contains(t, c.Message, api.LabelNodePool+"=p")

	d := Decision{Reason: ReasonPayloadMissing, Message: "token Secret ns/token-p-v1 not found: nothing published"}
	conds = Conditions("p", "", d, nil, nil, 1, now)
	p := meta.FindStatusCondition(conds, fleet.ConditionProgressing)
	assert.Equal(t, ReasonPayloadMissing, p.Reason)
	assert.Contains(t, p.Message, "token-p-v1")
	assert.Equal(t, ReasonNotPublished, meta.FindStatusCondition(conds, fleet.ConditionComplete).Reason)
}

func TestConditionsDegradedMessageIsBounded(t *testing.T) {
	var nodes []corev1.Node
	for i := range 200 {
		nodes = append(nodes, node(fmt.Sprintf("node-%03d", i), "v1", "v2", api.StateUnreconcilable, strings.Repeat("x", 500)))
	}
	conds := Conditions("p", "v2", Decision{}, nodes, nil, 1, time.Now())
	for _, c := range conds {
		assert.LessOrEqual(t, len(c.Message), fleet.MaxMessageLen, c.Type)
	}
	d := meta.FindStatusCondition(conds, fleet.ConditionDegraded)
	assert.Contains(t, d.Message, "0/200 nodes updated, 200 degraded")
	assert.Contains(t, d.Message, "node-000")
}

func TestMergeConditionsLeavesOthersAlone(t *testing.T) {
	hypershift := map[string]any{"type": "Ready", "status": "True", "severity": "", "reason": "AsExpected",
		"lastTransitionTime": "2025-01-01T00:00:00Z", "observedGeneration": int64(2)}
	stale := map[string]any{"type": fleet.ConditionComplete, "status": "False", "reason": "x", "lastTransitionTime": "2025-01-01T00:00:00Z"}
	list := []any{hypershift, stale}
	prev := readConditions(list)
	require.Len(t, prev, 1)
	assert.Equal(t, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), prev[0].LastTransitionTime.Time.UTC())
	own := Conditions("p", "v1", Decision{}, []corev1.Node{node("a", "v1", "v1", api.StateDone, "")}, prev, 1, time.Now())
	out := mergeConditions(list, own)
	require.Len(t, out, 4)
	assert.Equal(t, hypershift, out[0])
	assert.Len(t, readConditions(out), 3)
}
