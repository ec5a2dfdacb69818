package allowlist

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The static pod judge. The node policy grants that HyperShift's API server proxy may change, not
// that any static pod may run: the kubelet runs whatever its manifest directory holds, with all the
// power the manifest asks (privileged, the host's PID namespace, / mounted), and no admission looks
// at it. So a manifest is accepted only in the shape HyperShift writes
// (hypershift-operator/controllers/nodepool/apiserver-haproxy/haproxy.go, generateHAProxyStaticPod
// and generateKubernetesDefaultProxyPod): the pod kube-system/kube-apiserver-proxy, one container
// as a non-root user, the host network, the one host directory its HAProxy config lives in, and
// what an SRE changes in it (the image, command and arguments, ports, probes, resources,
// environment values). Every other field, named or not, is refused: the judge clears what it
// accepts and refuses whatever is left (firstSet), so a field it never heard of is refused too.

// StaticPodDir is the kubelet's staticPodPath on RHCOS (and HyperShift's workers).
const StaticPodDir = "/etc/kubernetes/manifests"

const (
	proxyPodName       = "kube-apiserver-proxy"
	proxyPodNamespace  = "kube-system"
	proxyConfigHostDir = "/etc/kubernetes/apiserver-proxy-config"
)

// IsStaticPodManifest reports whether the kubelet would read path as a static pod: any file it
// finds in its manifest directory, whatever its name, but hidden ones (the kubelet skips names
// starting with "."; the agent's side files are such).
func IsStaticPodManifest(p string) bool {
	dir, base := path.Split(p)
	return strings.TrimSuffix(dir, "/") == StaticPodDir && base != "" && !strings.HasPrefix(base, ".")
}

// JudgeStaticPod says why the manifest (the file's bytes, YAML or JSON) must not run, naming the
// field, or nil when it is HyperShift's API server proxy within the bounds above.
func JudgeStaticPod(data []byte) error {
	var pod corev1.Pod
	if err := decodeKubeFile(data, &pod); err != nil {
		return fmt.Errorf("static pod manifest: %w", err)
	}
	return judgePod(&pod)
}

// podFault is a refused field and why.
type podFault struct{ field, why string }

// podFaults are all the fields a manifest is refused for, in the order judged.
type podFaults []podFault

// maxPodFaults bounds the message: the first ones and how many more.
const maxPodFaults = 8

func (fs podFaults) Error() string {
	parts := make([]string, 0, len(fs))
	for i, f := range fs {
		if i == maxPodFaults {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-i))
			break
		}
		parts = append(parts, f.field+": "+f.why)
	}
	return "static pod " + strings.Join(parts, "; ")
}

const notHyperShifts = "not part of HyperShift's kube-apiserver-proxy pod, and a static pod runs with whatever power its manifest asks"

// podJudge collects the faults of one manifest.
type podJudge struct{ faults podFaults }

func (j *podJudge) refuse(field, why string) { j.faults = append(j.faults, podFault{field, why}) }

// rest refuses every field of v (under at) the judge has not cleared.
func (j *podJudge) rest(v any, at, why string) {
	for _, f := range setFields(v, at) {
		j.refuse(f, why)
	}
}

func judgePod(in *corev1.Pod) error {
	p := in.DeepCopy()
	j := &podJudge{}
	if p.Kind != "Pod" || p.APIVersion != "v1" {
		j.refuse("kind", fmt.Sprintf("%s of %s: only a single Pod of v1 is judged (a List or PodList would be the kubelet's to unpack)", shown(p.Kind), shown(p.APIVersion)))
	}
	if p.Namespace != proxyPodNamespace || p.Name != proxyPodName {
		j.refuse("metadata", fmt.Sprintf("the pod is %s in namespace %s: the only static pod a refresh writes is %s/%s (HyperShift's API server proxy)",
			shown(p.Name), shown(p.Namespace), proxyPodNamespace, proxyPodName))
	}
	p.TypeMeta = metav1.TypeMeta{}
	p.Name, p.Namespace, p.Labels, p.CreationTimestamp = "", "", nil, metav1.Time{}
	if len(p.Annotations) > 0 {
		j.refuse("metadata.annotations", "annotations reach the container runtime (CRI-O reads io.kubernetes.cri-o.* ones, e.g. Devices): "+notHyperShifts)
		p.Annotations = nil
	}
	j.rest(p.ObjectMeta, "metadata", notHyperShifts)
	j.rest(p.Status, "status", "a manifest has no status")
	j.spec(&p.Spec)
	if len(j.faults) > 0 {
		return j.faults
	}
	return nil
}

