package apply_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	ignition "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vincent-petithory/dataurl"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Issue 27, class 8: a content MachineConfig given in YAML lands in the daemon's record as the JSON
// the daemon reads, with the same fields; JSON lands byte for byte.
func TestMCDRecordIsAlwaysJSON(t *testing.T) {
	for _, asYAML := range []bool{false, true} {
		n := newNode(t)
		mcd := filepath.Join(n.dir, "etc/mcd-currentconfig.json")
		require.NoError(t, os.WriteFile(mcd, []byte(`{"stale":true}`), 0o644))
		raw, content := withContentAs(t, v2().JSON(), asYAML)
		res := n.run(t, raw, "v2")
		require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
		got, err := os.ReadFile(mcd)
		require.NoError(t, err)
		var mc fixture.MCDRecord
		require.NoError(t, json.Unmarshal(got, &mc), "yaml %v: the record is JSON the daemon decodes: %s", asYAML, got)
		assert.Equal(t, "MachineConfig", mc.Kind)
		assert.Equal(t, "rendered-worker", mc.Metadata.Name)
		assert.NotEmpty(t, mc.Spec.OSImageURL)
		assert.Equal(t, []string{"systemd.unified_cgroup_hierarchy=1"}, mc.Spec.KernelArguments)
		cfg, rpt, err := ignition.Parse(mc.Spec.Config)
		require.NoError(t, err, "spec.config parses as Ignition: %s", rpt)
		assert.NotEmpty(t, cfg.Storage.Files)
		if !asYAML {
			assert.Equal(t, string(content), string(got), "JSON is copied byte for byte")
			continue
		}
		// The same MachineConfig as the YAML said.
		want, err := yaml.YAMLToJSON(content)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
}

// Issue 27, class 8 (round-4 adversary F5): a content MachineConfig without kind or apiVersion, in
// JSON or YAML, lands in the daemon's record with kind MachineConfig and apiVersion
// machineconfiguration.openshift.io/v1, its other fields as they were.
func TestMCDRecordFillsKindAndAPIVersion(t *testing.T) {
	for _, drop := range [][]string{{"kind"}, {"apiVersion"}, {"kind", "apiVersion"}} {
		for _, asYAML := range []bool{false, true} {
			n := newNode(t)
			mcd := filepath.Join(n.dir, "etc/mcd-currentconfig.json")
			require.NoError(t, os.WriteFile(mcd, []byte(`{"stale":true}`), 0o644))
			var content []byte
			raw := withContent(t, v2().JSON(), func(js []byte) []byte {
				var m map[string]any
				require.NoError(t, json.Unmarshal(js, &m))
				for _, k := range drop {
					delete(m, k)
				}
				out, err := json.Marshal(m)
				require.NoError(t, err)
				if asYAML {
					out, err = yaml.JSONToYAML(out)
					require.NoError(t, err)
				}
				content = out
				return out
			})
			res := n.run(t, raw, "v2")
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			got, err := os.ReadFile(mcd)
			require.NoError(t, err)
			var mc fixture.MCDRecord
			require.NoError(t, json.Unmarshal(got, &mc), "without %v, yaml %v: %s", drop, asYAML, got)
			assert.Equal(t, "MachineConfig", mc.Kind, "without %v, yaml %v", drop, asYAML)
			assert.Equal(t, "machineconfiguration.openshift.io/v1", mc.APIVersion, "without %v, yaml %v", drop, asYAML)
			_, rpt, err := ignition.Parse(mc.Spec.Config)
			require.NoError(t, err, "spec.config parses as Ignition: %s", rpt)
			var gotAll, wantAll map[string]any
			require.NoError(t, json.Unmarshal(got, &gotAll))
			require.NoError(t, yaml.Unmarshal(content, &wantAll))
			wantAll["kind"], wantAll["apiVersion"] = "MachineConfig", "machineconfiguration.openshift.io/v1"
			assert.Equal(t, wantAll, gotAll, "the other fields as they were")
		}
	}
}

// withContentAs re-renders the payload's embedded content MachineConfig as YAML when asYAML.
func withContentAs(t *testing.T, raw []byte, asYAML bool) ([]byte, []byte) {
	t.Helper()
	var content []byte
	out := withContent(t, raw, func(js []byte) []byte {
		content = js
		if asYAML {
			y, err := yaml.JSONToYAML(js)
			require.NoError(t, err)
			content = y
		}
		return content
	})
	return out, content
}

// withContent replaces the payload's embedded content MachineConfig by edit of it.
func withContent(t *testing.T, raw []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	var cfg types.Config
	require.NoError(t, json.Unmarshal(raw, &cfg))
	found := false
	for i, f := range cfg.Storage.Files {
		if f.Path != diff.MachineConfigContentPath {
			continue
		}
		u, err := dataurl.DecodeString(*f.Contents.Source)
		require.NoError(t, err)
		src := dataurl.EncodeBytes(edit(u.Data))
		cfg.Storage.Files[i].Contents.Source = &src
		found = true
	}
	require.True(t, found, "the payload embeds a content MachineConfig")
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	return out
}
