package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round 9 (adversary exec/11): every watchdog device, not only /dev/watchdog, and the /dev/char
// aliases of character devices by number are out of reach: opening /dev/watchdog0 arms the
// machine's reset as /dev/watchdog does. Patterns are read by every name they may match.
func TestRound9EveryWatchdogIsOutOfReach(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	for _, line := range []string{
		"ExecStartPre=/usr/bin/head -c1 /dev/watchdog0",
		"ExecStartPre=/usr/bin/head -c1 /dev/watchdog1",
		"ExecStartPre=/usr/bin/head -c1 /dev/char/10:130",
		`ExecStartPre=/bin/sh -c 'cat /dev/char/*'`,
		`ExecStartPre=/bin/sh -c 'cat /dev/w*0'`,
		`ExecStartPre=/bin/sh -c 'cat /dev/wat[c]hdog12'`,
		`ExecStartPre=/bin/sh -c 'cat /dev/watchd[!x]g3'`,
		`ExecStartPre=/bin/sh -c 'exec 3</dev/watchdog0'`,
		`ExecStartPre=/bin/sh -c ': < /dev/watc?dog7'`,
		// An input redirection's file is reached too, with or without a descriptor before it.
		`ExecStartPre=/bin/sh -c 'cat 3</dev/watchdog0'`,
		`ExecStartPre=/bin/sh -c 'exec </dev/watchdog0'`,
		`ExecStartPre=/bin/sh -c 'exec {fd}</dev/watchdog0'`,
		`ExecStartPre=/bin/sh -c 'read -r x </dev/char/10:130'`,
	} {
		refusedChanged(t, "reaches /dev/", line, SL)
		// The node's own lines too: reach is judged in every line.
		if err := strictUnit(t, false, line, SL); assert.Error(t, err, "%s (unchanged)", line) {
			assert.Contains(t, err.Error(), "reaches /dev/", line)
		}
	}
	for _, line := range []string{
		"ExecStartPre=/usr/bin/head -c1 /dev/urandom",
		`ExecStartPre=/bin/sh -c 'echo x > /dev/null'`,
		`ExecStartPre=/bin/sh -c 'read -r x </etc/myapp/app.conf; echo "$x" 2>/dev/null'`,
		`ExecStartPre=/bin/sh -c 'exec 3</etc/myapp/app.conf'`,
	} {
		acceptedChanged(t, line, SL)
	}
	// No watchdog: reached in the node's own lines, but since round 13 (e/07) a device of the node
	// (a name the judge does not know, a pattern that may match a disk) in a changed line.
	for _, line := range []string{
		"ExecStartPre=/usr/bin/head -c1 /dev/wa",
		`ExecStartPre=/bin/sh -c 'cat /dev/x[0-9]*'`,
	} {
		assert.NoError(t, strictUnit(t, false, line, SL), "%s (unchanged)", line)
		if err := strictUnit(t, true, line, SL); assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), "a device of the node", line)
			assert.NotContains(t, err.Error(), "reaches /dev/", line)
		}
	}
}
