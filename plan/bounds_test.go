package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

func planOf(t *testing.T, cur, des *fixture.Config) *plan.Plan {
	t.Helper()
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: allowlist.Default()})
	require.NoError(t, err)
	return p
}

// What the plan says is what a run can do (adversarial run): an owner id the kernel would
// truncate, and a file that is also the parent directory of another, are refused.
func TestPlanPromisesOnlyWhatARunCanDo(t *testing.T) {
	cur := fixture.Ignition("3.2.0")
	for _, id := range []int{-1, 1<<32 + 1000, 1<<32 - 1} {
		des := fixture.Ignition("3.2.0").File("/var/lib/kubelet/config.json", []byte("{}"), 0o600)
		des.Storage.Files[0].User.ID = &id
		p := planOf(t, cur, des)
		assert.False(t, p.Eligible, id)
		require.NotEmpty(t, p.Refused)
		assert.Contains(t, p.Refused[0].Reason, "out of range")
	}
	ok := 1<<32 - 2
	des := fixture.Ignition("3.2.0").File("/etc/myapp/a.conf", []byte("{}"), 0o600)
	des.Storage.Files[0].Group.ID = &ok
	pol, err := allowlist.ParsePolicy([]byte("paths:\n- {path: /etc/myapp/a.conf, action: None, owner: \"0:4294967294\"}\n"))
	require.NoError(t, err)
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol})
	require.NoError(t, err)
	assert.True(t, p.Eligible, "%+v", p.Refused)

	nested := fixture.Ignition("3.2.0").File("/etc/docker/certs.d/a", []byte("x"), 0o644).
		File("/etc/docker/certs.d/a/ca.crt", []byte("y"), 0o644)
	p = planOf(t, cur, nested)
	assert.False(t, p.Eligible)
	require.Len(t, p.Refused, 1)
	assert.Equal(t, "/etc/docker/certs.d/a/ca.crt", p.Refused[0].Path)
	assert.Contains(t, p.Refused[0].Reason, "parent /etc/docker/certs.d/a is also a file")
}
