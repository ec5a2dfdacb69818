package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// metadataList is the part of a PartialObjectMetadataList the node lists read.
type metadataList struct {
	Metadata struct {
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"items"`
}

// NodeNames lists the names of the nodes matching a label selector: a list of object metadata only
// (no specs, no status), one request for a pool of up to 500 nodes, the next pages beyond.
func (c *Client) NodeNames(ctx context.Context, selector string) ([]string, error) {
	const page = 500
	var names []string
	cont := ""
	for first := true; first || cont != ""; first = false {
		req := c.rest.Get().Resource("nodes").Param("labelSelector", selector).Param("limit", strconv.Itoa(page)).
			SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := req.Do(ctx).Raw()
		if err != nil {
			return nil, err
		}
		var l metadataList
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		for _, it := range l.Items {
			names = append(names, it.Metadata.Name)
		}
		cont = l.Metadata.Continue
	}
	return names, nil
}
