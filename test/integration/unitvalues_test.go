package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// A real systemd keeps an assignment when a later one does not parse (an empty one, for these
// settings), so a check of only the last value would let the refused one run: each text below, on a
// real systemd user manager, keeps the refused value (systemctl show), and the plan refuses the same
// text, added in a dropin under a unit rule, naming that value.
func TestRefusedValuesSystemdWouldKeepAreRefused(t *testing.T) {
	mgr := systemdtest.Another(t, "unitvalues")
	cases := map[string]struct{ body, prop, kept, want string }{
		"type":          {"Type=forking\nType=\n", "Type", "forking", "[Service] Type=forking: not one of"},
		"notify-access": {"Type=notify\nNotifyAccess=all\nNotifyAccess=\n", "NotifyAccess", "all", "[Service] NotifyAccess=all: not one of"},
		"state-mode":    {"StateDirectoryMode=0777\nStateDirectoryMode=\n", "StateDirectoryMode", "0777", "[Service] StateDirectoryMode=0777: more than 0755"},
	}
	for name, c := range cases {
		text := "[Service]\nExecStart=/bin/sleep infinity\n" + c.body
		require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, "values-"+name+".service"), []byte(text), 0o644))
	}
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	pol, err := allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n" +
		"    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"))
	require.NoError(t, err)
	const base = "[Service]\nExecStart=/usr/bin/sleep infinity\n"
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := mgr.Systemctl("show", "-p", c.prop, "--value", "values-"+name+".service")
			require.NoError(t, err)
			assert.Equal(t, c.kept, strings.TrimSpace(got), "systemd keeps the earlier assignment")
			cur, des := fixture.Ignition("3.2.0"), fixture.Ignition("3.2.0")
			cur.Systemd.Units = []types.Unit{{Name: "myapp.service", Contents: sp(base)}}
			des.Systemd.Units = []types.Unit{{Name: "myapp.service", Contents: sp(base),
				Dropins: []types.Dropin{{Name: "50-x.conf", Contents: sp("[Service]\n" + c.body)}}}}
			p := buildPlan(t, pol, cur, des)
			assert.False(t, p.Eligible)
			if assert.NotEmpty(t, p.Refused) {
				assert.Contains(t, p.Refused[0].Reason, "unit myapp.service: "+c.want)
			}
		})
	}
}