func (j *podJudge) spec(s *corev1.PodSpec) {
	// What the pod runs as: HyperShift's container runs as 1001 (config.DefaultSecurityContextUser).
	// Unset, the image's user runs, root for most images.
	podUser, podNonRoot := (*int64)(nil), false
	if sc := s.SecurityContext; sc != nil {
		podUser, podNonRoot = sc.RunAsUser, sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
		j.ids("spec.securityContext", sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot)
		j.profiles("spec.securityContext", sc.SeccompProfile, sc.AppArmorProfile)
		sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot, sc.SeccompProfile, sc.AppArmorProfile = nil, nil, nil, nil, nil
		j.rest(sc, "spec.securityContext", notHyperShifts)
		s.SecurityContext = nil
	}
	volumes := map[string]bool{}
	for i := range s.Volumes {
		v := &s.Volumes[i]
		at := fmt.Sprintf("spec.volumes[%d]", i)
		if volumes[v.Name] {
			j.refuse(at+".name", fmt.Sprintf("%s is given twice", shown(v.Name)))
		}
		switch hp := v.HostPath; {
		case hp == nil:
			j.refuse(at, "only the host directory "+proxyConfigHostDir+" may be a volume (HyperShift's pod has no other): "+notHyperShifts)
		case hp.Path != proxyConfigHostDir:
			j.refuse(at+".hostPath.path", fmt.Sprintf("%s: the only host path the pod may mount is %s, its HAProxy config", shown(hp.Path), proxyConfigHostDir))
		case hp.Type != nil && *hp.Type != "" && *hp.Type != corev1.HostPathDirectory:
			j.refuse(at+".hostPath.type", fmt.Sprintf("%s: only Directory (or unset)", shown(string(*hp.Type))))
		default:
			volumes[v.Name] = true
		}
		v.Name, v.HostPath = "", nil
		j.rest(v, at, notHyperShifts)
	}
	s.Volumes = nil
	if n := len(s.Containers); n != 1 {
		j.refuse("spec.containers", fmt.Sprintf("%d containers: HyperShift's pod has one", n))
	}
	for i := range s.Containers {
		j.container(&s.Containers[i], fmt.Sprintf("spec.containers[%d]", i), volumes, podUser, podNonRoot)
	}
	s.Containers = nil
	// The pod's own settings HyperShift writes, and the defaults an encoder of a defaulted pod
	// writes out; none of them reaches beyond the pod.
	s.HostNetwork = false // HyperShift's pod is on the host network; off is narrower
	if !slices.Contains([]string{"", "system-node-critical", "system-cluster-critical"}, s.PriorityClassName) {
		j.refuse("spec.priorityClassName", fmt.Sprintf("%s: system-node-critical (HyperShift's) or system-cluster-critical", shown(s.PriorityClassName)))
	}
	s.PriorityClassName = ""
	if !slices.Contains([]corev1.RestartPolicy{"", corev1.RestartPolicyAlways}, s.RestartPolicy) {
		j.refuse("spec.restartPolicy", fmt.Sprintf("%s: the proxy always restarts", shown(string(s.RestartPolicy))))
	}
	s.RestartPolicy = ""
	if !slices.Contains([]corev1.DNSPolicy{"", corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet, corev1.DNSDefault}, s.DNSPolicy) {
		j.refuse("spec.dnsPolicy", shown(string(s.DNSPolicy)))
	}
	s.DNSPolicy = ""
	if s.SchedulerName == corev1.DefaultSchedulerName {
		s.SchedulerName = ""
	}
	if g := s.TerminationGracePeriodSeconds; g != nil && *g >= 0 && *g <= 300 {
		s.TerminationGracePeriodSeconds = nil // a longer one would hold the node's stop
	}
	s.EnableServiceLinks = nil
	s.Tolerations = nil // the kubelet runs a static pod whatever it tolerates
	if s.HostUsers != nil && *s.HostUsers {
		s.HostUsers = nil // the default; false asks for a user namespace, which HyperShift's pod does not
	}
	j.rest(s, "spec", notHyperShifts)
}

