package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 9 (adversary exec/09): systemd-run's transient unit runs in the manager's /, not in the
// calling unit's WorkingDirectory=: `systemd-run --wait rm -rf etc` from /var/lib/myapp removes
// /etc. Its command's relative paths are judged from / too, unless --same-dir (-d) or
// --working-directory= says where it runs.
func TestRound9SystemdRunRunsInTheManagersRoot(t *testing.T) {
	const wd = "WorkingDirectory=/var/lib/myapp"
	for _, line := range []string{
		"ExecStart=/usr/bin/systemd-run --wait /usr/bin/rm -rf etc",
		"ExecStart=/usr/bin/systemd-run --wait -q /usr/bin/chmod -R 0777 etc",
		`ExecStart=/usr/bin/systemd-run --wait /usr/bin/bash -c 'echo 10.6.6.6 quay.io >> etc/hosts'`,
	} {
		err := strictUnit(t, true, wd, line)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), "/etc", line)
	}
	for _, line := range []string{
		// (--same-dir and --working-directory= are outside a changed line's systemd-run grammar.)
		"ExecStart=/usr/bin/systemd-run --wait /usr/bin/cat app.conf",
		"ExecStart=/usr/bin/systemd-run --wait /usr/bin/rm -rf /var/lib/myapp/cache",
	} {
		assert.NoError(t, strictUnit(t, true, wd, line), line)
	}
}
