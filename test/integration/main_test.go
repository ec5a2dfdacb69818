// Package integration tests refresh-agent against real parts: a systemd user manager (in a private
// mount namespace), a kube-apiserver and etcd built from source, and temporary node roots.
package integration

import (
	"os"
	"sync"
	"testing"

	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// runner stops the shared API server after the tests.
type runner struct{ m *testing.M }

func (r runner) Run() int {
	code := r.m.Run()
	if guestServer != nil {
		guestServer.Stop()
	}
	if kubeServer != nil {
		kubeServer.Stop()
	}
	return code
}

func TestMain(m *testing.M) { os.Exit(systemdtest.Main(runner{m})) }

var (
	kubeOnce   sync.Once
	kubeServer *kubetest.Server
	kubeErr    error
)

// requireKube returns the shared real API server, starting it (and building it, the first time on a
// machine) on first use.
func requireKube(t *testing.T) *kubetest.Server {
	t.Helper()
	kubeOnce.Do(func() { kubeServer, kubeErr = kubetest.Start() })
	if kubeErr != nil {
		t.Fatalf("real kube-apiserver: %v", kubeErr)
	}
	return kubeServer
}
