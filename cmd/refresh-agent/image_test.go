package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The DaemonSet pins the image `make image` builds and `make push` pushes (docs/operations.md says
// how to build, push and pin another), and the recipe `oc exec ds/refresh-agent -- refresh-agent
// recover` works in its pod: the binary on the image's PATH, the host's root as every command's
// default --root.
func TestImageReferenceIsTheMakefiles(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/base/daemonset.yaml")
	require.NoError(t, err)
	var ds appsv1.DaemonSet
	require.NoError(t, yaml.Unmarshal(raw, &ds))
	c := ds.Spec.Template.Spec.Containers[0]

	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^IMAGE\s*\?=\s*(\S+)`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile's IMAGE")
	assert.Equal(t, string(m[1]), c.Image, "the DaemonSet pins what `make image` builds")
	assert.Regexp(t, `(?m)^image:\n\t\$\(CONTAINER\) build .*-t \$\(IMAGE\) \.$`, string(mk))
	assert.Regexp(t, `(?m)^push:\n(\t.*\n)*\t\$\(CONTAINER\) push .*\$\(IMAGE\)`, string(mk))

	df, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	last := string(df[strings.LastIndex(string(df), "\nFROM "):])
	assert.Contains(t, last, "FROM scratch")
	assert.Contains(t, last, "COPY --from=build /out/refresh-agent /usr/bin/refresh-agent")
	assert.Regexp(t, `(?m)^ENV PATH=(\S*:)?/usr/bin(:\S*)?$`, last, "refresh-agent on the default image's PATH")

	root := ""
	for _, e := range c.Env {
		if e.Name == EnvRoot {
			root = e.Value
		}
	}
	assert.Equal(t, "/host", root, "$%s in the pod", EnvRoot)
	assert.Contains(t, c.Args, "--root="+root)
	mounted := false
	for _, v := range c.VolumeMounts {
		mounted = mounted || v.MountPath == root && v.Name == "host-root"
	}
	assert.True(t, mounted, "the host's root is mounted at %s", root)

	t.Setenv(EnvRoot, t.TempDir())
	code, out, stderr := cli("recover", "--systemd", "none", "--cri-socket", "none")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, `"found": false`, "recover with no flags acts on $%s", EnvRoot)
}
