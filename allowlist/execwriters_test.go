package allowlist_test

import "testing"

// Round-8 adversary a04, a09, a12, a16, a20: the writers' options that make links, set a child's
// environment, extract beyond -C, hide an awk program or set a mode the judge cannot see.
func TestWritersOptionsAreJudged(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	refused := []struct{ line, why string }{
		// a04: cp's link forms are ln.
		{"ExecStartPre=/bin/sh -c 'cp -l /etc/passwd /etc/myapp/p && echo evil >> /etc/myapp/p'", "makes links"},
		{"ExecStartPre=/bin/sh -c 'cp --link /etc/passwd /etc/myapp/p'", "makes links"},
		{"ExecStartPre=/bin/sh -c 'cp --li /etc/passwd /etc/myapp/p'", "makes links"},
		{"ExecStartPre=/bin/sh -c 'cp -s /etc/shadow /run/myapp/s && chmod 666 /run/myapp/s'", "makes links"},
		{"ExecStartPre=/usr/bin/cp --symbolic-link /etc/shadow /run/myapp/s", "makes links"},
		{"ExecStartPre=/usr/bin/cp --sy /etc/shadow /run/myapp/s", "makes links"},
		{"ExecStartPre=/usr/bin/cp -al /etc /etc/myapp/all", "cp -"},
		{"ExecStartPre=/usr/bin/cp -sr /etc /run/myapp/all", "makes links"},
		{"ExecStartPre=/usr/bin/cp -fl /etc/passwd /run/myapp/p", "makes links"},
		{"ExecStartPre=/usr/bin/rsync -a --no-perms --link-dest=/etc /etc/ /etc/myapp/e/", "link-dest"},
		{"ExecStartPre=/usr/bin/rsync -r --link-d=/etc /etc/ /etc/myapp/e/", "link-dest"},
		{"ExecStartPre=/usr/bin/rsync -r --copy-dest=/etc /etc/ /etc/myapp/e/", "copy-dest"},
		{"ExecStartPre=/usr/bin/rsync -r --compare-dest=/etc /etc/ /etc/myapp/e/", "compare-dest"},
		{"ExecStartPre=/usr/bin/rsync -rH /etc/myapp/ /run/myapp/", "-H"},
		// a09: xargs sets its children's environment.
		{"ExecStartPre=/bin/sh -c 'cd /run/myapp && echo x | xargs --process-slot-var=PATH -P1 cat'", "process-slot-var"},
		{"ExecStartPre=/bin/sh -c 'echo x | xargs --process-slot=PATH -P1 cat'", "process-slot-var"},
		{"ExecStartPre=/bin/sh -c 'echo x | xargs --process-slot-var PATH cat'", "process-slot-var"},
		// a12: tar's options that choose where it extracts.
		{"ExecStartPre=/usr/bin/tar -xf /run/myapp/c.tar --no-same-permissions -C /run/myapp --one-top-level=/etc/kubernetes/manifests", "one-top-level"},
		{"ExecStartPre=/usr/bin/tar -xf /run/myapp/c.tar --no-same-permissions -C /run/myapp --one-top=/etc/cron.d", "one-top-level"},
		{"ExecStartPre=/usr/bin/tar -xf /run/myapp/c.tar --no-same-permissions -C /run/myapp --transform=s,^,../../etc/,", "transform"},
		{"ExecStartPre=/usr/bin/tar -xf /run/myapp/c.tar --no-same-permissions -C /run/myapp --xform=s,^,/etc/,", "transform"},
		{"ExecStartPre=/usr/bin/tar -xf /run/myapp/c.tar --no-same-permissions -C /run/myapp --keep-directory-symlink", "keep-directory-symlink"},
		{"ExecStartPre=/usr/bin/tar -cf /run/myapp/c.tar --index-file=/etc/cron.d/x /etc/myapp", "index-file"},
		{"ExecStartPre=/usr/bin/tar -cf /run/myapp/c.tar -g /etc/cron.d/x /etc/myapp", "-g"},
		{"ExecStartPre=/usr/bin/tar -cf /run/myapp/c.tar --listed-incremental=/etc/cron.d/x /etc/myapp", "listed-incremental"},
		{"ExecStartPre=/usr/bin/tar -cf /run/myapp/c.tar --volno-file=/etc/cron.d/x /etc/myapp", "volno-file"},
		// a16: gawk's other ways of giving the program.
		{"ExecStart=/usr/bin/gawk --source='BEGIN{system(\"/usr/sbin/reboot\")}'", "system"},
		{"ExecStart=/usr/bin/gawk --so='BEGIN{system(\"/usr/sbin/reboot\")}'", "system"},
		{"ExecStart=/usr/bin/gawk --sou 'BEGIN{system(\"/usr/sbin/reboot\")}'", "system"},
		{"ExecStart=/usr/bin/gawk -e'BEGIN{system(\"/usr/sbin/reboot\")}'", "system"},
		{"ExecStart=/usr/bin/gawk -be'BEGIN{system(\"/usr/sbin/reboot\")}'", "system"},
		{"ExecStart=/usr/bin/gawk -bf/etc/myapp/app.conf", "/etc/myapp/app.conf"},
		{"ExecStart=/usr/bin/gawk -E /etc/myapp/app.conf", "/etc/myapp/app.conf"},
		// a20: set-user-ID modes, explicit, referenced, preserved or archived.
		{"ExecStartPre=/bin/sh -c 'cp /usr/bin/bash /run/myapp/a && chmod --reference=/usr/bin/sudo /run/myapp/a'", "--reference"},
		{"ExecStartPre=/usr/bin/chmod --ref=/usr/bin/sudo /run/myapp/a", "--reference"},
		{"ExecStartPre=/usr/bin/cp --attributes-only -p /usr/bin/sudo /run/myapp/a", "mode"},
		{"ExecStartPre=/usr/bin/cp -p /usr/bin/sudo /run/myapp/a", "mode"},
		{"ExecStartPre=/usr/bin/cp -a /usr/bin/sudo /run/myapp/a", "mode"},
		{"ExecStartPre=/usr/bin/cp --preserve=mode /usr/bin/sudo /run/myapp/a", "mode"},
		{"ExecStartPre=/usr/bin/cp --preserve /usr/bin/sudo /run/myapp/a", "mode"},
		{"ExecStartPre=/usr/bin/cp --archive /usr/bin/sudo /run/myapp/a", "mode"},
		{"ExecStartPre=/usr/bin/rsync -r --no-perms --chmod=u+s /etc/myapp/ /run/myapp/", "chmod"},
		{"ExecStartPre=/usr/bin/rsync -r --no-perms --chmod=F4755 /etc/myapp/ /run/myapp/", "chmod"},
		{"ExecStartPre=/usr/bin/rsync -a /usr/bin/sudo /run/myapp/", "modes"},
		{"ExecStartPre=/usr/bin/rsync -rp /usr/bin/sudo /run/myapp/", "modes"},
		{"ExecStartPre=/usr/bin/tar -cf /run/myapp/a.tar --mode=4755 /etc/myapp", "--mode"},
		{"ExecStartPre=/usr/bin/tar -xf /run/myapp/a.tar -C /run/myapp", "no-same-permissions"},
		{"ExecStartPre=/usr/bin/tar -xpf /run/myapp/a.tar --no-same-permissions -C /run/myapp", "no-same-permissions"},
		{"ExecStartPre=/usr/bin/cpio -i --no-absolute-filenames -D /var/lib/myapp", "modes"},
		{"ExecStartPre=/usr/bin/unzip -K /run/myapp/a.zip -d /run/myapp", "unzip -K"},
		{"ExecStartPre=/usr/bin/install -Dm4755 /etc/myapp/app.conf /run/myapp/x", "4755"},
		{"ExecStartPre=/usr/bin/install -m u+s /etc/myapp/app.conf /run/myapp/x", "set-user-ID"},
		{"ExecStartPre=/usr/bin/install --mo=+4000 /etc/myapp/app.conf /run/myapp/x", "set-user-ID"},
		{"ExecStartPre=/usr/bin/mkdir -pm g+s /run/myapp/d", "set-user-ID"},
		{"ExecStartPre=/usr/bin/chmod =6755 /run/myapp/x", "set-user-ID"},
		{"ExecStartPre=/usr/bin/chmod a=rwxs /run/myapp/x", "set-user-ID"},
		{"ExecStartPre=/usr/bin/chmod 04755 /run/myapp/x", "set-user-ID"},
		{"ExecStartPre=/usr/bin/chmod go-w,u+rs /run/myapp/x", "set-user-ID"},
	}
	for _, c := range refused {
		refusedChanged(t, c.why, c.line, SL)
	}
	for _, l := range []string{
		"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -rL --no-preserve=mode /etc/myapp/ /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -a -L --no-preserve=all /etc/myapp/ /run/myapp/x",
		"ExecStartPre=/usr/bin/cp -S .bak -f /etc/myapp/app.conf /run/myapp/x",
		"ExecStartPre=/usr/bin/rsync -a --no-perms --safe-links /etc/myapp/ /run/myapp/",
		"ExecStartPre=/usr/bin/tar -xf /usr/share/myapp/a.tar --no-same-permissions --strip-components=1 -C /run/myapp",
		"ExecStartPre=/usr/bin/install -Dm0644 /etc/myapp/app.conf /run/myapp/x",
		"ExecStartPre=/usr/bin/mkdir -pm 0755 /run/myapp/d",
		"ExecStartPre=/usr/bin/chmod u+x,go-w /run/myapp/x",
		"ExecStartPre=/usr/bin/gawk -e 'BEGIN{print 1}'",
		"ExecStartPre=/usr/bin/gawk --source='{print $1}' /etc/myapp/app.conf",
	} {
		acceptedChanged(t, l, SL)
	}
}
