package plan_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rhcosNode is a node tree shaped like an OpenShift RHCOS node's: systemd's boot targets as
// systemd 252 ships them (local-fs.target's OnFailure=emergency.target), the MCO's
// kubelet-dependencies.target and crio.service drop-in (Requires=kubelet-dependencies.target),
// its units RequiredBy=kubelet-dependencies.target and WantedBy=network-online.target
// (provisioning: ovs-configuration, nodeip-configuration with its systemctl daemon-reload,
// nmstate-configuration), crio's Wants=crio-wipe.service, Open vSwitch, NetworkManager, dbus, and
// multi-user.target.wants/ with the node's ordinary units. graphical.target is there, as on RHCOS,
// and never reached (default.target is multi-user.target).
func rhcosNode() map[string]string {
	const lib = "/usr/lib/systemd/system/"
	const etc = "/etc/systemd/system/"
	oneshot := "[Service]\nType=oneshot\nExecStart=/bin/true\n"
	files := map[string]string{
		lib + "sysinit.target":        "[Unit]\nDescription=System Initialization\nWants=local-fs.target swap.target\nAfter=local-fs.target swap.target\nConflicts=emergency.service emergency.target\nBefore=emergency.service emergency.target\n",
		lib + "local-fs.target":       "[Unit]\nDescription=Local File Systems\nDefaultDependencies=no\nConflicts=shutdown.target\nAfter=local-fs-pre.target\nOnFailure=emergency.target\nOnFailureJobMode=replace-irreversibly\n",
		lib + "swap.target":           "[Unit]\nDescription=Swaps\n",
		lib + "basic.target":          "[Unit]\nDescription=Basic System\nRequires=sysinit.target\nWants=sockets.target timers.target paths.target slices.target\nAfter=sysinit.target sockets.target paths.target slices.target tmp.mount\nRequiresMountsFor=/var /var/tmp\n",
		lib + "sockets.target":        "[Unit]\nDescription=Sockets\n",
		lib + "timers.target":         "[Unit]\nDescription=Timers\n",
		lib + "paths.target":          "[Unit]\nDescription=Paths\n",
		lib + "slices.target":         "[Unit]\nDescription=Slices\nWants=-.slice system.slice\n",
		lib + "system.slice":          "[Unit]\nDescription=System Slice\nDefaultDependencies=no\nBefore=slices.target\nWants=-.slice\n",
		lib + "network.target":        "[Unit]\nDescription=Network\nAfter=network-pre.target\n",
		lib + "network-pre.target":    "[Unit]\nDescription=Preparation for Network\n",
		lib + "network-online.target": "[Unit]\nDescription=Network is Online\nAfter=network.target\n",
		lib + "multi-user.target":     "[Unit]\nDescription=Multi-User System\nRequires=basic.target\nConflicts=rescue.service rescue.target\nAfter=basic.target rescue.service rescue.target\nAllowIsolate=yes\n",
		lib + "graphical.target":      "[Unit]\nDescription=Graphical Interface\nRequires=multi-user.target\nWants=display-manager.service\nConflicts=rescue.service rescue.target\nAfter=multi-user.target rescue.service rescue.target display-manager.service\nAllowIsolate=yes\n",
		lib + "getty.target":          "[Unit]\nDescription=Login Prompts\n",
		lib + "time-sync.target":      "[Unit]\nDescription=System Time Synchronized\nRequires=time-set.target\nAfter=time-set.target\n",
		lib + "time-set.target":       "[Unit]\nDescription=System Time Set\n",
		// The node's ordinary and essential units.
		lib + "dbus.socket":                        "[Unit]\nDescription=D-Bus System Message Bus Socket\n[Socket]\nListenStream=/run/dbus/system_bus_socket\n",
		lib + "dbus-broker.service":                "[Unit]\nDescription=D-Bus System Message Bus\nRequires=dbus.socket\n[Service]\nType=notify\nExecStart=/usr/bin/dbus-broker-launch --scope system --audit\nExecReload=/usr/bin/busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig\n[Install]\nAlias=dbus.service\n",
		lib + "dbus.service":                       "->" + lib + "dbus-broker.service",
		lib + "NetworkManager.service":             "[Unit]\nDescription=Network Manager\nWants=network.target\nAfter=network-pre.target dbus.service\nBefore=network.target\n[Service]\nType=dbus\nBusName=org.freedesktop.NetworkManager\nExecReload=/usr/bin/busctl call org.freedesktop.NetworkManager /org/freedesktop/NetworkManager org.freedesktop.NetworkManager Reload u 0\nExecStart=/usr/sbin/NetworkManager --no-daemon\n",
		lib + "NetworkManager-wait-online.service": "[Unit]\nDescription=Network Manager Wait Online\nRequires=NetworkManager.service\nAfter=NetworkManager.service\nBefore=network-online.target\n[Service]\nType=oneshot\nExecStart=/usr/bin/nm-online -s -q\nRemainAfterExit=yes\n",
		lib + "openvswitch.service":                "[Unit]\nDescription=Open vSwitch\nBefore=network.target\nAfter=network-pre.target ovsdb-server.service ovs-vswitchd.service\nPartOf=network.target\nRequires=ovsdb-server.service\nRequires=ovs-vswitchd.service\n[Service]\nType=oneshot\nExecStart=/bin/true\nRemainAfterExit=yes\n",
		lib + "ovsdb-server.service":               "[Unit]\nDescription=Open vSwitch Database Unit\nAfter=syslog.target network-pre.target\nBefore=network.target network.service\nWants=ovs-delete-transient-ports.service\nPartOf=openvswitch.service\n[Service]\nType=forking\nPIDFile=/run/openvswitch/ovsdb-server.pid\nRestart=on-failure\nEnvironmentFile=/etc/openvswitch/default.conf\nEnvironmentFile=-/etc/sysconfig/openvswitch\nEnvironmentFile=-/run/openvswitch.useropts\nExecStartPre=-/usr/bin/chown ${OVS_USER_ID} /var/run/openvswitch /var/log/openvswitch\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovs-vswitchd --no-monitor --system-id=random ${OVS_USER_OPT} start $OPTIONS\nExecStop=/usr/share/openvswitch/scripts/ovs-ctl --no-ovs-vswitchd stop\n",
		lib + "ovs-vswitchd.service":               "[Unit]\nDescription=Open vSwitch Forwarding Unit\nAfter=ovsdb-server.service network-pre.target systemd-udev-settle.service\nBefore=network.target network.service\nRequires=ovsdb-server.service\nReloadPropagatedFrom=ovsdb-server.service\nAssertPathIsReadWrite=/var/run/openvswitch/db.sock\nPartOf=openvswitch.service\n[Service]\nType=forking\nPIDFile=/run/openvswitch/ovs-vswitchd.pid\nRestart=on-failure\nEnvironmentFile=-/run/openvswitch.useropts\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl --no-ovsdb-server --no-monitor --system-id=random ${OVS_USER_OPT} start $OPTIONS\nExecStop=/usr/share/openvswitch/scripts/ovs-ctl --no-ovsdb-server stop\n",
		lib + "ovs-delete-transient-ports.service": "[Unit]\nDescription=Open vSwitch Delete Transient Ports\nAfter=ovsdb-server.service\nBefore=ovs-vswitchd.service\nAssertPathExists=/var/run/openvswitch/db.sock\n[Service]\nType=oneshot\nExecStart=/usr/share/openvswitch/scripts/ovs-ctl delete-transient-ports\n",
		lib + "crio.service":                       "[Unit]\nDescription=Container Runtime Interface for OCI (CRI-O)\nWants=network-online.target crio-wipe.service\nBefore=kubelet.service\nAfter=network-online.target crio-wipe.service\n[Service]\nType=notify\nEnvironmentFile=-/etc/sysconfig/crio\nExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS $CRIO_RUNTIME_OPTIONS\nExecReload=/bin/kill -s HUP $MAINPID\nRestart=on-failure\n[Install]\nWantedBy=multi-user.target\n",
		lib + "crio-wipe.service":                  "[Unit]\nDescription=CRI-O Auto Update Script\nBefore=crio.service\nRequiresMountsFor=/var/lib/containers\n[Service]\nEnvironmentFile=-/etc/sysconfig/crio\nExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS $CRIO_RUNTIME_OPTIONS $CRIO_STORAGE_OPTIONS $CRIO_NETWORK_OPTIONS $CRIO_METRICS_OPTIONS wipe\nType=oneshot\n",
		lib + "sshd.service":                       "[Unit]\nDescription=OpenSSH server daemon\nAfter=network.target sshd-keygen.target\nWants=sshd-keygen.target\n[Service]\nType=notify\nEnvironmentFile=-/etc/sysconfig/sshd\nExecStart=/usr/sbin/sshd -D $OPTIONS\nExecReload=/bin/kill -HUP $MAINPID\n",
		lib + "sshd-keygen.target":                 "[Unit]\nWants=sshd-keygen@rsa.service sshd-keygen@ecdsa.service sshd-keygen@ed25519.service\nPartOf=sshd.service\n",
		lib + "sshd-keygen@.service":               "[Unit]\nDescription=OpenSSH %i Server Key Generation\nConditionFileNotEmpty=|!/etc/ssh/ssh_host_%i_key\n[Service]\nType=oneshot\nEnvironmentFile=-/etc/sysconfig/sshd\nExecStart=/usr/libexec/openssh/sshd-keygen %i\n",
		lib + "chronyd.service":                    "[Unit]\nDescription=NTP client/server\nAfter=ntpdate.service sntp.service ntpd.service\nConflicts=ntpd.service systemd-timesyncd.service\nConditionCapability=CAP_SYS_TIME\n[Service]\nType=forking\nPIDFile=/run/chrony/chronyd.pid\nEnvironmentFile=-/etc/sysconfig/chronyd\nExecStart=/usr/sbin/chronyd $OPTIONS\n",
		lib + "chrony-wait.service":                "[Unit]\nDescription=Wait for chrony to synchronize system clock\nAfter=chronyd.service\nRequires=chronyd.service\nBefore=time-sync.target\nWants=time-sync.target\n[Service]\nType=oneshot\nExecStart=/usr/bin/chronyc -h 127.0.0.1,::1 waitsync 0 0.1 0.0 1\nRemainAfterExit=yes\n",
		lib + "rpc-statd.service":                  "[Unit]\nDescription=NFS status monitor for NFSv2/3 locking.\nDefaultDependencies=no\nConflicts=umount.target\nRequires=nss-lookup.target rpcbind.socket\nWants=network-online.target\nAfter=network-online.target nss-lookup.target rpcbind.socket\n[Service]\nType=forking\nPIDFile=/run/rpc.statd.pid\nExecStart=/usr/sbin/rpc.statd\n",
		lib + "nss-lookup.target":                  "[Unit]\nDescription=Host and Network Name Lookups\n",
		lib + "rpcbind.socket":                     "[Unit]\nDescription=RPCbind Server Activation Socket\nDefaultDependencies=no\nWants=rpcbind.target\nBefore=rpcbind.target\n[Socket]\nListenStream=/run/rpcbind.sock\nListenStream=0.0.0.0:111\n",
		lib + "rpcbind.service":                    "[Unit]\nDescription=RPC Bind\nRequires=rpcbind.socket\nWants=rpcbind.target\n[Service]\nType=notify\nEnvironmentFile=-/etc/sysconfig/rpcbind\nExecStart=/usr/bin/rpcbind $RPCBIND_ARGS -w -f\n",
		lib + "rpcbind.target":                     "[Unit]\nDescription=RPC Port Mapper\n",
		// The MCO's.
		etc + "kubelet-dependencies.target":         "[Unit]\nDescription=Dependencies necessary to run kubelet\nRequires=basic.target network-online.target\nWants=NetworkManager-wait-online.service crio-wipe.service\nWants=rpc-statd.service chrony-wait.service\n",
		etc + "crio.service.d/05-mco-ordering.conf": "[Unit]\nAfter=kubelet-dependencies.target\nRequires=kubelet-dependencies.target\n",
		etc + "kubelet.service":                     "[Unit]\nDescription=Kubernetes Kubelet\nRequires=crio.service kubelet-dependencies.target\nAfter=kubelet-dependencies.target\n[Service]\nType=notify\nExecStartPre=/bin/mkdir --parents /etc/kubernetes/manifests\nEnvironmentFile=/etc/os-release\nEnvironmentFile=-/etc/kubernetes/kubelet-env\nExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf --v=${KUBELET_LOG_LEVEL}\nRestart=always\nRestartSec=10\n[Install]\nWantedBy=multi-user.target\n",
		etc + "ovs-configuration.service":           "[Unit]\nAfter=kdump.service\nDescription=Configures OVS with proper host networking configuration\nRequires=openvswitch.service\nWants=NetworkManager-wait-online.service\nAfter=firstboot-osupdate.target\nAfter=NetworkManager-wait-online.service openvswitch.service network.service nodeip-configuration.service nmstate.service\nBefore=kubelet-dependencies.target node-valid-hostname.service\n[Service]\nType=oneshot\nExecStart=/usr/local/bin/configure-ovs.sh OVNKubernetes\nStandardOutput=journal+console\nStandardError=journal+console\n[Install]\nRequiredBy=kubelet-dependencies.target\n",
		etc + "nodeip-configuration.service":        "[Unit]\nDescription=Writes IP address configuration so that kubelet and crio services select a valid node IP\nWants=NetworkManager-wait-online.service\nAfter=NetworkManager-wait-online.service firstboot-osupdate.target\nBefore=kubelet-dependencies.target ovs-configuration.service\n[Service]\nType=oneshot\nSyslogIdentifier=nodeip-configuration\nExecStart=/bin/bash -c \"until /usr/bin/podman run --rm --authfile /var/lib/kubelet/config.json --net=host --security-opt label=disable --volume /etc/systemd/system:/etc/systemd/system --volume /run/nodeip-configuration:/run/nodeip-configuration quay.io/openshift/runtimecfg node-ip set --retry-on-failure --network-type OVNKubernetes; do sleep 5; done\"\nExecStart=/bin/systemctl daemon-reload\nExecStartPre=/bin/mkdir -p /run/nodeip-configuration\nStandardOutput=journal+console\nStandardError=journal+console\n[Install]\nRequiredBy=kubelet-dependencies.target\n",
		etc + "nmstate-configuration.service":       "[Unit]\nDescription=Applies per-node NMState network configuration\nRequires=openvswitch.service\nWants=NetworkManager-wait-online.service\nAfter=NetworkManager-wait-online.service openvswitch.service network.service nodeip-configuration.service\nBefore=nmstate.service kubelet-dependencies.target ovs-configuration.service node-valid-hostname.service\n[Service]\nType=oneshot\nExecStart=/usr/local/bin/nmstate-configuration.sh\nStandardOutput=journal+console\nStandardError=journal+console\n[Install]\nWantedBy=network-online.target\n",
		etc + "kubelet-cleanup.service":             "[Unit]\nDescription=Kubernetes Kubelet After Reboot Cleanup\nBefore=kubelet.service\n[Service]\nType=oneshot\nExecStart=/bin/rm -f /var/lib/kubelet/cpu_manager_state\nExecStart=/bin/rm -f /var/lib/kubelet/memory_manager_state\n[Install]\nWantedBy=multi-user.target\n",
		etc + "myapp-other.service":                 oneshot,
	}
	links := map[string]string{
		etc + "kubelet-dependencies.target.requires/ovs-configuration.service":    etc + "ovs-configuration.service",
		etc + "kubelet-dependencies.target.requires/nodeip-configuration.service": etc + "nodeip-configuration.service",
		etc + "network-online.target.wants/nmstate-configuration.service":         etc + "nmstate-configuration.service",
		etc + "network-online.target.wants/NetworkManager-wait-online.service":    lib + "NetworkManager-wait-online.service",
		etc + "multi-user.target.wants/kubelet.service":                           etc + "kubelet.service",
		etc + "multi-user.target.wants/kubelet-cleanup.service":                   etc + "kubelet-cleanup.service",
		etc + "multi-user.target.wants/crio.service":                              lib + "crio.service",
		etc + "multi-user.target.wants/sshd.service":                              lib + "sshd.service",
		etc + "multi-user.target.wants/chronyd.service":                           lib + "chronyd.service",
		etc + "multi-user.target.wants/NetworkManager.service":                    lib + "NetworkManager.service",
		etc + "multi-user.target.wants/openvswitch.service":                       lib + "openvswitch.service",
		etc + "sockets.target.wants/dbus.socket":                                  lib + "dbus.socket",
		etc + "sockets.target.wants/rpcbind.socket":                               lib + "rpcbind.socket",
		etc + "default.target":                                                    lib + "multi-user.target",
	}
	for l, t := range links {
		files[l] = "->" + t
	}
	return files
}

