package apply_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Issue 27, class 4, on the node: an owner the plan cannot compare (a name against an id) is
// resolved through the node's /etc/passwd and /etc/group and refused outside the ceiling; the dry
// run refuses what the real run refuses, and shows the ceilings of every write.
func TestOwnerCeilingResolvedOnTheNode(t *testing.T) {
	const app = "/etc/myapp/app.conf"
	policy := func(owner string) *allowlist.Policy {
		pol, err := allowlist.ParsePolicy([]byte("paths:\n- {path: " + app + ", action: None, mode: \"0640\", owner: \"" + owner + "\"}\n" +
			"- {path: /etc/containers/registries.conf, action: None}\n- {path: /var/lib/kubelet/config.json, action: None}\n"))
		require.NoError(t, err)
		return pol
	}
	byID := func(id int) *fixture.Config {
		c := v1().File(app, []byte("x"), 0o640)
		for i := range c.Storage.Files {
			if c.Storage.Files[i].Path == app {
				c.Storage.Files[i].User.ID, c.Storage.Files[i].Group.ID = &id, &id
			}
		}
		return c
	}
	cases := []struct {
		name, owner string
		des         *fixture.Config
		want        api.Outcome
	}{
		{"id 1000 for core:core", "core:core", byID(1000), api.OutcomeApplied},
		{"core by name for 1000:1000", "1000:1000", v1().File(app, []byte("x"), 0o640).Owner(app, "core", "core"), api.OutcomeApplied},
		{"core by name for 1001:1001", "1001:1001", v1().File(app, []byte("x"), 0o640).Owner(app, "core", "core"), api.OutcomeRefused},
		{"id 1000 for 1001:core", "1001:core", byID(1000), api.OutcomeRefused},
		{"root for core:core", "core:core", v1().File(app, []byte("x"), 0o600), api.OutcomeApplied},
		// Names the node does not have: the payload's is refused naming it; a policy owner the node
		// lacks does not refuse a root-owned file (root is always within).
		{"ghost by name for core:core", "core:core", v1().File(app, []byte("x"), 0o640).Owner(app, "ghost", "ghost"), api.OutcomeRefused},
		{"core with group ghost for core:core", "core:core", v1().File(app, []byte("x"), 0o640).Owner(app, "core", "ghost"), api.OutcomeRefused},
		{"root for ghost:ghost", "ghost:ghost", v1().File(app, []byte("x"), 0o600), api.OutcomeApplied},
		{"id 1000 for ghost:ghost", "ghost:ghost", byID(1000), api.OutcomeRefused},
		{"ghost by name for 1001:1001", "1001:1001", v1().File(app, []byte("x"), 0o640).Owner(app, "ghost", "ghost"), api.OutcomeRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			n.Policy = policy(tc.owner)
			for _, dry := range []bool{true, false} {
				res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: tc.des.JSON(), Hash: "h", DryRun: dry})
				require.NoError(t, err)
				want := tc.want
				if dry && want == api.OutcomeApplied {
					want = api.OutcomePlanned
				}
				require.Equal(t, want, res.Outcome, "dry run %v: %s", dry, res.Reason)
				if want == api.OutcomeRefused {
					why := "the node policy's owner " + tc.owner
					if tc.name == "ghost by name for 1001:1001" {
						why = "user ghost: no such user or group on the node" // the payload's own owner
					}
					assert.Contains(t, res.Reason, why)
					assert.Contains(t, res.Reason, app)
					continue
				}
				if dry {
					found := false
					for _, w := range res.Writes {
						if w.Path == app {
							found = true
							assert.Equal(t, "0640", w.ModeCeiling)
							assert.Equal(t, tc.owner, w.OwnerCeiling)
						}
					}
					assert.True(t, found, "%+v", res.Writes)
				}
			}
		})
	}
}
