package diff_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/memtest"
)

// served builds a payload shaped as the machine-config server serves one: the rendered config
// (files, units, core's keys) embedded in /etc/mcs-machine-config-content.json, an empty config in
// /etc/ignition-machine-config-encapsulated.json, and the files the server adds when serving, which
// the embedded copy lacks. mutate changes the embedded config only.
func served(mutate func(*fixture.Config)) *fixture.Config {
	rendered := fixture.Ignition("3.2.0").
		File("/etc/containers/registries.conf", []byte("mirrors"), 0o644).
		File("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600).
		GzipFile("/etc/containers/policy.json", []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644).
		Unit("kubelet.service", "[Service]\nExecStart=/usr/bin/kubelet\n").
		SSHKeys("ssh-ed25519 AAAA core@example")
	rendered.Systemd.Units[0].Dropins = []types.Dropin{{Name: "20-logging.conf", Contents: ptr("[Service]\nEnvironment=V=2\n")}}
	embedded := rendered.Clone()
	if mutate != nil {
		mutate(embedded)
	}
	embedded.Ignition.Version = "3.5.0" // the server embeds the rendered config at the newest spec
	outer := rendered.Clone().
		File("/etc/kubernetes/kubeconfig", []byte("apiVersion: v1\n"), 0o600).
		File("/etc/kubernetes/kubelet-ca.crt", []byte("CA"), 0o644).
		File("/etc/machine-config-daemon/node-annotations.json", []byte("{}"), 0o644).
		File("/etc/docker/certs.d/registry.example/ca.crt", []byte("CA"), 0o644)
	outer.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), embedded.JSON()), 0o644)
	outer.File(diff.MachineConfigEncapsulatedPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), []byte(`{"ignition":{"version":"3.5.0"}}`)), 0o644)
	return outer
}

func ptr[T any](v T) *T { return &v }

func TestEmbeddedMachineConfigAgrees(t *testing.T) {
	assert.Empty(t, diff.CheckEmbedded(decode(t, served(nil).JSON())))
	// Same decoded contents in another encoding agree.
	p := decode(t, served(func(c *fixture.Config) {
		c.File("/etc/containers/policy.json", []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644)
		for i := range c.Storage.Files {
			if c.Storage.Files[i].Path == "/etc/containers/policy.json" {
				c.Storage.Files[i].Overwrite = nil // as the outer entry (GzipFile sets none)
			}
		}
	}).JSON())
	assert.Empty(t, diff.CheckEmbedded(p))
	// Payloads without embedded files, and MachineConfig payloads, are their own spec.config.
	assert.Empty(t, diff.CheckEmbedded(decode(t, fixture.Ignition("3.2.0").File("/etc/a", []byte("a"), 0o644).JSON())))
	assert.Empty(t, diff.CheckEmbedded(decode(t, fixture.MachineConfigJSON(fixture.DefaultMachine(), served(nil).JSON()))))
}

