package diff_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

func decode(t testing.TB, raw []byte) *diff.Payload {
	t.Helper()
	p, err := diff.Decode(raw)
	require.NoError(t, err)
	return p
}

func changes(t testing.TB, cur, des *fixture.Config) []diff.Change {
	t.Helper()
	out, err := diff.Diff(decode(t, cur.JSON()), decode(t, des.JSON()))
	require.NoError(t, err)
	return out
}

func TestEqualConfigsHaveNoChanges(t *testing.T) {
	c := sample().EmbedMachine(fixture.DefaultMachine()).Unit("kubelet.service", "[Service]\n")
	assert.Empty(t, changes(t, c, c.Clone()))
	// Same contents, different encoding (gzip vs plain, another spec version): still no change.
	plain := fixture.Ignition("3.4.0").File("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600)
	gz := fixture.Ignition("3.1.0").GzipFile("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600)
	gz.Storage.Files[0].Overwrite = plain.Storage.Files[0].Overwrite
	assert.Empty(t, changes(t, plain, gz))
}

func TestFileChanges(t *testing.T) {
	cur := fixture.Ignition("").
		File("/etc/a", []byte("a"), 0o644).
		File("/etc/b", []byte("b"), 0o644).
		File("/etc/c", []byte("c"), 0o644).
		File("/etc/d", []byte("d"), 0o644)
	des := cur.Clone().
		File("/etc/a", []byte("A"), 0o644). // contents
		File("/etc/b", []byte("b"), 0o600). // mode only
		Owner("/etc/c", "core", "core").    // ownership only
		File("/etc/e", []byte("e"), 0o644)  // added
	des.Storage.Files = des.Storage.Files[:len(des.Storage.Files)-1]
	des.Storage.Files = append(des.Storage.Files[:3], des.Storage.Files[4:]...) // drop /etc/d
	des.File("/etc/e", []byte("e"), 0o644)

	got := changes(t, cur, des)
	require.Len(t, got, 5)
	byPath := map[string]diff.Change{}
	for _, c := range got {
		assert.Equal(t, diff.KindFile, c.Kind)
		byPath[c.Path] = c
	}
	assert.Equal(t, "contents", byPath["/etc/a"].Detail)
	assert.Equal(t, "mode 0644 -> 0600", byPath["/etc/b"].Detail)
	assert.Equal(t, "owner root -> core, group root -> core", byPath["/etc/c"].Detail)
	assert.Equal(t, diff.OpRemove, byPath["/etc/d"].Op)
	assert.NotNil(t, byPath["/etc/d"].Old)
	assert.Nil(t, byPath["/etc/d"].New)
	assert.Equal(t, diff.OpAdd, byPath["/etc/e"].Op)
	// Deterministic order: by path.
	for i := 1; i < len(got); i++ {
		assert.Less(t, got[i-1].Path, got[i].Path)
	}
}

func TestDetailNeverCarriesContents(t *testing.T) {
	secret := "hunter2-SECRET-pull-token"
	cur := fixture.Ignition("").File("/var/lib/kubelet/config.json", []byte("old"), 0o600)
	des := fixture.Ignition("").File("/var/lib/kubelet/config.json", []byte(secret), 0o600).SSHKeys("ssh-rsa " + secret)
	for _, c := range changes(t, cur, des) {
		assert.NotContains(t, c.Detail, secret)
	}
}

func TestMetadataFilesAreNotFiles(t *testing.T) {
	m := fixture.DefaultMachine()
	cur := sample().EmbedMachine(m)
	m.OSImageURL = "quay.io/other@sha256:9"
	got := changes(t, cur, sample().EmbedMachine(m))
	require.Len(t, got, 1)
	assert.Equal(t, diff.KindOSImage, got[0].Kind)
}

func TestMachineFieldChanges(t *testing.T) {
	base := fixture.DefaultMachine()
	cases := map[string]struct {
		mutate func(*fixture.Machine)
		kind   diff.Kind
	}{
		"osImage":         {func(m *fixture.Machine) { m.OSImageURL = "quay.io/x@sha256:1" }, diff.KindOSImage},
		"kernelArguments": {func(m *fixture.Machine) { m.KernelArguments = append(m.KernelArguments, "nosmt") }, diff.KindKernelArguments},
		"fips":            {func(m *fixture.Machine) { m.FIPS = true }, diff.KindFIPS},
		"kernelType":      {func(m *fixture.Machine) { m.KernelType = "realtime" }, diff.KindKernelType},
		"extensions":      {func(m *fixture.Machine) { m.Extensions = []string{"usbguard"} }, diff.KindExtensions},
	}
	for name, tc := range cases {
		t.Run(name+" in embedded files", func(t *testing.T) {
			m := base
			m.KernelArguments = append([]string(nil), base.KernelArguments...)
			tc.mutate(&m)
			got := changes(t, sample().EmbedMachine(base), sample().EmbedMachine(m))
			require.Len(t, got, 1, "one change even though both metadata files changed")
			assert.Equal(t, tc.kind, got[0].Kind)
		})
		t.Run(name+" in one embedded file only", func(t *testing.T) {
			m := base
			m.KernelArguments = append([]string(nil), base.KernelArguments...)
			tc.mutate(&m)
			des := sample().EmbedMachine(base).File(diff.MachineConfigEncapsulatedPath, fixture.MachineConfigJSON(m, nil), 0o644)
			got := changes(t, sample().EmbedMachine(base), des)
			require.Len(t, got, 1)
			assert.Equal(t, tc.kind, got[0].Kind)
		})
		t.Run(name+" in MachineConfig spec", func(t *testing.T) {
			m := base
			m.KernelArguments = append([]string(nil), base.KernelArguments...)
			tc.mutate(&m)
			cur := decode(t, fixture.MachineConfigJSON(base, sample().JSON()))
			des := decode(t, fixture.MachineConfigJSON(m, sample().JSON()))
			got, err := diff.Diff(cur, des)
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tc.kind, got[0].Kind)
		})
	}
	t.Run("fips detail", func(t *testing.T) {
		m := base
		m.FIPS = true
		got := changes(t, sample().EmbedMachine(base), sample().EmbedMachine(m))
		assert.Equal(t, "false -> true", got[0].Detail)
	})
	t.Run("MachineConfig current against Ignition desired", func(t *testing.T) {
		cur := decode(t, fixture.MachineConfigJSON(base, sample().JSON()))
		got, err := diff.Diff(cur, decode(t, sample().EmbedMachine(base).JSON()))
		require.NoError(t, err)
		assert.Empty(t, got, "the spec view is compared with the embedded views")
	})
	t.Run("empty kernelType is default", func(t *testing.T) {
		m := base
		m.KernelType = "default"
		assert.Empty(t, changes(t, sample().EmbedMachine(base), sample().EmbedMachine(m)))
	})
	t.Run("extensions order does not matter", func(t *testing.T) {
		a, b := base, base
		a.Extensions, b.Extensions = []string{"x", "y"}, []string{"y", "x"}
		assert.Empty(t, changes(t, sample().EmbedMachine(a), sample().EmbedMachine(b)))
	})
}

func TestIgnitionNativeKernelArguments(t *testing.T) {
	cur := sample()
	cur.Ignition.Version = "3.3.0" // kernelArguments exist from spec 3.3.0 on
	des := cur.Clone()
	des.KernelArguments.ShouldExist = []types.KernelArgument{"mitigations=off"}
	got := changes(t, cur, des)
	require.Len(t, got, 1)
	assert.Equal(t, diff.KindKernelArguments, got[0].Kind)
}

func TestStoragePasswdUnitsDirectoriesLinks(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := map[string]struct {
		mutate func(c *fixture.Config)
		kind   diff.Kind
	}{
		"disk": {func(c *fixture.Config) { c.Storage.Disks = []types.Disk{{Device: "/dev/sdb"}} }, diff.KindStorage},
		"filesystem": {func(c *fixture.Config) {
			c.Storage.Filesystems = []types.Filesystem{{Device: "/dev/sdb1", Format: str("xfs")}}
		}, diff.KindStorage},
		"raid": {func(c *fixture.Config) {
			c.Storage.Raid = []types.Raid{{Name: "md0", Level: str("raid1"), Devices: []types.Device{"/dev/a", "/dev/b"}}}
		}, diff.KindStorage},
		"luks":       {func(c *fixture.Config) { c.Storage.Luks = []types.Luks{{Name: "root", Device: str("/dev/sdb")}} }, diff.KindStorage},
		"other user": {func(c *fixture.Config) { c.Passwd.Users = append(c.Passwd.Users, types.PasswdUser{Name: "mallory"}) }, diff.KindPasswd},
		"group":      {func(c *fixture.Config) { c.Passwd.Groups = []types.PasswdGroup{{Name: "wheel2"}} }, diff.KindPasswd},
		"core password": {func(c *fixture.Config) {
			c.Passwd.Users[0].PasswordHash = str("$6$x")
		}, diff.KindPasswd},
		"unit":      {func(c *fixture.Config) { c.Unit("evil.service", "[Service]\nExecStart=/bin/true\n") }, diff.KindUnit},
		"directory": {func(c *fixture.Config) { c.Storage.Directories = []types.Directory{{Node: types.Node{Path: "/etc/x"}}} }, diff.KindDirectory},
		"link": {func(c *fixture.Config) {
			c.Storage.Links = []types.Link{{Node: types.Node{Path: "/etc/l"}, LinkEmbedded1: types.LinkEmbedded1{Target: str("/etc/shadow")}}}
		}, diff.KindLink},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			des := sample()
			tc.mutate(des)
			got := changes(t, sample(), des)
			require.Len(t, got, 1)
			assert.Equal(t, tc.kind, got[0].Kind)
			assert.NotEmpty(t, got[0].Detail)
		})
	}
	t.Run("dropin", func(t *testing.T) {
		cur := sample().Unit("crio.service", "[Service]\n")
		des := cur.Clone()
		des.Systemd.Units[0].Dropins = []types.Dropin{{Name: "10-x.conf", Contents: str("[Service]\n")}}
		got := changes(t, cur, des)
		require.Len(t, got, 1)
		assert.Equal(t, diff.KindUnit, got[0].Kind)
		assert.Equal(t, "crio.service", got[0].Unit)
		assert.Contains(t, got[0].Detail, "dropins")
	})
}

