package kube

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/fields"
)

// WatchNodeAnnotations follows one Node's annotations until ctx ends: push gets them after every
// change (exists false when the watch says the Node was deleted; a Node that does not exist, or a
// watch that broke before its first event, pushes nothing: absence is never inferred). It is a watch without a list:
// with no resourceVersion the API server begins the watch with the object as it is, so following
// another node costs no request besides the watch itself, and only the object's metadata travels.
// A broken watch is opened again after ReconnectBackoff.
func (c *Client) WatchNodeAnnotations(ctx context.Context, name string, push func(annotations map[string]string, exists bool)) {
	// A watch, not a reflector: a reflector lists before it watches (client-go's watch-list did not
	// spare it here), one more request per node per refresh in test/scale. Retried with
	// ReconnectBackoff, started over once a watch delivered.
	for first := true; ctx.Err() == nil; first = false {
		delay := ReconnectBackoff.DelayFunc()
		_ = delay.Until(ctx, first, true, func(ctx context.Context) (bool, error) {
			got, _ := c.watchNodeOnce(ctx, name, push)
			return got, nil
		})
	}
}

type metadataEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// watchNodeOnce runs one watch; got says it delivered at least one event.
func (c *Client) watchNodeOnce(ctx context.Context, name string, push func(map[string]string, bool)) (got bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := c.rest.Get().Resource("nodes").Param("watch", "true").
		Param("fieldSelector", fields.OneTermEqualSelector("metadata.name", name).String()).
		Param("allowWatchBookmarks", "false").Timeout(10*time.Minute).
		SetHeader("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json").
		Stream(ctx)
	if err != nil {
		return false, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev metadataEvent
		if err := dec.Decode(&ev); err != nil {
			if err == io.EOF {
				err = nil
			}
			return got, err
		}
		switch ev.Type {
		case "ADDED", "MODIFIED":
			got = true
			push(ev.Object.Metadata.Annotations, true)
		case "DELETED":
			got = true
			push(nil, false)
		}
	}
}
