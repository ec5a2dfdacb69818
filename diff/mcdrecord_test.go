package diff_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// The daemon's record with a bare payload's config as its spec.config (adversary r13 a/01): the
// config as the decode read it, every other member of the record byte for byte.
func TestMCDRecordWithABareConfig(t *testing.T) {
	cfg := fixture.Ignition("3.2.0").File("/var/lib/kubelet/config.json", []byte(`{"auths":{"new":{}}}`), 0o600).JSON()
	y, err := yaml.JSONToYAML(cfg)
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(cfg)
	require.NoError(t, zw.Close())
	for name, raw := range map[string][]byte{"json": cfg, "yaml": y, "gzip": gz.Bytes(), "padded": append(append([]byte(" \n"), cfg...), '\n')} {
		p, err := diff.Decode(raw)
		require.NoError(t, err, name)
		assert.JSONEq(t, string(cfg), string(p.IgnitionJSON()), name)
	}
	mcp, err := diff.Decode(fixture.MachineConfigJSON(fixture.DefaultMachine(), cfg))
	require.NoError(t, err)
	assert.Nil(t, mcp.IgnitionJSON(), "a MachineConfig payload's record is the payload")

	rec := []byte("{\n \"metadata\": {\"name\": \"rendered-worker\"},\n \"spec\": {\"osImageURL\": \"x\", \"config\" :  {\"ignition\": {\"version\": \"3.2.0\"}} , \"fips\": true}\n}\n")
	r, err := diff.ParseMCDRecord(rec)
	require.NoError(t, err)
	assert.Equal(t, "x", r.View.OSImageURL)
	assert.True(t, r.View.FIPS)
	out, err := r.With(cfg)
	require.NoError(t, err)
	want := `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata": {"name": "rendered-worker"},` +
		"\"spec\": {\"osImageURL\": \"x\", \"config\" :  " + string(cfg) + " , \"fips\": true}}"
	assert.Equal(t, want, string(out), "kind and apiVersion put first, the rest byte for byte")
	daemonRecord(t, out)

	typed := fixture.MachineConfigJSON(fixture.DefaultMachine(), nil)
	r, err = diff.ParseMCDRecord(typed)
	require.NoError(t, err)
	out, err = r.With(cfg)
	require.NoError(t, err)
	assert.Equal(t, string(bytes.Replace(typed, []byte(`{"ignition":{"version":"3.2.0"}}`), cfg, 1)), string(out))

	_, err = r.With(nil)
	assert.Error(t, err, "no config is no record")
}

func TestInvalidMCDRecords(t *testing.T) {
	for rec, want := range map[string]string{
		``:                         "not a JSON object",
		`kind: MachineConfig`:      "not a JSON object",
		`{"spec":{"config":{}}`:    "invalid JSON",
		`{"spec":{}}`:              "no spec.config",
		`{"spec":null}`:            "no spec.config",
		`{"spec":{"config":null}}`: "spec.config is not a JSON object",
		`{"spec":{"config":[]}}`:   "spec.config is not a JSON object",
		`{"kind":"MachineConfigPool","spec":{"config":{}}}`: `kind is "MachineConfigPool"`,
		`{"spec":{"config":{},"config":{}}}`:                "duplicate key",
		`{"Spec":{"config":{}}}`:                            "only in case",
		`{"spec":{"config":{},"kernelArguments":"a"}}`:      "kernelArguments",
	} {
		_, err := diff.ParseMCDRecord([]byte(rec))
		require.ErrorIs(t, err, diff.ErrInvalidMCDRecord, rec)
		assert.ErrorContains(t, err, want, rec)
	}
}
