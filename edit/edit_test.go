package edit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/mcs"
)

// judge plans des against cur with the built-in policy, as a node would.
func judge(t *testing.T, cur, des []byte) *plan.Plan {
	t.Helper()
	c, err := diff.Decode(cur)
	require.NoError(t, err)
	d, err := diff.Decode(des)
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: allowlist.Default()})
	require.NoError(t, err)
	return p
}

func changedPaths(p *plan.Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if c.Path != "" && !diff.IsMetadataPath(c.Path) {
			out = append(out, c.Path)
		}
		if c.Kind == diff.KindSSHKeys {
			out = append(out, "sshKeys:"+c.User)
		}
	}
	return out
}

// embeddedFile returns the contents of path in the payload's content MachineConfig.
func embeddedFile(t *testing.T, payload []byte, path string) ([]byte, bool) {
	t.Helper()
	p, err := diff.Decode(payload)
	require.NoError(t, err)
	for _, f := range p.Config.Storage.Files {
		if f.Path != diff.MachineConfigContentPath {
			continue
		}
		data, err := diff.FileContents(f)
		require.NoError(t, err)
		var mc struct {
			Spec struct{ Config json.RawMessage }
		}
		require.NoError(t, json.Unmarshal(data, &mc))
		inner, err := diff.Decode(mc.Spec.Config)
		require.NoError(t, err)
		for _, g := range inner.Config.Storage.Files {
			if g.Path == path {
				b, err := diff.FileContents(g)
				require.NoError(t, err)
				return b, true
			}
		}
	}
	return nil, false
}

var newSecret = []byte(`{"auths":{"quay.io":{"auth":"cm90YXRlZDpzZWNyZXQ="}}}` + "\n")

func TestSetFileKeepsTheEmbeddedCopyAndTheEncoding(t *testing.T) {
	served := mcs.Base().Served()
	for name, in := range map[string][]byte{"served JSON": served, "ConfigMap value": mcs.ConfigMapValue(served),
		"gzip": fixture.Gzip(served)} {
		t.Run(name, func(t *testing.T) {
			res, err := Apply(in, SetFile(mcs.PullSecret, newSecret, nil))
			require.NoError(t, err)
			_, inForm, err := diff.DecodeForm(in)
			require.NoError(t, err)
			assert.Equal(t, inForm, res.Form)
			_, outForm, err := diff.DecodeForm(res.Payload)
			require.NoError(t, err)
			assert.Equal(t, inForm, outForm, "written in the encoding it came in")
			assert.Equal(t, []string{diff.MachineConfigContentPath}, res.Embedded)

			p := judge(t, in, res.Payload)
			assert.True(t, p.Eligible, "%+v", p.Refused)
			assert.Equal(t, []string{mcs.PullSecret}, changedPaths(p))
			got, ok := embeddedFile(t, res.Payload, mcs.PullSecret)
			require.True(t, ok)
			assert.Equal(t, newSecret, got, "the embedded copy carries the new contents")
		})
	}
}

// The editor's output equals, as a node judges it, the payload the machine-config server serves
// after the same change (differential against test/mcs, which renders as the MCO does).
func TestEditMatchesWhatTheServerServes(t *testing.T) {
	base := mcs.Base()
	for _, sc := range mcs.Eligible() {
		want := sc.Change(base.Clone())
		var ops []Op
		for _, p := range sc.Paths {
			f, ok := want.Files[p]
			if !ok {
				continue // server-added or keys: covered below
			}
			if old, had := base.Files[p]; had && old.Mode == f.Mode {
				ops = append(ops, SetFile(p, f.Data, nil))
			} else {
				mode := f.Mode
				ops = append(ops, SetFile(p, f.Data, &mode))
			}
		}
		if !slices.Equal(want.SSHKeys, base.SSHKeys) {
			ops = append(ops, SSHKeys(KeysSet, want.SSHKeys))
		}
		if len(ops) == 0 {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			res, err := Apply(base.Served(), ops...)
			require.NoError(t, err)
			p := judge(t, want.Served(), res.Payload)
			assert.Empty(t, changedPaths(p), "differs from what the server serves after %s", sc.Name)
			assert.True(t, judge(t, base.Served(), res.Payload).Eligible)
		})
	}
}

