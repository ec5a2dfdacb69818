package metricsserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// certSource hands out the serving certificate: the one in CertDir (tls.crt, tls.key), re-read
// when the files change (OpenShift's service-ca rotates them in place), or else a self-signed one
// made in memory at start.
type certSource struct {
	dir  string
	log  *slog.Logger
	mu   sync.Mutex
	cert *tls.Certificate
	mod  time.Time // of the files the cert was read from
	self bool
}

func newCertSource(dir string, log *slog.Logger) (*certSource, error) {
	c := &certSource{dir: dir, log: log}
	if dir != "" {
		_, err := os.Stat(filepath.Join(dir, "tls.crt"))
		if err == nil {
			if _, err := c.get(nil); err != nil {
				return nil, err
			}
			return c, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	cert, err := selfSigned(time.Now(), "refresh-agent-metrics")
	if err != nil {
		return nil, fmt.Errorf("self-signed certificate: %w", err)
	}
	c.cert, c.self = cert, true
	return c, nil
}

func (c *certSource) describe() string {
	if c.self {
		return "self-signed (no tls.crt in the certificate directory)"
	}
	return filepath.Join(c.dir, "tls.crt")
}

func (c *certSource) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.self {
		return c.cert, nil
	}
	crt, key := filepath.Join(c.dir, "tls.crt"), filepath.Join(c.dir, "tls.key")
	mod, err := newest(crt, key)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil // keep serving the last good one while the Secret is being updated
		}
		return nil, err
	}
	if c.cert != nil && mod.Equal(c.mod) {
		return c.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		if c.cert != nil {
			c.log.Warn("metrics: cannot reload the serving certificate, keeping the previous one", "err", err)
			return c.cert, nil
		}
		return nil, fmt.Errorf("serving certificate %s: %w", c.dir, err)
	}
	if c.cert != nil {
		c.log.Info("metrics: serving certificate reloaded", "dir", c.dir)
	}
	c.cert, c.mod = &cert, mod
	return c.cert, nil
}

// newest returns the latest modification time of the files (the Secret volume swaps a symlink, so
// Stat follows it).
func newest(files ...string) (time.Time, error) {
	var t time.Time
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return time.Time{}, err
		}
		if fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t, nil
}

// selfSigned makes a P-256 certificate valid for a year. Scrapers cannot verify it and must skip
// verification; the bearer token still protects the metrics.
func selfSigned(now time.Time, cn string) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "refresh-agent-metrics.refresh-agent.svc"}}
	if host != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
