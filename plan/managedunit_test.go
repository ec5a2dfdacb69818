package plan

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 9 (adversary exec/13): the plan gives the unit judge the paths the node policy's rules
// and the ConfigMap's entries manage: a payload's unit line may not widen their mode or owner.
func TestUnitLinesMayNotChangeManagedFiles(t *testing.T) {
	pol, err := allowlist.ParsePolicy([]byte("paths:\n  - {path: /etc/myapp/api-token, action: None, mode: \"0600\"}\n" +
		"configMapCeiling:\n  - {prefix: /var/lib/myapp/, actions: [None]}\n" +
		"nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n" +
		"unitPrograms:\n  myapp.service: [/usr/bin/myapp]\n"))
	require.NoError(t, err)
	base := "[Unit]\nDescription=x\n[Service]\nType=oneshot\nExecStart=/usr/bin/myapp\n"
	old := types.Unit{Name: "myapp.service", Contents: &base}
	for _, c := range []struct{ line, names string }{
		{"ExecStartPre=/usr/bin/chmod 0666 /etc/myapp/api-token", "the node policy manages /etc/myapp/api-token"},
		{"ExecStartPre=/usr/bin/chown -R core /etc/myapp", "the node policy manages /etc/myapp/api-token"},
		{"ExecStartPre=/usr/bin/chmod 0666 /var/lib/myapp/tls.key", "the node policy manages /var/lib/myapp/tls.key"},
	} {
		text := base + c.line + "\n"
		why := judgeUnitFile(&old, types.Unit{Name: "myapp.service", Contents: &text}, pol.WithManaged("/var/lib/myapp/tls.key"), nil)
		assert.Contains(t, why, c.names, c.line)
	}
	text := base + "ExecStartPre=/usr/bin/touch /etc/myapp/other\n"
	assert.Empty(t, judgeUnitFile(&old, types.Unit{Name: "myapp.service", Contents: &text}, pol, nil))
}
