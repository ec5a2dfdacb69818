package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/test/fixture"
)

const (
	proxyManifest = "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml"
	proxyImage    = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899"
)

// TestAdversaryContentsOfAllowedFiles is adv27 F1 on the binary: the built-in policy allows
// HyperShift's API server proxy manifest and the credential provider configs by path, and the
// payload fills them with a privileged pod or a plugin environment that loads its own library.
// `apply --dry-run` and `apply` refuse (exit 3) naming the file and the field, and nothing is
// written; HyperShift's own change of the pod's image applies.
func TestAdversaryContentsOfAllowedFiles(t *testing.T) {
	bin := agentBinary(t)
	current := fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(pullSecret, []byte(`{"auths":{}}`), 0o600).
		File(proxyManifest, fixture.APIServerProxyManifest(proxyImage), 0o644)
	privileged := fixture.APIServerProxyPod(proxyImage, "172.20.0.1", 6443, "/version")
	yes := true
	privileged.Spec.HostPID = true
	privileged.Spec.Containers[0].SecurityContext.Privileged = &yes
	privileged.Spec.Containers[0].Command = []string{"nsenter", "-t", "1", "-a", "--", "sh", "-c", "echo b > /proc/sysrq-trigger"}
	withRoot := fixture.APIServerProxyPod(proxyImage, "172.20.0.1", 6443, "/version")
	withRoot.Spec.Volumes[0].HostPath.Path = "/"
	preload := string(fixture.CredentialProviderConfig("ecr")) +
		"    env:\n      - name: LD_PRELOAD\n        value: /etc/kubernetes/credential-providers/x.so\n"
	cases := []struct {
		name    string
		desired *fixture.Config
		reasons []string
	}{
		{"a privileged pod in the host's PID namespace", current.Clone().File(proxyManifest, fixture.PodYAML(privileged), 0o644),
			[]string{"file " + proxyManifest + ": static pod ", "spec.containers[0].securityContext.privileged", "spec.hostPID"}},
		{"the host's / mounted", current.Clone().File(proxyManifest, fixture.PodYAML(withRoot), 0o644),
			[]string{"static pod spec.volumes[0].hostPath.path"}},
		{"the same pod as JSON, miscased", current.Clone().File(proxyManifest, []byte(`{"apiVersion":"v1","kind":"Pod",`+
			`"metadata":{"name":"kube-apiserver-proxy","namespace":"kube-system"},"spec":{"HostPID":true,"containers":[`+
			`{"name":"x","image":"x","securityContext":{"runAsUser":1001}}]}}`), 0o644),
			[]string{"static pod manifest: unknown field \"spec.HostPID\""}},
		{"a second document", current.Clone().File(proxyManifest, append(fixture.APIServerProxyManifest(proxyImage), append([]byte("---\n"), fixture.PodYAML(privileged)...)...), 0o644),
			[]string{"more than one document"}},
		{"a credential provider's LD_PRELOAD and its library", current.Clone().
			File("/etc/kubernetes/credential-providers/ecr-credential-provider.yaml", []byte(preload), 0o644).
			File("/etc/kubernetes/credential-providers/x.so", []byte("\x7fELF\x02\x01\x01"), 0o644),
			[]string{"credential provider config providers[0].env", "file /etc/kubernetes/credential-providers/x.so: only CredentialProviderConfig files"}},
		{"a command in the kubelet's credential provider dropin", current.Clone().
			File("/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf", []byte("[Service]\nExecStartPre=/bin/sh -c id\n"), 0o644),
			[]string{"kubelet dropin: [Service] ExecStartPre="}},
	}
	dir := t.TempDir()
	cur := filepath.Join(dir, "current.json")
	require.NoError(t, os.WriteFile(cur, current.JSON(), 0o644))
	newRoot := func(t *testing.T) string {
		root := t.TempDir()
		require.NoError(t, fixture.NodeRoot(root))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "etc/kubernetes/manifests"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, proxyManifest), fixture.APIServerProxyManifest(proxyImage), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, pullSecret), []byte(`{"auths":{}}`), 0o600))
		return root
	}
	apply := func(t *testing.T, root string, desired *fixture.Config, extra ...string) (int, string, string) {
		f := filepath.Join(t.TempDir(), "desired.json")
		require.NoError(t, os.WriteFile(f, desired.JSON(), 0o644))
		return applyJSON(bin, root, cur, f, extra...)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			before, err := fixture.TreeHash(root)
			require.NoError(t, err)
			for _, mode := range [][]string{{"--dry-run"}, nil} {
				code, out, stderr := apply(t, root, tc.desired, mode...)
				require.Equal(t, 3, code, "%v: stdout %s\nstderr %s", mode, out, stderr)
				var res struct {
					Refused []struct{ Path, Reason string }
				}
				require.NoError(t, json.Unmarshal([]byte(out), &res))
				var reasons []string
				for _, r := range res.Refused {
					reasons = append(reasons, r.Reason)
				}
				for _, want := range tc.reasons {
					assert.Contains(t, strings.Join(reasons, "\n"), want, mode)
				}
				after, err := fixture.TreeHash(root)
				require.NoError(t, err)
				assert.Equal(t, before, after, "%v: nothing written", mode)
			}
		})
	}
	t.Run("HyperShift's new image applies", func(t *testing.T) {
		root := newRoot(t)
		newImage := fixture.APIServerProxyPod("quay.io/openshift/haproxy-router:4.19", "172.20.0.1", 6443, "/version")
		newImage.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: newImage.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]}
		manifest := fixture.PodYAML(newImage)
		code, out, stderr := apply(t, root, current.Clone().File(proxyManifest, manifest, 0o644))
		require.Equal(t, 0, code, "stdout %s\nstderr %s", out, stderr)
		got, err := os.ReadFile(filepath.Join(root, proxyManifest))
		require.NoError(t, err)
		assert.Equal(t, string(manifest), string(got))
	})
}
