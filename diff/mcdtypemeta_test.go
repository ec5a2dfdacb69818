package diff_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	ignition "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// daemonRecord decodes a record as syncNodeHypershift does (encoding/json into mcfgv1.MachineConfig,
// then spec.config parsed as Ignition), keeping what a MachineConfig's TypeMeta and spec say; it
// fails on what the daemon's readers of a MachineConfig would not take as one.
func daemonRecord(t *testing.T, rec []byte) map[string]any {
	t.Helper()
	var mc fixture.MCDRecord
	require.NoError(t, json.Unmarshal(rec, &mc), "the record is JSON the daemon decodes: %.300s", rec)
	assert.Equal(t, "MachineConfig", mc.Kind, "kind: %.300s", rec)
	assert.Equal(t, "machineconfiguration.openshift.io/v1", mc.APIVersion, "apiVersion: %.300s", rec)
	assert.Equal(t, "rendered-worker", mc.Metadata.Name)
	_, rpt, err := ignition.Parse(mc.Spec.Config)
	require.NoError(t, err, "spec.config parses as Ignition: %s", rpt)
	// Each key once (a second kind or apiVersion would be the one encoding/json keeps).
	dec := json.NewDecoder(bytes.NewReader(rec))
	_, _ = dec.Token()
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		k := strings.ToLower(tok.(string))
		assert.False(t, seen[k], "key %q twice in the record", k)
		seen[k] = true
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	var all map[string]any
	require.NoError(t, json.Unmarshal(rec, &all))
	return all
}

// Issue 27, class 8 (round-4 adversary F5): a MachineConfig without kind or apiVersion (the payload
// itself or the embedded content file, JSON or YAML) is read by its spec, and the daemon's record
// always carries kind MachineConfig and apiVersion machineconfiguration.openshift.io/v1, every other
// field as it was; one that names them is written byte for byte; a wrong one is refused at decode.
func TestMCDRecordCarriesKindAndAPIVersion(t *testing.T) {
	full := fixture.MachineConfigJSON(fixture.DefaultMachine(), served(nil).JSON())
	var want map[string]any
	require.NoError(t, json.Unmarshal(full, &want))
	without := func(edit func(map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(full, &m))
		edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	inputs := map[string][]byte{
		"no kind":            without(func(m map[string]any) { delete(m, "kind") }),
		"no apiVersion":      without(func(m map[string]any) { delete(m, "apiVersion") }),
		"neither":            without(func(m map[string]any) { delete(m, "kind"); delete(m, "apiVersion") }),
		"empty kind":         without(func(m map[string]any) { m["kind"] = "" }),
		"null apiVersion":    without(func(m map[string]any) { m["apiVersion"] = nil }),
		"both empty":         without(func(m map[string]any) { m["kind"], m["apiVersion"] = "", "" }),
		"indented, no kind":  nil,
		"both, as the MCS":   full,
		"spec first, no api": []byte(`{"spec":` + string(mustField(t, full, "spec")) + `, "metadata":{"name":"rendered-worker"} ,"kind":"MachineConfig"}`),
	}
	var ind bytes.Buffer
	require.NoError(t, json.Indent(&ind, inputs["no kind"], "\n  ", "\t"))
	inputs["indented, no kind"] = append([]byte("\n "), ind.Bytes()...)
	for name, js := range inputs {
		y, err := yaml.JSONToYAML(js)
		require.NoError(t, err)
		for form, mc := range map[string][]byte{"json": js, "yaml": y} {
			for _, where := range []string{"payload", "embedded"} {
				t.Run(name+"/"+form+"/"+where, func(t *testing.T) {
					raw := mc
					if where == "embedded" {
						raw = servedRaw(nil, func([]byte) []byte { return mc })
					}
					p, err := diff.Decode(raw)
					require.NoError(t, err)
					rec, err := p.MachineConfigJSON()
					require.NoError(t, err)
					got := daemonRecord(t, rec)
					assert.Equal(t, want, got, "the record is the MachineConfig, with its kind and apiVersion")
					if name == "both, as the MCS" && form == "json" {
						assert.Equal(t, string(mc), string(rec), "a complete JSON MachineConfig is written byte for byte")
					}
				})
			}
		}
	}
	// A wrong one stays refused, at decode (diff, publish, the dry run and the real run alike).
	for name, js := range map[string][]byte{
		"kind lower case": without(func(m map[string]any) { m["kind"] = "machineconfig" }),
		"kind Pod":        without(func(m map[string]any) { m["kind"] = "Pod" }),
		"apiVersion v1":   without(func(m map[string]any) { m["apiVersion"] = "v1" }),
		"apiVersion beta": without(func(m map[string]any) { m["apiVersion"] = "machineconfiguration.openshift.io/v1beta1" }),
	} {
		_, err := diff.Decode(js)
		require.Error(t, err, name)
		_, err = diff.Decode(servedRaw(nil, func([]byte) []byte { return js }))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), diff.MachineConfigContentPath, name)
		assert.Regexp(t, `kind|apiVersion`, err.Error(), name)
	}
}

func mustField(t *testing.T, js []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js, &m))
	return m[key]
}
