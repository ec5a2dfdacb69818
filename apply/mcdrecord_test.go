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
)

// mcdMachineConfig is what the machine-config daemon reads from /etc/mcd-currentconfig.json
// (syncNodeHypershift: json.Unmarshal into mcfgv1.MachineConfig, then
// ParseAndConvertConfig(spec.config.raw)): the fields it uses, with their types.
type mcdMachineConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Config          json.RawMessage `json:"config"`
		OSImageURL      string          `json:"osImageURL"`
		KernelArguments []string        `json:"kernelArguments"`
		FIPS            bool            `json:"fips"`
		KernelType      string          `json:"kernelType"`
		Extensions      []string        `json:"extensions"`
	} `json:"spec"`
}

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
		var mc mcdMachineConfig
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

// withContentAs re-renders the payload's embedded content MachineConfig as YAML when asYAML.
func withContentAs(t *testing.T, raw []byte, asYAML bool) ([]byte, []byte) {
	t.Helper()
	var cfg types.Config
	require.NoError(t, json.Unmarshal(raw, &cfg))
	var content []byte
	for i, f := range cfg.Storage.Files {
		if f.Path != diff.MachineConfigContentPath {
			continue
		}
		u, err := dataurl.DecodeString(*f.Contents.Source)
		require.NoError(t, err)
		content = u.Data
		if asYAML {
			content, err = yaml.JSONToYAML(u.Data)
			require.NoError(t, err)
			src := dataurl.EncodeBytes(content)
			cfg.Storage.Files[i].Contents.Source = &src
		}
	}
	require.NotNil(t, content)
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	return out, content
}
