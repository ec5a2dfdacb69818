package diff_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

func sample() *fixture.Config {
	return fixture.Ignition("3.2.0").
		File("/etc/containers/registries.conf", []byte("mirrors"), 0o644).
		GzipFile("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one")
}

func TestDecodeForms(t *testing.T) {
	ign := sample().JSON()
	mc := fixture.MachineConfigJSON(fixture.DefaultMachine(), ign)
	mcYAML, err := yaml.JSONToYAML(mc)
	require.NoError(t, err)
	cases := map[string]struct {
		raw  []byte
		form diff.Form
		mc   bool
	}{
		"raw ignition":         {ign, "ignition", false},
		"gzip":                 {fixture.Gzip(ign), "gzip+ignition", false},
		"gzip+base64":          {fixture.GzipBase64(ign), "base64+gzip+ignition", false},
		"base64":               {[]byte(base64.StdEncoding.EncodeToString(ign)), "base64+ignition", false},
		"base64 wrapped lines": {[]byte(wrapLines(base64.StdEncoding.EncodeToString(ign), 76)), "base64+ignition", false},
		"leading whitespace":   {append([]byte("\n  "), ign...), "ignition", false},
		"machineconfig json":   {mc, "machineconfig", true},
		"machineconfig yaml":   {mcYAML, "machineconfig-yaml", true},
		"machineconfig gz+b64": {fixture.GzipBase64(mc), "base64+gzip+machineconfig", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, form, err := diff.DecodeForm(tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.form, form)
			require.Len(t, p.Config.Storage.Files, 2)
			data, err := diff.FileContents(p.Config.Storage.Files[1])
			require.NoError(t, err)
			assert.Equal(t, `{"auths":{}}`, string(data))
			if tc.mc {
				require.Len(t, p.Machine, 1)
				assert.Equal(t, "spec", p.Machine[0].Source)
				assert.Equal(t, fixture.DefaultMachine().OSImageURL, p.Machine[0].OSImageURL)
				assert.NotEmpty(t, p.MachineConfig)
			} else {
				assert.Empty(t, p.Machine)
			}
		})
	}
}

func wrapLines(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	return b.String() + s
}

func TestDecodeAllSpecVersions(t *testing.T) {
	for _, v := range []string{"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"} {
		t.Run(v, func(t *testing.T) {
			c := fixture.Ignition(v).File("/etc/containers/policy.json", []byte("{}"), 0o644)
			p, err := diff.Decode(c.JSON())
			require.NoError(t, err)
			assert.Equal(t, "3.5.0", p.Config.Ignition.Version, "translated to 3.5 types")
			assert.Equal(t, "/etc/containers/policy.json", p.Config.Storage.Files[0].Path)
		})
	}
}

func TestDecodeEmbeddedMachineConfig(t *testing.T) {
	m := fixture.DefaultMachine()
	m.FIPS = true
	p, err := diff.Decode(sample().EmbedMachine(m).JSON())
	require.NoError(t, err)
	require.Len(t, p.Machine, 2)
	assert.Equal(t, diff.MachineConfigContentPath, p.Machine[0].Source)
	assert.Equal(t, diff.MachineConfigEncapsulatedPath, p.Machine[1].Source)
	assert.True(t, p.Machine[0].FIPS)
	assert.Equal(t, "default", p.Machine[0].KernelType)
}

