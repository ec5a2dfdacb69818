// Package metricsserver serves the agent's Prometheus metrics over HTTPS to authenticated and
// authorized scrapers only: the bearer token is checked with a TokenReview and the caller's right to
// `get /metrics` with a SubjectAccessReview, both answered by the API server, as kube-rbac-proxy
// does. In process rather than in a kube-rbac-proxy sidecar: one image to pin, mirror and scan,
// no second container on every node, and the agent's existing API client does the two reviews.
package metricsserver

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	authnv1 "k8s.io/api/authentication/v1"
)

// Path is the one URL served, and the non-resource URL a scraper must be allowed to get.
const Path = "/metrics"

// DefaultCacheTTL is how long a review's answer is reused: Prometheus scrapes every 30 s with the
// same token, and a revoked binding takes effect within this time.
const DefaultCacheTTL = 10 * time.Second

// Reviewer answers TokenReviews and SubjectAccessReviews (kube.Client).
type Reviewer interface {
	ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error)
	CanAccessPath(ctx context.Context, user authnv1.UserInfo, verb, path string) (bool, string, error)
}

// Config says what to serve and how.
type Config struct {
	Addr     string              // e.g. ":9464"
	Gatherer prometheus.Gatherer // the metrics
	Reviewer Reviewer            // the API server's reviews
	CertDir  string              // tls.crt and tls.key (OpenShift's service-ca Secret); empty or absent: self-signed
	CacheTTL time.Duration       // default DefaultCacheTTL
	Log      *slog.Logger        // default slog.Default()
}

// Serve listens on cfg.Addr and serves until ctx ends. It returns once listening, or the error that
// kept it from listening.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	certs, err := newCertSource(cfg.CertDir, cfg.Log)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	srv := &http.Server{
		Handler:           Handler(cfg),
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get},
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug), // TLS handshake noise from probes
	}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.Error("metrics server stopped", "err", err)
		}
	}()
	cfg.Log.Info("serving metrics over HTTPS", "addr", ln.Addr().String(), "certificate", certs.describe())
	return nil
}

// Handler checks the caller and then serves the metrics (exported for tests over plain HTTP).
func Handler(cfg Config) http.Handler {
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	a := &authorizer{reviewer: cfg.Reviewer, ttl: cfg.CacheTTL, log: cfg.Log, cache: map[[32]byte]decision{}}
	metrics := promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Path {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		token, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="refresh-agent"`)
			http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
			return
		}
		d := a.decide(r.Context(), token)
		switch {
		case d.err != nil:
			http.Error(w, "cannot check the token now", http.StatusServiceUnavailable)
		case !d.authenticated:
			w.Header().Set("WWW-Authenticate", `Bearer realm="refresh-agent"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case !d.allowed:
			http.Error(w, fmt.Sprintf("Forbidden: %s may not get %s", d.user, Path), http.StatusForbidden)
		default:
			metrics.ServeHTTP(w, r)
		}
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// decision is a cached answer for one token.
type decision struct {
	authenticated, allowed bool
	user                   string
	err                    error
	expires                time.Time
}

// maxCached bounds the cache: beyond it the cache starts over (scrapers are few; this only stops a
// flood of random tokens from growing memory).
const maxCached = 256

type authorizer struct {
	reviewer Reviewer
	ttl      time.Duration
	log      *slog.Logger
	mu       sync.Mutex
	cache    map[[32]byte]decision // by the token's sha256: tokens are never kept
}

func (a *authorizer) decide(ctx context.Context, token string) decision {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	a.mu.Lock()
	d, ok := a.cache[key]
	a.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d
	}
	d = a.review(ctx, token)
	if d.err != nil {
		a.log.Warn("metrics: cannot review a scraper's token", "err", d.err)
		return d // not cached: the next scrape asks again
	}
	d.expires = now.Add(a.ttl)
	a.mu.Lock()
	if len(a.cache) >= maxCached {
		clear(a.cache)
	}
	a.cache[key] = d
	a.mu.Unlock()
	return d
}

func (a *authorizer) review(ctx context.Context, token string) decision {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := a.reviewer.ReviewToken(ctx, token)
	if err != nil {
		return decision{err: err}
	}
	if !st.Authenticated {
		return decision{}
	}
	allowed, reason, err := a.reviewer.CanAccessPath(ctx, st.User, "get", Path)
	if err != nil {
		return decision{err: err}
	}
	if !allowed {
		a.log.Info("metrics: scrape denied", "user", st.User.Username, "reason", reason)
	}
	return decision{authenticated: true, allowed: allowed, user: st.User.Username}
}
