package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/test/fixture"
)

// The round-4 adversary's units (adv core-attack4 r2, r4), as the binary sees them: a NodeDisruption
// policy with a unit rule for myapp.service, the payload's file /etc/myapp/app.conf holding a
// script, and a unit whose own commands make code out of it. diff refuses (exit 3) naming the line,
// and apply --dry-run says refused, writing nothing.
func TestCLIRefusesUnitsWhoseCommandsMakeTheirCode(t *testing.T) {
	pol := writeFile(t, "ndp.yaml", []byte(machineConfiguration))
	cur := writeFile(t, "cur.ign", fixture.Ignition("3.2.0").Unit("myapp.service", "[Service]\nExecStart=/usr/bin/sleep infinity\n").JSON())
	cases := []struct{ service, why string }{
		{`ExecStart=/usr/bin/sh -c 'cp /etc/myapp/app.conf /usr/local/bin/ok; chmod +x /usr/local/bin/ok; /usr/local/bin/ok'`, "writes /usr/local/bin/ok"},
		{`ExecStart=/usr/bin/sh -c 'cp /etc/myapp/app.conf /usr/local/libexec/ok && sh /usr/local/libexec/ok'`, "writes /usr/local/libexec/ok"},
		{`ExecStart=/usr/bin/sh -c 'cp /usr/bin/systemctl /usr/local/bin/ok && /usr/local/bin/ok reboot'`, "writes /usr/local/bin/ok"},
		{`ExecStart=/usr/bin/sh -c 'ln -sf /usr/bin/systemctl /tmp/ok; /tmp/ok reboot'`, "/tmp/ok"},
		{"ExecStartPre=/usr/bin/ln -sf /usr/bin/systemctl /usr/local/bin/ok\nExecStart=/usr/local/bin/ok reboot", "ExecStartPre="},
		// Round 5: F1 (a program the judge does not model as a wrapper, xargs's replace string), F5, F6.
		{`ExecStart=/usr/bin/setarch x86_64 /usr/sbin/reboot`, "reboots"},
		// (issue 27 class 3: a changed line runs only modeled, own or granted programs)
		{`ExecStart=/usr/bin/somewrapper -q /usr/bin/bash /etc/myapp/app.conf`, "runs /usr/bin/somewrapper: a changed line may run only the programs the judge models"},
		{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -I{} /usr/bin/sh -c {}`, "replace string {}"},
		{"Type=notify\nExecStart=/usr/bin/bash -c 'echo MAINPID=1 | /usr/bin/nc -u -U \"$NOTIFY_SOCKET\"'", "notification socket"},
		{"Type=notify\nNotifyAccess=all\nExecStart=/usr/bin/sleep infinity", "NotifyAccess=all"},
		{"ExecStart=/usr/bin/sleep infinity\n[Unit]\nUpholds=kubelet-cleanup.service", "Upholds=kubelet-cleanup.service: a provisioning unit"},
		{`ExecStart=/usr/bin/systemd-nspawn --image=/etc/myapp/app.conf`, "/etc/myapp/app.conf"},
		{"Environment=HOME=/etc/myapp\nExecStart=/usr/bin/bash -lc '/usr/bin/sleep 1'", "Environment=HOME= (a value of 10 bytes"},
		{`ExecStart=/bin/sh -c 'cat /etc/myapp/app.conf > /var/usrlocal/bin/y'`, "/usr/local/bin/y"},
		{`ExecStart=/usr/bin/install -D /etc/myapp/app.conf /usr/local/sbin/y`, "/usr/local/sbin/y"},
		{`ExecStart=/usr/bin/podman run --rm -v /etc/myapp/app.conf:/x:z --privileged --pid=host registry.access.redhat.com/ubi9 sh /x`, "podman run"},
		{`ExecStart=/usr/bin/timeout 5 /tmp/myapp`, "a changed line runs /tmp/myapp"},
		{`ExecStart=/usr/bin/python3 /etc/myapp/app.conf`, "/etc/myapp/app.conf"},
		// Round 5: F2 (programs whose files are code), F3 (the node's program dirs as a writer's
		// operand, cd to HOME), F4 (/usr/tmp is /var/tmp), StandardOutput=tty.
		{`ExecStart=/usr/lib/systemd/systemd-sysctl /etc/myapp/app.conf`, "systemd-sysctl /etc/myapp/app.conf"},
		{`ExecStart=/usr/bin/systemd-tmpfiles --create /etc/myapp/app.conf`, "a file the payload may write"},
		{`ExecStart=/usr/bin/python3 -m pdb /etc/myapp/app.conf`, "python3 -m pdb"},
		{"ExecStartPre=/usr/bin/chmod 755 /etc/myapp/hook\nExecStart=/usr/bin/run-parts /etc/myapp", "run-parts /etc/myapp"}, // round 9: app.conf, a rule's file, is not the unit's to chmod
		{"ExecStartPre=/usr/bin/sort -o /usr/local/bin/ok /etc/myapp/app.conf\nExecStart=/usr/local/bin/ok", "names the node's program dir /usr/local/bin/ok as an operand of sort"},
		{`ExecStart=/usr/bin/sed -i '2i /usr/bin/bash /etc/myapp/app.conf' /usr/local/bin/kubenswrapper`, "operand of sed"},
		{`ExecStart=/usr/bin/setfacl -m u:core:rwx /usr/local/bin`, "operand of setfacl"},
		{`ExecStart=/usr/bin/bash -c 'HOME=/usr/local/bin; cd; cp /etc/myapp/app.conf ok'`, "HOME=/usr/local/bin"},
		{"ExecStartPre=/usr/bin/install -m 755 /etc/myapp/app.conf /var/tmp/ok\nExecStart=/usr/tmp/ok", "reads /var/tmp/ok (/usr/tmp/ok) as a program it runs"},
		{"ExecStart=/usr/bin/sleep infinity\nStandardOutput=tty", "StandardOutput=tty"},
	}
	for _, c := range cases {
		t.Run(c.service, func(t *testing.T) {
			des := fixture.Ignition("3.2.0").File("/etc/myapp/app.conf", []byte("#!/bin/sh\nsystemctl reboot\n"), 0o644).
				Unit("myapp.service", "[Service]\n"+c.service+"\n")
			out := refusedByDiffAndDryRun(t, pol, cur, writeFile(t, "des.ign", des.JSON()))
			assert.Contains(t, out, c.why)
			assert.Contains(t, out, "myapp.service")
			assert.False(t, strings.Contains(out, "systemctl reboot"), "never prints the file's contents")
		})
	}
}

// A line the payload does not change is the node's: a file change that restarts a unit running
// /usr/local/bin's program (the MCO's kubelet shape) stays eligible.
func TestCLIKeepsTheNodesOwnUnchangedLines(t *testing.T) {
	pol := writeFile(t, "ndp.yaml", []byte(machineConfiguration))
	unit := "[Service]\nExecStart=/usr/local/bin/kubenswrapper /usr/bin/sleep infinity\n"
	cur := writeFile(t, "cur.ign", fixture.Ignition("3.2.0").Unit("myapp.service", unit).JSON())
	des := fixture.Ignition("3.2.0").File("/etc/myapp/app.conf", []byte("x"), 0o644).Unit("myapp.service", unit)
	code, out, stderr := run(t, "diff", "--policy", pol, "--current", cur, "--desired", writeFile(t, "des.ign", des.JSON()))
	assert.Equal(t, exitOK, code, "%s%s", out, stderr)
}
