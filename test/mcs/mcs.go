// Package mcs generates worker payloads shaped as HyperShift's ignition server gets them from the
// machine-config server (MCS): the rendered MachineConfig's Ignition config served at spec 3.2.0,
// plus the files the server adds when it serves (kubelet CA, cloud CA, registry CAs, the bootstrap
// kubeconfig, node-annotations.json and the two MachineConfig metadata files), in the upgrade
// ConfigMap's encoding (base64 of gzip at BestCompression). Tests and `make demo` build on it; the
// real served payloads are never committed.
package mcs

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// File is one file of the pool's rendered config.
type File struct {
	Data []byte
	Mode int
	Gzip bool // contents served gzip-compressed (as Butane writes large files)
}

// Unit is one systemd unit of the rendered config.
type Unit struct {
	Contents string
	Enabled  *bool
	Dropins  map[string]string
}

// Pool is a NodePool's rendered MachineConfig plus what the server adds when serving it.
type Pool struct {
	Name            string
	OSImageURL      string
	ExtensionsImage string
	KernelArguments []string
	Extensions      []string
	FIPS            bool
	KernelType      string
	Files           map[string]File
	Units           map[string]Unit
	SSHKeys         []string

	// Added by the server when it serves (not in the MachineConfig).
	KubeletCA   []byte
	CloudCA     []byte            // empty: not served
	RegistryCAs map[string][]byte // registry -> ca.crt, served under /etc/docker/certs.d/
	Kubeconfig  []byte
}

