package apply_test

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
)

// TestAgentWritesArePayloadWritten: every file the agent writes from the payload, below a denied
// prefix or not, is one the exec judge's read rules count as the payload's (allowlist.PayloadWritten):
// an EnvironmentFile=, a code operand (systemd-tmpfiles F) or a script naming it would run what the
// payload wrote (round 9: core's SSH keys file with a key line BASH_ENV=… or MAINPID=1).
func TestAgentWritesArePayloadWritten(t *testing.T) {
	paths := []string{
		// core's keys, for every home sshKeysOp accepts (/home is RHCOS's /var/home), and what core
		// writes in its home, logged in with those keys.
		path.Join("/var/home/core", apply.SSHKeysFile), path.Join("/home/core", apply.SSHKeysFile),
		path.Join("/var/home/other/x", apply.SSHKeysFile), "/var/home/core/.ssh/authorized_keys", "/var/home/core/.bashrc",
		// The units and dropins a unit rule writes.
		path.Join(plan.UnitDir, "myapp.service"), path.Join(plan.UnitDir, "myapp.service.d", "10-x.conf"),
		path.Join(plan.UnitDir, "kubelet.service.d", "40-kubelet-crio-image-credential-provider.conf"),
		apply.MCDCurrentConfig,
		// The agent's default state dir (cmd/refresh-agent defaultStateDir).
		"/var/lib/refresh-agent/journal", "/var/lib/refresh-agent/backup/x",
	}
	for _, r := range allowlist.Default().Rules {
		paths = append(paths, strings.TrimSuffix(r.Path, "/"))
	}
	for _, p := range paths {
		assert.True(t, allowlist.PayloadWritten(p), "%s is written by the agent from the payload: the exec judge must not trust it as the node's", p)
	}
	// The node's own files stay the node's.
	for _, p := range []string{"/usr/lib/myapp/env", "/etc/os-release", "/etc/kubernetes/kubelet-env", "/etc/sysconfig/crio"} {
		assert.False(t, allowlist.PayloadWritten(p), p)
	}
}
