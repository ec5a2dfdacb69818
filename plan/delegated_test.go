package plan_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

func TestDelegatedFileIsListedNotWrittenNotRefused(t *testing.T) {
	des := base().File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600).File(registries, []byte("# new mirrors"), 0o644)
	c, err := diff.Decode(base().JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Delegated: map[string]string{pullSecret: "owned by the syncer"}})
	require.NoError(t, err)
	require.True(t, p.Eligible)
	require.Len(t, p.Files, 1, "only the registries file is written")
	assert.Equal(t, registries, p.Files[0].Path)
	var delegated *plan.Change
	for i := range p.Changes {
		if p.Changes[i].Path == pullSecret {
			delegated = &p.Changes[i]
		}
	}
	require.NotNil(t, delegated, "the change is listed")
	assert.True(t, delegated.Delegated)
	assert.Equal(t, plan.ActionDelegated, delegated.Action)
	assert.Equal(t, "owned by the syncer", delegated.Reason)
	out, err := json.Marshal(delegated)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"delegated":true`)
	assert.NotContains(t, string(out), "auths", "never contents")

	// Delegating a path the policy would refuse makes it neither refused nor written.
	only := base().File("/etc/not-allowed.conf", []byte("x"), 0o644)
	d, err = diff.Decode(only.JSON())
	require.NoError(t, err)
	p, err = plan.Build(plan.Inputs{Current: c, Desired: d, Delegated: map[string]string{"/etc/not-allowed.conf": "someone else's"}})
	require.NoError(t, err)
	assert.True(t, p.Eligible)
	assert.Empty(t, p.Files)
}
