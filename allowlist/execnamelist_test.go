package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r18 c/06: a changed line read a secret by a name it built at run time, handed to a
// program that reads the names of its files from a list (tar -T -, cpio -o, find -files0-from).
// Refused in a changed line; the node's own line, and the same programs given their names as
// words, stay judged as before.
func TestNamesReadFromAListAreRefusedInAChangedLine(t *testing.T) {
	for _, line := range []string{
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | tar -c -f /tmp/iri-x.tar -T -'`,
		`ExecStart=/bin/sh -c 'echo /var/lib/kubelet/config.jsoX | tr X n | tar -cf /tmp/x.tar --files-from=-'`,
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | tar -c -f - -T - | grep -q "^root:.6.a"'`,
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | tar cfT /tmp/x.tar -'`,
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | tar -cT - -f /tmp/x.tar'`,
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | tar -c --files-fr=- -f /tmp/x.tar'`,
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | cpio -o > /tmp/x.cpio'`,
		`ExecStart=/bin/sh -c 'echo /etc/shaXow | tr X d | cpio --create > /tmp/x.cpio'`,
		`ExecStart=/bin/sh -c 'printf /etc/shaXow | tr X d > /tmp/l; find -files0-from /tmp/l -exec cat {} +'`,
		`ExecStart=/bin/sh -c 'printf /etc/shaXow | tr X d | wc --files0-from=-'`,
	} {
		err := strictUnit(t, true, line)
		if assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), "built at run time", line)
		}
	}
	for _, line := range []string{
		`ExecStart=/usr/bin/tar -cf /tmp/x.tar /etc/myapp`,
		`ExecStart=/usr/bin/tar -xf /usr/share/myapp/data.tar -C /var/lib/myapp`,
		`ExecStart=/bin/sh -c 'cpio -idm < /usr/share/myapp/data.cpio'`,
	} {
		if err := strictUnit(t, true, line); err != nil {
			assert.NotContains(t, err.Error(), "built at run time", line)
		}
	}
}
