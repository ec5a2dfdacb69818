package allowlist_test

import "testing"

// Round 9 (copied links): a changed line's copy that keeps its sources' symbolic links, or its
// extraction of an archive the payload may write, makes links the judge cannot see; a later
// write below the copy lands where one points. cp -R /etc/systemd /run/myapp/s then writing
// /run/myapp/s/system/multi-user.target.wants/kubelet.service (a link to
// /etc/systemd/system/kubelet.service) rewrites kubelet's unit. Refused; the dereferencing forms
// and archives of read-only OS content stay accepted.
func TestRound9CopiesKeepNoLinks(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	for _, c := range []struct{ line, why string }{
		{`ExecStartPre=/bin/sh -c 'cp -R /etc/systemd /run/myapp/s && echo x > /run/myapp/s/system/multi-user.target.wants/kubelet.service'`, "copies its sources' symbolic links"},
		{"ExecStartPre=/usr/bin/cp -r /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp --recursive /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp --recur /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"}, // an abbreviation
		{"ExecStartPre=/usr/bin/cp -a --no-preserve=mode /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp -LR -P /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"}, // the last choice wins
		{"ExecStartPre=/usr/bin/cp -L -a --no-preserve=all /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp -RH /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"}, // -H: operands only
		{"ExecStartPre=/usr/bin/cp -P /etc/alternatives/python /run/myapp/p", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp -d /etc/localtime /run/myapp/t", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp --no-dereference /etc/localtime /run/myapp/t", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/cp --no-deref /etc/localtime /run/myapp/t", "cp -R, -r, -a, -P or -d"},
		{"ExecStartPre=/usr/bin/rsync -rl /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/rsync -a --no-perms /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/rsync -r --links /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/rsync -r --no-links -l /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/rsync -a --no-perms --exclude -L /etc/systemd/ /run/myapp/s/", "rsync -l or -a"}, // -L is --exclude's pattern
		{"ExecStartPre=/usr/bin/rsync -a --no-perms --chmod -L /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/cp -R --sparse -L /etc/systemd /run/myapp/s", "cp -R, -r, -a, -P or -d"}, // -L is --sparse's value
		{"ExecStartPre=/usr/bin/rsync -a --no-perms --times --exclude -L /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/rsync -a --no-perms -f -L /etc/systemd/ /run/myapp/s/", "rsync -l or -a"}, // -f's filter
		{"ExecStartPre=/usr/bin/rsync -a --no-perms -fL /etc/systemd/ /run/myapp/s/", "rsync -l or -a"},
		{"ExecStartPre=/usr/bin/rsync -rL --keep-dirlinks /etc/myapp/ /run/myapp/s/", "rsync -K"},
		{"ExecStartPre=/usr/bin/rsync -rLK /etc/myapp/ /run/myapp/s/", "rsync -K"},
		{"ExecStartPre=/usr/bin/tar -xf /etc/myapp/a.tar --no-same-permissions -C /run/myapp", "tar extracts /etc/myapp/a.tar, which the payload or a command may write"},
		{"ExecStartPre=/usr/bin/tar -xzf /var/lib/myapp/a.tgz --no-same-permissions -C /run/myapp", "which the payload or a command may write"},
		{"ExecStartPre=/usr/bin/tar xf /run/myapp/a.tar --no-same-permissions -C /run/myapp", "which the payload or a command may write"},
		{"ExecStartPre=/usr/bin/tar -x --no-same-permissions --file=/tmp/a.tar -C /run/myapp", "which the payload or a command may write"},
		{"ExecStartPre=/usr/bin/tar -x --no-same-permissions -C /run/myapp", "from its input or $TAPE"},
		{"ExecStartPre=/usr/bin/tar -x --no-same-permissions -f /usr/local/share/a.tar -C /run/myapp", "which the payload or a command may write"},
		{`ExecStartPre=/bin/sh -c 'tar -C /etc -c systemd | tar -C /run/myapp --no-same-permissions -x'`, "from its input or $TAPE"},
		{"ExecStartPre=/usr/bin/unzip /etc/myapp/a.zip -d /run/myapp", "unzip extracts /etc/myapp/a.zip"},
		{"ExecStartPre=/usr/bin/unzip -o -d /run/myapp /etc/myapp/a.zip", "unzip extracts /etc/myapp/a.zip"},
	} {
		refusedChanged(t, c.why, c.line, SL)
	}
	for _, l := range []string{
		"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -rL /etc/myapp/ /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -R --dereference /etc/myapp/ /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -a -L --no-preserve=mode /etc/myapp/ /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -P -L /etc/myapp/app.conf /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -S -P /etc/myapp/app.conf /run/myapp/x", // -P is -S's suffix
		"ExecStartPre=/usr/bin/rsync -r /etc/myapp/ /run/myapp/s/",
		"ExecStartPre=/usr/bin/rsync -aL --no-perms /etc/myapp/ /run/myapp/s/",
		"ExecStartPre=/usr/bin/rsync -a --no-perms -L /etc/myapp/ /run/myapp/s/",
		"ExecStartPre=/usr/bin/cp -R --context -L /etc/myapp /run/myapp/s", // --context's value follows "=" only
		"ExecStartPre=/usr/bin/rsync -a --no-perms --safe-links /etc/myapp/ /run/myapp/s/",
		"ExecStartPre=/usr/bin/rsync -a --no-perms --munge-links /etc/myapp/ /run/myapp/s/",
		"ExecStartPre=/usr/bin/rsync -a --no-perms --no-links /etc/myapp/ /run/myapp/s/",
		"ExecStartPre=/usr/bin/tar -xf /usr/share/myapp/a.tar --no-same-permissions -C /run/myapp",
		"ExecStartPre=/usr/bin/tar -cf /run/myapp/a.tar /etc/myapp",
		"ExecStartPre=/usr/bin/tar -tf /etc/myapp/a.tar",
		"ExecStartPre=/usr/bin/unzip -l /etc/myapp/a.zip",
	} {
		acceptedChanged(t, l, SL)
	}
}
