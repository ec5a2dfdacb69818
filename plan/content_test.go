package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

const (
	proxyManifest = "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml"
	proxyImage    = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	credDropinAt  = "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf"
)

// privilegedProxy is adv27's F1 pod: HyperShift's, privileged, in the host's PID namespace, with /
// mounted.
func privilegedProxy() []byte {
	p := fixture.APIServerProxyPod(proxyImage, "172.20.0.1", 6443, "/version")
	t := true
	p.Spec.HostPID = true
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
	c := &p.Spec.Containers[0]
	c.SecurityContext.Privileged = &t
	c.Command = []string{"nsenter", "-t", "1", "-m", "--", "sh", "-c", "echo b > /proc/sysrq-trigger"}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "host", MountPath: "/host"})
	return fixture.PodYAML(p)
}

func withProxy(manifest []byte) *fixture.Config {
	return base().File(proxyManifest, manifest, 0o644)
}

func refusedReasons(p *plan.Plan) string {
	var r []string
	for _, x := range p.Refused {
		r = append(r, x.Reason)
	}
	return strings.Join(r, "\n")
}

// TestContentsJudgedWhicheverRuleAllowsThePath: the built-in rule and a node policy's
// NodeDisruptionPolicy rule for the same file both allow the path; neither lets the pod or the
// credential provider config say what it likes. HyperShift's own changes stay eligible.
func TestContentsJudgedWhicheverRuleAllowsThePath(t *testing.T) {
	cur := withProxy(fixture.APIServerProxyManifest(proxyImage))
	newImage := withProxy(fixture.APIServerProxyManifest("quay.io/openshift/haproxy-router:4.19"))
	p := build(t, cur, newImage, "")
	require.True(t, p.Eligible, refusedReasons(p))

	p = build(t, cur, withProxy(privilegedProxy()), "")
	require.False(t, p.Eligible)
	require.Len(t, p.Refused, 1)
	assert.Equal(t, proxyManifest, p.Refused[0].Path)
	assert.Contains(t, p.Refused[0].Reason, "file "+proxyManifest+": static pod spec.")
	assert.Empty(t, p.Files, "refused whole")

	ndp := "nodeDisruptionPolicy:\n  files:\n  - path: " + proxyManifest + "\n    actions: [{type: None}]\n" +
		"  - path: /etc/kubernetes/credential-providers\n    actions: [{type: Restart, restart: {serviceName: kubelet.service}}]\n"
	p = ndpBuild(t, ndp, cur, withProxy(privilegedProxy()))
	require.False(t, p.Eligible)
	assert.Contains(t, refusedReasons(p), "static pod spec.")

	ecr := fixture.CredentialProviderConfig("ecr")
	preload := string(ecr) + "    env:\n      - name: LD_PRELOAD\n        value: /etc/kubernetes/credential-providers/x.so\n"
	f1 := base().File("/etc/kubernetes/credential-providers/x.yaml", []byte(preload), 0o644).
		File("/etc/kubernetes/credential-providers/x.so", []byte("\x7fELF"), 0o644)
	for name, p := range map[string]*plan.Plan{"built-in": build(t, base(), f1, ""), "NodeDisruptionPolicy": ndpBuild(t, ndp, base(), f1)} {
		require.False(t, p.Eligible, name)
		reasons := refusedReasons(p)
		assert.Contains(t, reasons, "file /etc/kubernetes/credential-providers/x.yaml: credential provider config providers[0].env", name)
		assert.Contains(t, reasons, "file /etc/kubernetes/credential-providers/x.so: only CredentialProviderConfig files", name)
	}
	p = build(t, base(), base().File("/etc/kubernetes/credential-providers/x.yaml", ecr, 0o644).
		File(credDropinAt, fixture.CredProviderDropin("/etc/kubernetes/credential-providers/x.yaml"), 0o644), "")
	assert.True(t, p.Eligible, refusedReasons(p))

	p = build(t, base(), base().File(credDropinAt, []byte("[Service]\nExecStartPre=/bin/sh -c id\n"), 0o644), "")
	require.False(t, p.Eligible)
	assert.Contains(t, refusedReasons(p), "file "+credDropinAt+": kubelet dropin: [Service] ExecStartPre=")

	p = build(t, base(), base().File(pullSecret, []byte(`{"auths":{},"credHelpers":{"quay.io":"x"}}`), 0o600), "")
	require.False(t, p.Eligible)
	assert.Contains(t, refusedReasons(p), "file "+pullSecret+`: pull secret: "credHelpers"`)
}

// TestRemovingAJudgedFileIsNotJudged: a removal writes no contents (the kubelet stops the pod).
func TestRemovingAJudgedFileIsNotJudged(t *testing.T) {
	p := build(t, withProxy(privilegedProxy()), base(), "")
	assert.True(t, p.Eligible, refusedReasons(p))
}