// Paths the MCS adds or that matter to tests.
const (
	PullSecret      = "/var/lib/kubelet/config.json"
	RegistriesConf  = "/etc/containers/registries.conf"
	PolicyJSON      = "/etc/containers/policy.json"
	UserCABundle    = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"
	HAProxyCfg      = "/etc/kubernetes/apiserver-proxy-config/haproxy.cfg"
	HAProxyManifest = "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml"
	KubeletConf     = "/etc/kubernetes/kubelet.conf"
	KubeletCA       = "/etc/kubernetes/kubelet-ca.crt"
	CloudCA         = "/etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem"
	CertsD          = "/etc/docker/certs.d"
	Kubeconfig      = "/etc/kubernetes/kubeconfig"
	NodeAnnotations = "/etc/machine-config-daemon/node-annotations.json"
	MCContent       = "/etc/mcs-machine-config-content.json"
	MCEncapsulated  = "/etc/ignition-machine-config-encapsulated.json"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// Base returns a worker pool's rendered config with the files, units and settings a HyperShift
// NodePool really carries (a representative subset of the MCO's templates).
func Base() *Pool {
	return &Pool{
		Name:            "rendered-worker-0a1b2c",
		OSImageURL:      "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("3a", 32),
		ExtensionsImage: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("11", 32),
		KernelArguments: []string{"systemd.unified_cgroup_hierarchy=1", `cgroup_no_v1="all"`},
		Extensions:      []string{},
		KernelType:      "default",
		Files: map[string]File{
			PullSecret:                         {Data: []byte(`{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0OnNlY3JldA==","email":"ci@example.com"}}}` + "\n"), Mode: 0o600},
			RegistriesConf:                     {Data: registries("registry.mirror.example.com/ocp"), Mode: 0o644},
			PolicyJSON:                         {Data: []byte(`{"default":[{"type":"insecureAcceptAnything"}],"transports":{"docker-daemon":{"":[{"type":"insecureAcceptAnything"}]}}}` + "\n"), Mode: 0o644},
			UserCABundle:                       {Data: pem("USER CA 1"), Mode: 0o600},
			"/etc/containers/storage.conf":     {Data: []byte("[storage]\ndriver = \"overlay\"\nrunroot = \"/run/containers/storage\"\n"), Mode: 0o644},
			"/etc/crio/crio.conf.d/00-default": {Data: []byte("[crio]\ninternal_wipe = true\n[crio.runtime]\nselinux = true\n"), Mode: 0o644},
			"/etc/sysctl.d/inotify.conf":       {Data: []byte("fs.inotify.max_user_watches = 65536\nfs.inotify.max_user_instances = 8192\n"), Mode: 0o644},
			"/etc/systemd/system/kubelet.service.d/20-logging.conf":     {Data: []byte("[Service]\nEnvironment=\"KUBELET_LOG_LEVEL=2\"\n"), Mode: 0o644},
			"/etc/docker/certs.d/.create":                               {Data: []byte("Initial Creation\n"), Mode: 0o600},
			"/etc/machine-config-daemon/generate_podman_policy_args.sh": {Data: []byte("#!/bin/bash\necho --signature-policy\n"), Mode: 0o755},
			"/etc/NetworkManager/dispatcher.d/99-esp-offload":           {Data: []byte("#!/bin/bash\nexit 0\n"), Mode: 0o744},
			"/usr/local/bin/setup-apiserver-ip.sh":                      {Data: []byte("#!/usr/bin/env bash\nset -x\nip addr add 172.20.0.1/32 brd 172.20.0.1 scope host dev lo\n"), Mode: 0o755},
			KubeletConf:                                                 {Data: kubeletConf(250), Mode: 0o644},
			HAProxyCfg:                                                  {Data: haproxyCfg("172.20.0.1", 6443), Mode: 0o644},
			HAProxyManifest:                                             {Data: haproxyManifest("quay.io/openshift/haproxy-router@sha256:" + strings.Repeat("aa", 32)), Mode: 0o644},
		},
		Units: map[string]Unit{
			"crio.service":         {Dropins: map[string]string{"10-mco-default-madv.conf": "[Service]\nEnvironment=\"GODEBUG=madvdontneed=1\"\n"}},
			"kubelet.service":      {Enabled: yes(), Contents: "[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nExecStart=/usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf\n[Install]\nWantedBy=multi-user.target\n", Dropins: map[string]string{"01-kubens.conf": "[Unit]\nRequires=kubens.service\n"}},
			"apiserver-ip.service": {Enabled: yes(), Contents: "[Unit]\nDescription=Sets up local IP to proxy API server requests\n[Service]\nType=oneshot\nExecStart=/usr/local/bin/setup-apiserver-ip.sh\nRemainAfterExit=yes\n[Install]\nWantedBy=multi-user.target\n"},
			"kubens.service":       {Enabled: no(), Contents: "[Unit]\nDescription=Kubens\n[Service]\nExecStart=/usr/bin/true\n"},
			"zincati.service":      {Dropins: map[string]string{"mco-disabled.conf": "[Unit]\nConditionPathExists=/enoent\n"}},
		},
		SSHKeys:    []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVuZXJhdGVkLWZvci10ZXN0cy1vbmx5 core@example"},
		KubeletCA:  pem("KUBE API SERVER SERVING CA"),
		Kubeconfig: []byte("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: ZmFrZQ==\n    server: https://api.example.com:6443\n  name: cluster\nusers:\n- name: kubelet\n  user:\n    token: bootstrap-token-for-tests\n"),
	}
}

// Clone deep-copies the pool.
func (p *Pool) Clone() *Pool {
	c := *p
	c.KernelArguments = slices.Clone(p.KernelArguments)
	c.Extensions = slices.Clone(p.Extensions)
	c.Files = maps.Clone(p.Files)
	c.Units = maps.Clone(p.Units)
	c.SSHKeys = slices.Clone(p.SSHKeys)
	c.RegistryCAs = maps.Clone(p.RegistryCAs)
	return &c
}

func pem(name string) []byte {
	return []byte("-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte(name)) + "\n-----END CERTIFICATE-----\n")
}

// registries renders registries.conf with the given digest-only mirrors of the release registry.
func registries(mirrors ...string) []byte {
	out := "unqualified-search-registries = [\"registry.access.redhat.com\", \"docker.io\"]\nshort-name-mode = \"\"\n\n" +
		"[[registry]]\n  prefix = \"\"\n  location = \"registry.product.example.org/ocp/release\"\n"
	for _, m := range mirrors {
		out += fmt.Sprintf("\n  [[registry.mirror]]\n    location = %q\n    pull-from-mirror = \"digest-only\"\n", m)
	}
	return []byte(out)
}

func kubeletConf(maxPods int) []byte {
	return []byte(fmt.Sprintf("kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nauthentication:\n  x509:\n    clientCAFile: /etc/kubernetes/kubelet-ca.crt\nmaxPods: %d\n", maxPods))
}

func haproxyCfg(ip string, port int) []byte {
	return []byte(fmt.Sprintf("global\n  maxconn 7000\n\ndefaults\n  mode tcp\n  timeout client 10m\n  timeout server 10m\n  timeout connect 10s\n\n"+
		"frontend local_apiserver\n  bind %s:6443\n  default_backend remote_apiserver\n\nbackend remote_apiserver\n  server controlplane api.example.com:%d\n", ip, port))
}

func haproxyManifest(image string) []byte {
	return []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    k8s-app: kube-apiserver-proxy\n  name: kube-apiserver-proxy\n  namespace: kube-system\nspec:\n" +
		"  containers:\n  - command:\n    - haproxy\n    - -f\n    - /usr/local/etc/haproxy\n    image: " + image + "\n    name: haproxy\n" +
		"    resources:\n      requests:\n        cpu: 13m\n        memory: 16Mi\n    securityContext:\n      runAsUser: 1001\n" +
		"    volumeMounts:\n    - mountPath: /usr/local/etc/haproxy\n      name: config\n  hostNetwork: true\n" +
		"  priorityClassName: system-node-critical\n  volumes:\n  - hostPath:\n      path: /etc/kubernetes/apiserver-proxy-config\n    name: config\n")
}

// dataURL encodes contents the way the MCO does: percent-encoded text ("data:,…") for small
// files, base64 for the rest.
func dataURL(b []byte) string {
	if len(b) < 256 && !bytes.ContainsAny(b, "\x00") {
		return "data:," + strings.ReplaceAll(url.PathEscape(string(b)), "+", "%2B")
	}
	return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(b)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

type jsonFile struct {
	Path      string         `json:"path"`
	Overwrite bool           `json:"overwrite"`
	Mode      int            `json:"mode"`
	Contents  map[string]any `json:"contents"`
}

func fileEntry(path string, f File) jsonFile {
	c := map[string]any{"source": dataURL(f.Data)}
	if f.Gzip {
		c = map[string]any{"source": "data:;base64," + base64.StdEncoding.EncodeToString(gz(f.Data)), "compression": "gzip"}
	}
	return jsonFile{Path: path, Overwrite: true, Mode: f.Mode, Contents: c}
}

// config renders the Ignition config of the MachineConfig's files, units and core's keys.
func (p *Pool) config(version string, extra []jsonFile) map[string]any {
	var files []jsonFile
	for _, path := range slices.Sorted(maps.Keys(p.Files)) {
		files = append(files, fileEntry(path, p.Files[path]))
	}
	files = append(files, extra...)
	var units []map[string]any
	for _, name := range slices.Sorted(maps.Keys(p.Units)) {
		u := p.Units[name]
		m := map[string]any{"name": name}
		if u.Contents != "" {
			m["contents"] = u.Contents
		}
		if u.Enabled != nil {
			m["enabled"] = *u.Enabled
		}
		if len(u.Dropins) > 0 {
			var ds []map[string]any
			for _, d := range slices.Sorted(maps.Keys(u.Dropins)) {
				ds = append(ds, map[string]any{"name": d, "contents": u.Dropins[d]})
			}
			m["dropins"] = ds
		}
		units = append(units, m)
	}
	cfg := map[string]any{
		"ignition": map[string]any{"version": version},
		"storage":  map[string]any{"files": files},
		"systemd":  map[string]any{"units": units},
	}
	if len(p.SSHKeys) > 0 {
		cfg["passwd"] = map[string]any{"users": []map[string]any{{"name": "core", "sshAuthorizedKeys": p.SSHKeys}}}
	}
	return cfg
}

func (p *Pool) spec(config map[string]any) map[string]any {
	return map[string]any{
		"osImageURL": p.OSImageURL, "baseOSExtensionsContainerImage": p.ExtensionsImage, "config": config,
		"kernelArguments": p.KernelArguments, "extensions": p.Extensions, "fips": p.FIPS, "kernelType": p.KernelType,
	}
}

func (p *Pool) machineConfig(config map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"kind": "MachineConfig", "apiVersion": "machineconfiguration.openshift.io/v1",
		"metadata": map[string]any{"name": p.Name, "annotations": map[string]string{
			"machineconfiguration.openshift.io/release-image-version": "4.21.0"}},
		"spec": p.spec(config),
	})
	if err != nil {
		panic(err)
	}
	return b
}

