package integration

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// cliRun runs the binary with env added and returns the exit code, stdout and stderr.
func cliRun(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(agentBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, out.String(), errb.String()
}

// twoContexts writes a kubeconfig whose current context points at a closed port and whose "good"
// context at the test API server.
func twoContexts(t *testing.T, kube *kubetest.Server) string {
	ca := base64.StdEncoding.EncodeToString(kube.CAData)
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- {name: good, cluster: {server: %q, certificate-authority-data: %q}}
- {name: gone, cluster: {server: "https://127.0.0.1:1", certificate-authority-data: %q}}
users: [{name: admin, user: {token: admin-token}}]
contexts:
- {name: good, context: {cluster: good, user: admin}}
- {name: gone, context: {cluster: gone, user: admin}}
current-context: gone
`, kube.URL, ca, ca)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(p, []byte(kc), 0o600))
	return p
}

func TestCLIPublishAndStatusLikeKubectl(t *testing.T) {
	kube := requireKube(t)
	admin, err := kubernetes.NewForConfig(kube.Config(kubetest.AdminUser))
	require.NoError(t, err)
	ctx := context.Background()
	kc := twoContexts(t, kube)
	// $KUBECONFIG, as kubectl reads it, with --context picking the reachable cluster.
	env := []string{"KUBECONFIG=" + kc}
	const ns, pool = "cli-refresh", "cli-workers"
	payload := filepath.Join(t.TempDir(), "payload.ign")
	require.NoError(t, os.WriteFile(payload, []byte(`{"ignition":{"version":"3.2.0"}}`), 0o600))

	// The current context's server is down: said at once, naming it.
	code, _, stderr := cliRun(t, env, "status", "--pool", pool, "--namespace", ns)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "cannot reach the API server at https://127.0.0.1:1")

	// No namespace: refused without --create-namespace, nothing created.
	code, _, stderr = cliRun(t, env, "publish", "--context", "good", "--namespace", ns, "--pool", pool, "--payload", payload, "--hash", "h1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "--create-namespace")
	_, err = admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no namespace created: %v", err)

	code, out, stderr := cliRun(t, env, "publish", "--context", "good", "--create-namespace", "--namespace", ns, "--pool", pool,
		"--payload", payload, "--hash", "h1")
	require.Equal(t, 0, code, stderr)
	cmName := api.ConfigMapName(api.DefaultConfigMapTemplate, pool)
	assert.Equal(t, "published h1 to ConfigMap "+ns+"/"+cmName+"\n", out)
	cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, cmName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "h1", cm.Data[api.KeyHash])
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })

	// Nodes of the pool: one done, one without an agent; one of another pool.
	for name, n := range map[string]struct{ pool, state string }{"cli-n1": {pool, api.StateDone}, "cli-n2": {pool, ""}, "cli-other": {"else", api.StateDone}} {
		obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.LabelNodePool: n.pool}}}
		if n.state != "" {
			obj.Annotations = map[string]string{api.AnnotationCurrent: "h1", api.AnnotationDesired: "h1", api.AnnotationState: n.state}
		}
		_, err := admin.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}

	// The table, with the hash read from the pool's ConfigMap.
	code, out, stderr = cliRun(t, env, "status", "--context", "good", "--namespace", ns, "--pool", pool)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(out, "\n")
	// Issue 24 added the DRIFT column.
	assert.Regexp(t, `^NODE\s+STATE\s+CURRENT\s+DESIRED\s+DRIFT\s+AGE\s+REASON$`, lines[0])
	assert.Regexp(t, `^cli-n1\s+Done\s+h1\s+h1\s+<none>\s+\S+\s*$`, lines[1])
	assert.Regexp(t, `^cli-n2\s+<none>\s+<none>\s+<none>\s+<none>\s+\S+\s*$`, lines[2])
	assert.NotContains(t, out, "cli-other")
	assert.Contains(t, out, "Desired hash h1 (ConfigMap "+ns+"/"+cmName+")")
	assert.Regexp(t, `(?m)^ConfigRefreshComplete\s+False\s`, out)

	var got struct {
		Hash  string
		Nodes []struct{ Name, State, Phase string }
	}
	code, out, stderr = cliRun(t, env, "status", "--context", "good", "--namespace", ns, "--pool", pool, "-o", "json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "h1", got.Hash)
	require.Len(t, got.Nodes, 2)
	assert.Equal(t, "Complete", got.Nodes[0].Phase)
	assert.Equal(t, "NoAgent", got.Nodes[1].Phase)

	code, out, stderr = cliRun(t, env, "status", "--context", "good", "--namespace", ns, "--pool", pool, "-o", "yaml", "--hash", "h2")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, yaml.Unmarshal([]byte(out), &got))
	assert.Equal(t, "h2", got.Hash, "--hash overrides the ConfigMap's")
	assert.Equal(t, "Refreshing", got.Nodes[0].Phase)

	// --kubeconfig wins over $KUBECONFIG.
	adminKC, err := kube.Kubeconfig(kubetest.AdminUser)
	require.NoError(t, err)
	code, _, stderr = cliRun(t, env, "status", "--kubeconfig", adminKC, "--namespace", ns, "--pool", pool)
	assert.Equal(t, 0, code, stderr)

	// A pool without a ConfigMap: a clear error, not a guess.
	code, _, stderr = cliRun(t, env, "status", "--context", "good", "--namespace", ns, "--pool", "nopool")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "ConfigMap "+ns+"/nopool-refresh not found")
}

// TestRunLogsUnreachableAPIServerAtOnce starts the agent against a closed port: the first log lines
// say so, before any retry.
func TestRunLogsUnreachableAPIServerAtOnce(t *testing.T) {
	kube := requireKube(t)
	kc := twoContexts(t, kube)
	root, watch := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBinary(t), "run", "--kubeconfig", kc, "--node-name", "n", "--root", root,
		"--systemd", "none", "--source", "volume", "--watch-dir", watch, "--metrics-addr", "", "--health-addr", "")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	found := false
	for i := 0; i < 5 && sc.Scan(); i++ {
		var line struct{ Level, Msg, Server string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && strings.Contains(line.Msg, "API server unreachable") {
			found = true
			assert.Equal(t, "ERROR", line.Level)
			assert.Equal(t, "https://127.0.0.1:1", line.Server)
			break
		}
	}
	assert.True(t, found, "no 'API server unreachable' among the first log lines")
}
