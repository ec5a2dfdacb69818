package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

const drainPods = `{"kind":"PodList","apiVersion":"v1","items":[
 {"metadata":{"name":"protected","namespace":"ns","uid":"u1"},"spec":{"nodeName":"n"},"status":{"phase":"Running"}}]}`

// drainServer answers the drain's calls: the node patch, the listing (list says how) and the
// eviction (a PDB always blocks it, or evict's status).
func drainServer(t *testing.T, list func(n int32) int, evict int) *httptest.Server {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPatch:
			_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}`))
		case strings.HasSuffix(r.URL.Path, "/eviction"):
			w.WriteHeader(evict)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d}`, evict)
		default:
			if code := list(lists.Add(1)); code != http.StatusOK {
				w.WriteHeader(code)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable"}`))
				return
			}
			_, _ = w.Write([]byte(drainPods))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func drainer(t *testing.T, srv *httptest.Server, qps float32, timeout time.Duration) *Drainer {
	c, err := New(&rest.Config{Host: srv.URL, QPS: qps, Burst: 1})
	require.NoError(t, err)
	return &Drainer{Client: c, Node: "n", Timeout: timeout, Interval: 20 * time.Millisecond}
}

// CI saw it: near the deadline the client's rate limiter refuses the listing's wait before the
// deadline has passed; the drain's answer is still the timeout naming what a PDB blocks.
func TestDrainTimesOutNamingPDBWhenTheRateLimiterRefuses(t *testing.T) {
	srv := drainServer(t, func(int32) int { return http.StatusOK }, http.StatusTooManyRequests)
	// One request a second: the cordon at 0 s, the listing at 1 s, the eviction at 2 s (a PDB
	// blocks it), and the next listing's wait would end past the deadline.
	err := drainer(t, srv, 1, 2500*time.Millisecond).Drain(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ns/protected (a PodDisruptionBudget blocks it)")
	assert.Contains(t, err.Error(), "not evicted within 2.5s")
}

// An API server that goes away mid-drain costs a round, not the drain.
func TestDrainRetriesAListingThatFails(t *testing.T) {
	srv := drainServer(t, func(n int32) int {
		if n > 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, http.StatusTooManyRequests)
	err := drainer(t, srv, 1000, 300*time.Millisecond).Drain(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ns/protected (a PodDisruptionBudget blocks it)")
	assert.Contains(t, err.Error(), "the last listing failed")
}

// A refusal that retrying does not change fails the drain at once, naming the pod.
func TestDrainStopsAtAPermanentRefusal(t *testing.T) {
	srv := drainServer(t, func(int32) int { return http.StatusOK }, http.StatusForbidden)
	start := time.Now()
	err := drainer(t, srv, 1000, time.Minute).Drain(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "evicting ns/protected")
	assert.Less(t, time.Since(start), 30*time.Second, "not waited out")
}