// MachineConfig is the rendered MachineConfig (its spec.config at Ignition 3.5.0, as the MCO keeps
// it), exactly as the server embeds it in /etc/mcs-machine-config-content.json.
func (p *Pool) MachineConfig() []byte { return p.machineConfig(p.config("3.5.0", nil)) }

// ServerAdded returns the files the server adds when serving, by path.
func (p *Pool) ServerAdded() map[string]File {
	out := map[string]File{KubeletCA: {Data: p.KubeletCA, Mode: 0o644}, Kubeconfig: {Data: p.Kubeconfig, Mode: 0o644}}
	if len(p.CloudCA) > 0 {
		out[CloudCA] = File{Data: p.CloudCA, Mode: 0o644}
	}
	for reg, ca := range p.RegistryCAs {
		out[CertsD+"/"+reg+"/ca.crt"] = File{Data: ca, Mode: 0o644}
	}
	return out
}

// Served is the payload as the machine-config server serves it: Ignition 3.2.0 JSON.
func (p *Pool) Served() []byte {
	added := p.ServerAdded()
	var extra []jsonFile
	for _, path := range slices.Sorted(maps.Keys(added)) {
		extra = append(extra, fileEntry(path, added[path]))
	}
	annotations, _ := json.Marshal(map[string]string{
		"machineconfiguration.openshift.io/currentConfig": p.Name, "machineconfiguration.openshift.io/desiredConfig": p.Name,
		"machineconfiguration.openshift.io/state": "Done"})
	extra = append(extra,
		fileEntry(NodeAnnotations, File{Data: annotations, Mode: 0o644}),
		fileEntry(MCContent, File{Data: p.MachineConfig(), Mode: 0o644}),
		// The encapsulated MachineConfig carries the spec without its config.
		fileEntry(MCEncapsulated, File{Data: p.machineConfig(map[string]any{"ignition": map[string]any{"version": "3.5.0"}}), Mode: 0o644}))
	b, err := json.Marshal(p.config("3.2.0", extra))
	if err != nil {
		panic(err)
	}
	return b
}

