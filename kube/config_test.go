package kube

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubeconfig writes a kubeconfig with contexts "a" and "b" (servers https://a and https://b),
// current is the current context.
func kubeconfig(t *testing.T, path, current string) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: a, cluster: {server: "https://a.`+current+`.example:6443"}}
- {name: b, cluster: {server: "https://b.`+current+`.example:6443"}}
users: [{name: u, user: {token: t}}]
contexts:
- {name: a, context: {cluster: a, user: u}}
- {name: b, context: {cluster: b, user: u}}
current-context: `+current+"\n"), 0o600))
}

func TestConfigFlagsLoadLikeKubectl(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod: no in-cluster fallback
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	host := func(f ConfigFlags) string {
		t.Helper()
		cfg, err := f.RESTConfig("test")
		require.NoError(t, err)
		assert.Equal(t, "test", cfg.UserAgent)
		return cfg.Host
	}

	_, err := (&ConfigFlags{}).RESTConfig("test")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no kubeconfig")

	kubeconfig(t, filepath.Join(home, ".kube", "config"), "a")
	assert.Equal(t, "https://a.a.example:6443", host(ConfigFlags{}), "~/.kube/config")
	assert.Equal(t, "https://b.a.example:6443", host(ConfigFlags{Context: "b"}), "--context")

	env := filepath.Join(t.TempDir(), "env-config")
	kubeconfig(t, env, "b")
	t.Setenv("KUBECONFIG", env)
	assert.Equal(t, "https://b.b.example:6443", host(ConfigFlags{}), "$KUBECONFIG wins over ~/.kube/config")

	explicit := filepath.Join(t.TempDir(), "explicit")
	kubeconfig(t, explicit, "a")
	assert.Equal(t, "https://a.a.example:6443", host(ConfigFlags{Kubeconfig: explicit}), "--kubeconfig wins over $KUBECONFIG")
	assert.Equal(t, "https://b.a.example:6443", host(ConfigFlags{Kubeconfig: explicit, Context: "b"}))

	_, err = (&ConfigFlags{Kubeconfig: explicit, Context: "nope"}).RESTConfig("test")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nope")
	_, err = (&ConfigFlags{Kubeconfig: filepath.Join(t.TempDir(), "missing")}).RESTConfig("test")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing")
}
