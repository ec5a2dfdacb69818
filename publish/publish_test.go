package publish

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/fleet"
	"github.com/openshift/refresh-agent/test/mcs"
)

// A payload already in the ConfigMap's form (as `payload get` prints it, as HyperShift stores it) is
// published verbatim, not wrapped a second time; any other form is gzipped and base64-encoded.
func TestDataKeepsTheConfigMapForm(t *testing.T) {
	served := mcs.Base().Served()
	cm := mcs.ConfigMapValue(served)
	data, err := Data(append(bytes.Clone(cm), '\n'), nil, "")
	require.NoError(t, err)
	assert.Equal(t, string(cm), data[api.KeyConfig], "verbatim")
	assert.Equal(t, api.Hash(append(bytes.Clone(cm), '\n')), data[api.KeyHash], "the hash of the file as given")

	data, err = Data(served, nil, "h")
	require.NoError(t, err)
	_, form, err := diff.DecodeForm([]byte(data[api.KeyConfig]))
	require.NoError(t, err)
	assert.Equal(t, diff.Form("base64+gzip+ignition"), form, "raw JSON encoded once")
	assert.Equal(t, "h", data[api.KeyHash])
}

func TestProgressLine(t *testing.T) {
	assert.Equal(t, "[#####-----]", Bar(1, 2, 10))
	assert.Equal(t, "[----------]", Bar(0, 0, 10))
	assert.Equal(t, "[##########]", Bar(3, 3, 10))
}

func progress(nodes []corev1.Node, hash string) Progress {
	return Progress{Hash: hash, Summary: fleet.Summarize(nodes, hash), Conditions: fleet.PacedConditions(nodes, hash, nil, time.Now(), 0)}
}

func node(name string, ann map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}
}

func TestProgressAndOutcome(t *testing.T) {
	done := func(h string) map[string]string {
		return api.NodeStatus{Current: h, Desired: h, State: api.StateDone}.Annotations()
	}
	working := api.NodeStatus{Current: "h1", Desired: "h2", State: api.StateWorking}.Annotations()
	waiting := api.NodeStatus{Current: "h1", Desired: "h2", State: api.StateWorking, Waiting: &api.Waiting{InUse: 1, Slots: 1}}.Annotations()
	failed := api.NodeStatus{Current: "h1", Desired: "h2", State: api.StateDegraded, Reason: "Reload crio.service: job result \"failed\"; rolled back"}.Annotations()

	p := progress([]corev1.Node{node("a", done("h2")), node("b", working), node("c", waiting), node("d", nil)}, "h2")
	assert.Equal(t, "1/4 updated, 2 refreshing (b), 0 degraded, 1 not reporting (d)", p.Line())
	_, end := p.Outcome()
	assert.False(t, end, "still going")

	p = progress([]corev1.Node{node("a", done("h2")), node("b", failed)}, "h2")
	o, end := p.Outcome()
	assert.True(t, end)
	assert.Equal(t, Failed, o)
	assert.Contains(t, p.Why(), `b (Degraded: Reload crio.service: job result "failed"; rolled back)`)

	p = progress([]corev1.Node{node("a", done("h2")), node("b", done("h2"))}, "h2")
	o, _ = p.Outcome()
	assert.Equal(t, Complete, o)
	assert.Equal(t, "2/2 updated, 0 refreshing, 0 degraded", p.Line())

	o, _ = progress(nil, "h2").Outcome()
	assert.Equal(t, NoNodes, o)
}
