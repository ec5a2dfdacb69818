package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round 9 (exec/07): a pattern or brace word names every name it may match for every rule that
// compares a word with a fixed path, not only reach: cp -RL /usr/loca[l] /tmp/ul named
// /usr/local (RHCOS's link to /var/usrlocal), which the node's-code operand rule refuses for a
// writer; cp F /usr/{local,x}/bin/y and ln -s /usr/{local,x} /tmp/ul wrote or linked the node's
// program dir in the node's own lines. Each row is judged in every line (the node's own and a
// changed one); after " | " the reason's words (every line), else accepted in the node's lines.
const round9Names = `
/usr/bin/cp -RL /usr/loca[l] /tmp/ul | names the node's program dir /usr/local (/usr/loca[l] may name it)
/usr/bin/cp -RL /usr/*cal /tmp/ul | names the node's program dir /usr/local (/usr/*cal may name it)
/usr/bin/cp -RL /u?r/local /tmp/ul | names the node's program dir /usr/local (/u?r/local may name it)
/usr/bin/cp -RL /usr/{local,} /tmp/ul | names the node's program dir /usr/local
/usr/bin/cp -RL /u*/local/bin /tmp/x | names the node's program dir /usr/local/bin
/usr/bin/cp -RL /v?r/usrlocal /tmp/ul | names the node's program dir /usr/local
/usr/bin/cp -RL /r?ot /tmp/r | names the node's program dir /root
/usr/bin/bash -c 'cp -RL /usr/loca[l] /tmp/ul && cp /usr/bin/systemctl /tmp/ul/bin/echo' | names the node's program dir /usr/local
/usr/bin/ln -s /usr/{local,x} /tmp/ul | /usr/local
/usr/bin/ln -s /usr/loca? /tmp/ul | /usr/loca?
/usr/bin/cp /usr/bin/x /usr/loca?/bin/y | /usr/loca?/bin/y
/usr/bin/cp /usr/bin/x /usr/{local,x}/bin/y | /usr/local/bin/y
/usr/bin/cp /usr/bin/x /v?r/usrlocal/bin/y | /v?r/usrlocal/bin/y
/usr/bin/cp /usr/bin/x /usr/local/bin/{x | /usr/local/bin/
/usr/bin/bash -c 'echo x > /{root,x}/.bashrc' | writes /root/.bashrc (/{root,x}/.bashrc may name it)
/usr/bin/bash -c 'cd /usr/loca? && cp /usr/bin/systemctl share/echo' | /usr/loca?/share/echo may name it
/usr/bin/bash -c 'chmod 777 /usr/{local,x}/bin' | /usr/local/bin
/usr/bin/bash -c 'rm -rf /usr/loca?/bin' | /usr/local/bin (/usr/loca?/bin may name it)
/usr/bin/umount /v?r | umount /var: the node's system mounts stay (/v?r may name it)
/usr/bin/umount /{var,x} | umount /var: the node's system mounts stay
/usr/bin/mount --bind /tmp/x /u?r/local/bin | mount /usr/local/bin
/usr/bin/find /pro? -name x -print | find in /proc
/usr/bin/find /{proc,x} -name x -print | find in /proc
/usr/bin/cp -RL /etc/myapp/*.conf /tmp/x/
/usr/bin/cp /tmp/a /run/myapp/{a,b}
/usr/bin/rm -f /run/myapp/*.pid
/usr/bin/rm -rf /var/lib/myapp/{a,b}
/usr/bin/ln -s /usr/lib/myapp/{a,b} /tmp/ul
/usr/bin/cat /usr/loca?/bin/x
/usr/bin/ls /usr/*
/usr/bin/find /var/lib/myapp/* -name x -print
`

func TestRound9PatternsNameEveryNameTheyMayMatch(t *testing.T) {
	for _, row := range strings.Split(strings.TrimSpace(round9Names), "\n") {
		line, why, refused := strings.Cut(row, " | ")
		for _, changed := range []bool{false, true} {
			_, err := judgeExecLineAs(line, changed)
			switch {
			case refused && assert.Error(t, err, "%s (changed %v)", line, changed):
				assert.Contains(t, err.Error(), why, line)
			case !refused && !changed:
				assert.NoError(t, err, line)
			}
		}
	}
}
