package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 10 (adversary exec/01-03): an EnvironmentFile= or code operand is the node's only where no
// changed line and no pod writes it under any name: /proc/self/root, /proc/1/root,
// /proc/thread-self/root and /proc/self/cwd are / again (systemd reads the file in the unit's
// own process); /sysroot and /ostree hold RHCOS's /var (/sysroot/ostree/deploy/rhcos/var/tmp is
// /var/tmp, which the unit's own line writes); container storage's layers and volumes are pods'.
// Each is refused in every line, as the file it names would be.
func TestRound10EnvironmentFilesUnderOtherNames(t *testing.T) {
	for _, f := range []string{
		"-/sysroot/ostree/deploy/rhcos/var/tmp/myapp.env",
		"-/ostree/deploy/rhcos/var/tmp/myapp.env",
		"/sysroot/ostree/deploy/rhcos/var/home/core/.ssh/authorized_keys.d/ignition",
		"-/proc/self/root/var/tmp/myapp.env",
		"-/proc/1/root/var/tmp/myapp.env",
		"/proc/thread-self/root/var/tmp/myapp.env",
		"/proc/self/cwd/var/tmp/myapp.env",
		"/var/lib/containers/storage/overlay/0f3c/diff/tmp/env",
		"/var/lib/containers/storage/overlay/0f3c/merged/tmp/env",
		"/var/lib/containers/storage/volumes/v/_data/env",
		"/var/lib/kubelet/pods/0b7c/volumes/kubernetes.io~empty-dir/x/env",
		"/run/containers/storage/x/env",
	} {
		for _, changed := range []bool{true, false} {
			p := unitOfLines(t, changed, "ExecStart=/usr/bin/sleep 1")
			p.EnvironmentFiles = []string{f}
			err := allowlist.JudgeUnit(p)
			if assert.Error(t, err, "%s changed=%v", f, changed) {
				assert.Contains(t, err.Error(), "EnvironmentFile="+f, f)
			}
		}
	}
	p := unitOfLines(t, true, "ExecStart=/usr/bin/sleep 1")
	p.EnvironmentFiles = []string{"-/etc/sysconfig/myapp", "/usr/share/myapp/env"}
	assert.NoError(t, allowlist.JudgeUnit(p), "the node's own environment files stay accepted")
}

// Round 10 (adversary exec/04): systemd-run's transient unit gets its command substituted again by
// the manager, from its -E values and the manager's environment: after systemd's first pass,
// `find /tmp/x $$X` with -E "X=-exec /usr/sbin/reboot ;" runs find -exec reboot. A changed line's
// systemd-run command holds no "$" at all.
func TestRound10SystemdRunSubstitutesAgain(t *testing.T) {
	for _, line := range []string{
		`ExecStart=/usr/bin/systemd-run --wait -E "X=-exec /usr/sbin/reboot ;" /usr/bin/find /tmp/x $$X`,
		`ExecStart=/usr/bin/systemd-run --wait -E "X=0777 /etc/myapp/app.conf" /usr/bin/chmod $$X`,
		`ExecStart=/usr/bin/systemd-run --wait --setenv=X=-delete /usr/bin/find /etc/kubernetes $${X}`,
		`ExecStart=/usr/bin/systemd-run --wait -E "X=x; /usr/sbin/reboot" /bin/sh -c 'echo $${X}'`,
		`ExecStart=/usr/bin/systemd-run --wait /usr/bin/rm -rf /run/myapp/$$PATH`,
	} {
		err := strictUnit(t, true, line)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), "which the manager substitutes again", line)
	}
	assert.NoError(t, strictUnit(t, true, "ExecStart=/usr/bin/systemd-run --wait -E X=1 /usr/bin/touch /run/myapp/x"))
}
