package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round 9 (exec/08): a changed line's traversal that follows symbolic links leaves its start: with
// a link below /tmp/x to /run (cp -R /var/run /tmp/x/vr), find /tmp/x -follow -exec chmod 0777 {} +
// and chown -R -L nobody /tmp/x changed /run/crio/crio.sock. Refused; the traversals that do not
// follow links, and the reading ones, stay accepted. Each row: a command of ExecStartPre=/usr/bin/,
// and after " | " the reason's words.
const round9Traversals = `
find /tmp/myapp-cache -follow -delete | find -follow: it follows the symbolic links
find /tmp/myapp-cache -follow -exec chmod 0777 {} + | find -follow: it follows the symbolic links
find -L /tmp/myapp-cache -delete | find -L: it follows the symbolic links
find -H /tmp/myapp-cache -delete | find -H: it follows the symbolic links
find -P -L /tmp/myapp-cache -exec rm -f {} + | find -L: it follows the symbolic links
chown -R -L core /tmp/myapp-cache | chown -L: it follows the symbolic links
chown -RL core /tmp/myapp-cache | chown -L: it follows the symbolic links
chown -LR core /tmp/myapp-cache | chown -L: it follows the symbolic links
chown -R -H core /tmp/myapp-cache | chown -H: it follows the symbolic links
chown --recursive -L core /tmp/myapp-cache | chown -L: it follows the symbolic links
chown --recur -L core /tmp/myapp-cache | chown -L: it follows the symbolic links
chgrp -R -L core /tmp/myapp-cache | chgrp -L: it follows the symbolic links
chmod -R -L 0777 /tmp/myapp-cache | chmod -L: it follows the symbolic links
chmod -RL u+w /tmp/myapp-cache | chmod -L: it follows the symbolic links
bash -c 'mkdir -p /tmp/x && find /tmp/x -follow -exec chmod 0777 {} +; chown -R -L nobody /tmp/x' | follows the symbolic links
rm -rf /tmp/myapp-cache/link/ | a trailing / or /. resolves its last name
chmod -R 0777 /tmp/myapp-cache/link/ | a trailing / or /. resolves its last name
find /tmp/myapp-cache/link/ -delete | a trailing / or /. resolves its last name
sed --follow-symlinks -i s/a/b/ /tmp/myapp-cache/conf | --follow-symlinks edits the file a symbolic link points to
sed -i --follow s/a/b/ /tmp/myapp-cache/conf | --follow-symlinks edits the file a symbolic link points to
find /tmp/myapp-cache -delete
find -H -P /tmp/myapp-cache -delete
find -L /tmp/myapp-cache -name x -print
find -L /tmp/myapp-cache -exec cat {} +
chown -R core /tmp/myapp-cache
chown -R -L -P core /tmp/myapp-cache
chmod -R 0700 /tmp/myapp-cache
rm -rf /tmp/myapp-cache/link
rm -f /tmp/myapp-cache/x/
sed -i s/a/b/ /tmp/myapp-cache/conf
cp -RL /etc/myapp /tmp/myapp-cache
du -L /tmp/myapp-cache
`

// round9OwnTraversals are the same for setfacl and chcon, which a changed line runs only as the
// unit's own programs.
const round9OwnTraversals = `
setfacl -R -L -m u:core:rwx /tmp/myapp-cache | setfacl -L: it follows the symbolic links
setfacl -R --logical -m u:core:rwx /tmp/myapp-cache | setfacl --logical: it follows the symbolic links
setfacl -RL -m u:core:rwx /tmp/myapp-cache | setfacl -L: it follows the symbolic links
chcon -R -L -t tmp_t /tmp/myapp-cache | chcon -L: it follows the symbolic links
setfacl -R -m u:core:rwx /tmp/myapp-cache
setfacl -R -L -P -m u:core:rwx /tmp/myapp-cache
chcon -R -t tmp_t /tmp/myapp-cache
`

func TestRound9TraversalsFollowNoLinks(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	for _, table := range []string{round9Traversals, round9OwnTraversals} {
		for _, row := range strings.Split(strings.TrimSpace(table), "\n") {
			cmd, why, refused := strings.Cut(row, " | ")
			line := "ExecStartPre=/usr/bin/" + cmd
			switch {
			case table == round9OwnTraversals:
				err := ownUnit(t, line, SL)
				if !refused {
					assert.NoError(t, err, line)
				} else if assert.Error(t, err, line) {
					assert.Contains(t, err.Error(), why, line)
				}
			case refused:
				refusedChanged(t, why, line, SL)
			default:
				acceptedChanged(t, line, SL)
			}
		}
	}
}
