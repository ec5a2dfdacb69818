package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

const round12OVSPolicy = `nodeDisruptionPolicy:
  units:
  - name: openvswitch.service
    actions: [{type: Restart, restart: {serviceName: openvswitch.service}}]
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
`

// RHCOS's openvswitch units: ovsdb-server and ovs-vswitchd read /run/openvswitch.useropts as their
// environment and run ovs-ctl as root with it.
var round12OVSNode = map[string]string{
	"/usr/lib/systemd/system/openvswitch.service": "[Unit]\nDescription=Open vSwitch\nRequires=ovsdb-server.service ovs-vswitchd.service\n[Service]\nType=oneshot\nExecStart=/bin/true\nRemainAfterExit=yes\n",
	"/usr/lib/systemd/system/ovsdb-server.service": "[Unit]\nDescription=Open vSwitch Database Unit\nPartOf=openvswitch.service\n[Service]\nType=forking\n" +
		"PIDFile=/run/openvswitch/ovsdb-server.pid\nEnvironmentFile=-/etc/sysconfig/openvswitch\n" +
		"ExecStartPre=/bin/sh -c 'rm -f /run/openvswitch.useropts; /usr/bin/echo \"OVS_USER_ID=$${OVS_USER_ID}\" > /run/openvswitch.useropts'\n" +
		"EnvironmentFile=-/run/openvswitch.useropts\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovs-vswitchd start $OPTIONS\n",
	"/usr/lib/systemd/system/ovs-vswitchd.service": "[Unit]\nDescription=Open vSwitch Forwarding Unit\nPartOf=openvswitch.service\n[Service]\nType=forking\n" +
		"EnvironmentFile=-/run/openvswitch.useropts\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovsdb-server start $OPTIONS\n",
}

func ovsDropin(lines string) *fixture.Config {
	return withUnits(unit("openvswitch.service", nil, types.Dropin{Name: "50-x.conf", Contents: str("[Service]\n" + lines)}))
}

