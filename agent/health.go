package agent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxRefreshTime is how long one refresh may run before /healthz calls the loop stuck.
var MaxRefreshTime = 15 * time.Minute

// pinger is a Units that can say whether its manager answers.
type pinger interface{ Ping(context.Context) error }

// Healthz answers 200 while the loop is alive: not stuck in one refresh beyond MaxRefreshTime.
func (a *Agent) Healthz(w http.ResponseWriter, _ *http.Request) {
	if since := a.busySince.Load(); since != 0 && time.Since(time.Unix(0, since)) > MaxRefreshTime {
		http.Error(w, fmt.Sprintf("a refresh has been running for %s", time.Since(time.Unix(0, since)).Round(time.Second)), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// Readyz answers 200 once the sources have synced and systemd (when used) answers.
func (a *Agent) Readyz(w http.ResponseWriter, r *http.Request) {
	if !a.started.Load() || !a.cfg.Source.Synced() {
		http.Error(w, "sources not synced", http.StatusServiceUnavailable)
		return
	}
	if p, ok := a.cfg.Node.Units.(pinger); ok {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			http.Error(w, "systemd unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	fmt.Fprintln(w, "ok")
}

// Serve runs the metrics and health endpoints until ctx ends. An empty address disables one.
func (a *Agent) Serve(ctx context.Context, metricsAddr, healthAddr string) error {
	errs := make(chan error, 2)
	serve := func(addr string, h http.Handler) {
		if addr == "" {
			return
		}
		srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go func() { <-ctx.Done(); _ = srv.Close() }()
		go func() {
			if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
				errs <- fmt.Errorf("%s: %w", addr, err)
			}
		}()
	}
	if a.cfg.Metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(a.cfg.Metrics.Registry, promhttp.HandlerOpts{}))
		serve(metricsAddr, mux)
	}
	hmux := http.NewServeMux()
	hmux.HandleFunc("/healthz", a.Healthz)
	hmux.HandleFunc("/readyz", a.Readyz)
	serve(healthAddr, hmux)
	select {
	case err := <-errs:
		return err
	case <-time.After(200 * time.Millisecond):
		return nil // listening
	}
}
