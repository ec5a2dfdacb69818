package agent

import (
	"context"
	"fmt"
	"net"
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
	if p, ok := a.cfg.Host.Units.(pinger); ok {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			http.Error(w, "systemd unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	fmt.Fprintln(w, "ok")
}

// Serve serves the metrics and health endpoints until ctx ends. An empty address disables one. It
// returns once both listen (or with the error that kept one from listening): the listener is bound
// before Serve returns, so a probe right after finds the port open.
func (a *Agent) Serve(ctx context.Context, metricsAddr, healthAddr string) error {
	var ls []net.Listener
	serve := func(addr string, h http.Handler) error {
		if addr == "" {
			return nil
		}
		l, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
		ls = append(ls, l)
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go func() { <-ctx.Done(); _ = srv.Close() }()
		go func() {
			if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
				a.log.Error("serving stopped", "addr", addr, "err", err)
			}
		}()
		return nil
	}
	if a.cfg.Metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(a.cfg.Metrics.Registry, promhttp.HandlerOpts{}))
		if err := serve(metricsAddr, mux); err != nil {
			return err
		}
	}
	hmux := http.NewServeMux()
	hmux.HandleFunc("/healthz", a.Healthz)
	hmux.HandleFunc("/readyz", a.Readyz)
	if err := serve(healthAddr, hmux); err != nil {
		for _, l := range ls {
			_ = l.Close()
		}
		return err
	}
	return nil
}
