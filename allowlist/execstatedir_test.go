package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// The agent's state dir, wherever --state-dir puts it, is never a unit's own place: a changed line
// of myapp.service may not write /var/lib/myapp-agent (its S-… name), /tmp/ra, or an ancestor
// of one (rm -rf /var/lib/myapp would take the state dir under it with it), even when the unit
// names it as its StateDirectory=. What lies beside the state dir stays the unit's own.
func TestStateDirIsNeverAUnitsOwnPlace(t *testing.T) {
	never := []string{"/var/lib/myapp-agent", "/tmp/ra", "/var/lib/myapp/ra"}
	judge := func(lines ...string) error {
		var sd []string
		if lines[0] == "StateDirectory=myapp-agent" {
			lines, sd = lines[1:], []string{"myapp-agent"}
		}
		p := unitOfLines(t, true, lines...)
		p.NeverOwn, p.StateDirectory = never, sd
		return allowlist.JudgeUnit(p)
	}
	for _, c := range []struct{ lines []string }{
		{[]string{`ExecStart=/bin/sh -c 'echo {} > /var/lib/myapp-agent/journal.json'`}},
		{[]string{`ExecStart=/usr/bin/rm -rf /var/lib/myapp-agent`}},
		{[]string{`ExecStart=/usr/bin/touch /tmp/ra/current.json`}},
		{[]string{`ExecStart=/usr/bin/rm -rf /var/lib/myapp`}},
		{[]string{`ExecStart=/bin/sh -c 'rm -rf /var/lib/myapp/*'`}},
		{[]string{`ExecStart=/usr/bin/ln -sf /run/myapp/x /var/lib/myapp/ra`}},
		{[]string{"StateDirectory=myapp-agent", `ExecStart=/usr/bin/touch /var/lib/myapp-agent/x`}},
	} {
		err := judge(c.lines...)
		if assert.Error(t, err, "%q", c.lines) {
			assert.Contains(t, err.Error(), "is the agent's state dir (its journal, record and payloads), never a unit's own place", c.lines)
		}
	}
	for _, line := range []string{
		`ExecStart=/usr/bin/touch /var/lib/myapp-cache/x`,
		`ExecStart=/usr/bin/rm -rf /var/lib/myapp/cache`,
		`ExecStart=/usr/bin/touch /tmp/rb`,
		`ExecStart=/usr/bin/touch /tmp/ra-x/y`,
	} {
		assert.NoError(t, judge(line), line)
	}
	// Without state dirs (the executor's D-Bus view) the same line is the unit's.
	assert.NoError(t, allowlist.JudgeUnit(unitOfLines(t, true, `ExecStart=/usr/bin/touch /var/lib/myapp-agent/x`)))
}
