package allowlist_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/mcdref"
)

// steps words a decision's effects as the MCO's action list would read.
func steps(d allowlist.Decision) []string {
	var out []string
	if d.Special {
		return []string{"Special"}
	}
	if d.DaemonReload {
		out = append(out, "DaemonReload")
	}
	if d.Steps == nil {
		for _, u := range d.Services {
			out = append(out, string(d.Action)+" "+u)
		}
	}
	for _, s := range d.Steps {
		out = append(out, string(s.Action)+" "+s.Unit)
	}
	return out
}

func mcoSteps(actions []mcdref.Action) []string {
	var out []string
	for _, a := range actions {
		switch {
		case a.Type == "None":
		case a.Reload != nil:
			out = append(out, "Reload "+a.Reload.ServiceName)
		case a.Restart != nil:
			out = append(out, "Restart "+a.Restart.ServiceName)
		default:
			out = append(out, a.Type)
		}
	}
	return out
}

// TestMCODefaults: every rule of the MCO's default NodeDisruptionPolicy (as transcribed in mcdref,
// from the MCO's source) applies in the built-in policy with the same actions, to the path and to
// what lies below it, unless the project says why not.
func TestMCODefaults(t *testing.T) {
	pol := allowlist.Default()
	for _, f := range mcdref.Defaults().Files {
		if why := allowlist.MCODefaultNotApplied(f.Path); why != "" {
			assert.False(t, pol.Resolve(f.Path, nil).Allowed, f.Path)
			continue
		}
		for _, p := range []string{f.Path, f.Path + "/sub/x.conf"} {
			d := pol.Resolve(p, nil)
			if p != f.Path && f.Path == allowlist.Registries {
				// Special judges the file's TOML; below a file, nothing can exist.
				continue
			}
			if _, denied := allowlist.Denied(f.Path + "/"); denied && p != f.Path {
				assert.False(t, d.Allowed, "%s: below an exception to a denied prefix", p)
				continue
			}
			require.True(t, d.Allowed, "%s: %s", p, d.Reason)
			assert.Equal(t, mcoSteps(f.Actions), steps(d), p)
		}
	}
	for _, u := range mcdref.Defaults().Units {
		r, ok := pol.UnitRule(u.Name)
		require.True(t, ok, u.Name)
		assert.Equal(t, mcoSteps(u.Actions), steps(allowlist.Decision{Effects: r.Effects}), u.Name)
	}
	assert.True(t, pol.CoreSSHKeys)
	assert.False(t, pol.SSHKey.Drain || pol.SSHKey.Reboot || pol.SSHKey.DaemonReload || len(pol.SSHKey.Steps) > 0, "sshkey: None")
}

// The MCO's status (clusterPolicies) as `oc get machineconfiguration cluster -o yaml` shows it with
// no user rules loads as a node policy, and decides as the built-in one: its one rule under a
// denied prefix is skipped, not an error.
func TestMCOStatusLoads(t *testing.T) {
	status, err := json.Marshal(map[string]any{"clusterPolicies": mcdref.Defaults()})
	require.NoError(t, err)
	pol, err := allowlist.ParsePolicy(status)
	require.NoError(t, err)
	def := allowlist.Default()
	for _, f := range mcdref.Defaults().Files {
		for _, p := range []string{f.Path, f.Path + "/x"} {
			if p != f.Path && f.Path == allowlist.Registries {
				continue // see TestMCODefaults
			}
			a, b := pol.Resolve(p, nil), def.Resolve(p, nil)
			assert.Equal(t, b.Allowed, a.Allowed, p)
			assert.Equal(t, steps(b), steps(a), p)
		}
	}
	_, err = allowlist.ParsePolicy([]byte("files:\n- path: /usr/local/bin/load-registry-image.sh\n  actions: [{type: None}]\n"))
	assert.ErrorContains(t, err, "denied prefix /usr", "a user's rule there is still an error")
}
