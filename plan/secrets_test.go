package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary round 12 (units/01, 02): with the built-in policy, the built-in iri-registry.service
// unit rule's payload unit may not copy, print or test the node's secrets: the plan (which the dry
// run and the real run share) refuses naming the unit, the line, the path and "a secret of the
// node"; the same unit running an ordinary command stays eligible.
func TestBuiltinUnitRuleNamesNoSecret(t *testing.T) {
	text := func(exec string) *string {
		s := "[Unit]\nDescription=x\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=" + exec + "\n[Install]\nWantedBy=default.target\n"
		return &s
	}
	add := func(exec string) *fixture.Config {
		return withUnits(types.Unit{Name: "iri-registry.service", Enabled: boolp(true), Contents: text(exec)})
	}
	for exec, path := range map[string]string{
		`/bin/sh -c "cat /etc/shadow > /tmp/iri-shadow-copy"`:          "/etc/shadow",
		`/bin/grep -q ^ro[a-m] /etc/shadow`:                            "/etc/shadow",
		`/bin/cat /var/lib/kubelet/pki/kubelet-client-current.pem`:     "/var/lib/kubelet/pki",
		`/bin/sh -c "cp /var/lib/kubelet/kubeconfig /tmp/k"`:           "/var/lib/kubelet/kubeconfig",
		`/bin/sh -c "head -c 100 /etc/kubernetes/kubeconfig > /tmp/b"`: "/etc/kubernetes/kubeconfig",
		`/bin/sh -c "cat /var/lib/kubelet/config.json > /var/tmp/p"`:   "/var/lib/kubelet/config.json",
		`/bin/sh -c 'cd /etc && cat sha*'`:                             "/etc/sha*",
	} {
		p := ndpBuild(t, "", plain(), add(exec))
		require.False(t, p.Eligible, exec)
		require.NotEmpty(t, p.Refused, exec)
		r := p.Refused[0].Reason
		assert.Contains(t, r, "unit iri-registry.service: ExecStart=", exec)
		assert.Contains(t, r, path, exec)
		assert.Contains(t, r, "a secret of the node", exec)
	}
	p := ndpBuild(t, "", plain(), add(`/bin/sh -c "cat /etc/os-release > /tmp/iri-os"`))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
