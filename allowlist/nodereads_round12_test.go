package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// ovsReads are what RHCOS's ovsdb-server.service says it reads, as the plan passes them.
func ovsReads(t *testing.T) []allowlist.NodeRead {
	t.Helper()
	r, ok, _ := allowlist.NodeReadsOf("ovsdb-server.service", "/usr/lib/systemd/system/ovsdb-server.service",
		"[Service]\nType=forking\nPIDFile=/run/openvswitch/ovsdb-server.pid\nEnvironmentFile=-/etc/sysconfig/openvswitch\n"+
			"EnvironmentFile=-/run/openvswitch.useropts\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovs-vswitchd start $OPTIONS\n", 100)
	require.True(t, ok)
	return r
}

// Round 12 (environment files): every writer the judge models, however it spells the path, is
// refused a file another unit reads as root, in the one place written paths are judged
// (ownMutation); the unit's own files no unit reads stay its own.
func TestEveryWriterIsRefusedAnotherUnitsEnvironmentFile(t *testing.T) {
	judge := func(line string) error {
		p := unitOfLines(t, true, line)
		p.ID, p.Names = "openvswitch.service", []string{"openvswitch.service"}
		p.NodeReads = ovsReads(t)
		return allowlist.JudgeUnit(p)
	}
	for _, line := range []string{
		`ExecStart=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > /run/openvswitch.useropts'`,
		`ExecStart=/bin/sh -c 'echo x >| /run/openvswitch.useropts'`,
		`ExecStart=/bin/sh -c 'echo x &> /run/openvswitch.useropts'`,
		`ExecStart=/bin/sh -c 'echo x 2>> /run/openvswitch.useropts'`,
		`ExecStart=/bin/sh -c 'exec 3> /run/openvswitch.useropts'`,
		`ExecStart=/bin/sh -c 'echo x 1<> /run/openvswitch.useropts'`,
		`ExecStart=/usr/bin/dd if=/tmp/x of=/run/openvswitch.useropts`,
		`ExecStart=/usr/bin/truncate -s 0 /run/openvswitch.useropts`,
		`ExecStart=/usr/bin/touch /run/openvswitch.useropts`,
		`ExecStart=/usr/bin/chmod 0666 /run/openvswitch.useropts`,
		`ExecStart=/usr/bin/chown core /run/openvswitch.useropts`,
		`ExecStart=/usr/bin/ln -s /run/openvswitch.useropts /tmp/l`,
		`ExecStart=/usr/bin/mkdir -p /run/openvswitch.useropts`,
		`ExecStart=/usr/bin/sed -i s/a/b/ /var/run/openvswitch.useropts`,
		`ExecStart=/usr/bin/cp /tmp/x /run/./openvswitch.useropts`,
		`ExecStart=/usr/bin/cp -t /run /tmp/openvswitch.useropts`,
		`ExecStart=/usr/bin/tee -a //run/openvswitch.useropts`,
		`ExecStart=/bin/sh -c 'cd /var/run && echo x > openvswitch.useropts'`,
		`ExecStart=/usr/bin/rm -f /run/openvswitch.u?eropts`,
		`ExecStart=/usr/bin/rm -f /run/openvswitch.[u]seropts`,
		`ExecStart=/usr/bin/rm -f /run/openvswitch.user*`,
	} {
		err := judge(line)
		if assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), "ovsdb-server.service", line)
		}
	}
	for _, line := range []string{
		`ExecStart=/bin/sh -c 'echo ok > /run/openvswitch.stamp'`,
		`ExecStart=/usr/bin/rm -f /run/openvswitch.x*`,
		`ExecStart=/usr/bin/rm -f /run/openvswitch-*.tmp`,
		`ExecStart=/bin/sh -c 'echo ok > /tmp/openvswitch.useropts'`,
		`ExecStart=/bin/sh -c 'echo ok > /run/openvswitch-x/state'`,
	} {
		assert.NoError(t, judge(line), line)
	}
	// A pattern through the reader's directory, or one past the unit's own names, is not the unit's.
	for _, line := range []string{
		`ExecStart=/usr/bin/rm -f /run/openvswitch*`,
		`ExecStart=/usr/bin/rm -f /run/openvswitch.x*/../*`,
	} {
		assert.Error(t, judge(line), line)
	}
}

