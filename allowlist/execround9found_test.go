package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round 9 (units/05): a node unit a policy rule restarts whose ExecStop= runs the manager's control
// program through find's {} (find /usr/bin -name systemctl -exec {} --user exit ;), or through a
// program that runs its argument (catchsegv, podman unshare): the executor judges the node's own
// lines by the classes every line may never have, so in every line the program find finds, a
// wrapper the judge does not list and an engine's unshare command are judged as a command.
func TestRound9FoundProgramsAndWrappersInEveryLine(t *testing.T) {
	for _, c := range []struct{ line, why string }{
		{`/usr/bin/find /usr/bin -name systemctl -exec {} --user exit \;`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -exec {} \;`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -execdir {} \;`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -ok {} \;`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -okdir {} \;`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -exec {} +`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -exec {}x \;`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -exec /usr/bin/env {} \;`, "a file find finds"},
		{`/usr/bin/find /usr/sbin -name reboot -exec nice -n 5 {} \;`, "a file find finds"},
		{`/usr/bin/find /usr/sbin -name reboot -exec timeout 5 {} \;`, "a file find finds"},
		{`/usr/bin/find /usr/sbin -name reboot -exec catchsegv {} \;`, "a file find finds"},
		{`/usr/bin/find /usr/sbin -name reboot -exec setarch x86_64 {} \;`, "a file find finds"},
		{`/usr/bin/find /usr/sbin -name reboot -exec runuser -u root -- {} \;`, "a file find finds"},
		{`/usr/bin/find /usr/sbin -name reboot -exec podman unshare {} \;`, "a file find finds"},
		{`/bin/sh -c 'find /usr/sbin -name reboot -exec {} \;'`, "runs the files it finds as the program"},
		{`/usr/bin/find /usr/sbin -name reboot -exec sh -c {} \;`, "cannot be judged"},
		{`/usr/bin/xargs -a /tmp/x -I{} {} --user exit`, "replace string {} is the program"},
		{`/usr/bin/xargs -a /tmp/x env`, "xargs hands the words of its input to env"},
		{`/usr/bin/catchsegv systemctl --user exit`, "controls the service manager"},
		{`/usr/bin/catchsegv /usr/bin/systemctl exit`, "controls the service manager"},
		{`/usr/bin/catchsegv /tmp/x`, "a file the payload may write"},
		{`/usr/bin/pkexec /usr/sbin/reboot`, "reboot"},
		{`/usr/bin/eatmydata systemctl exit`, "controls the service manager"},
		{`/usr/bin/podman unshare systemctl --user exit`, "controls the service manager"},
		{`/usr/bin/podman unshare --rootless-netns /tmp/x`, "/tmp/x"},
		{`/usr/bin/buildah unshare systemctl exit`, "controls the service manager"},
		{`/usr/bin/myapp systemctl exit`, "controls the service manager"}, // a program no list names
		{`/usr/bin/systemctl exit`, "controls the service manager"},
		{`/usr/bin/systemctl --user exit 0`, "controls the service manager"},
		{`/usr/bin/systemctl -q exit`, "controls the service manager"},
	} {
		for _, changed := range []bool{false, true} {
			_, err := judgeExecLineAs(c.line, changed)
			if assert.Error(t, err, "%s (changed %v)", c.line, changed) && !changed {
				assert.Contains(t, err.Error(), c.why, c.line)
			}
		}
	}
	for _, l := range []string{
		`/usr/bin/find /var/lib/myapp -name *.tmp -delete`,
		`/usr/bin/find /var/lib/myapp -name *.tmp -exec rm -f {} +`,
		`/usr/bin/find /var/lib/myapp -type f -exec chmod 0600 {} +`,
		`/usr/bin/find /var/lib/myapp -exec ionice -c 3 rm -f {} +`, // rm's operand, by ionice's grammar
		`/usr/bin/xargs -a /etc/myapp/list -I{} echo {}`,
		`/usr/bin/myapp --mode reboot`,
		`/usr/bin/catchsegv /usr/bin/myapp --serve`,
		`/usr/bin/podman unshare /usr/bin/true`,
	} {
		_, err := judgeExecLineAs(l, false)
		assert.NoError(t, err, l)
	}
}
