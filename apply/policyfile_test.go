package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// The node policy file, when it lies inside the root, is never written by a refresh, whatever the
// ceiling and the ConfigMap ask (adversary r23 d/01: with an /etc/ ceiling, a ConfigMap entry for
// /etc/refresh-agent/policy.yaml rewrote the policy, and the next refresh wrote /etc/hosts and a
// trust anchor under the ConfigMap's own rules). The dry run and the real run refuse it the same
// way, nothing is written, and a file beside it under an entry's prefix still applies.
func TestTheNodePolicyFileIsNeverRefreshed(t *testing.T) {
	const polPath = "/etc/refresh-agent/policy.yaml"
	const polText = "configMapCeiling:\n- {prefix: /etc/, actions: [None]}\n"
	for _, tc := range []struct {
		name  string
		entry allowlist.Rule
	}{
		{"the file", allowlist.Rule{Path: polPath, Action: allowlist.ActionNone}},
		{"its directory's prefix", allowlist.Rule{Path: "/etc/refresh-agent/", Action: allowlist.ActionNone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			host := filepath.Join(n.dir, polPath)
			require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
			require.NoError(t, os.WriteFile(host, []byte(polText), 0o644))
			pol, err := allowlist.LoadPolicy(host)
			require.NoError(t, err)
			n.Host.Policy, n.Host.PolicyFile = pol, host

			evil := v2().File(polPath, []byte("paths:\n- {path: /etc/hosts, action: None}\n"), 0o644).JSON()
			req := apply.Request{Desired: evil, Hash: "evil", NoRebootPaths: []allowlist.Rule{tc.entry}}
			before := n.treeHash(t)
			req.DryRun = true
			dry, err := apply.Run(context.Background(), n.Host, req)
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
			assert.Contains(t, dry.Reason, "node policy file "+polPath)
			req.DryRun = false
			res, err := apply.Run(context.Background(), n.Host, req)
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the dry run is the whole truth")
			assert.Equal(t, before, n.treeHash(t), "nothing written")
			assert.Equal(t, polText, n.read(t, polPath))

			if tc.entry.Path != "/etc/refresh-agent/" {
				return
			}
			other := v2().File("/etc/refresh-agent/notes.conf", []byte("x"), 0o644).JSON()
			res, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: other, Hash: "other", NoRebootPaths: []allowlist.Rule{tc.entry}})
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
		})
	}
}
