package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 9 (units 06): the specifiers whose value is the instance, and systemd's unescaping of %I,
// %P, %J and %f (unit_name_unescape: '-' is '/', \xNN the byte).
func TestInstanceSpecifiers(t *testing.T) {
	for v, want := range map[string]bool{"%i": true, "x %I": true, "%n.ctr-id": true, "%N": true, "%f": true,
		"%%i": false, "%p": false, "%j": false, "%t/containers": false, "100%": false, "": false, "%%%i": true} {
		assert.Equal(t, want, allowlist.InstanceSpecifier(v), v)
	}
	const u = `podman-kube@etc-iri\x2dregistry-pod.yaml.service`
	for in, want := range map[string]string{"%I": "etc/iri-registry/pod.yaml", "%i": `etc-iri\x2dregistry-pod.yaml`,
		"%f": "/etc/iri-registry/pod.yaml", "%P": "podman/kube", "%p": "podman-kube", "%j": "kube", "%n": u} {
		assert.Equal(t, want, allowlist.ResolveSpecifiers(u, in), in)
	}
	assert.Equal(t, "/my/app", allowlist.ResolveSpecifiers("my-app.service", "%f"))
	tmpl, inst, ok := allowlist.Instance(u)
	assert.True(t, ok)
	assert.Equal(t, "podman-kube@.service", tmpl)
	assert.Equal(t, `etc-iri\x2dregistry-pod.yaml`, inst)
	_, _, ok = allowlist.Instance("podman-kube@.service")
	assert.False(t, ok, "a template is no instance")
	assert.Equal(t, `podman-kube@refresh\x2dagent-probe.service`, allowlist.InstanceProbe(u))
}
