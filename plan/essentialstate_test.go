package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary r16 c/06: a job's side-effect stop of kubelet.service was refused ("which keeps the node
// running"), but the payload dropping kubelet.service planned its Stop and Disable directly, mask:
// true its Mask, enabled: false its Disable; crio.service the same. A refresh never stops, disables
// or masks what keeps the node running, whatever asks; a unit of the policy's own stays free to.
func TestARefreshNeverStopsDisablesOrMasksAnEssential(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte(`nodeDisruptionPolicy:
  units:
  - name: kubelet.service
    actions: [{type: Restart, restart: {serviceName: kubelet.service}}]
  - name: crio.service
    actions: [{type: Restart, restart: {serviceName: crio.service}}]
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
`))
	require.NoError(t, err)
	unit := func(name string) types.Unit {
		return types.Unit{Name: name, Enabled: ptrTo(true), Contents: ptrTo("[Service]\nExecStart=/usr/bin/" + strings.TrimSuffix(name, ".service") + "\n[Install]\nWantedBy=multi-user.target\n")}
	}
	with := func(us ...types.Unit) *fixture.Config {
		c := fixture.Ignition("3.2.0")
		c.Systemd.Units = us
		return c
	}
	for _, name := range []string{"kubelet.service", "crio.service"} {
		u := unit(name)
		masked, disabled := u, u
		masked.Mask, masked.Contents, masked.Enabled = ptrTo(true), nil, nil
		disabled.Enabled = ptrTo(false)
		for what, des := range map[string]*fixture.Config{"removed": with(), "masked": with(masked), "disabled": with(disabled)} {
			p := buildWith(t, pol, nil, with(u), des)
			assert.False(t, p.Eligible, "%s %s", name, what)
			if assert.NotEmpty(t, p.Refused, "%s %s", name, what) {
				assert.Contains(t, p.Refused[0].Reason, "unit "+name+": a refresh never runs ")
				assert.Contains(t, p.Refused[0].Reason, "keeps the node running")
			}
			assert.Empty(t, p.Actions, "%s %s", name, what)
		}
	}
	p := buildWith(t, pol, nil, with(unit("myapp.service")), with())
	assert.True(t, p.Eligible, "%v", p.Refused)
}
