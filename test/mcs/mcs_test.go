package mcs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/mcs"
)

// The generator's output has the served shape: Ignition 3.2.0, every server-added file and the
// three metadata files, and the ConfigMap's base64+gzip encoding.
func TestServedShape(t *testing.T) {
	pool := mcs.Base()
	pool.CloudCA = []byte("ca")
	pool.RegistryCAs = map[string][]byte{"quay.io": []byte("ca")}
	p, form, err := diff.DecodeForm(mcs.ConfigMapValue(pool.Served()))
	require.NoError(t, err)
	assert.Equal(t, diff.Form("base64+gzip+ignition"), form)
	paths := map[string]bool{}
	for _, f := range p.Config.Storage.Files {
		paths[f.Path] = true
	}
	for _, want := range []string{mcs.KubeletCA, mcs.CloudCA, mcs.CertsD + "/quay.io/ca.crt", mcs.Kubeconfig,
		mcs.NodeAnnotations, mcs.MCContent, mcs.MCEncapsulated, mcs.PullSecret, mcs.HAProxyCfg} {
		assert.True(t, paths[want], want)
	}
	require.Len(t, p.Machine, 2, "both embedded MachineConfigs are read")
	assert.Equal(t, pool.OSImageURL, p.Machine[0].OSImageURL)
	// The MachineConfig alone lacks what the server adds.
	mc, err := diff.Decode(pool.MachineConfig())
	require.NoError(t, err)
	for _, f := range mc.Config.Storage.Files {
		assert.NotEqual(t, mcs.KubeletCA, f.Path)
		assert.NotEqual(t, mcs.Kubeconfig, f.Path)
	}
}
