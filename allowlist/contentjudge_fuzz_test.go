package allowlist_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

// kubeletDecode decodes a manifest as the kubelet's file source does, without the judge's code
// (k8s.io/apimachinery/pkg/util/yaml.ToJSON, then the JSON serializer's case-sensitive decode), and
// with a case-insensitive decoder too: what either sees is what an accepted manifest may run.
func kubeletDecode(data []byte) []*corev1.Pod {
	js := data
	if t := strings.TrimLeft(string(data), " \t\r\n"); !strings.HasPrefix(t, "{") {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil
		}
	}
	var out []*corev1.Pod
	var a, b corev1.Pod
	if k8sjson.UnmarshalCaseSensitivePreserveInts(js, &a) == nil {
		out = append(out, &a)
	}
	if json.Unmarshal(js, &b) == nil {
		out = append(out, &b)
	}
	return out
}

// podPowers lists what an accepted pod must never have, checked field by field here (not through
// the judge's walk).
func podPowers(p *corev1.Pod) []string {
	var bad []string
	s := p.Spec
	if s.HostPID || s.HostIPC || (s.ShareProcessNamespace != nil && *s.ShareProcessNamespace) {
		bad = append(bad, "host namespaces")
	}
	if s.HostUsers != nil && !*s.HostUsers {
		bad = append(bad, "hostUsers false")
	}
	if p.Namespace != "kube-system" || p.Name != "kube-apiserver-proxy" || len(p.Annotations) > 0 {
		bad = append(bad, "metadata")
	}
	if len(s.InitContainers)+len(s.EphemeralContainers) > 0 || len(s.Containers) != 1 || s.RuntimeClassName != nil {
		bad = append(bad, "containers")
	}
	for _, v := range s.Volumes {
		if v.HostPath == nil || v.HostPath.Path != "/etc/kubernetes/apiserver-proxy-config" {
			bad = append(bad, "volume "+v.Name)
		}
	}
	if psc := s.SecurityContext; psc != nil && (psc.SELinuxOptions != nil || len(psc.Sysctls) > 0 ||
		(psc.RunAsUser != nil && *psc.RunAsUser == 0) || (psc.SeccompProfile != nil && psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault)) {
		bad = append(bad, "pod security context")
	}
	for _, c := range s.Containers {
		user := (*int64)(nil)
		if s.SecurityContext != nil {
			user = s.SecurityContext.RunAsUser
		}
		nonRoot := s.SecurityContext != nil && s.SecurityContext.RunAsNonRoot != nil && *s.SecurityContext.RunAsNonRoot
		if sc := c.SecurityContext; sc != nil {
			if (sc.Privileged != nil && *sc.Privileged) || (sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation) ||
				(sc.Capabilities != nil && len(sc.Capabilities.Add) > 0) || sc.SELinuxOptions != nil ||
				(sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) ||
				(sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount) {
				bad = append(bad, "container security context")
			}
			if sc.RunAsUser != nil {
				user = sc.RunAsUser
			}
			if sc.RunAsNonRoot != nil {
				nonRoot = *sc.RunAsNonRoot
			}
		}
		if (user == nil && !nonRoot) || (user != nil && *user == 0) {
			bad = append(bad, "root")
		}
		for _, m := range c.VolumeMounts {
			if m.SubPath != "" || m.SubPathExpr != "" || (m.MountPropagation != nil && *m.MountPropagation == corev1.MountPropagationBidirectional) {
				bad = append(bad, "mount")
			}
		}
		if len(c.VolumeDevices) > 0 {
			bad = append(bad, "devices")
		}
	}
	return bad
}

// FuzzJudgeStaticPod: the judge never panics, its message is one line, and whatever it accepts,
// decoded as the kubelet would (case-sensitive or not), has none of the powers it refuses.
func FuzzJudgeStaticPod(f *testing.F) {
	real := fixture.APIServerProxyManifest(proxyImage)
	js, _ := json.Marshal(proxyPod())
	for _, seed := range [][]byte{real, js, f1Pod(),
		[]byte(strings.Replace(string(real), "hostNetwork: true", "hostNetwork: true\n  HostPID: true", 1)),
		[]byte(strings.Replace(string(real), "runAsUser: 1001", "runAsUser: 1001\n      runAsUser: 0", 1)),
		append(append(real, "---\n"...), f1Pod()...),
		[]byte("apiVersion: v1\nkind: List\nitems: []\n"),
		fixture.PodYAML(fixture.KubernetesDefaultProxyPod(proxyImage, "a:1", "http://p:3128", "b:443")),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := allowlist.JudgeStaticPod(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("message is not one line: %q", err)
			}
			return
		}
		for _, p := range kubeletDecode(data) {
			if bad := podPowers(p); len(bad) > 0 {
				t.Fatalf("accepted a pod with %v:\n%s", bad, data)
			}
		}
	})
}

// FuzzJudgeCredentialProvider: whatever the judge accepts holds no env in any provider, in any
// case, as a generic decode of the same bytes sees it.
func FuzzJudgeCredentialProvider(f *testing.F) {
	ecr := string(fixture.CredentialProviderConfig("ecr"))
	for _, seed := range []string{ecr, string(fixture.CredentialProviderConfig("gcr")), crioProvider,
		ecr + "    env:\n      - name: LD_PRELOAD\n        value: /x.so\n", strings.Replace(ecr, "providers:", "Providers: []\nproviders:", 1)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if allowlist.JudgeCredentialProviderFile("/etc/kubernetes/credential-providers/x.yaml", data) != nil {
			return
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatalf("accepted what sigs.k8s.io/yaml cannot read: %v", err)
		}
		var doc any
		if err := json.Unmarshal(js, &doc); err != nil {
			t.Fatalf("accepted what is not JSON: %v", err)
		}
		if at := envAnywhere(doc, ""); at != "" {
			t.Fatalf("accepted an env at %s:\n%s", at, data)
		}
	})
}

func envAnywhere(v any, at string) string {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if strings.EqualFold(k, "env") {
				return at + "." + k
			}
			if s := envAnywhere(c, at+"."+k); s != "" {
				return s
			}
		}
	case []any:
		for i, c := range v {
			if s := envAnywhere(c, fmt.Sprintf("%s[%d]", at, i)); s != "" {
				return s
			}
		}
	}
	return ""
}
