package allowlist_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

const proxyImage = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func proxyPod() *corev1.Pod {
	return fixture.APIServerProxyPod(proxyImage, "172.20.0.1", 6443, "/version")
}

func ptr[T any](v T) *T { return &v }

// podWith is HyperShift's pod with one edit.
func podWith(edit func(p *corev1.Pod)) []byte {
	p := proxyPod()
	edit(p)
	return fixture.PodYAML(p)
}

func container(edit func(c *corev1.Container)) []byte {
	return podWith(func(p *corev1.Pod) { edit(&p.Spec.Containers[0]) })
}

func containerSC(edit func(sc *corev1.SecurityContext)) []byte {
	return container(func(c *corev1.Container) { edit(c.SecurityContext) })
}

// f1Pod is the adversary's pod (adv27 F1): privileged, the host's PID namespace, / mounted, and
// nsenter into PID 1.
func f1Pod() []byte {
	return podWith(func(p *corev1.Pod) {
		p.Spec.HostPID = true
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host",
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		c := &p.Spec.Containers[0]
		c.Command = []string{"nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "sh", "-c", "echo b > /proc/sysrq-trigger"}
		c.SecurityContext = &corev1.SecurityContext{Privileged: ptr(true), RunAsUser: ptr(int64(0))}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "host", MountPath: "/host"})
	})
}

func TestStaticPodJudgeAcceptsHyperShiftsShapeAndAnSREsChanges(t *testing.T) {
	jsonPod, err := json.Marshal(proxyPod())
	require.NoError(t, err)
	accepted := map[string][]byte{
		"HyperShift's haproxy pod":      fixture.APIServerProxyManifest(proxyImage),
		"IBM Cloud's liveness endpoint": fixture.PodYAML(fixture.APIServerProxyPod("ha-proxy-image:latest", "172.20.0.1", 6443, "/livez?exclude=etcd&exclude=log")),
		"the HTTPS proxy variant": fixture.PodYAML(fixture.KubernetesDefaultProxyPod(proxyImage, "172.20.0.1:6443",
			"http://proxy.example.com:3128", "api.example.com:443")),
		"creationTimestamp null and status {}, as HyperShift's serializer writes them": []byte(strings.Replace(
			string(fixture.APIServerProxyManifest(proxyImage)), "metadata:\n", "metadata:\n  creationTimestamp: null\n", 1)),
		"JSON, as the kubelet also reads": jsonPod,
		"JSON, indented":                  append([]byte("\n  "), jsonPod...),
		"a new image":                     container(func(c *corev1.Container) { c.Image = "registry.example.com/haproxy:2.8" }),
		"a new port":                      container(func(c *corev1.Container) { c.Ports[0].HostPort, c.Ports[0].ContainerPort = 7443, 7443 }),
		"the config elsewhere in the container": container(func(c *corev1.Container) {
			c.Command[2], c.VolumeMounts[0].MountPath, c.VolumeMounts[0].ReadOnly = "/etc/haproxy", "/etc/haproxy", true
		}),
		"probes": container(func(c *corev1.Container) {
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}}
			c.LivenessProbe.PeriodSeconds = 30
		}),
		"limits": container(func(c *corev1.Container) {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("1")}
		}),
		"a literal environment": container(func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "LD_PRELOAD", Value: "/in/the/container.so"}}
		}),
		"narrower: drop all, no escalation, read-only root, RuntimeDefault": containerSC(func(sc *corev1.SecurityContext) {
			sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
			sc.AllowPrivilegeEscalation, sc.Privileged, sc.ReadOnlyRootFilesystem = ptr(false), ptr(false), ptr(true)
			sc.RunAsNonRoot = ptr(true)
			sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}),
		"the user at the pod's level": podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = nil
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(1001))}
		}),
		"the defaults an encoder of a defaulted pod writes": podWith(func(p *corev1.Pod) {
			p.Spec.RestartPolicy, p.Spec.DNSPolicy, p.Spec.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
			p.Spec.TerminationGracePeriodSeconds, p.Spec.EnableServiceLinks = ptr(int64(30)), ptr(true)
			p.Spec.SecurityContext = &corev1.PodSecurityContext{}
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			p.Spec.Volumes[0].HostPath.Type = ptr(corev1.HostPathDirectory)
			c := &p.Spec.Containers[0]
			c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.PullIfNotPresent, "/dev/termination-log", corev1.TerminationMessageReadFile
		}),
		"the host network off": podWith(func(p *corev1.Pod) { p.Spec.HostNetwork = false }),
	}
	for name, data := range accepted {
		t.Run(name, func(t *testing.T) { assert.NoError(t, allowlist.JudgeStaticPod(data)) })
	}
}