func TestEmbeddedMachineConfigDisagrees(t *testing.T) {
	cases := map[string]struct {
		mutate func(*fixture.Config)
		reason string
	}{
		"smuggled file": {func(c *fixture.Config) {
			c.File("/etc/ssh/sshd_config.d/10-evil.conf", []byte("PermitRootLogin yes"), 0o600)
		}, "file /etc/ssh/sshd_config.d/10-evil.conf is not in the outer config"},
		"contents": {func(c *fixture.Config) { c.File("/etc/containers/registries.conf", []byte("evil"), 0o644) },
			"file /etc/containers/registries.conf: contents differs"},
		"gzip contents": {func(c *fixture.Config) { c.GzipFile("/etc/containers/policy.json", []byte("{}"), 0o644) },
			"file /etc/containers/policy.json: contents differs"},
		"mode": {func(c *fixture.Config) { c.File("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o644) },
			"file /var/lib/kubelet/config.json: mode differs"},
		"owner": {func(c *fixture.Config) { c.Owner("/var/lib/kubelet/config.json", "core", "root") },
			"file /var/lib/kubelet/config.json: owner differs"},
		"group": {func(c *fixture.Config) { c.Owner("/var/lib/kubelet/config.json", "root", "core") },
			"file /var/lib/kubelet/config.json: group differs"},
		"append": {func(c *fixture.Config) {
			c.Storage.Files[0].Append = []types.Resource{{Source: ptr("data:,more")}}
		}, "file /etc/containers/registries.conf: append differs"},
		"smuggled unit": {func(c *fixture.Config) { c.Unit("evil.service", "[Service]\nExecStart=/bin/sh\n") },
			"unit evil.service is not in the outer config"},
		"unit contents": {func(c *fixture.Config) { c.Systemd.Units[0].Contents = ptr("[Service]\nExecStart=/bin/sh\n") },
			"unit kubelet.service: contents differs"},
		"unit enabled": {func(c *fixture.Config) { c.Systemd.Units[0].Enabled = ptr(false) },
			"unit kubelet.service: enabled differs"},
		"unit mask": {func(c *fixture.Config) { c.Systemd.Units[0].Mask = ptr(true) },
			"unit kubelet.service: mask differs"},
		"dropin contents": {func(c *fixture.Config) {
			c.Systemd.Units[0].Dropins[0].Contents = ptr("[Service]\nExecStartPre=/bin/sh\n")
		},
			"unit kubelet.service: dropin 20-logging.conf differs"},
		"dropin added": {func(c *fixture.Config) {
			c.Systemd.Units[0].Dropins = append(c.Systemd.Units[0].Dropins, types.Dropin{Name: "99-evil.conf", Contents: ptr("x")})
		}, "unit kubelet.service: dropins differs"},
		"core SSH key": {func(c *fixture.Config) { c.SSHKeys("ssh-ed25519 AAAA core@example", "ssh-ed25519 EVIL attacker") },
			"user core: sshAuthorizedKeys differs"},
		"user": {func(c *fixture.Config) { c.Passwd.Users = append(c.Passwd.Users, types.PasswdUser{Name: "eve"}) },
			"user eve is not in the outer config"},
		"group entry": {func(c *fixture.Config) { c.Passwd.Groups = []types.PasswdGroup{{Name: "wheel"}} },
			"group wheel is not in the outer config"},
		"directory": {func(c *fixture.Config) {
			c.Storage.Directories = []types.Directory{{Node: types.Node{Path: "/etc/cron.d"}}}
		}, "directory /etc/cron.d is not in the outer config"},
		"link": {func(c *fixture.Config) {
			c.Storage.Links = []types.Link{{Node: types.Node{Path: "/etc/ld.so.preload"}, LinkEmbedded1: types.LinkEmbedded1{Target: ptr("/tmp/x")}}}
		}, "link /etc/ld.so.preload is not in the outer config"},
		// Every field the diff sees, not only files, units and users (found by an adversarial run).
		"storage filesystem": {func(c *fixture.Config) {
			c.Storage.Filesystems = []types.Filesystem{{Device: "/dev/disk/by-label/var", Format: ptr("xfs"), WipeFilesystem: ptr(true), Path: ptr("/var")}}
		}, "disagrees with the outer config"},
		"storage luks": {func(c *fixture.Config) {
			c.Storage.Luks = []types.Luks{{Name: "root", Device: ptr("/dev/sda4")}}
		}, "disagrees with the outer config"},
		"ignition.config.merge": {func(c *fixture.Config) {
			c.Ignition.Config.Merge = []types.Resource{{Source: ptr("data:,%7B%7D")}}
		}, "ignition.config"},
		"file overwrite": {func(c *fixture.Config) { c.Storage.Files[0].Overwrite = ptr(false) },
			"overwrite"},
		// Adversary r15 d/04: the ignition section a refresh never diffs (first-boot fetching) still
		// reaches the daemon's record from the embedded copy.
		"ignition.security": {func(c *fixture.Config) {
			c.Ignition.Security.TLS.CertificateAuthorities = []types.Resource{{Source: ptr("data:,evil-ca")}}
		}, "ignition.security.tls differs"},
		"ignition.proxy": {func(c *fixture.Config) { c.Ignition.Proxy.HTTPSProxy = ptr("http://evil:3128") },
			"ignition.proxy.httpsProxy differs"},
		"ignition.timeouts": {func(c *fixture.Config) { c.Ignition.Timeouts.HTTPTotal = ptr(1) },
			"ignition.timeouts.httpTotal differs"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			why := diff.CheckEmbedded(decode(t, served(tc.mutate).JSON()))
			assert.Contains(t, why, "embedded MachineConfig /etc/mcs-machine-config-content.json: ")
			assert.Contains(t, why, tc.reason)
			assert.NotContains(t, why, "evil\"", "never contents")
		})
	}
}

func TestEmbeddedMachineConfigUnreadable(t *testing.T) {
	withContent := func(content []byte) *diff.Payload {
		c := served(nil)
		c.File(diff.MachineConfigEncapsulatedPath, content, 0o644)
		return decode(t, c.JSON())
	}
	bad := map[string]string{
		`{"kind":"MachineConfig","spec":{"config":"eyJpZ25pdGlvbiI6e319"}}`:                                                      "spec.config is not an Ignition config object",
		`{"kind":"MachineConfig","spec":{"config":{"storage":{}}}}`:                                                              "spec.config: ",
		`{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"9.9.9"}}}}`:                                            "unknown Ignition version",
		`{"kind":"MachineConfig","spec":{"config":{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"3.2.0"}}}}}}`: "is a MachineConfig, not an Ignition config",
	}
	for content, want := range bad {
		why := diff.CheckEmbedded(withContent([]byte(content)))
		assert.Contains(t, why, "embedded MachineConfig /etc/ignition-machine-config-encapsulated.json: ", content)
		assert.Contains(t, why, want, content)
	}
	// A MachineConfig with no spec.config carries nothing to disagree with.
	assert.Empty(t, diff.CheckEmbedded(withContent([]byte(`{"kind":"MachineConfig","spec":{"osImageURL":"x"}}`))))
}

// A MachineConfig payload's own metadata files are checked against its spec.config.
func TestEmbeddedInsideAMachineConfigPayload(t *testing.T) {
	inner := served(func(c *fixture.Config) { c.Unit("evil.service", "[Service]\n") })
	p := decode(t, fixture.MachineConfigJSON(fixture.DefaultMachine(), inner.JSON()))
	assert.Contains(t, diff.CheckEmbedded(p), "unit evil.service is not in the outer config")
}

func TestMachineConfigDropped(t *testing.T) {
	with := decode(t, served(nil).JSON())
	without := decode(t, fixture.Ignition("3.2.0").JSON())
	assert.True(t, diff.MachineConfigDropped(with, without))
	assert.False(t, diff.MachineConfigDropped(without, with))
	assert.False(t, diff.MachineConfigDropped(with, with))
	assert.False(t, diff.MachineConfigDropped(without, without))
}

// realPayloads lists the machine-config server's real output when the machine has it (never
// committed): /tmp/rp/served/*.ign and the ConfigMap-encoded ones under /work/shared/real-payloads.
func realPayloads(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{"/tmp/rp/served/*.ign", "/work/shared/real-payloads/mco-served/*.config"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no real served payloads on this machine (/tmp/rp/served, /work/shared/real-payloads)")
	}
	return files
}

// Every real payload as the machine-config server serves it passes the agreement check: the
// embedded MachineConfig carries a subset of the outer config, never a disagreement.
func TestRealServedPayloadsAgree(t *testing.T) {
	for _, f := range realPayloads(t) {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		p, err := diff.Decode(raw)
		require.NoError(t, err, f)
		assert.Empty(t, diff.CheckEmbedded(p), f)
		mc, err := p.MachineConfigJSON()
		require.NoError(t, err)
		require.NotNil(t, mc, "%s embeds a MachineConfig", f)
		var parsed struct {
			Spec struct{ Config json.RawMessage }
		}
		require.NoError(t, json.Unmarshal(mc, &parsed))
		assert.NotEmpty(t, parsed.Spec.Config, "%s: the embedded MachineConfig carries its config, so the check compared something", f)
	}
}

// The embedded MachineConfig's own fields are reboot-class fields like the rest: a changed OS
// extensions image is an OS image change, whatever source carries it.
func TestExtensionsImageIsRebootClass(t *testing.T) {
	mc := func(img string) []byte {
		return []byte(`{"kind":"MachineConfig","spec":{"osImageURL":"os","baseOSExtensionsContainerImage":"` + img + `","config":{"ignition":{"version":"3.2.0"}}}}`)
	}
	cur, err := diff.Decode(mc("ext-1"))
	require.NoError(t, err)
	des, err := diff.Decode(mc("ext-2"))
	require.NoError(t, err)
	changes, err := diff.Diff(cur, des)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, diff.KindOSImage, changes[0].Kind)
	assert.Contains(t, changes[0].Detail, "baseOSExtensionsContainerImage")
}

