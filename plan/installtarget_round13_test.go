package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 13 (units/02): enabled: true with [Install] WantedBy= a target the node lacks (the MCO's
// kubelet-dependencies.target, before the MCO wrote it; any other name). The plan plans the
// enable, as the executor accepts systemd's "destination not present" notice of the unit's own
// link, and warns naming the target; a target the node or the payload has draws no warning.
func TestEnableIntoAnAbsentTargetWarns(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/echo hi\n[Install]\n%s\n"
	enabledUnit := func(name, text string) types.Unit {
		u := unit(name, str(text))
		on := true
		u.Enabled = &on
		return u
	}
	for _, tc := range []struct {
		name, install string
		node          map[string]string
		warn          []string
	}{
		{"kubelet-dependencies.target absent", "WantedBy=kubelet-dependencies.target", map[string]string{"/usr/lib/systemd/system/multi-user.target": "[Unit]\n"},
			[]string{"unit myapp.service: [Install] WantedBy=kubelet-dependencies.target: the node has no unit file of kubelet-dependencies.target", "kubelet-dependencies.target.wants/myapp.service"}},
		{"WantedBy=nosuch.target", "WantedBy=nosuch.target multi-user.target", map[string]string{"/usr/lib/systemd/system/multi-user.target": "[Unit]\n"},
			[]string{"WantedBy=nosuch.target: the node has no unit file of nosuch.target", "nosuch.target.wants/myapp.service"}},
		{"present in /etc", "WantedBy=kubelet-dependencies.target", map[string]string{"/etc/systemd/system/kubelet-dependencies.target": "[Unit]\n"}, nil},
		{"present in /usr/lib", "WantedBy=multi-user.target", map[string]string{"/usr/lib/systemd/system/multi-user.target": "[Unit]\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			des := withUnits(enabledUnit("myapp.service", strings.Replace(app, "%s", tc.install, 1)))
			p := rootBuild(t, round9UnitPolicy, nodeRoot(t, tc.node), plain(), des)
			require.True(t, p.Eligible, "%+v", p.Refused)
			all := strings.Join(p.Warnings, "\n")
			if tc.warn == nil {
				assert.NotContains(t, all, "the node has no unit file of")
			}
			for _, w := range tc.warn {
				assert.Contains(t, all, w)
			}
		})
	}
}
