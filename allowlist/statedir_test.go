package allowlist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent's state dir, wherever --state-dir puts it, is refused to every rule and ceiling: what
// lies in it, and its ancestors (a file there takes its place); not its siblings.
func TestStateDirIsRefusedToEveryRuleAndCeiling(t *testing.T) {
	wide, err := ParsePolicy([]byte("paths:\n  - {path: /etc/myapp/app.conf, action: None}\n" +
		"configMapCeiling:\n  - {prefix: /etc/, actions: [None]}\n  - {prefix: /var/, actions: [None]}\n"))
	require.NoError(t, err)
	pol, err := wide.WithStateDir("/var/lib/ra-state")
	require.NoError(t, err)
	extra, warnings := pol.Extra([]Rule{
		{Path: "/var/lib/ra-state/journal.json", Action: ActionNone},
		{Path: "/var/lib/ra-state/", Action: ActionNone},
		{Path: "/var/lib/ra-state", Action: ActionNone},
		{Path: "/var/lib", Action: ActionNone},
		{Path: "/var/lib/ra-state-x", Action: ActionNone},
		{Path: "/var/lib/other/", Action: ActionNone},
		{Path: "/var/", Action: ActionNone},
	})
	assert.Len(t, warnings, 4, "the entries in the state dir or at its place are ignored: %v", warnings)
	for _, p := range []string{"/var/lib/ra-state", "/var/lib/ra-state/journal.json", "/var/lib/ra-state/payloads/x", "/var/lib/ra-state/current.json", "/var/lib", "/var"} {
		d := pol.Resolve(p, extra)
		assert.False(t, d.Allowed, p)
		assert.Contains(t, d.Reason, "agent's state dir /var/lib/ra-state", p)
		assert.Error(t, pol.MayWrite(p), p, "recovery must not act on a journal naming it")
	}
	for _, p := range []string{"/var/lib/ra-state-x", "/var/lib/other/a", "/var/lib/ra-stat", "/etc/myapp/app.conf"} {
		assert.True(t, pol.Resolve(p, extra).Allowed, p)
		assert.NoError(t, pol.MayWrite(p), p)
	}
	// The policy it came from is unchanged.
	assert.True(t, wide.Resolve("/var/lib/ra-state/journal.json", []Rule{{Path: "/var/lib/ra-state/journal.json", Action: ActionNone}}).Allowed)

	// A node policy rule or ceiling prefix that reaches the state dir is an error naming it.
	for _, doc := range []string{
		"paths:\n  - {path: /var/lib/ra-state/journal.json, action: None}\n",
		"paths:\n  - {path: /var/lib/ra-state/, action: None}\n",
		"paths:\n  - {path: /var/lib, action: None}\n",
		"paths:\n  - {path: /var/lib/ra-state, action: None}\n",
		"configMapCeiling:\n  - {prefix: /var/lib/ra-state/, actions: [None]}\n",
		"configMapCeiling:\n  - {prefix: /var/lib/ra-state/payloads, actions: [None]}\n",
	} {
		p, err := ParsePolicy([]byte(doc))
		require.NoError(t, err, doc)
		_, err = p.WithStateDir("/var/lib/ra-state")
		assert.ErrorContains(t, err, "the agent's state dir /var/lib/ra-state", doc)
	}
	// A prefix rule above it covers it.
	p, err := ParsePolicy([]byte("paths:\n  - {path: /var/lib/myapp/, action: None}\n"))
	require.NoError(t, err)
	_, err = p.WithStateDir("/var/lib/myapp/ra")
	assert.ErrorContains(t, err, "node policy rule 0 (/var/lib/myapp/) reaches the agent's state dir /var/lib/myapp/ra")
	_, err = p.WithStateDir("/var/lib/myapp2/ra")
	assert.NoError(t, err)
	_, err = Default().WithStateDir("var/lib/x")
	assert.ErrorContains(t, err, "not an absolute clean path")
	_, err = Default().WithStateDir("/var/lib/../x")
	assert.Error(t, err)
}