// The reverse: a changed line may not write the unit's own EnvironmentFile= or program either
// (the node's own lines of the unit run with them at its next start), wherever they are; its own
// PID file stays its own.
func TestAChangedLineMayNotWriteItsOwnEnvironmentOrProgram(t *testing.T) {
	p := unitOfLines(t, true, `ExecStartPre=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > /var/lib/myapp/env'`, `ExecStart=/usr/bin/sleep infinity`)
	p.EnvironmentFiles = []string{"-/var/lib/myapp/env"}
	err := allowlist.JudgeUnit(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the unit itself (myapp.service)")
	assert.Contains(t, err.Error(), "EnvironmentFile=")

	p = unitOfLines(t, true, `ExecStartPre=/usr/bin/cp /tmp/x /var/lib/myapp/helper`)
	p.NodeReads, _, _ = allowlist.NodeReadsOf("myapp.service", "/etc/systemd/system/myapp.service", "[Service]\nExecStart=/var/lib/myapp/helper\n", 10)
	err = allowlist.JudgeUnit(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "as a program it runs (ExecStart=)")

	p = unitOfLines(t, true, `ExecStartPre=/usr/bin/rm -f /run/myapp.pid`)
	p.NodeReads, _, _ = allowlist.NodeReadsOf("myapp.service", "/etc/systemd/system/myapp.service", "[Service]\nPIDFile=myapp.pid\nExecStart=/usr/bin/sleep 1\n", 10)
	assert.NoError(t, allowlist.JudgeUnit(p))
}

// What a unit file says it reads: specifiers (a template's %i any names, %t /run), "-" and
// continued lines, several paths, credentials, relative PID files, programs and scripts.
func TestNodeReadsOfAUnitFile(t *testing.T) {
	text := "[Service]\nEnvironmentFile=-%t/ovs.%i\nEnvironmentFile=-/etc/a.env \\\n  /var/run/b.env\nLoadCredential=k:/run/creds/%p\n" +
		"LoadCredential=name-only\nPIDFile=x.pid\nExecStartPre=-/run/pre.sh\nExecStart=/bin/bash /var/lib/x/run.sh --y\nExecStop=+/usr/bin/kill $MAINPID\n" +
		"StandardInput=file:/run/in\n"
	r, ok, _ := allowlist.NodeReadsOf("ovs@.service", "/usr/lib/systemd/system/ovs@.service", text, 100)
	require.True(t, ok)
	var got []string
	for _, x := range r {
		got = append(got, x.Setting+x.Path)
	}
	for _, want := range []string{"EnvironmentFile=/run/ovs.**", "EnvironmentFile=/etc/a.env", "EnvironmentFile=/run/b.env",
		"LoadCredential=/run/creds/ovs", "PIDFile=/run/x.pid", "ExecStartPre=/run/pre.sh", "ExecStart=/bin/bash",
		"ExecStart=/var/lib/x/run.sh", "ExecStop=/usr/bin/kill", "StandardInput=/run/in"} {
		assert.Contains(t, got, want)
	}
	for _, g := range got {
		assert.NotContains(t, g, "name-only")
	}
	// The bound: past it, NodeReadsOf says so (the plan then refuses what it cannot judge).
	_, ok, _ = allowlist.NodeReadsOf("x.service", "f", "[Service]\n"+strings.Repeat("EnvironmentFile=/etc/x\n", 20), 5)
	assert.False(t, ok)
	// A drop-in directory's units.
	assert.Equal(t, "ovsdb-server.service", allowlist.ReaderName("ovsdb-server.service.d"))
	assert.Contains(t, allowlist.ReaderName("service.d"), "every service unit")
	assert.Contains(t, allowlist.ReaderName("ovs-.service.d"), "every ovs-… unit")
}