// Round 13 (units/01): on a node shaped like RHCOS, the payloads real clusters carry plan (the
// walk follows network-online.target, crio, kubelet-dependencies.target, basic.target and what
// they pull in, and finds nothing that stops the system); a payload that reaches an inactive
// target's unit that stops the system is refused, whatever the target is called.
func TestRHCOSShapedNodeStartSets(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\n%s\n[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n"
	planned := map[string]string{
		"network-online":             "Wants=network-online.target\nAfter=network-online.target",
		"crio":                       "Requires=crio.service\nAfter=crio.service",
		"kubelet":                    "Wants=kubelet.service\nAfter=kubelet.service",
		"kubelet-dependencies":       "Requires=kubelet-dependencies.target\nAfter=kubelet-dependencies.target",
		"the usual all together":     "Wants=network-online.target\nAfter=network-online.target\nRequires=crio.service\nAfter=crio.service\nOnFailure=myapp-other.service",
		"openvswitch":                "Requires=openvswitch.service\nAfter=openvswitch.service",
		"basic.target and time-sync": "Requires=basic.target\nWants=time-sync.target\nAfter=time-sync.target",
		"sysinit.target (every service requires it)": "Requires=sysinit.target\nAfter=sysinit.target",
	}
	for name, dep := range planned {
		t.Run("planned/"+name, func(t *testing.T) {
			des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", dep, 1))))
			p := rootBuild(t, round9UnitPolicy, nodeRoot(t, rhcosNode()), plain(), des)
			require.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	boom := "[Unit]\nDescription=vendor unit\nSuccessAction=exit-force\n[Service]\nType=oneshot\nExecStart=/bin/true\n"
	refused := []struct{ name, dep, target, want string }{
		{"graphical.target", "Wants=graphical.target", "graphical.target", "Wants=graphical.target Wants=vendor-boom.service: vendor-boom.service SuccessAction=exit-force"},
		{"multi-user.target", "Wants=multi-user.target", "multi-user.target", "Wants=multi-user.target Wants=vendor-boom.service"},
		{"network-online.target", "Wants=network-online.target", "network-online.target", "Wants=network-online.target Wants=vendor-boom.service"},
		{"kubelet-dependencies.target", "Requires=kubelet-dependencies.target", "kubelet-dependencies.target", "Requires=kubelet-dependencies.target Wants=vendor-boom.service"},
		{"getty.target", "Wants=getty.target", "getty.target", "Wants=getty.target Wants=vendor-boom.service"},
		{"basic.target", "Requires=basic.target", "basic.target", "Requires=basic.target Wants=vendor-boom.service"},
		{"sshd.service", "Wants=sshd.service", "sshd.service", "Wants=sshd.service Wants=vendor-boom.service"},
		{"crio through kubelet-dependencies", "Requires=crio.service", "kubelet-dependencies.target", "Requires=crio.service Requires=kubelet-dependencies.target Wants=vendor-boom.service"},
	}
	for _, tc := range refused {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			node := maps.Clone(rhcosNode())
			node["/usr/lib/systemd/system/vendor-boom.service"] = boom
			node["/usr/lib/systemd/system/"+tc.target+".wants/vendor-boom.service"] = "->/usr/lib/systemd/system/vendor-boom.service"
			des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", tc.dep, 1))))
			p := rootBuild(t, round9UnitPolicy, nodeRoot(t, node), plain(), des)
			refusedWith(t, p, "unit myapp.service: ", tc.want)
		})
	}
	// The node policy's own files rule, restarting a node unit that wants graphical.target.
	t.Run("refused/a files rule's node unit", func(t *testing.T) {
		node := maps.Clone(rhcosNode())
		node["/usr/lib/systemd/system/vendor-boom.service"] = boom
		node["/usr/lib/systemd/system/graphical.target.wants/vendor-boom.service"] = "->/usr/lib/systemd/system/vendor-boom.service"
		node["/etc/systemd/system/myapp.service"] = "[Unit]\nWants=graphical.target\n[Service]\nExecStart=/bin/sleep infinity\n"
		p := rootBuild(t, round9UnitPolicy, nodeRoot(t, node), plain(), plain().File("/etc/myapp/app.conf", []byte("v2"), 0o644))
		refusedWith(t, p, "unit myapp.service: Wants=graphical.target Wants=vendor-boom.service: vendor-boom.service SuccessAction=exit-force")
	})
}

// Round 13 (units/03): a node socket with Accept=yes runs an instance of its template per
// connection: the template is judged as the service the socket triggers, as Wants=helper@x.service is.
func TestAcceptSocketTemplateIsJudged(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\nWants=helper.socket\n[Service]\nExecStart=/bin/sleep infinity\n"
	tmpl := map[string]string{
		"SuccessAction=exit-force":     "[Unit]\nSuccessAction=exit-force\n[Service]\nExecStart=/bin/true\nStandardInput=socket\n",
		"FailureAction=reboot":         "[Unit]\nFailureAction=reboot\n[Service]\nExecStart=/bin/true\nStandardInput=socket\n",
		"Wants=shutdown.target":        "[Unit]\nWants=shutdown.target\n[Service]\nExecStart=/bin/true\nStandardInput=socket\n",
		"ExecStart=systemctl poweroff": "[Service]\nExecStart=/usr/bin/systemctl poweroff\nStandardInput=socket\n",
	}
	for name, text := range tmpl {
		for _, accept := range []string{"yes", "true", "1"} {
			t.Run(name+"/Accept="+accept, func(t *testing.T) {
				root := nodeRoot(t, map[string]string{
					"/usr/lib/systemd/system/helper.socket":   "[Socket]\nListenStream=127.0.0.1:47611\nAccept=" + accept + "\n",
					"/usr/lib/systemd/system/helper@.service": text,
				})
				p := rootBuild(t, round9UnitPolicy, root, plain(), withUnits(unit("myapp.service", str(app))))
				refusedWith(t, p, "unit myapp.service: Wants=helper.socket Triggers=helper@0.service")
			})
		}
	}
	t.Run("benign template plans", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{
			"/usr/lib/systemd/system/helper.socket":   "[Socket]\nListenStream=127.0.0.1:47611\nAccept=yes\n",
			"/usr/lib/systemd/system/helper@.service": "[Service]\nExecStart=/usr/libexec/helper\nStandardInput=socket\n",
		})
		p := rootBuild(t, round9UnitPolicy, root, plain(), withUnits(unit("myapp.service", str(app))))
		assert.True(t, p.Eligible, "%+v", p.Refused)
	})
	t.Run("Accept=no: the socket's own service", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{
			"/usr/lib/systemd/system/helper.socket":   "[Socket]\nListenStream=127.0.0.1:47611\nAccept=no\n",
			"/usr/lib/systemd/system/helper@.service": tmpl["SuccessAction=exit-force"],
			"/usr/lib/systemd/system/helper.service":  "[Service]\nExecStart=/usr/libexec/helper\n",
		})
		p := rootBuild(t, round9UnitPolicy, root, plain(), withUnits(unit("myapp.service", str(app))))
		assert.True(t, p.Eligible, "%+v", p.Refused)
	})
}
