package integration

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// The tests that run the agent binary start it here: on an agentEnv's node (runBinary), or on one
// of several simulated nodes side by side (simNode.startAgent).

// agentProc is one `refresh-agent run` process a test started.
type agentProc struct {
	*exec.Cmd
	done chan struct{} // closed once it exited
	err  error         // Wait's, once done
}

// startAgentProc starts `refresh-agent run` with args and env (nil: the test's), its log to stderr.
func startAgentProc(t *testing.T, env []string, stderr io.Writer, args ...string) *agentProc {
	cmd := exec.Command(agentBinary(t), append([]string{"run"}, args...)...)
	cmd.Env, cmd.Stderr = env, stderr
	require.NoError(t, cmd.Start())
	p := &agentProc{Cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p
}

// terminate sends SIGTERM and returns the exit, failing the test (a goroutine dump in the log) if
// the agent is still running after 30 s.
func (p *agentProc) terminate(t *testing.T, logText func() string) error {
	require.NoError(t, p.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
		return p.err
	case <-time.After(30 * time.Second):
		_ = p.Process.Signal(syscall.SIGQUIT) // goroutine dump into the log
		time.Sleep(time.Second)
		t.Fatalf("agent did not exit after SIGTERM; log:\n%s", logText())
		return nil
	}
}

// runBinary starts the agent binary on e's node as the DaemonSet runs it (the API source in e's
// namespace, the user systemd manager, the agent's kubeconfig, no health server) with flags added
// (--configmap, --metrics-addr, …); its log goes to e's. It is killed at cleanup.
func (e *agentEnv) runBinary(t *testing.T, flags ...string) *agentProc {
	kubeconfig, err := e.kube.Kubeconfig(kubetest.AgentUser)
	require.NoError(t, err)
	p := startAgentProc(t, nil, e, append([]string{"--node-name", e.node, "--root", e.root, "--source", "api",
		"--namespace", e.ns, "--systemd", "user", "--kubeconfig", kubeconfig, "--health-addr", ""}, flags...)...)
	t.Cleanup(func() { _ = p.Process.Kill(); <-p.done })
	return p
}

// simNode is one of several simulated nodes a test runs side by side: its own root and systemd user
// manager (crio, the kubelet and update-ca-trust stood in), and the agent process startAgent runs.
type simNode struct {
	name string
	root string
	mgr  *systemdtest.Manager
}

// newSimNode prepares the node's root (fixture.NodeRoot; the payload it runs is the caller's) and
// its systemd manager.
func newSimNode(t *testing.T, name string) simNode {
	n := simNode{name: name, root: t.TempDir(), mgr: systemdtest.Another(t, name)}
	for _, u := range []string{crio, kubelet, updateCA} {
		n.mgr.StandIn(t, u, false)
	}
	require.NoError(t, fixture.NodeRoot(n.root))
	return n
}

// startAgent runs the agent on n with the user systemd manager and the flags given (kubeconfig,
// namespace, ConfigMap, pacing, …). Its log goes to a file whose tail the test's log shows when the
// test failed; it is stopped with SIGINT at cleanup.
func (n simNode) startAgent(t *testing.T, flags ...string) *agentProc {
	logf, err := os.Create(filepath.Join(t.TempDir(), n.name+".log"))
	require.NoError(t, err)
	p := startAgentProc(t, append(os.Environ(), "XDG_RUNTIME_DIR="+n.mgr.RuntimeDir), logf,
		append([]string{"--node-name", n.name, "--root", n.root, "--systemd", "user", "--metrics-addr", "", "--health-addr", ""}, flags...)...)
	t.Cleanup(func() {
		_ = p.Process.Signal(os.Interrupt)
		<-p.done
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", n.name, tailLines(string(b), 40))
		}
	})
	return p
}