func (j *podJudge) container(c *corev1.Container, at string, volumes map[string]bool, podUser *int64, podNonRoot bool) {
	if c.Image == "" {
		j.refuse(at+".image", "empty")
	}
	c.Name, c.Image, c.Command, c.Args, c.WorkingDir = "", "", nil, nil, ""
	for i, p := range c.Ports {
		if !slices.Contains([]corev1.Protocol{"", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}, p.Protocol) {
			j.refuse(fmt.Sprintf("%s.ports[%d].protocol", at, i), shown(string(p.Protocol)))
		}
	}
	c.Ports = nil
	for i := range c.Env {
		e := c.Env[i]
		e.Name, e.Value = "", "" // the container's own environment, inside it
		j.rest(e, fmt.Sprintf("%s.env[%d]", at, i), "only literal values: "+notHyperShifts)
	}
	c.Env = nil
	for _, rl := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", c.Resources.Requests}, {"limits", c.Resources.Limits}} {
		for _, r := range slices.Sorted(maps.Keys(rl.list)) {
			if !slices.Contains([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}, r) {
				// An extended resource or hugepages hands the pod a device or host memory.
				j.refuse(at+".resources."+rl.name+"."+string(r), "only cpu, memory and ephemeral-storage")
			}
		}
	}
	c.Resources.Requests, c.Resources.Limits = nil, nil
	// Probes run in the container (exec) or by the kubelet against an address (httpGet,
	// tcpSocket, grpc).
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
	if c.TerminationMessagePath == "" || path.IsAbs(c.TerminationMessagePath) {
		c.TerminationMessagePath = ""
	}
	if slices.Contains([]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}, c.TerminationMessagePolicy) {
		c.TerminationMessagePolicy = ""
	}
	if slices.Contains([]corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}, c.ImagePullPolicy) {
		c.ImagePullPolicy = ""
	}
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mat := fmt.Sprintf("%s.volumeMounts[%d]", at, i)
		if !volumes[m.Name] {
			j.refuse(mat+".name", fmt.Sprintf("%s is not an accepted volume of the pod", shown(m.Name)))
		}
		if !path.IsAbs(m.MountPath) {
			j.refuse(mat+".mountPath", fmt.Sprintf("%s is not absolute", shown(m.MountPath)))
		}
		if m.MountPropagation != nil && *m.MountPropagation == corev1.MountPropagationNone {
			m.MountPropagation = nil
		}
		// subPath and subPathExpr are left to be refused: the way out of a host path (CVE-2017-1002101).
		m.Name, m.MountPath, m.ReadOnly = "", "", false
		j.rest(m, mat, notHyperShifts)
	}
	c.VolumeMounts = nil
	user, nonRoot := podUser, podNonRoot
	if sc := c.SecurityContext; sc != nil {
		sat := at + ".securityContext"
		if sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
		j.ids(sat, sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot)
		j.profiles(sat, sc.SeccompProfile, sc.AppArmorProfile)
		sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot, sc.SeccompProfile, sc.AppArmorProfile = nil, nil, nil, nil, nil
		if sc.Privileged != nil && !*sc.Privileged {
			sc.Privileged = nil
		}
		if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
			sc.AllowPrivilegeEscalation = nil
		}
		sc.ReadOnlyRootFilesystem = nil
		if sc.ProcMount != nil && *sc.ProcMount == corev1.DefaultProcMount {
			sc.ProcMount = nil
		}
		if caps := sc.Capabilities; caps != nil {
			if len(caps.Add) > 0 {
				j.refuse(sat+".capabilities.add", fmt.Sprintf("%s: no capability may be added", shown(fmt.Sprint(caps.Add))))
			}
			sc.Capabilities = nil // drops only narrow it
		}
		j.rest(sc, sat, notHyperShifts)
		c.SecurityContext = nil
	}
	if user == nil && !nonRoot {
		j.refuse(at+".securityContext.runAsUser", "not set, nor runAsNonRoot: the image's user, root for most images, would run (HyperShift's runs as 1001)")
	}
	j.rest(c, at, notHyperShifts)
}

// maxID is the largest user or group id the Kubernetes API accepts.
const maxID = 1<<31 - 1

// ids refuses root: user 0, group 0, or runAsNonRoot false said outright; and ids outside the API's range.
func (j *podJudge) ids(at string, user, group *int64, nonRoot *bool) {
	if user != nil && *user == 0 {
		j.refuse(at+".runAsUser", "0 (root): HyperShift's pod runs as 1001")
	}
	// The API's range (validation.IsValidUserID/IsValidGroupID): beyond it the kubelet refuses the
	// pod, and a runtime that truncated the id to 32 bits would run 4294967296 as root.
	if user != nil && (*user < 0 || *user > maxID) {
		j.refuse(at+".runAsUser", fmt.Sprintf("%d is not a user (0 to %d)", *user, maxID))
	}
	if group != nil && (*group <= 0 || *group > maxID) {
		j.refuse(at+".runAsGroup", fmt.Sprintf("%d: not the root group, nor one outside 1 to %d", *group, maxID))
	}
	if nonRoot != nil && !*nonRoot {
		j.refuse(at+".runAsNonRoot", "false: the proxy never needs root")
	}
}

// profiles accepts the runtime's default seccomp and AppArmor profiles only: Unconfined lifts the
// confinement, Localhost loads a profile of the node's.
func (j *podJudge) profiles(at string, sp *corev1.SeccompProfile, ap *corev1.AppArmorProfile) {
	if sp != nil && (sp.Type != corev1.SeccompProfileTypeRuntimeDefault || sp.LocalhostProfile != nil) {
		j.refuse(at+".seccompProfile", fmt.Sprintf("type %s: only RuntimeDefault", shown(string(sp.Type))))
	}
	if ap != nil && (ap.Type != corev1.AppArmorProfileTypeRuntimeDefault || ap.LocalhostProfile != nil) {
		j.refuse(at+".appArmorProfile", fmt.Sprintf("type %s: only RuntimeDefault", shown(string(ap.Type))))
	}
}
