package metricsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authnv1 "k8s.io/api/authentication/v1"
)

// fakeReviewer knows tokens by user and which users may get /metrics.
type fakeReviewer struct {
	mu      sync.Mutex
	users   map[string]string // token -> user
	allowed map[string]bool
	err     error
	calls   int
}

func (f *fakeReviewer) ReviewToken(_ context.Context, token string) (authnv1.TokenReviewStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return authnv1.TokenReviewStatus{}, f.err
	}
	u, ok := f.users[token]
	return authnv1.TokenReviewStatus{Authenticated: ok, User: authnv1.UserInfo{Username: u}}, nil
}

func (f *fakeReviewer) CanAccessPath(_ context.Context, user authnv1.UserInfo, verb, path string) (bool, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if verb != "get" || path != Path {
		return false, "", fmt.Errorf("unexpected review %s %s", verb, path)
	}
	return f.allowed[user.Username], "", nil
}

func gatherer() prometheus.Gatherer {
	r := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_scrapes_total", Help: "h"})
	r.MustRegister(c)
	c.Inc()
	return r
}

func get(t *testing.T, h http.Handler, path, auth string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

func TestHandlerAuthenticatesAndAuthorizes(t *testing.T) {
	rev := &fakeReviewer{users: map[string]string{"good": "prometheus", "bad": "someone"}, allowed: map[string]bool{"prometheus": true}}
	h := Handler(Config{Gatherer: gatherer(), Reviewer: rev})

	code, body := get(t, h, "/metrics", "Bearer good")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "test_scrapes_total 1")

	code, body = get(t, h, "/metrics", "Bearer bad")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "someone may not get /metrics")
	assert.NotContains(t, body, "test_scrapes_total")

	for _, auth := range []string{"", "Bearer ", "Basic Zm9vOmJhcg==", "Bearer unknown"} {
		code, body = get(t, h, "/metrics", auth)
		assert.Equal(t, http.StatusUnauthorized, code, "%q", auth)
		assert.NotContains(t, body, "test_scrapes_total")
	}
	code, _ = get(t, h, "/other", "Bearer good")
	assert.Equal(t, http.StatusNotFound, code)
}

func TestHandlerCachesDecisionsAndNotErrors(t *testing.T) {
	rev := &fakeReviewer{users: map[string]string{"good": "prometheus"}, allowed: map[string]bool{"prometheus": true}}
	h := Handler(Config{Gatherer: gatherer(), Reviewer: rev, CacheTTL: time.Hour})
	for range 3 {
		code, _ := get(t, h, "/metrics", "Bearer good")
		require.Equal(t, http.StatusOK, code)
	}
	assert.Equal(t, 1, rev.calls, "one review for repeated scrapes with the same token")

	rev.err = errors.New("connection refused")
	code, _ := get(t, h, "/metrics", "Bearer other")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	code, _ = get(t, h, "/metrics", "Bearer other")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, 3, rev.calls, "failed reviews are asked again")

	// A short TTL expires: the reviewer is asked again and a revoked right takes effect.
	rev = &fakeReviewer{users: map[string]string{"good": "prometheus"}, allowed: map[string]bool{"prometheus": true}}
	h = Handler(Config{Gatherer: gatherer(), Reviewer: rev, CacheTTL: time.Nanosecond})
	code, _ = get(t, h, "/metrics", "Bearer good")
	require.Equal(t, http.StatusOK, code)
	rev.mu.Lock()
	rev.allowed["prometheus"] = false
	rev.mu.Unlock()
	time.Sleep(time.Millisecond)
	code, _ = get(t, h, "/metrics", "Bearer good")
	assert.Equal(t, http.StatusForbidden, code)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

func TestServeSelfSignedTLS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rev := &fakeReviewer{users: map[string]string{"good": "p"}, allowed: map[string]bool{"p": true}}
	addr := freeAddr(t)
	require.NoError(t, Serve(ctx, Config{Addr: addr, Gatherer: gatherer(), Reviewer: rev, CertDir: t.TempDir()}))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer good")
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotNil(t, resp.TLS)
	assert.Equal(t, "refresh-agent-metrics", resp.TLS.PeerCertificates[0].Subject.CommonName)

	// Plain HTTP is not served.
	resp2, err := http.Get("http://" + addr + "/metrics")
	if err == nil {
		_, _ = io.Copy(io.Discard, resp2.Body)
		resp2.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp2.StatusCode)
	}
}

// writeCert writes a self-signed tls.crt/tls.key pair with the given common name.
func writeCert(t *testing.T, dir, cn string) {
	cert, err := selfSigned(time.Now(), cn)
	require.NoError(t, err)
	der, key := cert.Certificate[0], cert.PrivateKey
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
}

func TestCertFromDirIsReloaded(t *testing.T) {
	dir := t.TempDir()
	writeCert(t, dir, "first")
	c, err := newCertSource(dir, slogDiscard())
	require.NoError(t, err)
	assert.False(t, c.self)
	cn := func() string {
		cert, err := c.get(nil)
		require.NoError(t, err)
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		require.NoError(t, err)
		return leaf.Subject.CommonName
	}
	assert.Equal(t, "first", cn())
	writeCert(t, dir, "second")
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "tls.crt"), later, later))
	assert.Equal(t, "second", cn())
	// A half-written pair keeps the previous certificate.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), []byte("garbage"), 0o600))
	later = later.Add(time.Minute)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "tls.key"), later, later))
	assert.Equal(t, "second", cn())

	// A bad pair at start is an error naming the directory.
	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, "tls.crt"), []byte("nope"), 0o600))
	_, err = newCertSource(bad, slogDiscard())
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad)
}

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
