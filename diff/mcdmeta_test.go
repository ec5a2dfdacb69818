package diff_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Issue 27, class 8: the machine-config daemon decodes its record (/etc/mcd-currentconfig.json) with
// encoding/json into mcfgv1.MachineConfig, whose metadata is Kubernetes' ObjectMeta. A MachineConfig
// (the payload itself, in JSON or YAML, or the server's embedded content file) whose metadata that
// type cannot hold is invalid at decode, naming the field, so diff, publish, the dry run and the
// real run refuse it alike and no baseline the daemon cannot read is ever written.
func TestMachineConfigMetadataDecodesAsTheDaemonReadsIt(t *testing.T) {
	bad := map[string]string{
		"generation bool":           `"generation":true`,
		"generation string":         `"generation":"7"`,
		"generation fraction":       `"generation":1.5`,
		"generation beyond int64":   `"generation":99999999999999999999999`,
		"generation exponent":       `"generation":1e+23`,
		"labels value not a string": `"labels":{"a":1}`,
		"labels not a map":          `"labels":"x"`,
		"annotations value bool":    `"annotations":{"a":true}`,
		"creationTimestamp number":  `"creationTimestamp":5`,
		"creationTimestamp garbage": `"creationTimestamp":"yesterday"`,
		"uid number":                `"uid":5`,
		"ownerReferences string":    `"ownerReferences":"x"`,
		"finalizers map":            `"finalizers":{"a":"b"}`,
		"name number":               `"name":12345`,
	}
	withMeta := func(meta string) []byte {
		mc := fixture.MachineConfigJSON(fixture.DefaultMachine(), served(nil).JSON())
		i := bytes.Index(mc, []byte(`"metadata":{`))
		require.GreaterOrEqual(t, i, 0, "the fixture's MachineConfig has metadata: %.200s", mc)
		at := i + len(`"metadata":{`)
		return append(append(append([]byte{}, mc[:at]...), meta+","...), mc[at:]...)
	}
	for name, meta := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := diff.Decode(withMeta(meta))
			require.Error(t, err, "a MachineConfig payload with %s", meta)
			assert.Contains(t, err.Error(), "metadata", "the error names the field")

			embedded := servedRaw(nil, func(mc []byte) []byte {
				i := bytes.Index(mc, []byte(`"metadata":{`))
				require.GreaterOrEqual(t, i, 0)
				at := i + len(`"metadata":{`)
				return append(append(append([]byte{}, mc[:at]...), meta+","...), mc[at:]...)
			})
			_, err = diff.Decode(embedded)
			require.Error(t, err, "an embedded content MachineConfig with %s", meta)
			assert.Contains(t, err.Error(), diff.MachineConfigContentPath)
		})
	}
	// What the daemon decodes stays valid: real metadata, as the server and the API write it.
	good := `"generation":3,"labels":{"machineconfiguration.openshift.io/role":"worker"},` +
		`"annotations":{"machineconfiguration.openshift.io/generated-by-controller-version":"abc"},` +
		`"creationTimestamp":"2026-01-02T03:04:05Z","uid":"0d9b7c1e-aaaa-bbbb-cccc-0123456789ab",` +
		`"ownerReferences":[{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfigPool","name":"worker","uid":"u"}]`
	p, err := diff.Decode(withMeta(good))
	require.NoError(t, err)
	rec, err := p.MachineConfigJSON()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(bytes.TrimSpace(rec)), "{"))
	_, err = diff.Decode(servedRaw(nil, func(mc []byte) []byte {
		i := bytes.Index(mc, []byte(`"metadata":{`))
		at := i + len(`"metadata":{`)
		return append(append(append([]byte{}, mc[:at]...), good+","...), mc[at:]...)
	}))
	require.NoError(t, err)
}

// The same holds for a MachineConfig given in YAML: the conversion to JSON must not turn a value
// the daemon cannot hold into one it can, or the reverse.
func TestYAMLMachineConfigMetadataDecodesAsTheDaemonReadsIt(t *testing.T) {
	doc := func(gen string) []byte {
		return []byte("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: rendered-worker\n  generation: " + gen +
			"\nspec:\n  osImageURL: q@sha256:aa\n  config:\n    ignition: {version: 3.2.0}\n")
	}
	for _, gen := range []string{"true", `"7"`, "1.5", "99999999999999999999999", "-1e400", "{a: 1}"} {
		_, err := diff.Decode(doc(gen))
		require.Error(t, err, "generation: %s", gen)
		assert.Contains(t, err.Error(), "generation", "generation: %s", gen)
	}
	_, err := diff.Decode(doc("5"))
	require.NoError(t, err)
}
