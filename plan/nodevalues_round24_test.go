package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 24 (a/01, a/13, c/04, c/05, c/06): a refusal names the node's own lines and values by
// their shape: a unit a job reaches (started or stopped), the node's drop-in's Environment= and
// its sh -c script, the node's values the payload's line substitutes.
func TestRefusalsNeverShowTheNodesValues(t *testing.T) {
	const policy = `nodeDisruptionPolicy:
  units:
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
unitPrograms:
  myapp.service: [/usr/bin/myapp]
`
	enabled := func(name, text string, dropins ...types.Dropin) types.Unit {
		u := unit(name, str(text), dropins...)
		u.Enabled = boolp(true)
		return u
	}
	const app = "[Service]\nExecStart=/usr/bin/myapp\n[Install]\nWantedBy=multi-user.target\n"
	cases := map[string]struct {
		node     map[string]string
		des      types.Unit
		secrets  []string
		wantSome string
	}{
		"a reached unit's line": {map[string]string{"/etc/systemd/system/vendor-sync.service": "[Service]\nType=oneshot\nExecStart=/bin/sh -c \"podman login -u admin -p Adm1n@Registry! registry.corp && systemctl restart vendor-agent\"\n"},
			enabled("myapp.service", "[Unit]\nWants=vendor-sync.service\n"+app), []string{"Adm1n", "Registry!", "registry.corp"}, "vendor-sync.service"},
		"a node drop-in's proxy": {map[string]string{"/etc/systemd/system/myapp.service": app,
			"/etc/systemd/system/myapp.service.d/50-proxy.conf": "[Service]\nEnvironment=HTTPS_PROXY=http://admin:Pr0xyS3cretPassw0rd@proxy.corp:3128\n"},
			enabled("myapp.service", "[Service]\nExecStart=/usr/bin/myapp --v=2\n[Install]\nWantedBy=multi-user.target\n"), []string{"Pr0xyS3cretPassw0rd", "proxy.corp"}, "HTTPS_PROXY"},
		"a node drop-in's script": {map[string]string{"/etc/systemd/system/myapp.service": app,
			"/etc/systemd/system/myapp.service.d/50-x.conf": "[Service]\nExecStartPre=/bin/sh -c \"curl -fsS -u mirror:correcthorsebattery https://mirror/$X | sh\"\n"},
			enabled("myapp.service", app, types.Dropin{Name: "60-y.conf", Contents: str("[Service]\nExecStartPre=/bin/true\n")}), []string{"correcthorsebattery", "mirror:"}, "ExecStartPre="},
		"the node's values substituted": {map[string]string{"/etc/systemd/system/myapp.service": app,
			"/etc/systemd/system/myapp.service.d/50-x.conf": "[Service]\nEnvironment=REGPASS=hunter2 PASSPHRASE=correct-horse-battery-staple\n"},
			enabled("myapp.service", app, types.Dropin{Name: "60-y.conf", Contents: str("[Service]\nExecStartPre=/bin/sh -c \"${REGPASS}\"\nExecStartPre=/usr/bin/rm -rf /etc/${PASSPHRASE}\n")}),
			[]string{"hunter2", "correct-horse-battery-staple"}, "ExecStartPre="},
		"a stopped unit's line": {map[string]string{"/etc/systemd/system/myapp.service": "[Unit]\nWants=helper.service\n" + app,
			"/etc/systemd/system/helper.service": "[Unit]\nStopWhenUnneeded=yes\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\nExecStop=/bin/sh -c \"curl -u mirror:stopsecret99 https://x | sh\"\n"},
			enabled("myapp.service", app), []string{"stopsecret99"}, "helper.service"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cur := plain()
			if name == "a stopped unit's line" {
				cur = withUnits(enabled("myapp.service", "[Unit]\nWants=helper.service\n"+app))
			} else if c.des.Name == "myapp.service" && name != "a reached unit's line" {
				cur = withUnits(enabled("myapp.service", app))
			}
			p := rootBuild(t, policy, nodeRoot(t, c.node), cur, withUnits(c.des))
			require.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			all := ""
			for _, r := range p.Refused {
				all += r.Reason + "\n"
			}
			for _, w := range p.Warnings {
				all += w + "\n"
			}
			assert.Contains(t, all, c.wantSome)
			for _, s := range c.secrets {
				assert.NotContains(t, all, s)
			}
		})
	}
}