func TestAddAndRemoveFile(t *testing.T) {
	served := mcs.Base().Served()
	const p = "/etc/containers/registries.d/quay.io.yaml"
	mode := 0o640
	res, err := Apply(served, SetFile(p, []byte("docker: {}\n"), &mode))
	require.NoError(t, err)
	pl := judge(t, served, res.Payload)
	assert.True(t, pl.Eligible, "%+v", pl.Refused)
	assert.Equal(t, []string{p}, changedPaths(pl))
	got, ok := embeddedFile(t, res.Payload, p)
	require.True(t, ok, "a new file is added to the content copy too")
	assert.Equal(t, "docker: {}\n", string(got))
	d, err := diff.Decode(res.Payload)
	require.NoError(t, err)
	for _, f := range d.Config.Storage.Files {
		if f.Path == p {
			assert.Equal(t, 0o640, *f.Mode)
			assert.True(t, *f.Overwrite)
		}
	}

	back, err := Apply(res.Payload, RemoveFile(p))
	require.NoError(t, err)
	assert.Empty(t, changedPaths(judge(t, served, back.Payload)), "removed from both copies")
	_, ok = embeddedFile(t, back.Payload, p)
	assert.False(t, ok)

	_, err = Apply(served, RemoveFile("/etc/nope.conf"))
	assert.ErrorContains(t, err, "no file /etc/nope.conf")
}

func TestServerAddedFileStaysOutOfTheContentCopy(t *testing.T) {
	served := mcs.Base().Served()
	res, err := Apply(served, SetFile(mcs.KubeletCA, []byte("-----BEGIN CERTIFICATE-----\nrotated\n-----END CERTIFICATE-----\n"), nil))
	require.NoError(t, err)
	assert.Empty(t, res.Embedded, "the content copy does not carry what the server adds")
	_, ok := embeddedFile(t, res.Payload, mcs.KubeletCA)
	assert.False(t, ok)
	assert.Equal(t, []string{mcs.KubeletCA}, changedPaths(judge(t, served, res.Payload)))
}

func TestSSHKeys(t *testing.T) {
	base := mcs.Base()
	served := base.Served()
	k2 := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNlY29uZC1rZXktZm9yLXRlc3Rz second@example"
	res, err := Apply(served, SSHKeys(KeysAdd, []string{k2}))
	require.NoError(t, err)
	p := judge(t, served, res.Payload)
	assert.True(t, p.Eligible, "%+v", p.Refused)
	assert.Equal(t, []string{"sshKeys:core"}, changedPaths(p))
	d, err := diff.Decode(res.Payload)
	require.NoError(t, err)
	assert.Equal(t, 2, len(d.Config.Passwd.Users[0].SSHAuthorizedKeys))

	back, err := Apply(res.Payload, SSHKeys(KeysRemove, []string{k2}))
	require.NoError(t, err)
	assert.Empty(t, changedPaths(judge(t, served, back.Payload)))

	set, err := Apply(served, SSHKeys(KeysSet, []string{k2}))
	require.NoError(t, err)
	assert.Empty(t, changedPaths(judge(t, set.Payload, mustApply(t, served, SSHKeys(KeysAdd, []string{k2}), SSHKeys(KeysRemove, base.SSHKeys)))))

	_, err = Apply(served, SSHKeys(KeysRemove, base.SSHKeys))
	assert.ErrorContains(t, err, "without any SSH key")
	_, err = Apply(served, SSHKeys(KeysRemove, []string{"ssh-rsa AAAA nobody@example"}))
	assert.ErrorContains(t, err, `no SSH key "nobody@example" (ssh-rsa)`)
}

func mustApply(t *testing.T, in []byte, ops ...Op) []byte {
	t.Helper()
	res, err := Apply(in, ops...)
	require.NoError(t, err)
	return res.Payload
}

func TestBadEditsWriteNothing(t *testing.T) {
	served := mcs.Base().Served()
	for name, op := range map[string]Op{
		"relative":     SetFile("etc/x", nil, nil),
		"unclean":      SetFile("/etc/../x", nil, nil),
		"control char": SetFile("/etc/x\n", nil, nil),
		"metadata":     SetFile(diff.MachineConfigContentPath, []byte("{}"), nil),
		"bad mode":     SetFile("/etc/x", nil, ptr(0o17777)),
		"empty path":   SetFile("", nil, nil),
		"newline key":  SSHKeys(KeysAdd, []string{"ssh-rsa AAAA\nssh-rsa BBBB"}),
	} {
		_, err := Apply(served, op)
		assert.Error(t, err, name)
	}
	_, err := Apply([]byte(`{"ignition":{"version":"9.9.9"}}`), SetFile("/etc/x", nil, nil))
	assert.ErrorContains(t, err, "the payload")
}

func ptr[T any](v T) *T { return &v }

