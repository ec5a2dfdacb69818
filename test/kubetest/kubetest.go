// Package kubetest runs a real etcd and kube-apiserver on loopback for tests, built from source by
// test/assets/build.sh (once, cached outside the repository).
package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Users the server knows by token.
const (
	AdminUser = "admin"
	AgentUser = "refresh-agent" // audited: every request it makes is logged
)

// Server is a running etcd + kube-apiserver pair.
type Server struct {
	Dir      string
	URL      string
	CAData   []byte
	AuditLog string
	assets   string
	etcd     *exec.Cmd // nil for a server sharing another's etcd
	etcdURL  string
	api      *exec.Cmd
	apiArgs  []string
	mu       sync.Mutex
}

// Assets returns the directory holding etcd and kube-apiserver, building them when missing.
func Assets() (string, error) {
	if d := os.Getenv("REFRESH_AGENT_ASSETS"); d != "" {
		return d, nil
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "assets", "build.sh")
	cmd := exec.Command("bash", script)
	cmd.Stderr = os.Stderr // progress of a first, ~10 minute build
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// Start builds (if needed) and starts etcd and kube-apiserver in a new temp dir.
func Start() (*Server, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, assets: assets, AuditLog: filepath.Join(dir, "audit.log")}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start() error {
	ports := make([]int, 3)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	s.etcd = exec.Command(filepath.Join(s.assets, "etcd"), "--data-dir", filepath.Join(s.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", ports[1]),
		"--unsafe-no-fsync", "--log-level", "error")
	s.etcd.Stdout, s.etcd.Stderr = logFile(s.Dir, "etcd.log"), logFile(s.Dir, "etcd.log")
	if err := s.etcd.Start(); err != nil {
		return err
	}
	s.etcdURL = etcdURL
	return s.startAPI(ports[2])
}

// Another starts a second kube-apiserver on this server's etcd under its own --etcd-prefix: a
// separate cluster (its own namespaces, CRDs, RBAC) for tests that need two, such as management
// and guest. Stop it before this one.
func (s *Server) Another(prefix string) (*Server, error) {
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, err
	}
	o := &Server{Dir: dir, assets: s.assets, AuditLog: filepath.Join(dir, "audit.log"), etcdURL: s.etcdURL}
	port, err := freePort()
	if err == nil {
		err = o.startAPI(port, "--etcd-prefix", prefix)
	}
	if err != nil {
		o.Stop()
		return nil, err
	}
	return o, nil
}

func (s *Server) startAPI(port int, extra ...string) error {
	if err := s.writeSecrets(); err != nil {
		return err
	}
	s.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	s.apiArgs = []string{
		"--etcd-servers", s.etcdURL, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(port),
		"--tls-cert-file", filepath.Join(s.Dir, "serving.crt"), "--tls-private-key-file", filepath.Join(s.Dir, "serving.key"),
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(s.Dir, "sa.key"),
		"--service-account-signing-key-file", filepath.Join(s.Dir, "sa.key"),
		"--token-auth-file", filepath.Join(s.Dir, "tokens.csv"),
		"--authorization-mode", "RBAC", "--service-cluster-ip-range", "10.0.0.0/24", "--allow-privileged=true",
		"--audit-policy-file", filepath.Join(s.Dir, "audit-policy.yaml"), "--audit-log-path", s.AuditLog,
		"--audit-log-mode", "blocking", "--audit-log-format", "json",
		"--endpoint-reconciler-type", "none", // the default refuses a loopback advertise address
	}
	s.apiArgs = append(s.apiArgs, extra...)
	return s.StartAPIServer()
}

// StartAPIServer (re)starts kube-apiserver with the same flags, and waits until it is ready.
func (s *Server) StartAPIServer() error {
	s.mu.Lock()
	s.api = exec.Command(filepath.Join(s.assets, "kube-apiserver"), s.apiArgs...)
	s.api.Stdout, s.api.Stderr = logFile(s.Dir, "kube-apiserver.log"), logFile(s.Dir, "kube-apiserver.log")
	err := s.api.Start()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	exited := make(chan struct{})
	go func(p *os.Process) { _, _ = p.Wait(); close(exited) }(s.api.Process)
	return s.waitReady(60*time.Second, exited)
}

// StopAPIServer kills kube-apiserver (etcd keeps running).
func (s *Server) StopAPIServer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.api != nil && s.api.Process != nil {
		_ = s.api.Process.Kill()
		for i := 0; i < 100 && s.api.Process.Signal(syscall.Signal(0)) == nil; i++ {
			time.Sleep(50 * time.Millisecond) // the waiter goroutine reaps it
		}
		s.api = nil
	}
}

// Stop stops both servers and removes the temp dir.
func (s *Server) Stop() {
	s.StopAPIServer()
	if s.etcd != nil && s.etcd.Process != nil {
		_ = s.etcd.Process.Kill()
		_ = s.etcd.Wait()
	}
	_ = os.RemoveAll(s.Dir)
}

func (s *Server) waitReady(timeout time.Duration, exited <-chan struct{}) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAData)
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer admin-token")
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("kube-apiserver exited; log tail:\n%s", tail(filepath.Join(s.Dir, "kube-apiserver.log"), 15))
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after %s; log tail:\n%s", timeout, tail(filepath.Join(s.Dir, "kube-apiserver.log"), 15))
}

// Config returns a client config for a token user.
func (s *Server) Config(user string) *rest.Config {
	return &rest.Config{Host: s.URL, BearerToken: user + "-token", TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData},
		QPS: 100, Burst: 200}
}

// Kubeconfig writes a kubeconfig for user and returns its path.
func (s *Server) Kubeconfig(user string) (string, error) {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: %s, user: {token: %s-token}}]
contexts: [{name: test, context: {cluster: test, user: %s}}]
current-context: test
`, s.URL, b64(s.CAData), user, user, user)
	p := filepath.Join(s.Dir, user+".kubeconfig")
	return p, os.WriteFile(p, []byte(kc), 0o600)
}

// AuditEvent is one line of the audit log.
type AuditEvent struct {
	Verb       string    `json:"verb"`
	Stage      string    `json:"stage"`
	RequestURI string    `json:"requestURI"`
	Received   time.Time `json:"requestReceivedTimestamp"`
	UserAgent  string    `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource string `json:"resource"`
	} `json:"objectRef"`
}

// Audit returns the agent user's audit events so far (stage ResponseComplete, or ResponseStarted for
// watches, which complete only when they end).
func (s *Server) Audit() ([]AuditEvent, error) {
	data, err := os.ReadFile(s.AuditLog)
	if err != nil {
		return nil, err
	}
	var out []AuditEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		var e AuditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Stage == "ResponseStarted" && e.Verb == "watch" || e.Stage == "ResponseComplete" && e.Verb != "watch" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

func tail(file string, n int) string {
	data, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func logFile(dir, name string) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return f
}

// writeSecrets writes a CA and serving certificate for 127.0.0.1, the service-account key, the
// token file and the audit policy.
func (s *Server) writeSecrets() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubetest-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	s.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"serving.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"serving.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"sa.key":      pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		"tokens.csv": []byte("admin-token,admin,admin-uid,system:masters\n" +
			"refresh-agent-token,refresh-agent,refresh-agent-uid,system:masters\n"),
		"audit-policy.yaml": []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n" +
			"- level: Metadata\n  users: [refresh-agent]\n- level: None\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(s.Dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// WaitFor polls cond every 50ms until it is true or timeout passes (tests only).
func WaitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return cond()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