func TestStaticPodJudgeRefusesWhatWidensThePod(t *testing.T) {
	real := string(fixture.APIServerProxyManifest(proxyImage))
	refused := []struct {
		name  string
		data  []byte
		field string
	}{
		{"adv27 F1: privileged, hostPID, / mounted, nsenter", f1Pod(), "spec."},
		{"privileged", containerSC(func(sc *corev1.SecurityContext) { sc.Privileged = ptr(true) }), "spec.containers[0].securityContext.privileged"},
		{"hostPID", podWith(func(p *corev1.Pod) { p.Spec.HostPID = true }), "spec.hostPID"},
		{"hostIPC", podWith(func(p *corev1.Pod) { p.Spec.HostIPC = true }), "spec.hostIPC"},
		{"a shared process namespace", podWith(func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr(true) }), "spec.shareProcessNamespace"},
		{"hostUsers false", podWith(func(p *corev1.Pod) { p.Spec.HostUsers = ptr(false) }), "spec.hostUsers"},
		{"allowPrivilegeEscalation", containerSC(func(sc *corev1.SecurityContext) { sc.AllowPrivilegeEscalation = ptr(true) }), "allowPrivilegeEscalation"},
		{"an added capability", containerSC(func(sc *corev1.SecurityContext) {
			sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}, Drop: []corev1.Capability{"ALL"}}
		}), "spec.containers[0].securityContext.capabilities.add"},
		{"/ mounted", podWith(func(p *corev1.Pod) { p.Spec.Volumes[0].HostPath.Path = "/" }), "spec.volumes[0].hostPath.path"},
		{"a path out of the config dir", podWith(func(p *corev1.Pod) { p.Spec.Volumes[0].HostPath.Path = "/etc/kubernetes/apiserver-proxy-config/../.." }), "hostPath.path"},
		{"the config dir with a slash", podWith(func(p *corev1.Pod) { p.Spec.Volumes[0].HostPath.Path = "/etc/kubernetes/apiserver-proxy-config/" }), "hostPath.path"},
		{"the CRI socket", podWith(func(p *corev1.Pod) {
			p.Spec.Volumes[0].HostPath = &corev1.HostPathVolumeSource{Path: "/etc/kubernetes/apiserver-proxy-config", Type: ptr(corev1.HostPathSocket)}
		}), "hostPath.type"},
		{"a second host path", podWith(func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "run", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/run"}}})
		}), "spec.volumes[1].hostPath.path"},
		{"another kind of volume", podWith(func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}), "spec.volumes[1]"},
		{"two sources in the config volume", podWith(func(p *corev1.Pod) { p.Spec.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{} }), "spec.volumes[0].emptyDir"},
		{"root", containerSC(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr(int64(0)) }), "spec.containers[0].securityContext.runAsUser"},
		{"root at the pod's level", podWith(func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(0))} }), "spec.securityContext.runAsUser"},
		{"no user: the image's", containerSC(func(sc *corev1.SecurityContext) { sc.RunAsUser = nil }), "runAsUser: not set"},
		// Round-2 adversary: ids beyond the API's range (a 32-bit truncation of 2^32 is root).
		{"user 2^32", containerSC(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr(int64(1) << 32) }), "spec.containers[0].securityContext.runAsUser: 4294967296 is not a user"},
		{"user 2^31", containerSC(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr(int64(1) << 31) }), "is not a user"},
		{"group 2^32 at the pod's level", podWith(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsGroup: ptr(int64(1) << 32)}
		}), "spec.securityContext.runAsGroup"},
		{"runAsNonRoot false", containerSC(func(sc *corev1.SecurityContext) { sc.RunAsNonRoot = ptr(false) }), "runAsNonRoot"},
		{"the root group", containerSC(func(sc *corev1.SecurityContext) { sc.RunAsGroup = ptr(int64(0)) }), "runAsGroup"},
		{"supplemental root group", podWith(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroups: []int64{0}}
		}), "spec.securityContext.supplementalGroups"},
		{"seccomp Unconfined", containerSC(func(sc *corev1.SecurityContext) {
			sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}), "seccompProfile"},
		{"seccomp Unconfined for the pod", podWith(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		}), "spec.securityContext.seccompProfile"},
		{"a Localhost seccomp profile", containerSC(func(sc *corev1.SecurityContext) {
			sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("x.json")}
		}), "seccompProfile"},
		{"AppArmor Unconfined", containerSC(func(sc *corev1.SecurityContext) {
			sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}), "appArmorProfile"},
		{"SELinux spc_t", containerSC(func(sc *corev1.SecurityContext) { sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} }), "spec.containers[0].securityContext.seLinuxOptions"},
		{"SELinux for the pod", podWith(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0"}}
		}), "spec.securityContext.seLinuxOptions"},
		{"an unmasked /proc", containerSC(func(sc *corev1.SecurityContext) { sc.ProcMount = ptr(corev1.UnmaskedProcMount) }), "procMount"},
		{"sysctls", podWith(func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.core_pattern", Value: "|/x"}}}
		}), "spec.securityContext.sysctls"},
		{"another namespace", podWith(func(p *corev1.Pod) { p.Namespace = "default" }), "metadata"},
		{"another name", podWith(func(p *corev1.Pod) { p.Name = "debug" }), "metadata"},
		{"CRI-O's Devices annotation", podWith(func(p *corev1.Pod) { p.Annotations = map[string]string{"io.kubernetes.cri-o.Devices": "/dev/sda"} }), "metadata.annotations"},
		{"owner references", podWith(func(p *corev1.Pod) { p.Finalizers = []string{"x"} }), "metadata.finalizers"},
		{"a second container", podWith(func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0]) }), "spec.containers"},
		{"no container", podWith(func(p *corev1.Pod) { p.Spec.Containers = nil }), "spec.containers"},
		{"an init container", podWith(func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{p.Spec.Containers[0]} }), "spec.initContainers"},
		{"an ephemeral container", podWith(func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "x", Image: "x"}}}
		}), "spec.ephemeralContainers"},
		{"a runtime class", podWith(func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr("crun") }), "spec.runtimeClassName"},
		{"a service account", podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "default" }), "spec.serviceAccountName"},
		{"host aliases", podWith(func(p *corev1.Pod) { p.Spec.HostAliases = []corev1.HostAlias{{IP: "1.2.3.4"}} }), "spec.hostAliases"},
		{"a resource claim", podWith(func(p *corev1.Pod) { p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}} }), "spec.resourceClaims"},
		{"an hour to stop", podWith(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(3600)) }), "spec.terminationGracePeriodSeconds"},
		{"a sub path", container(func(c *corev1.Container) { c.VolumeMounts[0].SubPath = "../../.." }), "volumeMounts[0].subPath"},
		{"bidirectional propagation", container(func(c *corev1.Container) {
			c.VolumeMounts[0].MountPropagation = ptr(corev1.MountPropagationBidirectional)
		}), "volumeMounts[0].mountPropagation"},
		{"a mount of no volume", container(func(c *corev1.Container) { c.VolumeMounts[0].Name = "host" }), "volumeMounts[0].name"},
		{"a device", container(func(c *corev1.Container) {
			c.VolumeDevices = []corev1.VolumeDevice{{Name: "config", DevicePath: "/dev/x"}}
		}), "volumeDevices"},
		{"hugepages", container(func(c *corev1.Container) {
			c.Resources.Limits = corev1.ResourceList{"hugepages-2Mi": resource.MustParse("1Gi")}
		}), "resources.limits.hugepages-2Mi"},
		{"a GPU", container(func(c *corev1.Container) { c.Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1") }), "resources.requests.nvidia.com/gpu"},
		{"a container's claim", container(func(c *corev1.Container) { c.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}} }), "resources.claims"},
		{"an environment from elsewhere", container(func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
		}), "env[0].valueFrom"},
		{"a lifecycle hook", container(func(c *corev1.Container) {
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}}
		}), "spec.containers[0].lifecycle"},
		{"a terminal", container(func(c *corev1.Container) { c.TTY = true }), "spec.containers[0].tty"},
		{"a status", podWith(func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }), "status.phase"},
		// Encodings an adversary would try.
		{"YAML 1.1's yes", []byte(strings.Replace(real, "hostNetwork: true", "hostNetwork: true\n  hostPID: yes", 1)), "spec.hostPID"},
		{"miscased key", []byte(strings.Replace(real, "hostNetwork: true", "hostNetwork: true\n  HostPID: true", 1)), "HostPID"},
		{"lower-cased key", []byte(strings.Replace(real, "hostNetwork: true", "hostNetwork: true\n  hostpid: true", 1)), "hostpid"},
		{"a key given twice", []byte(strings.Replace(real, "runAsUser: 1001", "runAsUser: 1001\n      runAsUser: 0", 1)), "runAsUser"},
		{"an anchor and an alias", []byte(strings.Replace(real, "runAsUser: 1001", "runAsUser: &u 1001\n      runAsGroup: *u", 1)), "anchor"},
		{"a merge key", []byte(strings.Replace(real, "    securityContext:\n      runAsUser: 1001", "    securityContext:\n      <<: {privileged: true}\n      runAsUser: 1001", 1)), ""},
		{"a second document", append([]byte(real+"---\n"), f1Pod()...), "more than one document"},
		{"a second document after an empty one", append([]byte("---\n"+real+"---\n"), f1Pod()...), "more than one document"},
		{"a List", []byte("apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(string(f1Pod()), "\n", "\n  ")), "items"},
		{"a PodList", []byte("apiVersion: v1\nkind: PodList\nitems: []\n"), "items"},
		{"kind pod", []byte(strings.Replace(real, "kind: Pod", "kind: pod", 1)), "kind"},
		{"apiVersion v2", []byte(strings.Replace(real, "apiVersion: v1", "apiVersion: v2", 1)), "kind"},
		{"a string for a bool", []byte(strings.Replace(real, "hostNetwork: true", "hostNetwork: true\n  hostPID: \"true\"", 1)), "hostPID"},
		{"JSON with a key given twice", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kube-apiserver-proxy","namespace":"kube-system"},` +
			`"spec":{"hostPID":false,"hostPID":true,"containers":[{"name":"x","image":"x","securityContext":{"runAsUser":1001}}]}}`), "hostPID"},
		{"JSON, miscased", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kube-apiserver-proxy","namespace":"kube-system"},` +
			`"spec":{"HostPID":true,"containers":[{"name":"x","image":"x","securityContext":{"runAsUser":1001}}]}}`), "HostPID"},
		{"empty", []byte(""), "no document"},
		{"comments only", []byte("# nothing\n"), "no document"},
		{"null", []byte("null"), "no document"},
		{"not YAML", []byte("\tkind: [Pod"), "static pod manifest"},
		{"too large", []byte(real + "# " + strings.Repeat("x", 300<<10) + "\n"), "bytes"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			err := allowlist.JudgeStaticPod(tc.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

func TestStaticPodManifestPaths(t *testing.T) {
	for p, want := range map[string]bool{
		"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml":                    true,
		"/etc/kubernetes/manifests/anything":                                     true, // the kubelet reads any name
		"/etc/kubernetes/manifests/.kube-apiserver-proxy.yaml.refresh-agent-tmp": false,
		"/etc/kubernetes/manifests":                                              false,
		"/etc/kubernetes/manifests/sub/x.yaml":                                   false,
		"/etc/kubernetes/apiserver-proxy-config/haproxy.cfg":                     false,
		"/etc/kubernetes/manifestsx/kube-apiserver-proxy.yaml":                   false,
		"/etc/kubernetes/static-pod-resources/kube-apiserver-proxy.yaml":         false,
	} {
		assert.Equal(t, want, allowlist.IsStaticPodManifest(p), p)
		assert.Equal(t, want, allowlist.ContentJudge(p) != nil, p)
	}
}
