package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// metadataList is the part of a PartialObjectMetadataList CountNodes reads.
type metadataList struct {
	Metadata struct {
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// CountNodes counts the nodes matching a label selector: a list of object metadata only (no specs,
// no status), one request for a pool of up to 500 nodes; beyond, the server's remainingItemCount
// or the next pages.
func (c *Client) CountNodes(ctx context.Context, selector string) (int, error) {
	const page = 500
	count, cont := 0, ""
	for first := true; first || cont != ""; first = false {
		req := c.rest.Get().Resource("nodes").Param("labelSelector", selector).Param("limit", strconv.Itoa(page)).
			SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := req.Do(ctx).Raw()
		if err != nil {
			return 0, err
		}
		var l metadataList
		if err := json.Unmarshal(raw, &l); err != nil {
			return 0, fmt.Errorf("counting nodes: %w", err)
		}
		count += len(l.Items)
		if r := l.Metadata.RemainingItemCount; r != nil && *r >= 0 {
			return count + int(*r), nil
		}
		cont = l.Metadata.Continue
	}
	return count, nil
}
