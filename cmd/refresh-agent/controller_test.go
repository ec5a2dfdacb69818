package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestControllerCommandRefusesBadFlags(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	base := []string{"controller", "--management-kubeconfig", kc, "--guest-kubeconfig", kc, "--namespace", "clusters-x", "--health-addr", ""}
	cases := map[string]struct {
		args []string
		want string
	}{
		"no guest kubeconfig": {[]string{"controller", "--management-kubeconfig", kc, "--namespace", "ns"}, "--guest-kubeconfig is required"},
		"no namespace":        {[]string{"controller", "--guest-kubeconfig", kc, "--management-kubeconfig", kc}, "--namespace"},
		"missing kubeconfig":  {append(base, "--guest-kubeconfig", filepath.Join(t.TempDir(), "none")), "--guest-kubeconfig"},
		"template":            {append(base, "--configmap-template", "refresh"), "lacks {pool}"},
		"lease timings":       {append(base, "--leader-elect-renew-deadline", "20s"), "--leader-elect-renew-deadline"},
		"unknown flag":        {append(base, "--nope"), "unknown flag: --nope"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "no namespace" {
				t.Setenv("POD_NAMESPACE", "")
			}
			code, _, stderr := run(t, c.args...)
			assert.Equal(t, exitInvalid, code)
			assert.Contains(t, stderr, c.want)
		})
	}
}