// Dropping one MachineConfig source (the content file the daemon's baseline receives) is dropping
// the MachineConfig: its fields could not be verified and the baseline would go stale.
func TestDroppingOneMachineConfigSource(t *testing.T) {
	cur := decode(t, served(nil).JSON())
	keepEncapsulated := served(nil)
	for i, f := range keepEncapsulated.Storage.Files {
		if f.Path == diff.MachineConfigContentPath {
			keepEncapsulated.Storage.Files = append(keepEncapsulated.Storage.Files[:i], keepEncapsulated.Storage.Files[i+1:]...)
			break
		}
	}
	assert.True(t, diff.MachineConfigDropped(cur, decode(t, keepEncapsulated.JSON())))
	assert.False(t, diff.MachineConfigDropped(cur, cur))
}

// embeddedKargsMC is a MachineConfig whose spec carries n kernel arguments of value arg, its
// spec.config cfg: the shape of round 9's core 02 (20 million empty ones: a 78 KB payload).
func embeddedKargsMC(n int, arg string, cfg []byte, yaml bool) []byte {
	if yaml {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: rendered-worker-1\nspec:\n  config: %s\n  osImageURL: quay.io/x@sha256:%s\n  kernelArguments:\n", cfg, strings.Repeat("0", 64))
		for range n {
			fmt.Fprintf(&b, "  - %q\n", arg)
		}
		return []byte(b.String())
	}
	q := fmt.Sprintf("%q", arg)
	return []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"rendered-worker-1"},` +
		`"spec":{"config":` + string(cfg) + `,"osImageURL":"quay.io/x@sha256:` + strings.Repeat("0", 64) + `","kernelArguments":[` +
		strings.TrimSuffix(strings.Repeat(q+",", n), ",") + `]}}`)
}

// Round 9 (core 02): the JSON structure of an embedded MachineConfig (the content file, gzip in its
// data URL) was not charged to the payload budget: 20 million empty kernelArguments, 78 KB of
// payload, decoded into 2 GB and printed a 200 MB plan. The structure is charged before it is
// decoded, as the outer payload's is, in either metadata file, JSON or YAML, plain or compressed.
func TestEmbeddedMachineConfigStructureIsCharged(t *testing.T) {
	defer func(v int64) { diff.MaxPayloadSize = v }(diff.MaxPayloadSize)
	diff.MaxPayloadSize = 16 << 20
	inner := fixture.Ignition("3.2.0").SSHKeys("ssh-ed25519 AAAA core@example")
	for _, path := range []string{diff.MachineConfigContentPath, diff.MachineConfigEncapsulatedPath} {
		for _, yaml := range []bool{false, true} {
			for _, gz := range []bool{false, true} {
				n := 500_000 // 500 MB of budget at elementCost, 1.5 MB of JSON (4.5 MB in a data URL)
				if yaml {
					n = 100_000 // YAML's own charge (a node) is larger
				}
				mc := embeddedKargsMC(n, "", inner.JSON(), yaml)
				outer := inner.Clone()
				if gz {
					outer.GzipFile(path, mc, 0o644)
				} else {
					outer.File(path, mc, 0o644)
				}
				raw := fixture.GzipBase64(outer.JSON())
				name := fmt.Sprintf("%s yaml=%t gzip=%t", path, yaml, gz)
				var err error
				allocated := memtest.Allocated(func() { _, err = diff.Decode(raw) })
				require.Error(t, err, name)
				assert.Contains(t, err.Error(), path, name)
				assert.Regexp(t, `byte (payload )?budget \(--max-payload-bytes`, err.Error(), name)
				// The payload's layers and the file's contents, within the budget; never the
				// structure's hundreds of megabytes.
				assert.Less(t, allocated, uint64(6*diff.MaxPayloadSize), "%s: %d bytes allocated", name, allocated)
			}
		}
	}
}

// Within the budget an embedded MachineConfig's many kernel arguments still decode; the change's
// detail (in the plan, the refusal reason, annotations) quotes the first of them and counts the
// rest, each value cut: never megabytes.
func TestMachineChangeDetailsAreBounded(t *testing.T) {
	inner := fixture.Ignition("3.2.0").SSHKeys("ssh-ed25519 AAAA core@example")
	payload := func(n int, arg string) *diff.Payload {
		return decode(t, inner.Clone().File(diff.MachineConfigContentPath, embeddedKargsMC(n, arg, inner.JSON(), false), 0o644).JSON())
	}
	cur := payload(1, "quiet")
	long := strings.Repeat("a", 1<<20)
	for _, des := range []*diff.Payload{payload(20_000, "x=1"), payload(3, long), payload(5_000, long[:1000])} {
		changes, err := diff.Diff(cur, des)
		require.NoError(t, err)
		require.NotEmpty(t, changes)
		for _, c := range changes {
			assert.Less(t, len(c.Detail), 8<<10, c.Detail[:200])
		}
	}
	changes, err := diff.Diff(cur, payload(20_000, "x=1"))
	require.NoError(t, err)
	assert.Contains(t, changes[0].Detail, `kernelArguments ["quiet"] -> ["x=…" "x=…"`)
	assert.Contains(t, changes[0].Detail, "more]")
	changes, err = diff.Diff(cur, payload(2, "x=1"))
	require.NoError(t, err)
	assert.Equal(t, `kernelArguments ["quiet"] -> ["x=…" "x=…"]`, changes[0].Detail, "a short list reads as before, its values not shown")
}

// The nested decode of an embedded config (CheckEmbedded) draws on what the payload's decode left,
// not on a budget of its own: contents the embedded copy gives in another form than the outer config
// (so decoded again) count against the same 64 MiB. Agreeing when the budget covers both.
func TestEmbeddedCheckSharesThePayloadBudget(t *testing.T) {
	defer func(v int64) { diff.MaxPayloadSize = v }(diff.MaxPayloadSize)
	big := []byte(strings.Repeat("0123456789abcdef", 1<<16)) // 1 MiB
	build := func() []byte {
		rendered := fixture.Ignition("3.2.0").GzipFile("/etc/big.conf", big, 0o644)
		embedded := fixture.Ignition("3.5.0").File("/etc/big.conf", big, 0o644) // plain: decoded again
		embedded.Storage.Files[0].Overwrite = nil
		return rendered.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), embedded.JSON()), 0o644).JSON()
	}
	diff.MaxPayloadSize = 64 << 20
	p, err := diff.Decode(build())
	require.NoError(t, err)
	assert.Empty(t, diff.CheckEmbedded(p))
	// A budget the outer decode fits in, with less left than the embedded copy's contents.
	used := p.Bytes
	diff.MaxPayloadSize = used + int64(len(big))/2
	p, err = diff.Decode(build())
	require.NoError(t, err)
	why := diff.CheckEmbedded(p)
	assert.Contains(t, why, "payload budget")
	assert.Contains(t, why, diff.MachineConfigContentPath)
}

// A kernel argument's value is never shown: the node's current arguments reach a refusal on any
// added one, and a value may be a credential (adversary r23 c/01: netroot=iscsi:USER:PASSWORD@…).
func TestKernelArgumentValuesAreNotShown(t *testing.T) {
	const secret = "iscsi:chapuser:S3cretChapPassw0rd@10.0.0.1::::iqn.2001-04.com.example:t"
	inner := fixture.Ignition("3.2.0").SSHKeys("ssh-ed25519 AAAA core@example")
	payload := func(arg string) *diff.Payload {
		return decode(t, inner.Clone().File(diff.MachineConfigContentPath, embeddedKargsMC(1, arg, inner.JSON(), false), 0o644).JSON())
	}
	changes, err := diff.Diff(payload("netroot="+secret), payload("x=1"))
	require.NoError(t, err)
	require.NotEmpty(t, changes)
	for _, c := range changes {
		assert.NotContains(t, c.Detail, "S3cret", c.Detail)
		assert.NotContains(t, c.Detail, "chapuser", c.Detail)
	}
	assert.Contains(t, changes[0].Detail, `"netroot=…"`)
}
