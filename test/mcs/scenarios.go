package mcs

import (
	"slices"
	"strings"
)

// Scenario is one change as a cluster makes it, with what the agent must decide.
type Scenario struct {
	Name string
	// Change returns the pool after the change (p is a clone the change may modify).
	Change func(p *Pool) *Pool
	// Eligible scenarios: the unit actions ("Reload crio.service") and pod restarts
	// ("Restart pod kube-system/kube-apiserver-proxy") in plan order, and the paths written.
	Actions []string
	Paths   []string
	// Refused scenarios: the refusal kinds, sorted.
	Refused []string
}

func withFile(path string, f File) func(*Pool) *Pool {
	return func(p *Pool) *Pool { p.Files[path] = f; return p }
}

const (
	reloadCrio  = "Reload crio.service"
	restartCA   = "Restart coreos-update-ca-trust.service"
	restartCrio = "Restart crio.service"
	restartPod  = "Restart pod kube-system/kube-apiserver-proxy"
)

// Eligible lists the changes a refresh applies without a reboot.
func Eligible() []Scenario {
	return []Scenario{
		{Name: "pullsecret", Paths: []string{PullSecret}, Change: withFile(PullSecret, File{
			Data: []byte(`{"auths":{"quay.io":{"auth":"cm90YXRlZDpzZWNyZXQ=","email":"ci@example.com"}}}` + "\n"), Mode: 0o600})},
		{Name: "mirror", Paths: []string{RegistriesConf}, Actions: []string{reloadCrio},
			Change: withFile(RegistriesConf, File{Data: registries("registry.mirror.example.com/ocp", "mirror2.example.com/ocp"), Mode: 0o644})},
		{Name: "registries.d", Paths: []string{"/etc/containers/registries.d/quay.io.yaml"}, Actions: []string{reloadCrio},
			Change: withFile("/etc/containers/registries.d/quay.io.yaml", File{Data: []byte("docker:\n  quay.io:\n    use-sigstore-attachments: true\n"), Mode: 0o644})},
		{Name: "policy.json", Paths: []string{PolicyJSON}, Actions: []string{reloadCrio},
			Change: withFile(PolicyJSON, File{Data: []byte(`{"default":[{"type":"reject"}],"transports":{"docker":{"quay.io":[{"type":"insecureAcceptAnything"}]}}}` + "\n"), Mode: 0o644, Gzip: true})},
		{Name: "userca", Paths: []string{UserCABundle}, Actions: []string{restartCA, restartCrio},
			Change: withFile(UserCABundle, File{Data: append(pem("USER CA 1"), pem("USER CA 2")...), Mode: 0o600})},
		{Name: "sshkey", Paths: []string{"/var/home/core/.ssh/authorized_keys.d/ignition"},
			Change: func(p *Pool) *Pool {
				p.SSHKeys = append(p.SSHKeys, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNlY29uZC1rZXktZm9yLXRlc3Rz second@example")
				return p
			}},
		{Name: "haproxy-image", Paths: []string{HAProxyManifest},
			Change: withFile(HAProxyManifest, File{Data: haproxyManifest("quay.io/openshift/haproxy-router@sha256:" + strings.Repeat("bb", 32)), Mode: 0o644})},
		{Name: "haproxy-cfg", Paths: []string{HAProxyCfg}, Actions: []string{restartPod},
			Change: withFile(HAProxyCfg, File{Data: haproxyCfg("172.20.0.1", 7443), Mode: 0o644})},
		{Name: "kubelet-ca", Paths: []string{KubeletCA},
			Change: func(p *Pool) *Pool { p.KubeletCA = pem("KUBE API SERVER SERVING CA (rotated)"); return p }},
		{Name: "registry-ca", Paths: []string{CertsD + "/registry.example.com:5000/ca.crt"},
			Change: func(p *Pool) *Pool {
				p.RegistryCAs = map[string][]byte{"registry.example.com:5000": pem("REGISTRY CA")}
				return p
			}},
		{Name: "cloud-ca", Paths: []string{CloudCA},
			Change: func(p *Pool) *Pool { p.CloudCA = pem("CLOUD CA"); return p }},
		{Name: "multi", Paths: []string{PullSecret, RegistriesConf, UserCABundle, HAProxyManifest, "/var/home/core/.ssh/authorized_keys.d/ignition"},
			Actions: []string{restartCA, restartCrio},
			Change: func(p *Pool) *Pool {
				for _, s := range Eligible() {
					if slices.Contains([]string{"pullsecret", "mirror", "userca", "sshkey", "haproxy-image"}, s.Name) {
						p = s.Change(p)
					}
				}
				return p
			}},
	}
}

// Refused lists the changes that need a reboot or lie outside the node policy.
func Refused() []Scenario {
	return []Scenario{
		{Name: "osimage", Refused: []string{"osImage"}, Change: func(p *Pool) *Pool {
			p.OSImageURL = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("4b", 32)
			p.ExtensionsImage = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("22", 32)
			return p
		}},
		{Name: "kargs", Refused: []string{"kernelArguments"}, Change: func(p *Pool) *Pool {
			p.KernelArguments = append(p.KernelArguments, "nosmt")
			return p
		}},
		{Name: "fips", Refused: []string{"fips"}, Change: func(p *Pool) *Pool { p.FIPS = true; return p }},
		{Name: "extensions", Refused: []string{"extensions"}, Change: func(p *Pool) *Pool {
			p.Extensions = []string{"usbguard"}
			return p
		}},
		{Name: "realtime", Refused: []string{"kernelType"}, Change: func(p *Pool) *Pool { p.KernelType = "realtime"; return p }},
		{Name: "kubeletconfig", Refused: []string{"file"}, Change: withFile(KubeletConf, File{Data: kubeletConf(200), Mode: 0o644})},
		{Name: "new-unit", Refused: []string{"unit"}, Change: func(p *Pool) *Pool {
			p.Units["multipathd.service"] = Unit{Enabled: yes(), Contents: "[Service]\nExecStart=/usr/sbin/multipathd\n"}
			return p
		}},
	}
}
