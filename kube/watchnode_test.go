package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// A watch that ends with an ERROR event, or an empty stream, before the Node's first event says
// nothing about the Node: absence is pushed only for a DELETED event. (A broken watch read as "the
// Node is gone" let the next node of a pacing queue take a slot whose holder was still refreshing.)
func TestWatchNodeAnnotationsNeverInfersAbsence(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		switch n {
		case 1:
			_, _ = w.Write([]byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcdserver: request timed out","code":500}}`))
		case 2: // an empty stream
		case 3:
			_, _ = w.Write([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a","annotations":{"state":"Working"}}}}` + "\n" +
				`{"type":"DELETED","object":{"metadata":{"name":"a"}}}`))
		default:
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	type push struct {
		state  string
		exists bool
	}
	got := make(chan push, 10)
	go c.WatchNodeAnnotations(ctx, "a", func(a map[string]string, exists bool) { got <- push{a["state"], exists} })
	if first := <-got; first != (push{"Working", true}) {
		t.Fatalf("first push %+v: want the Node as it is, nothing before it", first)
	}
	if second := <-got; second.exists {
		t.Fatalf("second push %+v: want the deletion", second)
	}
}
