package diff_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// attackPayload is the adversary's desired payload: the outer config changes only the pull secret
// (in the embedded copies too), while the embedded MachineConfig at path carries, in its spec.config
// (an Ignition 3.3.0 config), Ignition's own kernelArguments. encode re-encodes that metadata file.
func attackPayload(path string, kargs types.KernelArguments, encode func(*types.File, []byte)) *fixture.Config {
	secret := []byte(`{"auths":{"evil.example":{}}}`)
	c := served(func(c *fixture.Config) { c.File("/var/lib/kubelet/config.json", secret, 0o600) })
	c.File("/var/lib/kubelet/config.json", secret, 0o600)
	inner := fixture.Ignition("3.3.0")
	if path == diff.MachineConfigContentPath {
		inner = innerOf(c)
	}
	inner.Ignition.Version = "3.3.0"
	inner.KernelArguments = kargs
	mc := fixture.MachineConfigJSON(fixture.DefaultMachine(), inner.JSON())
	for i := range c.Storage.Files {
		if c.Storage.Files[i].Path == path {
			encode(&c.Storage.Files[i], mc)
		}
	}
	return c
}

// innerOf returns the rendered config a served payload's content file embeds.
func innerOf(c *fixture.Config) *fixture.Config {
	inner := c.Clone()
	var files []types.File
	for _, f := range inner.Storage.Files {
		switch {
		case diff.IsMetadataPath(f.Path), strings.HasPrefix(f.Path, "/etc/docker/certs.d/"),
			f.Path == "/etc/kubernetes/kubeconfig", f.Path == "/etc/kubernetes/kubelet-ca.crt":
		default:
			files = append(files, f)
		}
	}
	inner.Storage.Files = files
	return inner
}

// The embedded copies' Ignition kernelArguments are checked as the outer config's are: a payload that
// sets them only there (shouldExist or shouldNotExist, in either metadata file, however its contents
// are encoded) disagrees with the outer config, on the streamed path and the whole decode alike, and
// the planner refuses it.
func TestEmbeddedIgnitionKernelArguments(t *testing.T) {
	kargs := map[string]types.KernelArguments{
		"shouldExist":    {ShouldExist: []types.KernelArgument{"mitigations=off", "init=/bin/sh"}},
		"shouldNotExist": {ShouldNotExist: []types.KernelArgument{"mitigations=auto"}},
		"both":           {ShouldExist: []types.KernelArgument{"init=/bin/sh"}, ShouldNotExist: []types.KernelArgument{"quiet"}},
	}
	encodings := map[string]func(*types.File, []byte){
		"plain": func(f *types.File, b []byte) {
			f.Contents.Source, f.Contents.Compression = ptr(fixture.MCSDataURL(b)), nil
		},
		"gzip": func(f *types.File, b []byte) {
			f.Contents.Source, f.Contents.Compression = ptr("data:;base64,"+base64.StdEncoding.EncodeToString(fixture.Gzip(b))), ptr("gzip")
		},
		"base64": func(f *types.File, b []byte) {
			f.Contents.Source, f.Contents.Compression = ptr("data:application/json;base64,"+base64.StdEncoding.EncodeToString(b)), nil
		},
	}
	cur := decode(t, served(nil).JSON())
	require.Empty(t, diff.CheckEmbedded(cur))
	for _, path := range []string{diff.MachineConfigContentPath, diff.MachineConfigEncapsulatedPath} {
		for kn, k := range kargs {
			for en, enc := range encodings {
				for _, wire := range []string{"json", "gzip+base64"} {
					t.Run(path+"/"+kn+"/"+en+"/"+wire, func(t *testing.T) {
						raw := attackPayload(path, k, enc).JSON()
						if wire != "json" {
							raw = fixture.GzipBase64(raw)
						}
						des := decode(t, raw)
						why := diff.CheckEmbedded(des)
						assert.Contains(t, why, "embedded MachineConfig "+path)
						assert.Contains(t, why, "kernelArguments")
						assert.Equal(t, why, diff.CheckEmbeddedWhole(des), "streamed and whole decode agree")
					})
				}
			}
		}
	}
	// Control: the same payload without the kernel arguments agrees (only the pull secret changed).
	for _, path := range []string{diff.MachineConfigContentPath, diff.MachineConfigEncapsulatedPath} {
		des := decode(t, attackPayload(path, types.KernelArguments{}, encodings["gzip"]).JSON())
		assert.Empty(t, diff.CheckEmbedded(des), path)
		assert.Empty(t, diff.CheckEmbeddedWhole(des), path)
	}
	// Kernel arguments the outer config carries too agree; they are diffed current against desired.
	withK := func(c *fixture.Config) { c.KernelArguments = kargs["shouldExist"] }
	both := served(withK)
	withK(both)
	both.Ignition.Version = "3.3.0" // kernelArguments are Ignition 3.3.0's
	enc := fixture.Ignition("3.3.0")
	withK(enc)
	both.File(diff.MachineConfigEncapsulatedPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), enc.JSON()), 0o644)
	assert.Empty(t, diff.CheckEmbedded(decode(t, both.JSON())))
}
