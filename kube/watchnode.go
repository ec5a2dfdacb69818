package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// WatchNodeAnnotations follows one Node's annotations until ctx ends: push gets them after every
// change (exists false when the Node went: a DELETED event, or a relist without it). A Node that
// does not exist pushes nothing until it appears, and a broken watch pushes nothing: it is opened
// again with ReconnectBackoff from where it was. Only the object's metadata travels (a
// PartialObjectMetadata watch), and with client-go's watch-list the first state comes with the watch
// itself: following another node costs the API server one watch, no list.
func (c *Client) WatchNodeAnnotations(ctx context.Context, name string, push func(annotations map[string]string, exists bool)) {
	mc, err := c.meta()
	if err != nil {
		return // only a bad rest.Config fails here, and New took it
	}
	nodes := mc.Resource(corev1.SchemeGroupVersion.WithResource("nodes"))
	one := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			one(&o)
			return nodes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			one(&o)
			return nodes.Watch(ctx, o)
		},
	}
	Watch(ctx, "node-metadata/"+name, lw, &metav1.PartialObjectMetadata{}, func(_, cur any) {
		if m, ok := cur.(*metav1.PartialObjectMetadata); ok {
			push(m.Annotations, true)
			return
		}
		push(nil, false)
	}, nil)
	<-ctx.Done()
}