func TestDecodeErrors(t *testing.T) {
	cases := map[string]struct {
		raw  string
		want string
	}{
		"empty":               {"", "payload is empty"},
		"bad json":            {`{"ignition": {"version": "3.2.0"},}`, "invalid JSON at offset 35 (line 1, column 35)"},
		"wrong type":          {`{"ignition": {"version": "3.2.0"}, "storage": {"files": 5}}`, "invalid JSON at offset"},
		"unknown version":     {`{"ignition": {"version": "3.6.0-experimental"}}`, `unknown Ignition version "3.6.0-experimental"`},
		"spec 2":              {`{"ignition": {"version": "2.2.0"}}`, `unknown Ignition version "2.2.0"`},
		"no version":          {`{"ignition": {}}`, "ignition.version is missing"},
		"neither":             {`{"foo": 1}`, "neither an Ignition config"},
		"mc without config":   {`{"kind":"MachineConfig","spec":{"fips":true}}`, "spec.config: missing"},
		"mc bad config":       {`{"kind":"MachineConfig","spec":{"config":{"ignition":{"version":"9.0.0"}}}}`, `spec.config: unknown Ignition version`},
		"wrong kind":          {`{"kind":"ConfigMap","spec":{"config":{}}}`, `kind is "ConfigMap"`},
		"garbage":             {"\x00\x01not a payload", "neither JSON, YAML, gzip nor base64"},
		"bad base64":          {"QUJD=RA", "base64"},
		"truncated gzip":      {string(fixture.Gzip([]byte(`{"ignition":{"version":"3.2.0"}}`))[:12]), "gzip"},
		"bad file mode":       {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","mode":99999}]}}`, "$.storage.files.0.mode"},
		"bad data url":        {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:;base64,!!"}}]}}`, "storage.files[/etc/x].contents.source: invalid data URL"},
		"duplicate path":      {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x"},{"path":"/etc/x"}]}}`, "duplicate"},
		"bad embedded mc":     {`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/mcs-machine-config-content.json","contents":{"source":"data:,%7B"}}]}}`, "/etc/mcs-machine-config-content.json"},
		"yaml list not a doc": {"- a\n- b\n", "neither JSON, YAML"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := diff.Decode([]byte(tc.raw))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDecodeBoundsDecompressedSize(t *testing.T) {
	old := diff.MaxPayloadSize
	diff.MaxPayloadSize = 1 << 20
	t.Cleanup(func() { diff.MaxPayloadSize = old })
	bomb := fixture.Gzip(make([]byte, 8<<20)) // 8 MiB of zeros: ~8 KiB compressed
	require.Less(t, len(bomb), 64<<10)
	_, err := diff.Decode(bomb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exceeds")

	// The same bound holds for a compressed file inside the config, whichever the form.
	c := fixture.Ignition("").GzipFile("/etc/containers/policy.json", make([]byte, 4<<20), 0o644)
	for _, raw := range [][]byte{c.JSON(), fixture.GzipBase64(c.JSON())} {
		_, err = diff.Decode(raw)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/etc/containers/policy.json")
		assert.Contains(t, err.Error(), "exceeds")
	}
	// And for FileContents on its own.
	diff.MaxPayloadSize = 8 << 20
	p, err := diff.Decode(c.JSON())
	require.NoError(t, err)
	diff.MaxPayloadSize = 1 << 20
	_, err = diff.FileContents(p.Config.Storage.Files[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exceeds")
}

// The budget is one total across the payload and all its files: files that each fit but together do
// not are refused.
func TestDecodeBudgetIsATotal(t *testing.T) {
	old := diff.MaxPayloadSize
	diff.MaxPayloadSize = 1 << 20
	t.Cleanup(func() { diff.MaxPayloadSize = old })
	c := fixture.Ignition("")
	for i := range 3 {
		c.GzipFile(fmt.Sprintf("/etc/containers/f%d", i), make([]byte, 400<<10), 0o644)
	}
	_, err := diff.Decode(c.JSON())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/etc/containers/f2")
	assert.Contains(t, err.Error(), "budget")
	c.Storage.Files = c.Storage.Files[:2]
	_, err = diff.Decode(c.JSON())
	require.NoError(t, err)
}

func TestDecodeRefusesTooManyLayers(t *testing.T) {
	raw := sample().JSON()
	for i := 0; i < 6; i++ {
		raw = []byte(base64.StdEncoding.EncodeToString(raw))
	}
	_, err := diff.Decode(raw)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than")
}

func TestDirtyPathsAreKeptForThePlanner(t *testing.T) {
	for _, p := range []string{"/etc/containers/../ssh/sshd_config", "/etc//containers/policy.json", "/etc/containers/.", "etc/containers/policy.json"} {
		raw := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"` + p + `"}]}}`
		pl, err := diff.Decode([]byte(raw))
		require.NoError(t, err, p)
		assert.True(t, pl.DirtyPath(p), p)
	}
}

func TestDecodeRejectsTwoVersions(t *testing.T) {
	_, err := diff.Decode([]byte(`{"ignition":{"version":"3.5.0"},"ignition":{"version":"3.0.0"}}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `duplicate key "ignition" at /ignition`)
}

func TestDecodeAgainstValidatesWhatChanged(t *testing.T) {
	known, err := diff.Decode(sample().JSON())
	require.NoError(t, err)
	// Same result as Decode for a payload that shares files with known.
	des := sample().File("/etc/containers/policy.json", []byte("{}"), 0o644).JSON()
	a, err := diff.DecodeAgainst(des, known)
	require.NoError(t, err)
	b, err := diff.Decode(des)
	require.NoError(t, err)
	assert.Equal(t, b.Config, a.Config)

	// A changed file's data URL is still validated.
	bad := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/containers/registries.conf","contents":{"source":"data:;base64,!!"}}]}}`
	_, err = diff.DecodeAgainst([]byte(bad), known)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "storage.files[/etc/containers/registries.conf].contents.source: invalid data URL")
	// Other checks still apply to unchanged files (here a bad mode on an unchanged source).
	known2, err := diff.Decode([]byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,a"}}]}}`))
	require.NoError(t, err)
	_, err = diff.DecodeAgainst([]byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","mode":99999,"contents":{"source":"data:,a"}}]}}`), known2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "$.storage.files.0.mode")
}

// JSON structure is charged before it is decoded: a few bytes per entry become hundreds in Go.
func TestDecodeChargesStructure(t *testing.T) {
	entries := func(n int) []byte {
		return []byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[` + strings.Repeat(`{"path":"/etc/a"},`, n-1) + `{"path":"/etc/b"}]}}`)
	}
	_, err := diff.Decode(fixture.GzipBase64(entries(100_000))) // 1.7 MB of JSON
	require.Error(t, err)
	// Refused by the scan as soon as the budget is spent, naming where.
	assert.Regexp(t, `^storage\.files(\.[0-9]+)?: what the JSON's objects, members, elements and strings cost once decoded exceeds the`, err.Error())
	_, err = diff.Decode(entries(2))
	require.NoError(t, err)
}