// ConfigMapValue encodes a served payload as HyperShift stores it in the token secret's payload
// and the upgrade ConfigMap's config: base64 (standard, no line breaks) of gzip at BestCompression.
func ConfigMapValue(served []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(gz(served)))
}

// Provision lays out a node root as Ignition leaves it after the first boot from p's served
// payload: every served file (the metadata files included) and core's keys. root must already hold
// /etc/passwd and /etc/group (fixture.NodeRoot).
func (p *Pool) Provision(root string) error {
	all := maps.Clone(p.Files)
	maps.Copy(all, p.ServerAdded())
	var served struct {
		Storage struct{ Files []jsonFile } `json:"storage"`
	}
	_ = json.Unmarshal(p.Served(), &served)
	for _, f := range served.Storage.Files {
		if _, ok := all[f.Path]; !ok { // the metadata files
			data, err := decodeDataURL(f.Contents["source"].(string))
			if err != nil {
				return err
			}
			all[f.Path] = File{Data: data, Mode: f.Mode}
		}
	}
	paths := slices.Collect(maps.Keys(all))
	sort.Strings(paths)
	for _, path := range paths {
		if err := writeFile(root, path, all[path].Data, os.FileMode(all[path].Mode)); err != nil {
			return err
		}
	}
	if len(p.SSHKeys) > 0 {
		keys := filepath.Join(root, "var/home/core/.ssh/authorized_keys.d")
		if err := os.MkdirAll(keys, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(keys, "ignition"), []byte(strings.Join(p.SSHKeys, "\n")+"\n"), 0o600); err != nil {
			return err
		}
		for _, d := range []string{"var/home/core/.ssh", "var/home/core/.ssh/authorized_keys.d", "var/home/core/.ssh/authorized_keys.d/ignition"} {
			if err := os.Chown(filepath.Join(root, d), 1000, 1000); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFile(root, path string, data []byte, mode os.FileMode) error {
	full := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(full, data, mode); err != nil {
		return err
	}
	return os.Chmod(full, mode) // not subject to the umask
}

func decodeDataURL(s string) ([]byte, error) {
	head, body, ok := strings.Cut(s, ",")
	if !ok {
		return nil, fmt.Errorf("not a data URL")
	}
	if strings.HasSuffix(head, ";base64") {
		return base64.StdEncoding.DecodeString(body)
	}
	out, err := url.PathUnescape(body)
	return []byte(out), err
}