func TestEverySpecVersionKeepsItsVersion(t *testing.T) {
	for _, v := range []string{"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"} {
		t.Run(v, func(t *testing.T) {
			in := fixture.Ignition(v).File(mcs.PullSecret, []byte("{}"), 0o600).SSHKeys("ssh-rsa AAAA one@example").JSON()
			res, err := Apply(in, SetFile(mcs.PullSecret, newSecret, nil), SetFile("/etc/containers/registries.d/a.yaml", []byte("x"), nil),
				SSHKeys(KeysAdd, []string{"ssh-rsa BBBB two@example"}))
			require.NoError(t, err)
			var head struct{ Ignition struct{ Version string } }
			require.NoError(t, json.Unmarshal(res.Payload, &head))
			assert.Equal(t, v, head.Ignition.Version)
			p := judge(t, in, res.Payload)
			assert.True(t, p.Eligible)
			assert.ElementsMatch(t, []string{"sshKeys:core", mcs.PullSecret, "/etc/containers/registries.d/a.yaml"}, changedPaths(p))
		})
	}
}

func TestMachineConfigPayloads(t *testing.T) {
	mc := mcs.Base().MachineConfig()
	for name, in := range map[string][]byte{"json": mc, "yaml": must(yaml.JSONToYAML(mc))} {
		t.Run(name, func(t *testing.T) {
			res, err := Apply(in, SetFile(mcs.PullSecret, newSecret, nil))
			require.NoError(t, err)
			_, form, _ := diff.DecodeForm(in)
			assert.Equal(t, form, res.Form)
			p := judge(t, in, res.Payload)
			assert.True(t, p.Eligible, "%+v", p.Refused)
			assert.Equal(t, []string{mcs.PullSecret}, changedPaths(p))
			assert.Equal(t, name == "yaml", !bytes.HasPrefix(bytes.TrimSpace(res.Payload), []byte("{")))
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestGzipAndVerifiedContentsStayReadable(t *testing.T) {
	in := fixture.Ignition("3.4.0").GzipFile(mcs.PolicyJSON, []byte(`{"default":[]}`), 0o644).JSON()
	res, err := Apply(in, SetFile(mcs.PolicyJSON, []byte(`{"default":[{"type":"reject"}]}`), nil))
	require.NoError(t, err)
	d, err := diff.Decode(res.Payload)
	require.NoError(t, err)
	require.Len(t, d.Config.Storage.Files, 1)
	assert.Equal(t, "gzip", *d.Config.Storage.Files[0].Contents.Compression, "compressed as it was")
	got, err := diff.FileContents(d.Config.Storage.Files[0])
	require.NoError(t, err)
	assert.Equal(t, `{"default":[{"type":"reject"}]}`, string(got))
}

// The real payloads the machine-config server served (skipped without /work/shared): rotating the
// pull secret with the editor gives, as a node judges it, the payload the server served after the
// pull secret was rotated.
func TestRealServedPullSecretRotation(t *testing.T) {
	dir := "/work/shared/real-payloads/mco-served"
	base, err := os.ReadFile(filepath.Join(dir, "base.config"))
	if err != nil {
		t.Skip("no real payloads here")
	}
	rotated, err := os.ReadFile(filepath.Join(dir, "pullsecret.config"))
	require.NoError(t, err)
	r, err := diff.Decode(rotated)
	require.NoError(t, err)
	var secret []byte
	for _, f := range r.Config.Storage.Files {
		if f.Path == mcs.PullSecret {
			secret, err = diff.FileContents(f)
			require.NoError(t, err)
		}
	}
	res, err := Apply(base, SetFile(mcs.PullSecret, secret, nil))
	require.NoError(t, err)
	assert.Equal(t, diff.Form("base64+gzip+ignition"), res.Form)
	assert.Empty(t, changedPaths(judge(t, rotated, res.Payload)))
	p := judge(t, base, res.Payload)
	assert.True(t, p.Eligible)
	assert.Equal(t, []string{mcs.PullSecret}, changedPaths(p))
	assert.False(t, strings.Contains(string(res.Payload), "\n"))
}

func TestParseAuthorizedKeys(t *testing.T) {
	keys, err := ParseAuthorizedKeys([]byte("# comment\n\nssh-ed25519 AAAA a@b\r\nssh-rsa BBBB\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"ssh-ed25519 AAAA a@b", "ssh-rsa BBBB"}, keys)
	_, err = ParseAuthorizedKeys([]byte("justonefield\n"))
	assert.ErrorContains(t, err, "line 1")
}
