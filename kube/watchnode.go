package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// WatchNodeAnnotations follows one Node's annotations until ctx ends: push gets them after every
// change (exists false when the Node went: a DELETED event, or a relist without it). A Node that
// does not exist pushes nothing until it appears, and a broken watch pushes nothing: it is opened
// again with ReconnectBackoff from where it was. With client-go's watch-list the first state comes
// with the watch itself: following another node costs the API server one watch, no list. (A
// metadata-only watch would carry fewer bytes, but the metadata client's reflector fell back to a
// list per follow: one more request per node per refresh in test/scale.)
func (c *Client) WatchNodeAnnotations(ctx context.Context, name string, push func(annotations map[string]string, exists bool)) {
	Watch(ctx, "followed-node/"+name, NameListWatch(c.rest, "nodes", "", name), &corev1.Node{}, func(_, cur any) {
		if n, ok := cur.(*corev1.Node); ok {
			push(n.Annotations, true)
			return
		}
		push(nil, false)
	}, nil)
	<-ctx.Done()
}