func TestSSHKeys(t *testing.T) {
	got := changes(t, sample(), sample().SSHKeys("ssh-ed25519 AAAA one", "ssh-ed25519 BBBB two"))
	require.Len(t, got, 1)
	assert.Equal(t, diff.KindSSHKeys, got[0].Kind)
	assert.Equal(t, diff.OpModify, got[0].Op)
	assert.Equal(t, "core", got[0].User)
	assert.Equal(t, []string{"ssh-ed25519 AAAA one", "ssh-ed25519 BBBB two"}, got[0].Keys)

	noCore := fixture.Ignition("").File("/etc/containers/registries.conf", []byte("mirrors"), 0o644)
	got = changes(t, noCore, noCore.Clone().SSHKeys("ssh-ed25519 AAAA one"))
	require.Len(t, got, 1, "adding core with keys only is an SSH key change, not a passwd change")
	assert.Equal(t, diff.OpAdd, got[0].Op)
}

func TestUndecodableFileIsInvalid(t *testing.T) {
	des := fixture.Ignition("")
	src, gz := "data:,not-gzip", "gzip"
	des.AddFile(types.File{Node: types.Node{Path: "/etc/containers/policy.json"},
		FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &src, Compression: &gz}}})
	_, err := diff.Decode(des.JSON())
	require.Error(t, err, "compressed contents are decoded (and counted) when the payload is")
	assert.Contains(t, err.Error(), "/etc/containers/policy.json")
}