// Round 12 (environment files): a changed line of a unit may not write a file another unit of the
// node reads as its environment (EnvironmentFile=), however it is named: openvswitch.service's
// "own" /run/openvswitch.useropts is ovsdb-server's and ovs-vswitchd's environment, run as root.
func TestChangedLinesNeverWriteAnotherUnitsEnvironmentFile(t *testing.T) {
	refused := map[string]string{
		"echo >":           `ExecStartPre=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > /run/openvswitch.useropts'`,
		"printf >>":        `ExecStartPre=/bin/sh -c 'printf "OVS_USER_OPT=--x\n" >> /run/openvswitch.useropts'`,
		"tee":              `ExecStartPre=/bin/sh -c 'echo BASH_ENV=/tmp/x | tee /run/openvswitch.useropts'`,
		"cp":               `ExecStartPre=/usr/bin/cp /tmp/x /run/openvswitch.useropts`,
		"install":          `ExecStartPre=/usr/bin/install -m 0644 /tmp/x /run/openvswitch.useropts`,
		"sed -i":           `ExecStartPre=/usr/bin/sed -i s/a/b/ /run/openvswitch.useropts`,
		"/var/run":         `ExecStart=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > /var/run/openvswitch.useropts'`,
		"dot and slashes":  `ExecStart=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > //run/./openvswitch.useropts'`,
		"a pattern":        `ExecStartPre=/usr/bin/chmod 0666 /run/openvswitch.user*`,
		"rm of it":         `ExecStartPre=/usr/bin/rm -f /run/openvswitch.useropts`,
		"dd of=":           `ExecStartPre=/usr/bin/dd if=/tmp/x of=/run/openvswitch.useropts`,
		"cd then relative": `ExecStartPre=/bin/sh -c 'cd /run; echo LD_PRELOAD=/tmp/x.so > openvswitch.useropts'`,
		"mv":               `ExecStartPre=/usr/bin/mv /tmp/x /run/openvswitch.useropts`,
		"ln":               `ExecStartPre=/usr/bin/ln -sf /tmp/x /run/openvswitch.useropts`,
	}
	for name, line := range refused {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, round12OVSPolicy, nodeRoot(t, round12OVSNode), plain(), ovsDropin(line+"\n"))
			refusedWith(t, p, "unit openvswitch.service: ", "/run/openvswitch.useropts", "ovsdb-server.service", "EnvironmentFile=")
		})
	}
	// A writer's destination given by a pattern is refused whatever it matches (a pattern names no
	// file the judge can place), before the own places are asked.
	t.Run("cp to a pattern", func(t *testing.T) {
		p := rootBuild(t, round12OVSPolicy, nodeRoot(t, round12OVSNode), plain(), ovsDropin("ExecStartPre=/usr/bin/cp /tmp/x /run/openvswitch.user*\n"))
		refusedWith(t, p, "unit openvswitch.service: ", "/run/openvswitch.user*", "a pattern")
	})
	// The readers are found wherever the node keeps them: a node drop-in, a template's instances,
	// every service (service.d), /etc/systemd/system, a generator's output.
	readers := map[string]map[string]string{
		"a node drop-in": {
			"/usr/lib/systemd/system/helper.service":           "[Service]\nExecStart=/usr/bin/helper\n",
			"/etc/systemd/system/helper.service.d/10-env.conf": "[Service]\nEnvironmentFile=/run/openvswitch.useropts\n",
		},
		"a template's instances": {
			"/usr/lib/systemd/system/ovs-x@.service": "[Service]\nEnvironmentFile=-/run/openvswitch.%i\nExecStart=/usr/bin/x\n",
		},
		"service.d":        {"/usr/lib/systemd/system/service.d/10-x.conf": "[Service]\nEnvironmentFile=-/run/openvswitch.useropts\n"},
		"a generator":      {"/run/systemd/generator/gen.service": "[Service]\nEnvironmentFile=/run/openvswitch.useropts\nExecStart=/usr/bin/x\n"},
		"a continued line": {"/etc/systemd/system/c.service": "[Service]\nEnvironmentFile=-/etc/c.env \\\n  /run/openvswitch.useropts\nExecStart=/usr/bin/x\n"},
	}
	for name, node := range readers {
		t.Run("reader/"+name, func(t *testing.T) {
			files := map[string]string{"/usr/lib/systemd/system/openvswitch.service": round12OVSNode["/usr/lib/systemd/system/openvswitch.service"]}
			for k, v := range node {
				files[k] = v
			}
			p := rootBuild(t, round12OVSPolicy, nodeRoot(t, files), plain(),
				ovsDropin("ExecStartPre=/bin/sh -c 'echo LD_PRELOAD=/tmp/x.so > /run/openvswitch.useropts'\n"))
			refusedWith(t, p, "unit openvswitch.service: ", "/run/openvswitch.useropts")
		})
	}
	// The same class: another unit's program, a credential it loads, a PID file the manager reads.
	others := map[string]struct{ node, line, want string }{
		"a program": {"[Service]\nExecStart=/run/openvswitch.helper --x\n",
			"ExecStartPre=/usr/bin/cp /tmp/x /run/openvswitch.helper", "ExecStart="},
		"a credential dir": {"[Service]\nLoadCredential=k:/run/openvswitch.creds\nExecStart=/usr/bin/x\n",
			"ExecStartPre=/usr/bin/cp /tmp/x /run/openvswitch.creds/k", "LoadCredential="},
		"a PID file": {"[Service]\nPIDFile=/run/openvswitch.other.pid\nExecStart=/usr/bin/x\n",
			"ExecStartPre=/bin/sh -c 'echo 1 > /run/openvswitch.other.pid'", "PIDFile="},
		"the directory above": {"[Service]\nEnvironmentFile=/run/openvswitch.d/env\nExecStart=/usr/bin/x\n",
			"ExecStartPre=/usr/bin/rm -rf /run/openvswitch.d", "EnvironmentFile="},
	}
	for name, c := range others {
		t.Run("other/"+name, func(t *testing.T) {
			files := map[string]string{"/usr/lib/systemd/system/openvswitch.service": round12OVSNode["/usr/lib/systemd/system/openvswitch.service"],
				"/usr/lib/systemd/system/other.service": c.node}
			p := rootBuild(t, round12OVSPolicy, nodeRoot(t, files), plain(), ovsDropin(c.line+"\n"))
			refusedWith(t, p, "unit openvswitch.service: ", "other.service", c.want)
		})
	}
	// Benign: the unit's own files no other unit reads stay its own.
	benign := []string{
		`ExecStartPre=/bin/sh -c 'echo ok > /run/openvswitch.stamp'`,
		`ExecStartPre=/bin/sh -c 'echo ok > /run/openvswitch-x/state'`,
		`ExecStartPre=/usr/bin/rm -f /run/openvswitch.x*`,
		`ExecStartPre=/bin/sh -c 'echo ok > /tmp/openvswitch.useropts'`,
	}
	for _, line := range benign {
		t.Run("benign/"+line, func(t *testing.T) {
			p := rootBuild(t, round12OVSPolicy, nodeRoot(t, round12OVSNode), plain(), ovsDropin(line+"\n"))
			require.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	// A unit that reads its own environment file from /run is refused for it already (a file units
	// write as they run); its PID file stays its own.
	t.Run("own PID file", func(t *testing.T) {
		node := map[string]string{"/etc/systemd/system/myapp.service": "[Service]\nPIDFile=/run/myapp.pid\nExecStart=/usr/bin/myapp\n"}
		des := withUnits(unit("myapp.service", nil, types.Dropin{Name: "50-x.conf", Contents: str("[Service]\nExecStartPre=/usr/bin/rm -f /run/myapp.pid\n")}))
		p := rootBuild(t, round12OVSPolicy, nodeRoot(t, node), plain(), des)
		require.True(t, p.Eligible, "%+v", p.Refused)
	})
}
