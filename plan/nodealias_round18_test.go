package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
)

// The cri-o package's unit as RHCOS ships it: enabling it links cri-o.service to it (Alias=).
const rhcosCrioUnit = "[Unit]\nDescription=Container Runtime Interface for OCI (CRI-O)\nWants=network-online.target\nBefore=kubelet.service\nAfter=network-online.target\n" +
	"[Service]\nType=notify\nEnvironmentFile=-/etc/sysconfig/crio\nEnvironment=GOTRACEBACK=crash\n" +
	"ExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS $CRIO_RUNTIME_OPTIONS $CRIO_STORAGE_OPTIONS $CRIO_NETWORK_OPTIONS $CRIO_METRICS_OPTIONS\n" +
	"ExecReload=/bin/kill -s HUP $MAINPID\nTasksMax=infinity\nLimitNOFILE=1048576\nOOMScoreAdjust=-999\nTimeoutStartSec=0\nRestart=on-failure\nRestartSec=10\n" +
	"[Install]\nWantedBy=multi-user.target\nAlias=cri-o.service\n"

const crioReloadPolicy = `nodeDisruptionPolicy:
  units:
  - name: crio.service
    actions: [{type: Reload, reload: {serviceName: crio.service}}]
`

func crioDropin(body string) types.Unit {
	return unit("crio.service", nil, types.Dropin{Name: "10-mco-limits.conf", Contents: str("[Service]\n" + body)})
}

// Adversary r18 c/01: the node's own crio.service says [Install] Alias=cri-o.service (the cri-o
// package's), so every payload change of a crio drop-in was refused as an alias no rule grants,
// though the payload adds none. An alias the node's unit already gives is the node's; one the
// payload adds, in a drop-in or its own unit file, stays refused.
func TestNodesOwnAliasIsNoAliasThePayloadAdds(t *testing.T) {
	root := nodeRoot(t, map[string]string{"/usr/lib/systemd/system/crio.service": rhcosCrioUnit})
	p := rootBuild(t, crioReloadPolicy, root, withUnits(crioDropin("LimitNOFILE=1048576\n")), withUnits(crioDropin("LimitNOFILE=2097152\n")))
	assert.True(t, p.Eligible, "%+v", p.Refused)

	for name, des := range map[string]types.Unit{
		"an added alias in a drop-in": crioDropin("LimitNOFILE=2097152\n[Install]\nAlias=kubelet.service\n"),
		"a second alias":              crioDropin("LimitNOFILE=2097152\n[Install]\nAlias=cri-o.service crio-x.service\n"),
	} {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, crioReloadPolicy, root, withUnits(crioDropin("LimitNOFILE=1048576\n")), withUnits(des))
			refusedWith(t, p, "unit crio.service: ", "Alias=")
		})
	}
	// Enabling the unit links every alias its definition names, the node's included: judged.
	enabled := crioDropin("LimitNOFILE=2097152\n")
	enabled.Enabled = boolp(true)
	p = rootBuild(t, crioReloadPolicy, root, withUnits(crioDropin("LimitNOFILE=1048576\n")), withUnits(enabled))
	refusedWith(t, p, "unit crio.service: ", "Alias=cri-o.service")
	// Without the node's files, an alias the current payload's unit gives is its own too.
	own := func(limit string) types.Unit {
		return unit("crio.service", str(rhcosCrioUnit+"[Service]\nLimitNOFILE="+limit+"\n"))
	}
	p = rootBuild(t, crioReloadPolicy, "", withUnits(own("1048576")), withUnits(own("2097152")))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
