package diff_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// servedRaw renders served(mutate) with the content MachineConfig's JSON passed through raw (to
// mutate its bytes as well), encoded as the machine-config server encodes it.
func servedRaw(mutate func(*fixture.Config), raw func([]byte) []byte) []byte {
	c := served(mutate)
	if raw != nil {
		for i, f := range c.Storage.Files {
			if f.Path != diff.MachineConfigContentPath {
				continue
			}
			data, err := diff.FileContents(f)
			if err != nil {
				panic(err)
			}
			c.Storage.Files[i].Contents.Source = ptr(fixture.MCSDataURL(raw(data)))
		}
	}
	return c.JSON()
}

// checkStreamed holds CheckEmbedded (the decode's walk, then the reduced config) to the whole decode
// and compare, reason for reason.
func checkStreamed(t *testing.T, raw []byte) {
	t.Helper()
	p, err := diff.Decode(raw)
	if err != nil {
		return
	}
	if got, want := diff.CheckEmbedded(p), diff.CheckEmbeddedWhole(p); got != want {
		t.Fatalf("streamed check %q, whole decode %q", got, want)
	}
}

// Every mutation of TestEmbeddedMachineConfigDisagrees, and more, is judged alike by both paths; and
// the unmutated payload is settled by the walk with every file's source standing in a placeholder.
func TestStreamedEmbeddedAsWhole(t *testing.T) {
	p := decode(t, served(nil).JSON())
	streamed, n := diff.Streamed(p, diff.MachineConfigContentPath)
	require.True(t, streamed)
	assert.Equal(t, len(served(nil).Storage.Files)-6, n, "every rendered file's source agrees") // less the server's and the metadata files
	assert.Empty(t, diff.CheckEmbedded(p))

	mutations := map[string]func(*fixture.Config){
		"contents": func(c *fixture.Config) { c.File("/etc/containers/registries.conf", []byte("evil"), 0o644) },
		"same contents, other encoding": func(c *fixture.Config) {
			c.Storage.Files[0].Contents.Source = ptr("data:,mirrors")
		},
		"mode":   func(c *fixture.Config) { c.Storage.Files[0].Mode = ptr(0o755) },
		"owner":  func(c *fixture.Config) { c.Owner("/var/lib/kubelet/config.json", "core", "root") },
		"append": func(c *fixture.Config) { c.Storage.Files[0].Append = []types.Resource{{Source: ptr("data:,more")}} },
		"hash": func(c *fixture.Config) {
			c.Storage.Files[0].Contents.Verification.Hash = ptr("sha256-" + fmt.Sprintf("%064d", 0))
		},
		"smuggled": func(c *fixture.Config) { c.File("/etc/evil", []byte("x"), 0o644) },
		"moved": func(c *fixture.Config) {
			c.Storage.Files[0].Path, c.Storage.Files[1].Path = c.Storage.Files[1].Path, c.Storage.Files[0].Path
		},
		"dropped": func(c *fixture.Config) { c.Storage.Files = c.Storage.Files[1:] },
		"unit":    func(c *fixture.Config) { c.Systemd.Units[0].Contents = ptr("[Service]\nExecStart=/bin/sh\n") },
		"kargs":   func(c *fixture.Config) { c.KernelArguments.ShouldExist = []types.KernelArgument{"a", "a"} },
		"user":    func(c *fixture.Config) { c.SSHKeys("ssh-ed25519 EVIL") },
		"remote":  func(c *fixture.Config) { c.Storage.Files[0].Contents.Source = ptr("https://example.com/x") },
		"dirty":   func(c *fixture.Config) { c.Storage.Files[0].Path = "/etc/../etc/containers/registries.conf" },
		"dup":     func(c *fixture.Config) { c.Storage.Files = append(c.Storage.Files, c.Storage.Files[0]) },
	}
	for name, m := range mutations {
		t.Run(name, func(t *testing.T) { checkStreamed(t, servedRaw(m, nil)) })
	}
	// Byte-level edits of the embedded MachineConfig: keys the walk must match as encoding/json
	// does, escapes, duplicate and case-variant keys, a source given twice.
	edits := map[string][2]string{
		"escaped source":       {`"source":"data:`, `"source":"\u0064ata:`},
		"escaped slash":        {`base64,`, `base64\/`},
		"case-variant source":  {`"source":`, `"SOURCE":`},
		"folded source":        {`"source":`, "\"\u017fource\":"},
		"case-variant path":    {`"path":"/etc/containers/registries.conf"`, `"Path":"/etc/containers/registries.conf"`},
		"folded storage":       {`"storage":`, "\"\u017ftorage\":"},
		"second source":        {`"source":`, `"source":"data:,evil","Source":`},
		"second contents":      {`"contents":{`, `"contents":{"source":"data:,evil"},"contents":{`},
		"contents before path": {`"path":"/etc/containers/registries.conf",`, ``},
		"invalid JSON":         {`"mode":`, `"mode":+`},
		"control character":    {`"path":"/etc/containers/registries.conf"`, "\"path\":\"/etc/containers/registries.conf\x01\""},
		"invalid UTF-8":        {`base64,`, "base64,\xff"},
		"config a string":      {`"config":{`, `"config":"x","x":{`},
		"config null":          {`"config":{`, `"config":null,"x":{`},
	}
	for name, e := range edits {
		t.Run(name, func(t *testing.T) {
			raw := servedRaw(nil, func(b []byte) []byte {
				require.True(t, bytes.Contains(b, []byte(e[0])), "edit %q applies", e[0])
				return bytes.Replace(b, []byte(e[0]), []byte(e[1]), 1)
			})
			checkStreamed(t, raw)
		})
	}
}

// FuzzStreamedEmbedded mutates the embedded MachineConfig's bytes: the streamed check and the whole
// decode must judge every payload alike.
func FuzzStreamedEmbedded(f *testing.F) {
	base, err := diff.FileContents(contentFile(served(nil)))
	require.NoError(f, err)
	f.Add(0, []byte{})
	f.Add(bytes.Index(base, []byte(`"source"`))+2, []byte("S"))
	f.Add(bytes.Index(base, []byte(`"mode"`))+7, []byte("4"))
	f.Add(bytes.Index(base, []byte(`base64,`))+7, []byte(`\u0041`))
	f.Fuzz(func(t *testing.T, at int, insert []byte) {
		raw := servedRaw(nil, func(b []byte) []byte {
			at := min(max(at, 0), len(b))
			return append(append(append([]byte{}, b[:at]...), insert...), b[at:]...)
		})
		checkStreamed(t, raw)
	})
}

func contentFile(c *fixture.Config) types.File {
	var raw struct{ Storage struct{ Files []types.File } }
	if err := json.Unmarshal(c.JSON(), &raw); err != nil {
		panic(err)
	}
	for _, f := range raw.Storage.Files {
		if f.Path == diff.MachineConfigContentPath {
			return f
		}
	}
	panic("no content file")
}

// The real served payloads are settled by the walk, every embedded file's source in a placeholder,
// and judged as the whole decode judges them.
func TestStreamedRealServedPayloads(t *testing.T) {
	for _, f := range realPayloads(t) {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		p, err := diff.Decode(raw)
		require.NoError(t, err, f)
		streamed, n := diff.Streamed(p, diff.MachineConfigContentPath)
		assert.True(t, streamed, f)
		assert.Greater(t, n, 10, f)
		assert.Equal(t, diff.CheckEmbeddedWhole(p), diff.CheckEmbedded(p), f)
	}
}
