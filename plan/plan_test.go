package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

const (
	registries = "/etc/containers/registries.conf"
	pullSecret = "/var/lib/kubelet/config.json"
	trust      = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"
	credProv   = "/etc/kubernetes/credential-providers/ecr.yaml"
)

func base() *fixture.Config {
	return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
		File(registries, []byte("# old mirrors"), 0o644).
		File(pullSecret, []byte(`{"auths":{}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one")
}

func build(t *testing.T, cur, des *fixture.Config, rules string) *plan.Plan {
	t.Helper()
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	parsed, err := allowlist.ParseRules([]byte(rules))
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, NoRebootPaths: parsed})
	require.NoError(t, err)
	return p
}

func TestNoChange(t *testing.T) {
	p := build(t, base(), base(), "")
	assert.True(t, p.Eligible)
	assert.Empty(t, p.Changes)
	assert.Empty(t, p.Actions)
	assert.NotNil(t, p.Actions, "empty lists, not null, in JSON")
	assert.NotNil(t, p.Refused)
	assert.NotNil(t, p.Warnings)
}

func TestEligibleRefresh(t *testing.T) {
	des := base().File(registries, []byte("# new mirrors"), 0o644).File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one", "ssh-ed25519 BBBB two")
	p := build(t, base(), des, "")
	require.True(t, p.Eligible)
	assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload}}, p.Actions)
	require.Len(t, p.Files, 2)
	assert.Equal(t, registries, p.Files[0].Path)
	data, err := p.Files[0].Contents()
	require.NoError(t, err)
	assert.Equal(t, "# new mirrors", string(data))
	assert.Equal(t, 0o600, p.Files[1].Mode)
	require.NotNil(t, p.SSHKeys)
	assert.Len(t, p.SSHKeys.Keys, 2)
	kinds := map[diff.Kind]int{}
	for _, c := range p.Changes {
		assert.True(t, c.Eligible)
		kinds[c.Kind]++
	}
	assert.Equal(t, map[diff.Kind]int{diff.KindFile: 2, diff.KindSSHKeys: 1}, kinds)
}

func TestActionsDeduplicatedAndOrdered(t *testing.T) {
	des := base().File(registries, []byte("# new"), 0o644).File(trust, []byte("CA"), 0o644).File(credProv, fixture.CredentialProviderConfig("ecr"), 0o644)
	p := build(t, base(), des, "")
	require.True(t, p.Eligible)
	assert.Equal(t, []plan.UnitAction{
		{Unit: "coreos-update-ca-trust.service", Action: allowlist.ActionRestart},
		{Unit: "crio.service", Action: allowlist.ActionRestart}, // reload + restart = one restart
		{Unit: "kubelet.service", Action: allowlist.ActionRestart},
	}, p.Actions)
	// Same plan whatever order the payload lists its files in.
	rev := des.Clone()
	for i, j := 0, len(rev.Storage.Files)-1; i < j; i, j = i+1, j-1 {
		rev.Storage.Files[i], rev.Storage.Files[j] = rev.Storage.Files[j], rev.Storage.Files[i]
	}
	assert.Equal(t, p.Actions, build(t, base(), rev, "").Actions)
}

func TestRemovedFileIsPlanned(t *testing.T) {
	cur := base().File("/etc/containers/registries.d/old.yaml", []byte("x"), 0o644)
	p := build(t, cur, base(), "")
	require.True(t, p.Eligible)
	require.Len(t, p.Files, 1)
	assert.True(t, p.Files[0].Remove)
	assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload}}, p.Actions)
}

func refusedKinds(p *plan.Plan) []diff.Kind {
	var out []diff.Kind
	for _, r := range p.Refused {
		out = append(out, r.Kind)
	}
	return out
}

func TestRefusals(t *testing.T) {
	str := func(s string) *string { return &s }
	mach := func(f func(*fixture.Machine)) func(*fixture.Config) {
		return func(c *fixture.Config) {
			m := fixture.DefaultMachine()
			f(&m)
			c.EmbedMachine(m)
		}
	}
	file := func(path string, mutate func(*types.File)) func(*fixture.Config) {
		return func(c *fixture.Config) {
			f := types.File{Node: types.Node{Path: path}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: str("data:,x")}}}
			mutate(&f)
			c.AddFile(f)
		}
	}
	cases := map[string]struct {
		mutate func(*fixture.Config)
		kind   diff.Kind
		reason string
	}{
		"kernel args": {mach(func(m *fixture.Machine) { m.KernelArguments = []string{"nosmt"} }), diff.KindKernelArguments, "kernel arguments change requires a reboot"},
		"os image":    {mach(func(m *fixture.Machine) { m.OSImageURL = "quay.io/x@sha256:2" }), diff.KindOSImage, "OS image change requires a reboot"},
		"fips":        {mach(func(m *fixture.Machine) { m.FIPS = true }), diff.KindFIPS, "FIPS mode change requires a reboot (false -> true)"},
		"kernel type": {mach(func(m *fixture.Machine) { m.KernelType = "64k-pages" }), diff.KindKernelType, "kernel type change requires a reboot (default -> 64k-pages)"},
		"extensions":  {mach(func(m *fixture.Machine) { m.Extensions = []string{"kerberos"} }), diff.KindExtensions, "extensions change requires a reboot"},
		"storage": {func(c *fixture.Config) {
			c.Storage.Filesystems = []types.Filesystem{{Device: "/dev/sdb", Format: str("xfs")}}
		}, diff.KindStorage, "filesystem /dev/sdb added"},
		"passwd user":      {func(c *fixture.Config) { c.Passwd.Users = append(c.Passwd.Users, types.PasswdUser{Name: "eve"}) }, diff.KindPasswd, "user eve added"},
		"passwd core hash": {func(c *fixture.Config) { c.Passwd.Users[0].PasswordHash = str("$6$x") }, diff.KindPasswd, "user core changed (passwordHash)"},
		"passwd group":     {func(c *fixture.Config) { c.Passwd.Groups = []types.PasswdGroup{{Name: "g"}} }, diff.KindPasswd, "group g added"},
		"not allowlisted":  {file("/etc/hosts", func(*types.File) {}), diff.KindFile, "file /etc/hosts: path is not in the node allowlist"},
		"denied":           {file("/etc/ssh/sshd_config", func(*types.File) {}), diff.KindFile, "file /etc/ssh/sshd_config: path is under denied prefix /etc/ssh"},
		"dot dot":          {file("/etc/containers/../ssh/x", func(*types.File) {}), diff.KindFile, "file /etc/containers/../ssh/x: path is not absolute and clean"},
		"double slash":     {file("/etc/containers//policy.json", func(*types.File) {}), diff.KindFile, "path is not absolute and clean"},
		"trailing dot":     {file("/etc/containers/registries.d/.", func(*types.File) {}), diff.KindFile, "path is not absolute and clean"},
		"append": {file("/etc/containers/policy.json", func(f *types.File) {
			f.Append = []types.Resource{{Source: str("data:,more")}}
		}), diff.KindFile, "append is not supported"},
		"setuid": {file("/etc/containers/policy.json", func(f *types.File) { m := 0o4755; f.Mode = &m }), diff.KindFile, "mode 4755 sets setuid"},
		"setgid": {file("/etc/containers/policy.json", func(f *types.File) { m := 0o2755; f.Mode = &m }), diff.KindFile, "mode 2755 sets setuid, setgid or sticky"},
		"sticky": {file("/etc/containers/policy.json", func(f *types.File) { m := 0o1644; f.Mode = &m }), diff.KindFile, "mode 1644"},
		"directory": {func(c *fixture.Config) {
			c.Storage.Directories = []types.Directory{{Node: types.Node{Path: "/etc/containers/registries.d"}}}
		}, diff.KindDirectory, "directory /etc/containers/registries.d added"},
		"link": {func(c *fixture.Config) {
			c.Storage.Links = []types.Link{{Node: types.Node{Path: "/etc/containers/policy.json"}, LinkEmbedded1: types.LinkEmbedded1{Target: str("/etc/shadow")}}}
		}, diff.KindLink, "link /etc/containers/policy.json added"},
		"unit": {func(c *fixture.Config) { c.Unit("crio.service", "[Service]\nExecStart=/bin/sh\n") }, diff.KindUnit, "unit crio.service added"},
	}
	for _, scheme := range []string{"http://x/y", "https://x/y", "s3://bucket/key", "gs://bucket/key", "tftp://x/y", "arn:aws:s3:us-east-1:123456789012:accesspoint/test/object/some/path"} {
		cases["remote "+scheme[:strings.Index(scheme, ":")]] = struct {
			mutate func(*fixture.Config)
			kind   diff.Kind
			reason string
		}{func(c *fixture.Config) {
			file(registries, func(f *types.File) { f.Contents.Source = str(scheme) })(c)
			c.Ignition.Version = "3.4.0" // arn: sources exist since spec 3.4; Ignition rejects them before
		}, diff.KindFile, "contents come from a remote source (" + scheme[:strings.Index(scheme, ":")] + ")"}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			des := base().File(pullSecret, []byte("eligible on its own"), 0o600)
			tc.mutate(des)
			p := build(t, base(), des, "")
			assert.False(t, p.Eligible)
			// A mutation of a field the embedded MachineConfig also carries is, in addition, a
			// disagreement with it (kind machineConfig, after the change's own refusal).
			p.Refused = slices.DeleteFunc(p.Refused, func(r plan.Refusal) bool {
				return r.Kind == diff.KindMachineConfig && tc.kind != diff.KindMachineConfig
			})
			require.Len(t, p.Refused, 1, "%+v", p.Refused)
			assert.Equal(t, tc.kind, p.Refused[0].Kind)
			assert.Contains(t, p.Refused[0].Reason, tc.reason)
			// Refused whole: nothing of it is applied, not even the eligible pull secret.
			assert.Empty(t, p.Files)
			assert.Nil(t, p.SSHKeys)
			assert.Empty(t, p.Actions)
		})
	}
}

func TestDeniedPrefixBeatsNoRebootPaths(t *testing.T) {
	des := base().File("/etc/ssh/sshd_config", []byte("PermitRootLogin yes"), 0o600).File("/etc/systemd/system/x.service", []byte("x"), 0o644)
	p := build(t, base(), des, `[{"path": "/etc/ssh/", "action": "None"}, {"path": "/etc/systemd/system/x.service", "action": "None"}]`)
	assert.False(t, p.Eligible)
	assert.Equal(t, []diff.Kind{diff.KindFile, diff.KindFile}, refusedKinds(p))
	assert.Len(t, p.Warnings, 2)
}

// The built-in policy has no ceiling: no-reboot-paths cannot add a path, only warn.
func TestNoRebootPathsGrantNothingByDefault(t *testing.T) {
	des := base().File("/etc/myapp/app.conf", []byte("x"), 0o644)
	p := build(t, base(), des, `[{"path": "/etc/myapp/", "action": "Restart", "services": ["kubelet"]}]`)
	assert.False(t, p.Eligible)
	require.Len(t, p.Refused, 1)
	assert.Equal(t, "file /etc/myapp/app.conf: path is not in the node allowlist", p.Refused[0].Reason)
	require.Len(t, p.Warnings, 1)
	assert.Contains(t, p.Warnings[0], "entry 0 (/etc/myapp/ Restart kubelet): path is outside the node policy's configMapCeiling: ignored")
}

// Within the node policy's ceiling the ConfigMap chooses; above it, it is ignored with a warning.
func TestNoRebootPathsWithinTheCeiling(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte("configMapCeiling: [{prefix: /etc/foo/, actions: [None, Reload], units: [crio]}]"))
	require.NoError(t, err)
	plan1 := func(rules string, des *fixture.Config) *plan.Plan {
		c, err := diff.Decode(base().JSON())
		require.NoError(t, err)
		d, err := diff.Decode(des.JSON())
		require.NoError(t, err)
		parsed, err := allowlist.ParseRules([]byte(rules))
		require.NoError(t, err)
		p, err := plan.Build(plan.Inputs{Current: c, Desired: d, NoRebootPaths: parsed, Policy: pol})
		require.NoError(t, err)
		return p
	}
	des := base().File("/etc/foo/a.conf", []byte("x"), 0o644)
	p := plan1(`[{"path": "/etc/foo/a.conf", "action": "Reload", "services": ["crio"]}]`, des)
	require.True(t, p.Eligible)
	assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload}}, p.Actions)
	assert.Empty(t, p.Warnings)

	p = plan1(`[{"path": "/etc/foo/a.conf", "action": "Restart", "services": ["kubelet"]}]`, des)
	assert.False(t, p.Eligible)
	require.Len(t, p.Warnings, 1)
	assert.Contains(t, p.Warnings[0], "no-reboot-paths entry 0 (/etc/foo/a.conf Restart kubelet): action Restart is not allowed under configMapCeiling prefix /etc/foo/")
	assert.Empty(t, p.Actions)
}

func TestControlCharactersInPayloadPathsAreRefused(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte("configMapCeiling: [{prefix: /etc/foo/, actions: [None]}]"))
	require.NoError(t, err)
	for _, path := range []string{`/etc/foo/a\nb`, `/etc/foo/a\u0000`, `/etc/foo/\u001b[2Jx`, `/etc/foo/a\u0085`, `/etc/foo/a\u007f`} {
		raw := strings.Replace(string(base().File("/etc/foo/PLACEHOLDER", []byte("x"), 0o644).JSON()), "/etc/foo/PLACEHOLDER", path, 1)
		c, err := diff.Decode(base().JSON())
		require.NoError(t, err)
		d, err := diff.Decode([]byte(raw))
		require.NoError(t, err, path)
		rules, err := allowlist.ParseRules([]byte(`[{"path": "/etc/foo/", "action": "None"}]`))
		require.NoError(t, err)
		p, err := plan.Build(plan.Inputs{Current: c, Desired: d, NoRebootPaths: rules, Policy: pol})
		require.NoError(t, err)
		assert.False(t, p.Eligible, path)
		// The path was swapped in the outer config only, so the embedded copy disagrees too.
		p.Refused = slices.DeleteFunc(p.Refused, func(r plan.Refusal) bool { return r.Kind == diff.KindMachineConfig })
		require.Len(t, p.Refused, 1, path)
		assert.Contains(t, p.Refused[0].Reason, "contains control character", path)
		assert.NotContains(t, p.Refused[0].Reason, "\n", "quoted, never raw")
		assert.NotContains(t, p.Refused[0].Reason, "\x1b", "quoted, never raw")
		assert.Empty(t, p.Files)
	}
}

func TestEmbeddedMachineConfigMustAgree(t *testing.T) {
	// The embedded MachineConfig carries a unit the outer config does not: what would land in the
	// machine-config daemon's baseline was never checked.
	smuggled := fixture.Ignition("3.5.0").File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600).Unit("evil.service", "[Service]\nExecStart=/bin/sh\n")
	des := base().File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600)
	des.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), smuggled.JSON()), 0o644)
	p := build(t, base(), des, "")
	assert.False(t, p.Eligible)
	require.Len(t, p.Refused, 1)
	assert.Equal(t, diff.KindMachineConfig, p.Refused[0].Kind)
	// Issue 24: the reason also says how to fix it (the payload command).
	assert.Equal(t, "embedded MachineConfig /etc/mcs-machine-config-content.json: unit evil.service is not in the outer config"+plan.EmbeddedFix, p.Refused[0].Reason)
	assert.Contains(t, p.Refused[0].Reason, "refresh-agent payload set-file")
	assert.Empty(t, p.Files)

	// The same change with an agreeing embedded copy (the whole config, as the server embeds it)
	// is eligible.
	assert.True(t, build(t, base(), base().File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600), "").Eligible)

	// An embedded copy that omits what the outer config carries (other than what the server adds
	// when serving) is refused too: the daemon's baseline would no longer describe the node.
	partial := fixture.Ignition("3.5.0").File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600)
	des.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), partial.JSON()), 0o644)
	p = build(t, base(), des, "")
	assert.False(t, p.Eligible)
	assert.Equal(t, []diff.Kind{diff.KindMachineConfig}, refusedKinds(p))
}

func TestDroppedMachineConfigIsRefused(t *testing.T) {
	des := fixture.Ignition("3.2.0").File(registries, []byte("# old mirrors"), 0o644).
		File(pullSecret, []byte(`{"auths":{}}`), 0o600).SSHKeys("ssh-ed25519 AAAA one")
	p := build(t, base(), des, "")
	assert.False(t, p.Eligible)
	assert.Equal(t, []diff.Kind{diff.KindMachineConfig}, refusedKinds(p))
	assert.Contains(t, p.Refused[0].Reason, "cannot verify reboot-class fields")
	// Without MachineConfig on either side there is nothing to verify.
	assert.True(t, build(t, des, des.Clone(), "").Eligible)
}

func TestPolicyWithoutSSHKeys(t *testing.T) {
	c, _ := diff.Decode(base().JSON())
	d, _ := diff.Decode(base().SSHKeys("ssh-ed25519 CCCC three").JSON())
	pol := allowlist.Default()
	pol.CoreSSHKeys = false
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol})
	require.NoError(t, err)
	assert.False(t, p.Eligible)
	assert.Equal(t, []diff.Kind{diff.KindSSHKeys}, refusedKinds(p))
}

func TestModeAndOwnerOnlyChangesArePlanned(t *testing.T) {
	p := build(t, base(), base().File(registries, []byte("# old mirrors"), 0o600), "")
	require.True(t, p.Eligible)
	require.Len(t, p.Changes, 1)
	assert.Equal(t, "mode 0644 -> 0600", p.Changes[0].Detail)
	assert.Equal(t, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload}}, p.Actions)

	// Issue 27 (class 4) changed this contract: handing the pull secret to core is outside its owner
	// ceiling (root:root) and refused; an owner change back to root is planned.
	p = build(t, base(), base().Owner(pullSecret, "core", "core"), "")
	require.False(t, p.Eligible)
	assert.Contains(t, p.Refused[0].Reason, "owner core:core is not the node policy's owner root:root")
	p = build(t, base().Owner(pullSecret, "core", "core"), base().Owner(pullSecret, "root", "root"), "")
	require.True(t, p.Eligible, "%+v", p.Refused)
	require.Len(t, p.Files, 1)
	assert.Equal(t, "root", *p.Files[0].User.Name)
}

func TestTextOutputIsADryRunWithoutContents(t *testing.T) {
	secret := "SECRET-TOKEN-42"
	des := base().File(pullSecret, []byte(secret), 0o600).File(registries, []byte("# new"), 0o644).SSHKeys("ssh-ed25519 " + secret)
	var b strings.Builder
	require.NoError(t, build(t, base(), des, "").WriteText(&b))
	out := b.String()
	assert.Contains(t, out, "would write "+registries)
	assert.Contains(t, out, "would reload crio.service")
	assert.Contains(t, out, "result: eligible")
	assert.NotContains(t, out, secret)

	m := fixture.DefaultMachine()
	m.FIPS = true
	b.Reset()
	require.NoError(t, build(t, base(), base().EmbedMachine(m), "").WriteText(&b))
	assert.Contains(t, b.String(), "refused: FIPS mode change requires a reboot (false -> true)")
	assert.Contains(t, b.String(), "nothing would be applied")
}

// Blank entries and comments are no key: a payload leaving core only those is refused as [] is.
func TestCoreKeepsARealSSHKey(t *testing.T) {
	for _, keys := range [][]string{{""}, {" "}, {"# nothing"}, {"", "  # c", "\t"}, {"# a\n\n# b"}} {
		p := build(t, base(), base().SSHKeys(keys...), "")
		assert.False(t, p.Eligible, "%q", keys)
		if assert.Equal(t, []diff.Kind{diff.KindSSHKeys}, refusedKinds(p), "%q", keys) {
			assert.Contains(t, p.Refused[0].Reason, "removes every key of core")
		}
	}
	for _, keys := range [][]string{{"", "ssh-ed25519 CCCC three"}, {"# c\nssh-ed25519 CCCC three"}} {
		assert.True(t, build(t, base(), base().SSHKeys(keys...), "").Eligible, "%q", keys)
	}
}
