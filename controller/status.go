package controller

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/fleet"
)

// Reasons on ConfigRefreshComplete beyond package fleet's.
const (
	ReasonNotPublished = "NotPublished"
	ReasonNoNodes      = fleet.ReasonNoNodes
)

var ownTypes = []string{fleet.ConditionProgressing, fleet.ConditionComplete, fleet.ConditionDegraded}

// Conditions computes the pool's three conditions: the nodes' progress toward the published hash
// (package fleet), with counts in every message, and the controller's own reason (a pause, a change
// left to the rollout, a payload it could not publish) on Progressing. previous holds the three
// conditions as they are, so that a condition whose status does not change keeps its transition time.
func Conditions(pool, published string, d Decision, nodes []corev1.Node, previous []metav1.Condition, generation int64, now time.Time) []metav1.Condition {
	var out []metav1.Condition
	if published == "" {
		reason, msg := d.Reason, d.Message
		if reason == "" {
			reason, msg = ReasonNotPublished, "nothing published yet"
		}
		out = []metav1.Condition{
			{Type: fleet.ConditionProgressing, Status: metav1.ConditionFalse, Reason: reason, Message: msg},
			{Type: fleet.ConditionComplete, Status: metav1.ConditionFalse, Reason: ReasonNotPublished, Message: "nothing published yet: " + msg},
			{Type: fleet.ConditionDegraded, Status: metav1.ConditionFalse, Reason: fleet.ReasonAsExpected, Message: "No node is degraded"},
		}
	} else {
		out = fleet.Conditions(nodes, published, nil, now)
		s := fleet.Summarize(nodes, published)
		degraded := len(s.By[fleet.PhaseDegraded]) + len(s.By[fleet.PhaseUnreconcilable])
		counts := fmt.Sprintf("%d/%d nodes updated, %d degraded", len(s.By[fleet.PhaseComplete]), s.Total, degraded)
		for i := range out {
			c := &out[i]
			switch c.Type {
			case fleet.ConditionProgressing:
				if d.Reason != "" {
					c.Reason, c.Message = d.Reason, d.Message
				}
				c.Message = counts + ": " + c.Message
			case fleet.ConditionComplete:
				if s.Total == 0 {
					c.Status, c.Reason = metav1.ConditionFalse, ReasonNoNodes
					c.Message = fmt.Sprintf("no guest Node carries %s=%s", api.LabelNodePool, pool)
				}
				c.Message = counts + ": " + c.Message
			case fleet.ConditionDegraded:
				c.Message = counts + ": " + c.Message
			}
			c.Message = api.Truncate(c.Message, fleet.MaxMessageLen)
		}
	}
	result := make([]metav1.Condition, 0, len(previous))
	for _, p := range previous {
		if isOwn(p.Type) {
			result = append(result, p)
		}
	}
	for _, c := range out {
		c.ObservedGeneration = generation
		c.LastTransitionTime = metav1.NewTime(now)
		meta.SetStatusCondition(&result, c) // keeps the transition time when the status is unchanged
	}
	return result
}

func isOwn(t string) bool {
	for _, o := range ownTypes {
		if o == t {
			return true
		}
	}
	return false
}

// readConditions returns the controller's own conditions from a NodePool's status.conditions.
func readConditions(list []any) []metav1.Condition {
	var out []metav1.Condition
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := metav1.Condition{}
		c.Type, _ = m["type"].(string)
		if !isOwn(c.Type) {
			continue
		}
		s, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(s)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		if t, _ := m["lastTransitionTime"].(string); t != "" {
			if parsed, err := time.Parse(time.RFC3339, t); err == nil {
				c.LastTransitionTime = metav1.NewTime(parsed)
			}
		}
		switch g := m["observedGeneration"].(type) {
		case int64:
			c.ObservedGeneration = g
		case float64:
			c.ObservedGeneration = int64(g)
		}
		out = append(out, c)
	}
	return out
}

// mergeConditions replaces the controller's conditions in list and leaves every other entry as it
// is (HyperShift's own conditions carry fields metav1.Condition lacks, such as severity).
func mergeConditions(list []any, own []metav1.Condition) []any {
	out := make([]any, 0, len(list)+len(own))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			if t, _ := m["type"].(string); isOwn(t) {
				continue
			}
		}
		out = append(out, item)
	}
	for _, c := range own {
		out = append(out, map[string]any{
			"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
			"lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339),
			"observedGeneration": c.ObservedGeneration,
		})
	}
	return out
}

// sameConditions compares two sets of the controller's conditions, transition times included.
func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := meta.FindStatusCondition(b, x.Type)
		if y == nil || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}
