package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Issue 27 class 2, round 4: under a unit rule a payload may change only the settings the judge
// models. Each case is what an adversary given the README would try: a setting no judge reads (every
// mount and namespace setting, PIDFile=, capabilities, credentials, …), a value of a modeled
// setting the judge refuses (Type=forking, KillMode=none, Conflicts= on the pods' slice), and the
// encodings that hide a setting from a reader that is not systemd's (backslash runs, comments in
// continuations, carriage returns, miscased keys, other sections).
func TestPlanChangesOnlyModeledSettings(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := withUnits(unit("myapp.service", str(base)))
	svc := func(lines ...string) string {
		return "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n" + strings.Join(lines, "\n") + "\n"
	}
	notModeled := []string{
		// Mounts and namespaces: each puts a file the payload wrote where the judge trusts code, or
		// changes what the unit's paths are.
		"BindPaths=/etc/myapp/app.conf:/usr/sbin/x", "BindReadOnlyPaths=/etc/myapp/app.conf:/usr/local/bin/x",
		"TemporaryFileSystem=/usr/sbin", "RootImage=/etc/myapp/app.conf", "RootDirectory=/var/lib/myapp",
		"MountImages=/etc/myapp/app.conf:/usr/local", "ExtensionImages=/etc/myapp/app.conf",
		"ExtensionDirectories=/var/lib/myapp/ext", "ReadWritePaths=/usr", "ReadOnlyPaths=/etc", "InaccessiblePaths=/etc",
		"MountAPIVFS=yes", "PrivateMounts=yes", "NetworkNamespacePath=/run/netns/x", "IPCNamespacePath=/run/x",
		"PrivateNetwork=yes", "PrivateUsers=yes", "MountFlags=shared", "RootHash=abc", "RootVerity=/x",
		// What the manager adopts, links or hands over.
		"PIDFile=/run/openvswitch/ovs-vswitchd.pid", "BusName=org.freedesktop.NetworkManager", "Slice=kubepods.slice",
		"Delegate=yes", "Sockets=crio.socket", "FileDescriptorStoreMax=10", "ExecSearchPath=/usr/lib/myapp",
		"GuessMainPID=yes", "USBFunctionDescriptors=/x", "OOMPolicy=continue",
		// Privileges and security contexts.
		"AmbientCapabilities=CAP_SYS_ADMIN", "CapabilityBoundingSet=CAP_SYS_ADMIN", "SecureBits=keep-caps",
		"SELinuxContext=system_u:system_r:spc_t:s0", "AppArmorProfile=unconfined", "SmackProcessLabel=x",
		"PAMName=login", "TTYPath=/dev/tty1", "DynamicUser=yes", "SupplementaryGroups=wheel", "SystemCallFilter=",
		"UMask=0000", "KeyringMode=shared", "IgnoreSIGPIPE=no", "CPUAffinity=0", "IOSchedulingClass=realtime",
		"CPUSchedulingPolicy=fifo", "CPUSchedulingPriority=99", "Personality=x86",
		// Credentials and files the manager opens as root.
		"LoadCredential=x:/etc/kubernetes/kubeconfig", "LoadCredentialEncrypted=x:/x", "SetCredential=x:y",
		"SetCredentialEncrypted=x:y", "ImportCredential=*", "OpenFile=/etc/shadow:shadow", "StandardInputText=reboot",
		"StandardInputData=cmVib290", "LogsDirectoryAccounting=yes", "LogExtraFields=_SYSTEMD_UNIT=kubelet.service",
		// Resource control that reaches other units or devices.
		"DeviceAllow=/dev/sda rwm", "DevicePolicy=auto", "IPAddressAllow=any", "IPAddressDeny=", "BPFProgram=x",
		"SocketBindAllow=any", "NFTSet=x", "ManagedOOMSwap=kill", "ManagedOOMMemoryPressure=kill", "AllowedCPUs=0",
		"StartupCPUWeight=10000", "CPUShares=100000", "MemoryMin=64G", "MemoryLow=64G",
		// Legacy and unknown spellings.
		"PermissionsStartOnly=yes", "RootDirectoryStartOnly=yes", "SysVStartPriority=1", "X-Foo=1", "Foo=bar",
	}
	bad := map[string]struct{ contents, want string }{}
	for _, l := range notModeled {
		k, _, _ := strings.Cut(l, "=")
		bad[k] = struct{ contents, want string }{svc(l), "[Service] " + k + "=: a setting the judge does not model"}
	}
	// ExecSearchPath= is read as an Exec line (its directory judged as a program): a changed one
	// runs no program a changed line may run (issue 27 class 3), refused naming the key first.
	bad["ExecSearchPath"] = struct{ contents, want string }{svc("ExecSearchPath=/usr/lib/myapp"), "ExecSearchPath=/usr/lib/myapp: runs /usr/lib/myapp: a changed line may run only"}
	for name, c := range map[string]struct{ contents, want string }{
		// Round 3, finding F3.
		"Type=forking PIDFile":        {svc("Type=forking", "PIDFile=/run/openvswitch/ovs-vswitchd.pid", "ExecStartPost=/usr/bin/kill -9 $MAINPID"), "[Service] PIDFile="},
		"Type=forking":                {svc("Type=forking"), "[Service] Type=forking: not one of simple, exec, oneshot, notify, notify-reload, idle"},
		"Type=dbus":                   {svc("Type=dbus"), "[Service] Type=dbus: not one of"},
		"Type=Forking":                {svc("Type=Forking"), "[Service] Type=Forking: not one of"},
		"Type=forking in dropin":      {svc("Type=simple") + "[Service]\nType=forking\n", "[Service] Type=forking"},
		"Conflicts=kubepods.slice":    {"[Unit]\nConflicts=kubepods.slice\n" + svc(), "Conflicts=kubepods.slice"},
		"Conflicts=openvswitch":       {"[Unit]\nConflicts=openvswitch.service\n" + svc(), "[Unit] Conflicts=openvswitch.service: a start or stop of the unit would stop openvswitch.service"},
		"Conflicts=var.mount":         {"[Unit]\nConflicts=var.mount\n" + svc(), "Conflicts=var.mount"},
		"Conflicts=x.socket":          {"[Unit]\nConflicts=dbus.socket\n" + svc(), "Conflicts=dbus.socket"},
		"Conflicts=myapp-other":       {"[Unit]\nConflicts=myapp-other.service\n" + svc(), "[Unit] Conflicts=myapp-other.service"},
		"Conflicts=specifier":         {"[Unit]\nConflicts=openvswitch%i.service\n" + svc(), "Conflicts=openvswitch.service"},
		"PropagatesStopTo=a target":   {"[Unit]\nPropagatesStopTo=multi-user.target\n" + svc(), "PropagatesStopTo=multi-user.target"},
		"Also=debug-shell":            {svc() + "[Install]\nWantedBy=multi-user.target\nAlso=debug-shell.service\n", "Also=debug-shell.service"},
		"Also=another service":        {svc() + "[Install]\nWantedBy=multi-user.target\nAlso=sshd-keygen.service\n", "[Install] Also=sshd-keygen.service: enabling the unit would enable units no unit rule names"},
		"RuntimeMaxSec on forking":    {svc("RuntimeMaxSec=1", "PIDFile=/run/NetworkManager/NetworkManager.pid"), "[Service] PIDFile="},
		"ordering cycle":              {"[Unit]\nAfter=kubelet.service\nBefore=kubelet.service\n" + svc(), "[Unit] After=kubelet.service: the unit would be ordered both before and after kubelet.service"},
		"ordering cycle in a dropin":  {svc() + "[Unit]\nBefore=crio.service\n[Unit]\nAfter=crio.service\n", "crio.service: the unit would be ordered both before and after"},
		"Before=sysinit.target":       {"[Unit]\nBefore=sysinit.target\n" + svc(), "[Unit] Before=sysinit.target: with default dependencies"},
		"Before=local-fs.target":      {"[Unit]\nBefore=local-fs.target\n" + svc(), "Before=local-fs.target"},
		"StandardInput=tty-force":     {svc("StandardInput=tty-force", "TTYPath=/dev/tty1"), "[Service] StandardInput=tty-force: not one of null"},
		"StandardInput=tty":           {svc("StandardInput=tty"), "[Service] StandardInput=tty: not one of null"},
		"StandardOutput=tty":          {svc("StandardOutput=tty"), "[Service] StandardOutput=tty: not one of"},
		"StandardError=tty":           {svc("StandardError=tty"), "[Service] StandardError=tty: not one of"},
		"StandardOutput=fd:":          {svc("StandardOutput=fd:myapp"), "[Service] StandardOutput=fd:myapp: not one of"},
		"StandardOutput=socket":       {svc("StandardOutput=socket"), "[Service] StandardOutput=socket: not one of"},
		"StandardError=file:":         {svc("StandardError=file:/var/log/x"), "StandardError=file:/var/log/x"},
		"KillMode=none":               {svc("KillMode=none"), "[Service] KillMode=none: not one of control-group, mixed, process"},
		"NotifyAccess=bogus":          {svc("NotifyAccess=everyone"), "[Service] NotifyAccess=everyone"},
		"Restart=bogus":               {svc("Restart=sometimes"), "[Service] Restart=sometimes"},
		"RuntimeDirectory=crio":       {svc("RuntimeDirectory=crio"), "[Service] RuntimeDirectory=crio: not the unit's own directory"},
		"RuntimeDirectory=kubens":     {svc("RuntimeDirectory=kubens"), "RuntimeDirectory=kubens: not the unit's own directory"},
		"RuntimeDirectory=systemd":    {svc("RuntimeDirectory=myapp systemd"), "systemd: not the unit's own directory"},
		"StateDirectory=kubelet":      {svc("User=core", "StateDirectory=kubelet"), "[Service] StateDirectory=kubelet"},
		"StateDirectory=myapp/../kub": {svc("StateDirectory=myapp/../kubelet"), "myapp/../kubelet: not the unit's own"},
		"LogsDirectory symlink":       {svc("LogsDirectory=myapp:audit"), "audit: not the unit's own"},
		"ConfigurationDirectory=ssh":  {svc("ConfigurationDirectory=ssh"), "ConfigurationDirectory=ssh"},
		"CacheDirectory=myappx":       {svc("CacheDirectory=myappx"), "myappx: not the unit's own"},
		"Nice=-20":                    {svc("Nice=-20"), "[Service] Nice=-20: not a number from 0 to 19"},
		"OOMScoreAdjust=-1000":        {svc("OOMScoreAdjust=-1000"), "[Service] OOMScoreAdjust=-1000"},
		"CPUWeight=10000":             {svc("CPUWeight=10000"), "[Service] CPUWeight=10000"},
		"IOWeight=10000":              {svc("IOWeight=10000"), "[Service] IOWeight=10000"},
		// Other sections: systemd ignores them in a service, the judge does not read them.
		"[X-Foo]":   {svc() + "[X-Foo]\nExecStart=/usr/bin/true\n", "[X-Foo] ExecStart=: a section the judge does not model"},
		"[Socket]":  {svc() + "[Socket]\nListenStream=/run/crio/crio.sock\n", "[Socket] ListenStream=: a section the judge does not model"},
		"[Mount]":   {svc() + "[Mount]\nWhat=/etc/myapp/app.conf\nWhere=/usr/bin/x\n", "[Mount] "},
		"[service]": {svc() + "[service]\nBindPaths=/a:/b\n", "[service] BindPaths=: a section the judge does not model"},
		// Case: systemd's keys are case-sensitive; a miscased one is an unknown key systemd ignores
		// with a warning, and no setting the judge models either: refused, saying so.
		"bindpaths=":  {svc("bindpaths=/etc/myapp/app.conf:/usr/sbin/x"), "[Service] bindpaths=: a setting the judge does not model"},
		"execstart=":  {svc("execstart=/usr/sbin/reboot"), "[Service] execstart=: not a setting systemd knows (keys are case-sensitive)"},
		"TYPE=":       {svc("TYPE=forking"), "[Service] TYPE=: not a setting systemd knows"},
		"X-prefixed":  {svc("X-BindPaths=/a:/b"), "[Service] X-BindPaths="},
		"reset empty": {svc("CapabilityBoundingSet="), "[Service] CapabilityBoundingSet="},
		// Readers that are not systemd's: each hides a setting from the judge that systemd applies.
		"backslash pair":            {svc(`ExecStartPost=/usr/bin/echo a\\`, "BindPaths=/etc/myapp/app.conf:/usr/sbin/x"), "reads differently to systemd than to the judge"},
		"comment continued":         {svc(`# a comment \`, "BindPaths=/etc/myapp/app.conf:/usr/sbin/x"), "reads differently to systemd than to the judge"},
		"comment in a continuation": {svc(`ExecStartPost=/usr/bin/true \`, "#", "Environment=A=; /usr/sbin/reboot"), "reads differently to systemd than to the judge"},
		"section in a continuation": {svc(`ExecStartPost=/usr/bin/sh -c \`, "#", "[`reboot`]"), "reads differently to systemd than to the judge"},
		"carriage return":           {svc("Description=x\rBindPaths=/etc/myapp/app.conf:/usr/sbin/x"), "reads differently to systemd than to the judge"},
		"NUL":                       {svc("Description=x\x00BindPaths=/etc/myapp/app.conf:/usr/sbin/x"), "reads differently to systemd than to the judge"},
		"vertical tab key":          {svc("\vBindPaths=/a:/b"), "BindPaths"},
		"no-break space":            {svc("ExecStartPost=/usr/bin/true\u00a0"), "reads differently to systemd than to the judge"},
	} {
		bad[name] = c
	}
	for name, c := range bad {
		t.Run("unit/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(c.contents))))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			r := p.Refused[0].Reason
			assert.Contains(t, r, "unit myapp.service")
			assert.Contains(t, r, c.want)
			assert.NotContains(t, r, "\n", "a reason is one line")
			assert.Empty(t, p.Actions)
			assert.Empty(t, p.Files)
		})
		t.Run("new unit/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, plain(), withUnits(unit("myapp.service", str(c.contents))))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, c.want)
		})
		t.Run("dropin/"+name, func(t *testing.T) {
			// The unit file unchanged; a dropin adds the setting.
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(base), types.Dropin{Name: "50-x.conf", Contents: str(c.contents)})))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, c.want)
		})
	}

	// What stays possible: the node's own settings unchanged, removals, every modeled setting with
	// an accepted value, and a continuation systemd and the judge read alike.
	accepted := map[string]struct{ cur, des string }{
		"node keeps BindPaths":     {svc("BindPaths=/var/lib/myapp:/srv"), svc("BindPaths=/var/lib/myapp:/srv", "Environment=A=2")},
		"node keeps PIDFile":       {svc("Type=forking", "PIDFile=/run/myapp.pid"), svc("Type=forking", "PIDFile=/run/myapp.pid", "RestartSec=5")},
		"node keeps Conflicts":     {"[Unit]\nConflicts=ntpd.service\n" + svc(), "[Unit]\nConflicts=ntpd.service\nConflicts=shutdown.target\n" + svc("Restart=always")},
		"node keeps its dir":       {svc("RuntimeDirectory=kubens"), svc("RuntimeDirectory=kubens", "RuntimeDirectoryMode=0700")},
		"node keeps an X- section": {svc() + "[X-Fleet]\nMachineOf=x\n", svc("Restart=always") + "[X-Fleet]\nMachineOf=x\n"},
		"removing BindPaths":       {svc("BindPaths=/var/lib/myapp:/srv"), svc()},
		"Type back to the default": {svc("Type=forking", "PIDFile=/run/myapp.pid"), svc()},
		"early without defaults":   {svc(), "[Unit]\nDefaultDependencies=no\nBefore=sysinit.target\nConflicts=shutdown.target\nBefore=shutdown.target\n" + svc()},
		"node's own cycle kept":    {"[Unit]\nAfter=x.service\nBefore=x.service\n" + svc(), "[Unit]\nAfter=x.service\nBefore=x.service\n" + svc("Restart=always")},
		"Conflicts=shutdown":       {svc(), "[Unit]\nConflicts=shutdown.target umount.target\n" + svc()},
		"Also a ruled unit":        {svc(), svc() + "[Install]\nWantedBy=multi-user.target\nAlso=myapp.service\n"},
		"own directories":          {svc(), svc("RuntimeDirectory=myapp myapp-sock", "StateDirectory=myapp/db", "LogsDirectory=%N", "CacheDirectory=myapp", "ConfigurationDirectory=myapp", "RuntimeDirectoryPreserve=yes", "StateDirectoryMode=0700")},
		"continuation":             {svc(), svc("ExecStartPost=/usr/bin/echo \\", "    one \\", "  \\", "    two")},
		"comment after a value":    {svc(), svc("ExecStartPost=/usr/bin/true", "# BindPaths=/a:/b", "; TemporaryFileSystem=/usr")},
		"crlf":                     {svc(), strings.ReplaceAll(svc("Restart=always"), "\n", "\r\n")},
		"tunes and sandbox": {svc(), svc("TimeoutStartSec=90", "TimeoutStopSec=30", "TimeoutSec=300", "RestartSec=10", "Restart=on-failure",
			"RestartSteps=3", "RestartMaxDelaySec=60", "SuccessExitStatus=143", "WatchdogSec=30", "RemainAfterExit=no", "KillMode=mixed",
			"KillSignal=SIGINT", "FinalKillSignal=SIGKILL", "SendSIGKILL=yes", "SendSIGHUP=no", "LimitNOFILE=1048576", "LimitCORE=infinity",
			"Nice=5", "OOMScoreAdjust=500", "CPUWeight=50", "IOWeight=idle", "CPUQuota=50%", "MemoryHigh=1G", "MemoryMax=2G", "TasksMax=512",
			"NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=read-only", "PrivateTmp=yes", "PrivateDevices=yes",
			"ProtectKernelTunables=yes", "ProtectKernelModules=yes", "ProtectControlGroups=yes", "ProtectClock=yes", "ProtectHostname=yes",
			"RestrictRealtime=yes", "LockPersonality=yes", "MemoryDenyWriteExecute=yes", "SyslogIdentifier=myapp", "SyslogLevel=info",
			"SyslogFacility=daemon", "LogLevelMax=info", "User=myapp", "Group=myapp", "NotifyAccess=main", "UnsetEnvironment=TZ")},
		"unit section": {svc(), "[Unit]\nDescription=x\nDocumentation=man:myapp(8)\nWants=network-online.target\nAfter=network-online.target\n" +
			"Before=kubelet-dependencies.target\nRequires=crio.service\nPartOf=myapp.target\nConditionPathExists=!/etc/myapp/off\n" +
			"AssertPathIsDirectory=/var/lib\nStartLimitIntervalSec=60\nStartLimitBurst=3\nRefuseManualStop=no\nJobTimeoutSec=600\n" +
			"DefaultDependencies=yes\nFailureAction=none\nOnFailureJobMode=replace\n" + strings.TrimPrefix(svc(), "[Unit]\nDescription=my app\n")},
	}
	for _, typ := range []string{"simple", "exec", "oneshot", "notify", "notify-reload", "idle", ""} {
		accepted["Type="+typ] = struct{ cur, des string }{svc(), svc("Type=" + typ)}
	}
	for name, c := range accepted {
		t.Run("accepted/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, withUnits(unit("myapp.service", str(c.cur))), withUnits(unit("myapp.service", str(c.des))))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}

	// A masked unit loaded nothing: unmasking it judges its dropins as the payload's.
	masked := withUnits(types.Unit{Name: "myapp.service", Mask: boolp(true), Dropins: []types.Dropin{{Name: "50-x.conf", Contents: str("[Service]\nBindPaths=/a:/b\n")}}})
	p := ndpBuild(t, ndpPolicy, masked, withUnits(types.Unit{Name: "myapp.service", Mask: boolp(false), Dropins: []types.Dropin{{Name: "50-x.conf", Contents: str("[Service]\nBindPaths=/a:/b\n")}}}))
	assert.False(t, p.Eligible)
	require.NotEmpty(t, p.Refused)
	assert.Contains(t, p.Refused[0].Reason, "[Service] BindPaths=")
}

// mcsUnitPolicy names the node's kubelet, crio and a myapp.service under unit rules.
const mcsUnitPolicy = `nodeDisruptionPolicy:
  units:
  - name: kubelet.service
    actions: [{type: Restart, restart: {serviceName: kubelet.service}}]
  - name: crio.service
    actions: [{type: Reload, reload: {serviceName: crio.service}}]
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
`

// mcsKubelet is the kubelet.service the machine-config server serves.
const mcsKubelet = "[Unit]\nDescription=Kubernetes Kubelet\nRequires=crio.service kubelet-dependencies.target\nAfter=kubelet-dependencies.target\n" +
	"After=ostree-finalize-staged.service\n\n[Service]\nType=notify\nExecStartPre=/bin/mkdir --parents /etc/kubernetes/manifests\n" +
	"ExecStartPre=-/usr/sbin/restorecon -ri /var/lib/kubelet/pod-resources /usr/local/bin/kubenswrapper /usr/bin/kubensenter\n" +
	"Environment=\"KUBELET_NODE_IP=0.0.0.0\"\nEnvironmentFile=/etc/os-release\nEnvironmentFile=-/etc/kubernetes/kubelet-workaround\n" +
	"EnvironmentFile=-/etc/kubernetes/kubelet-env\n\nExecStart=/usr/local/bin/kubenswrapper \\\n    /usr/bin/kubelet \\\n" +
	// Every flag of the MCO's template (templates/worker/01-worker-kubelet), as the MCS serves it.
	"      --config=/etc/kubernetes/kubelet.conf \\\n      --config-dir=/etc/openshift/kubelet.conf.d \\\n" +
	"      --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig \\\n      --kubeconfig=/var/lib/kubelet/kubeconfig \\\n" +
	"      --container-runtime-endpoint=/var/run/crio/crio.sock \\\n      --runtime-cgroups=/system.slice/crio.service \\\n" +
	"      --node-labels=node-role.kubernetes.io/worker,node.openshift.io/os_id=${ID},${CUSTOM_KUBELET_LABELS} \\\n" +
	"      --node-ip=${KUBELET_NODE_IP} \\\n      --minimum-container-ttl-duration=6m0s \\\n" +
	"      --volume-plugin-dir=/etc/kubernetes/kubelet-plugins/volume/exec \\\n      --cloud-provider= \\\n       \\\n" +
	"      --hostname-override=${KUBELET_NODE_NAME} \\\n      --provider-id=${KUBELET_PROVIDERID} \\\n" +
	"      --v=${KUBELET_LOG_LEVEL}\n\nRestart=always\nRestartSec=10\n\n[Install]\nWantedBy=multi-user.target\n"

// The machine-config server's own unit shapes (kubelet, crio's dropins, and the shapes of kubens,
// ovs-configuration, nodeip-configuration, kubelet-auto-node-size, wait-for-ipsec-connect under a unit
// rule's name), generated here: every key they use is modeled, so a payload that changes their
// settings passes, and one that adds them is refused, if at all, only by the exec judge's strict
// judging of the payload's own commands.
func TestMachineConfigServerUnitsChangeUnderAUnitRule(t *testing.T) {
	const pol = mcsUnitPolicy
	kubelet := mcsKubelet
	kubens := "# vim:set ft=systemd :\n#\n# joins the mount namespace kubens.service manages\n#\n\n[Unit]\nAfter=kubens.service\n\n[Service]\nEnvironmentFile=-/run/kubens/env\n"
	oneshot := func(desc, exec, install string) string {
		return "[Unit]\n# a comment\nDescription=" + desc + "\nWants=NetworkManager-wait-online.service\nAfter=NetworkManager-wait-online.service firstboot-osupdate.target\n" +
			"Before=kubelet-dependencies.target node-valid-hostname.service\nConditionPathExists=!/etc/ignition-machine-config-encapsulated.json\n" +
			"Documentation=https://github.com/openshift/machine-config-operator\n\n[Service]\n# Need oneshot to delay kubelet\nType=oneshot\n" +
			"RemainAfterExit=yes\nSyslogIdentifier=myapp\nTimeoutSec=300\n" + exec + "\nStandardOutput=journal+console\nStandardError=journal+console\n\n[Install]\n" + install + "\n"
	}
	units := map[string]types.Unit{
		"kubelet": unit("kubelet.service", str(kubelet), types.Dropin{Name: "01-kubens.conf", Contents: str(kubens)},
			types.Dropin{Name: "10-mco-default-env.conf"}, types.Dropin{Name: "10-mco-default-madv.conf", Contents: str("[Service]\nEnvironment=\"GODEBUG=x509ignoreCN=0,madvdontneed=1\"\n")}),
		"crio dropins": unit("crio.service", nil, types.Dropin{Name: "01-kubens.conf", Contents: str(kubens)},
			types.Dropin{Name: "05-mco-ordering.conf", Contents: str("[Unit]\nAfter=kubelet-dependencies.target\nRequires=kubelet-dependencies.target\n")},
			types.Dropin{Name: "10-mco-profile-unix-socket.conf", Contents: str("[Service]\nEnvironment=\"ENABLE_PROFILE_UNIX_SOCKET=true\"\n")}),
		"ovs-configuration shape": unit("myapp.service", str(oneshot("Configures OVS", "ExecStart=/usr/local/bin/configure-ovs.sh", "RequiredBy=kubelet-dependencies.target"))),
		// (its WantedBy=ipsec.service, a unit no rule names, is refused by judgeReach as before)
		"wait-for-ipsec-connect shape": unit("myapp.service", str(oneshot("Ensure IKE SA", "ExecStart=/usr/local/bin/ipsec-connect-wait.sh", "WantedBy=multi-user.target"))),
		"kubelet-auto-node-size shape": unit("myapp.service", str(oneshot("system reserved", "EnvironmentFile=/etc/node-sizing-enabled.env\nExecStart=/bin/bash /usr/local/sbin/dynamic-system-reserved-calc.sh ${NODE_SIZING_ENABLED} ${SYSTEM_RESERVED_MEMORY}", "RequiredBy=kubelet-dependencies.target"))),
		// nodeip-configuration's, without its `systemctl daemon-reload` (refused by class).
		"nodeip-configuration shape": unit("myapp.service", str(oneshot("Writes IP address configuration",
			"ExecStart=/bin/bash -c \" \\\n  until \\\n  /usr/bin/podman run --rm \\\n  --authfile /var/lib/kubelet/config.json \\\n  --net=host \\\n   \\\n  node-ip \\\n  set \\\n  --retry-on-failure; \\\n  do \\\n  sleep 5; \\\n  done\"\n"+
				"ExecStartPre=/bin/mkdir -p /run/nodeip-configuration\nEnvironmentFile=-/etc/default/nodeip-configuration", "RequiredBy=kubelet-dependencies.target"))),
		"kubens shape": unit("myapp.service", str("[Unit]\nDescription=Manages a mount namespace\nBefore=kubelet-dependencies.target\n[Service]\nType=oneshot\nRemainAfterExit=yes\n"+
			"RuntimeDirectory=myapp\nEnvironment=RUNTIME_DIRECTORY=%t/myapp\nEnvironment=BIND_POINT=%t/myapp/mnt\nExecStartPre=touch ${BIND_POINT}\n"+
			"ExecStart=unshare --mount=${BIND_POINT} --propagation slave mount --make-rshared /\nExecStop=umount -R ${RUNTIME_DIRECTORY}\n[Install]\nWantedBy=multi-user.target\n")),
		"podman shape": unit("myapp.service", str("[Unit]\nDescription=registry\nWants=network-online.target\nAfter=network-online.target\n[Service]\n"+
			"Environment=PODMAN_SYSTEMD_UNIT=%n\nRestart=on-failure\nTimeoutStopSec=70\nExecStart=/usr/bin/podman run --cidfile=%t/%n.ctr-id --replace --name=myapp quay.io/x/y@sha256:0\n"+
			"ExecStop=/usr/bin/podman stop --ignore --cidfile=%t/%n.ctr-id\nType=notify\nNotifyAccess=all\n[Install]\nWantedBy=multi-user.target\n")),
	}
	// Issue 27 round 4: a line the payload adds or changes runs programs and scripts only from
	// read-only OS content and the node's own program dirs, and no container image (allowlist
	// TestChangedLinesRunOnlyReadOnlyOSContent): these shapes, added, are refused naming the line;
	// with their commands unchanged they are accepted. The MCO's /usr/local/bin scripts run.
	// Issue 27 class 3: an added line runs only the programs the judge models or the node policy
	// grants the unit (unitPrograms): the MCS's own programs, added, are refused naming them, and
	// accepted once granted (grantedPol).
	strict := map[string]string{"nodeip-configuration shape": "podman run", "podman shape": "podman run",
		// Issue 27 class 3: an added kubelet.service's mkdir of /etc/kubernetes/manifests and restorecon of
		// /usr/local/bin/kubenswrapper lie outside its own places (the node's kubelet, changed, may).
		"kubelet": "mkdir changes /etc/kubernetes/manifests: a changed line changes the node's files only in the unit's own places", "ovs-configuration shape": "runs /usr/local/bin/configure-ovs.sh: a changed line may run only",
		"wait-for-ipsec-connect shape": "runs /usr/local/bin/ipsec-connect-wait.sh: a changed line may run only",
		"kubens shape":                 "runs unshare: a changed line may run only",
		"kubelet-auto-node-size shape": "the script /usr/local/sbin/dynamic-system-reserved-calc.sh: a changed line runs only the unit's own scripts"}
	grantedPol := pol + "unitPrograms:\n  kubelet.service: [/usr/bin/kubelet]\n" +
		"  myapp.service: [/usr/local/bin/configure-ovs.sh, /usr/local/bin/ipsec-connect-wait.sh, /usr/bin/unshare, /usr/bin/mount, /usr/bin/umount,\n" +
		"    /usr/local/sbin/dynamic-system-reserved-calc.sh]\n"
	refusedStrictly := func(t *testing.T, p *plan.Plan, why string) {
		if assert.False(t, p.Eligible) && assert.NotEmpty(t, p.Refused) {
			assert.Contains(t, p.Refused[0].Reason, why)
			assert.Contains(t, p.Refused[0].Reason, "a changed line")
		}
	}
	for name, u := range units {
		t.Run("added/"+name, func(t *testing.T) {
			// Every setting of an added unit is the payload's: the boundary accepts each one. Its
			// commands are all changed lines, which the exec judge judges strictly: it alone may
			// refuse them (a program under /usr/local, which RHCOS keeps writable in /var/usrlocal).
			p := ndpBuild(t, pol, plain(), withUnits(u))
			for _, r := range p.Refused {
				assert.Regexp(t, `^unit \S+: Exec[A-Za-z]*=`, r.Reason, "only the exec judge refuses an added MCS unit")
			}
			if why, ok := strict[name]; ok {
				refusedStrictly(t, p, why)
				if strings.Contains(why, "a changed line may run only") || strings.Contains(why, "a changed line runs only") {
					p = ndpBuild(t, grantedPol, plain(), withUnits(u))
					if !strings.Contains(*u.Contents, "RequiredBy=kubelet-dependencies.target") {
						assert.True(t, p.Eligible, "granted: %+v", p.Refused)
						return
					}
					// Round-7a F1: added, RequiredBy=kubelet-dependencies.target would make the rule's
					// restart restart kubelet (which requires the target); WantedBy= the same target
					// only starts it.
					if assert.False(t, p.Eligible) && assert.NotEmpty(t, p.Refused) {
						assert.Contains(t, p.Refused[0].Reason, "unit myapp.service: [Install] RequiredBy=kubelet-dependencies.target: ")
					}
					wanted := strings.Replace(*u.Contents, "RequiredBy=", "WantedBy=", 1)
					p = ndpBuild(t, grantedPol, plain(), withUnits(unit(u.Name, &wanted)))
					assert.True(t, p.Eligible, "granted, WantedBy=: %+v", p.Refused)
				}
				return
			}
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
		t.Run("changed/"+name, func(t *testing.T) {
			// The MCS changes what it changes: an environment value the commands do not name, a
			// restart delay, a timeout, the ordering; the commands stay the node's.
			changed := u
			edit := func(s *string) *string {
				if s == nil {
					return nil
				}
				v := strings.ReplaceAll(*s, "=true", "=false")
				v = strings.ReplaceAll(v, "RestartSec=10", "RestartSec=20")
				v = strings.ReplaceAll(v, "After=kubelet-dependencies.target", "After=kubelet-dependencies.target network-online.target")
				v = strings.ReplaceAll(v, "TimeoutSec=300", "TimeoutSec=600")
				return &v
			}
			changed.Contents = edit(u.Contents)
			changed.Dropins = nil
			for _, d := range u.Dropins {
				changed.Dropins = append(changed.Dropins, types.Dropin{Name: d.Name, Contents: edit(d.Contents)})
			}
			p := ndpBuild(t, pol, withUnits(u), withUnits(changed))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	// The node's own kubelet with new flags: the payload changes --v and adds one; the programs
	// (kubenswrapper, kubelet) are the unit's own. A new program behind the same wrapper is not.
	cur := units["kubelet"]
	for flags, ok := range map[string]bool{"--v=4": true, "--v=4 --max-pods=500": true} {
		des := cur
		c := strings.Replace(*cur.Contents, "--v=${KUBELET_LOG_LEVEL}", flags, 1)
		des.Contents = &c
		p := ndpBuild(t, pol, withUnits(cur), withUnits(des))
		assert.Equal(t, ok, p.Eligible, "%s: %+v", flags, p.Refused)
	}
	des := cur
	c := strings.Replace(*cur.Contents, "/usr/bin/kubelet", "/usr/bin/kubelet-other", 1)
	des.Contents = &c
	p := ndpBuild(t, pol, withUnits(cur), withUnits(des))
	if assert.False(t, p.Eligible) && assert.NotEmpty(t, p.Refused) {
		assert.Contains(t, p.Refused[0].Reason, "runs /usr/bin/kubelet-other: a changed line may run only")
	}
}

// Round-5 adversary F6 (adv r5a t4) and F5 (t5): a dependency a payload adds that starts a unit
// (Wants=, Requires=, Requisite=, BindsTo=, Upholds=, OnFailure=, OnSuccess=, and [Install]
// WantedBy=/RequiredBy=/UpheldBy=) may not name a provisioning unit, and a changed NotifyAccess= is
// main, exec or none. The node's own dependencies on them (kubelet's Requires=kubens.service) and
// an unchanged NotifyAccess=all (podman's units) stay accepted.
func TestPayloadAddsNoDependencyOnProvisioningUnits(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := withUnits(unit("myapp.service", str(base)))
	refused := map[string]struct{ contents, want string }{}
	for _, dep := range []string{"Wants", "Requires", "Requisite", "BindsTo", "Upholds", "OnFailure", "OnSuccess"} {
		for _, u := range []string{"crio-wipe.service", "ovs-configuration.service", "nodeip-configuration.service",
			"kubelet-cleanup.service", "ignition-firstboot-complete.service", "kubens.service", "Crio-Wipe.service"} {
			// BindsTo=, OnFailure=, OnSuccess= were refused before (JudgeUnit): the reason names the unit.
			want, extra := dep+"="+u, ""
			if dep == "Wants" || dep == "Requires" || dep == "Requisite" || dep == "Upholds" {
				want, extra = "[Unit] "+dep+"="+u+": a provisioning unit", "network-online.target "
			}
			refused[dep+"="+u] = struct{ contents, want string }{"[Unit]\n" + dep + "=" + extra + u + "\n" + base[len("[Unit]\n"):], want}
		}
	}
	for _, inst := range []string{"WantedBy", "RequiredBy", "UpheldBy"} {
		refused["[Install] "+inst] = struct{ contents, want string }{base + "[Install]\n" + inst + "=multi-user.target ovs-configuration.service\n", "[Install] " + inst + "=ovs-configuration.service"} // refused before too (a unit no rule names)
	}
	refused["NotifyAccess=all"] = struct{ contents, want string }{base + "Type=notify\nNotifyAccess=all\n", "[Service] NotifyAccess=all: not one of main, exec, none"}
	for name, c := range refused {
		for _, shape := range []struct {
			name string
			cur  *fixture.Config
			des  *fixture.Config
		}{
			{"unit", cur, withUnits(unit("myapp.service", str(c.contents)))},
			{"new unit", plain(), withUnits(unit("myapp.service", str(c.contents)))},
			{"dropin", cur, withUnits(unit("myapp.service", str(base), types.Dropin{Name: "50-x.conf", Contents: str(c.contents)}))},
		} {
			t.Run(shape.name+"/"+name, func(t *testing.T) {
				p := ndpBuild(t, ndpPolicy, shape.cur, shape.des)
				assert.False(t, p.Eligible)
				if assert.NotEmpty(t, p.Refused) {
					assert.Contains(t, p.Refused[0].Reason, c.want)
				}
			})
		}
	}
	node := "[Unit]\nDescription=my app\nRequires=kubens.service crio-wipe.service\nUpholds=kubelet-cleanup.service\nAfter=kubens.service\n[Service]\nType=notify\nNotifyAccess=all\nExecStart=/usr/bin/myapp\nRestartSec=10\n[Install]\nWantedBy=multi-user.target\n"
	for name, c := range map[string]struct{ cur, des string }{
		"the node's own dependencies, another setting changed": {node, strings.Replace(node, "RestartSec=10", "RestartSec=20", 1)},
		"a dependency removed":                                 {node, strings.Replace(node, " crio-wipe.service", "", 1)},
		"ordering after a provisioning unit":                   {base, "[Unit]\nAfter=crio-wipe.service nodeip-configuration.service\n" + base[len("[Unit]\n"):]},
		"ordinary dependencies":                                {base, "[Unit]\nWants=network-online.target\nRequires=crio.service\nOnFailure=myapp-other.service\n" + base[len("[Unit]\n"):] + "[Install]\nWantedBy=multi-user.target\n"},
		"NotifyAccess=main":                                    {base, base + "Type=notify\nNotifyAccess=main\n"},
		"NotifyAccess=exec, then none":                         {base + "NotifyAccess=exec\n", base + "NotifyAccess=none\n"},
	} {
		t.Run("accepted/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, withUnits(unit("myapp.service", str(c.cur))), withUnits(unit("myapp.service", str(c.des))))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
}
