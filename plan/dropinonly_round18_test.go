package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var crioRestartPolicy = strings.Replace(crioReloadPolicy, "Reload, reload", "Restart, restart", 1)

// Adversary r18 c/02: when the payload ships only drop-ins of a unit, the unit's current
// definition is the node's unit file with them, and what a changed line may run as the unit's own
// (its programs, the paths it writes, its secrets, its arguments) is read from that definition,
// not from the current payload's drop-ins alone (which run nothing).
func TestDropinOnlyPayloadIsJudgedWithTheNodesUnit(t *testing.T) {
	root := nodeRoot(t, map[string]string{"/usr/lib/systemd/system/crio.service": rhcosCrioUnit})
	cur := withUnits(crioDropin("LimitNOFILE=1048576\n"))
	ownProgram := withUnits(crioDropin("ExecStart=\nExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS --log-level=info\n"))

	p := rootBuild(t, crioRestartPolicy, root, cur, ownProgram)
	assert.True(t, p.Eligible, "%+v", p.Refused)
	// A changed Environment= makes every line that expands a variable a
	// changed one, the node's ExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS … too; crio is its own.
	env := withUnits(crioDropin("Environment=GOTRACEBACK=single\n"))
	p = rootBuild(t, crioRestartPolicy, root, cur, env)
	assert.True(t, p.Eligible, "%+v", p.Refused)

	// A program the node's unit does not run stays refused, with the node's files or without.
	other := withUnits(crioDropin("ExecStart=\nExecStart=/usr/bin/podman system service\n"))
	refusedWith(t, rootBuild(t, crioRestartPolicy, root, cur, other), "unit crio.service: ", "/usr/bin/podman")
	// Without the node's files the drop-ins alone are the current definition: crio is not its own.
	refusedWith(t, rootBuild(t, crioRestartPolicy, "", cur, ownProgram), "unit crio.service: ", "/usr/bin/crio")
	// The node's unit masked (a link to /dev/null in /etc) runs nothing: nothing is its own.
	masked := nodeRoot(t, map[string]string{"/usr/lib/systemd/system/crio.service": rhcosCrioUnit, "/etc/systemd/system/crio.service": "->/dev/null"})
	assert.False(t, rootBuild(t, crioRestartPolicy, masked, cur, ownProgram).Eligible)
}
