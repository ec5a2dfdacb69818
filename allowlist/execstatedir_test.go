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

// Round 9 (adversary exec/13): a file the node policy manages (a rule's path, or a ConfigMap
// entry the plan resolved) is never a unit's own place: its mode and owner are the policy's, so a
// changed line of myapp.service may not chmod 0666 or chown core /etc/myapp/api-token (a 0600
// root rule), nor change a directory holding it (chmod -R, a pattern); asking the agent for 0666
// is refused, and so is asking the unit.
func TestManagedFilesAreNeverAUnitsOwnPlace(t *testing.T) {
	managed := []string{"/etc/myapp/api-token", "/var/lib/myapp/certs/"}
	judge := func(line string) error {
		p := unitOfLines(t, true, line)
		p.Managed = managed
		return allowlist.JudgeUnit(p)
	}
	for _, line := range []string{
		`ExecStart=/usr/bin/chmod 0666 /etc/myapp/api-token`,
		`ExecStart=/usr/bin/chown core /etc/myapp/api-token`,
		`ExecStart=/usr/bin/chmod -R a+rwX /etc/myapp`,
		`ExecStart=/bin/sh -c 'chmod 666 /etc/myapp/*'`,
		`ExecStart=/bin/sh -c 'echo x > /etc/myapp/api-token'`,
		`ExecStart=/usr/bin/install -m 0666 /etc/myapp/x /etc/myapp/api-token`,
		`ExecStart=/usr/bin/rm -f /etc/myapp/api-token`,
		`ExecStart=/usr/bin/chmod 0644 /var/lib/myapp/certs/tls.key`,
		`ExecStart=/usr/bin/chown -R core /var/lib/myapp`,
	} {
		err := judge(line)
		if assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), "the node policy manages", line)
		}
	}
	for _, line := range []string{
		`ExecStart=/usr/bin/touch /etc/myapp/other`,
		`ExecStart=/usr/bin/chmod 0600 /var/lib/myapp/data`,
		`ExecStart=/usr/bin/rm -rf /var/lib/myapp/cache`,
	} {
		assert.NoError(t, judge(line), line)
	}
}
