package agent

import (
	"context"
	"net"
	"net/http"
	"testing"
)

// Serve returns with its ports bound (no guessing how long listening takes), and with the error
// when a port cannot be bound.
func TestServeListensBeforeItReturns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	a := New(Config{})
	if err := a.Serve(ctx, "", addr); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("not listening when Serve returned: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %s", resp.Status)
	}
	resp, err = http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the loop started: %s", resp.Status)
	}
	if err := New(Config{}).Serve(ctx, "", addr); err == nil {
		t.Error("a second Serve on a bound port did not fail")
	}
}
