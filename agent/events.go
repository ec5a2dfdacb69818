package agent

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/openshift/refresh-agent/kube"
)

// NewRecorder returns an event recorder that posts Events on the node as component refresh-agent,
// and a function that stops it.
func NewRecorder(client *kube.Client, nodeName string) (record.EventRecorder, func()) {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(client.EventSink())
	rec := b.NewRecorder(kube.Scheme(), corev1.EventSource{Component: "refresh-agent", Host: nodeName})
	return rec, b.Shutdown
}
