package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 10 (adversary exec/06): a write to /dev/stdout or /dev/stderr reopens whatever file the
// descriptor is open on, for writing, even one opened for reading: `exec 1</etc/profile; echo x >
// /dev/stdout` rewrites /etc/profile. In a changed line a descriptor other than standard input
// opened on a file (1<F, 2<F, 3<F) is judged as a write of F, and standard output or error made a
// copy of another descriptor (1>&3, 1<&0) is refused.
func TestRound10ReopenedDescriptorsAreWrites(t *testing.T) {
	for _, c := range []struct{ line, why string }{
		{`ExecStart=/bin/sh -c 'exec 1</etc/profile; echo x > /dev/stdout'`, "writes /etc/profile"},
		{`ExecStart=/bin/sh -c 'exec 1</etc/profile; cp /etc/myapp/app.conf /dev/stdout'`, "writes /etc/profile"},
		{`ExecStart=/bin/sh -c 'echo "core ALL=(ALL) NOPASSWD: ALL" 1</etc/sudoers >> /dev/stdout'`, "writes /etc/sudoers"},
		{`ExecStart=/bin/sh -c 'exec 2</etc/shadow; echo x >> /dev/stderr'`, "writes /etc/shadow"},
		{`ExecStart=/bin/sh -c 'exec {fd}</etc/profile; echo x'`, "writes /etc/profile"},
		{`ExecStart=/bin/sh -c 'exec 3</etc/profile; exec 1>&3; echo x > /dev/stdout'`, "1>&3"},
		{`ExecStart=/bin/sh -c 'exec </etc/profile; exec 1<&0; echo x > /dev/stdout'`, "1>&0"},
		{`ExecStart=/bin/sh -c 'exec 2>&0; echo x > /dev/stderr'`, "2>&0"},
	} {
		err := strictUnit(t, true, c.line)
		require.Error(t, err, c.line)
		assert.Contains(t, err.Error(), c.why, c.line)
	}
	for _, line := range []string{
		`ExecStart=/bin/sh -c 'echo x >&2; echo y 2>&1 > /dev/null'`,
		`ExecStart=/bin/sh -c 'exec 3</etc/myapp/app.conf; read -u 3 x; exec 3<&-'`,
		`ExecStart=/bin/sh -c 'cat < /etc/myapp/app.conf > /dev/stdout'`,
		`ExecStart=/bin/sh -c 'echo x 1>&2'`,
	} {
		assert.NoError(t, strictUnit(t, true, line), line)
	}
}
