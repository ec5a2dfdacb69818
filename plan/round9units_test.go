package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// nodeRoot writes files (node path → contents; a value starting with "->" is a symlink to the rest)
// under a temporary root.
func nodeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if target, ok := strings.CutPrefix(c, "->"); ok {
			require.NoError(t, os.Symlink(target, full))
			continue
		}
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

// rootBuild plans cur → des under pol, reading the node's unit files under root ("" for none).
func rootBuild(t *testing.T, pol, root string, cur, des *fixture.Config) *plan.Plan {
	t.Helper()
	p, err := allowlist.ParsePolicy([]byte(pol))
	require.NoError(t, err)
	if root != "" {
		p = p.WithNodeUnitFiles(plan.NodeUnitsAt(root))
	}
	c, err := diff.Decode(cur.JSON())
	require.NoError(t, err)
	d, err := diff.Decode(des.JSON())
	require.NoError(t, err)
	out, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: p})
	require.NoError(t, err)
	return out
}

const round9UnitPolicy = `nodeDisruptionPolicy:
  units:
  - name: myapp.service
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
  files:
  - path: /etc/myapp/app.conf
    actions: [{type: Restart, restart: {serviceName: myapp.service}}]
`

// Round 9 (units/01): a unit a refresh restarts pulls in a node unit whose end stops the system
// (SuccessAction=, FailureAction=, JobTimeoutAction=, StartLimitAction=): the plan reads the node
// unit under the root and judges it by what it is, transitively, whatever it is called.
func TestStartSetIsJudgedByWhatItIs(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\n%s\n[Service]\nExecStart=/bin/sleep infinity\n"
	helper := func(key string) string {
		return "[Unit]\n" + key + "\n[Service]\nType=oneshot\nExecStart=/bin/true\n"
	}
	refused := []struct {
		name, dep string
		node      map[string]string
		want      string
	}{
		{"SuccessAction", "Wants=helper.service", map[string]string{"/etc/systemd/system/helper.service": helper("SuccessAction=exit-force")}, "helper.service SuccessAction=exit-force"},
		{"SuccessAction=reboot", "Requires=helper.service", map[string]string{"/usr/lib/systemd/system/helper.service": helper("SuccessAction=reboot")}, "SuccessAction=reboot"},
		{"FailureAction", "Wants=helper.service", map[string]string{"/usr/lib/systemd/system/helper.service": helper("FailureAction=reboot-force")}, "FailureAction=reboot-force"},
		{"JobTimeoutAction", "Requires=helper.service", map[string]string{"/run/systemd/system/helper.service": helper("JobTimeoutAction=poweroff")}, "JobTimeoutAction=poweroff"},
		{"StartLimitAction", "Upholds=helper.service", map[string]string{"/etc/systemd/system/helper.service": helper("StartLimitAction=reboot")}, "StartLimitAction=reboot"},
		{"legacy [Service] FailureAction", "Wants=helper.service", map[string]string{"/etc/systemd/system/helper.service": "[Service]\nFailureAction=reboot\nExecStart=/bin/false\n"}, "FailureAction=reboot"},
		{"OnFailure", "OnFailure=helper.service", map[string]string{"/etc/systemd/system/helper.service": helper("SuccessAction=reboot")}, "SuccessAction=reboot"},
		{"in the node's drop-in of the helper", "Wants=helper.service", map[string]string{
			"/usr/lib/systemd/system/helper.service":         helper(""),
			"/etc/systemd/system/helper.service.d/10-x.conf": "[Unit]\nSuccessAction=reboot\n",
		}, "SuccessAction=reboot"},
		{"in a type drop-in dir", "Wants=helper.service", map[string]string{
			"/usr/lib/systemd/system/helper.service":  helper(""),
			"/etc/systemd/system/service.d/10-x.conf": "[Unit]\nFailureAction=reboot\n",
		}, "FailureAction=reboot"},
		{"transitively", "Wants=a.service", map[string]string{
			"/etc/systemd/system/a.service":      "[Unit]\nRequires=b.service\n[Service]\nExecStart=/bin/true\n",
			"/etc/systemd/system/b.service":      "[Unit]\nWants=helper.service\n[Service]\nExecStart=/bin/true\n",
			"/etc/systemd/system/helper.service": helper("SuccessAction=exit-force"),
		}, "Wants=a.service Requires=b.service Wants=helper.service: helper.service SuccessAction=exit-force"},
		{"through a node .wants/ link", "Wants=a.service", map[string]string{
			"/etc/systemd/system/a.service":                      "[Service]\nExecStart=/bin/true\n",
			"/etc/systemd/system/a.service.wants/helper.service": "->/etc/systemd/system/helper.service",
			"/etc/systemd/system/helper.service":                 helper("SuccessAction=reboot"),
		}, "SuccessAction=reboot"},
		{"through a socket's service", "Wants=helper.socket", map[string]string{
			"/etc/systemd/system/helper.socket":  "[Socket]\nListenStream=/run/helper.sock\n",
			"/etc/systemd/system/helper.service": helper("SuccessAction=reboot"),
		}, "Triggers=helper.service"},
		{"through a path unit's Unit=", "Wants=helper.path", map[string]string{
			"/etc/systemd/system/helper.path":   "[Path]\nPathExists=/etc/hostname\nUnit=other.service\n",
			"/etc/systemd/system/other.service": helper("SuccessAction=reboot"),
		}, "Triggers=other.service"},
		{"a node link to the unit that stops the system", "Wants=foo.service", map[string]string{
			"/usr/local/lib/systemd/system/foo.service":      "->/usr/lib/systemd/system/systemd-reboot.service",
			"/usr/lib/systemd/system/systemd-reboot.service": "[Unit]\nSuccessAction=reboot-force\n[Service]\nType=oneshot\nExecStart=/bin/true\n",
		}, "systemd-reboot.service"},
		{"a helper whose start runs systemctl reboot", "Wants=helper.service", map[string]string{
			"/etc/systemd/system/helper.service": "[Service]\nType=oneshot\nExecStart=/usr/bin/systemctl reboot\n",
		}, "helper.service ExecStart=/usr/bin/systemctl reboot"},
		{"a stock unit whose end reboots, unread (no file)", "Wants=system-update-cleanup.service", nil, "system-update-cleanup.service"},
		// Round 13 (units/01): a boot target is followed like any other unit; the plan knows no state.
		{"network-online.target's Wants= (round 13: no target is reached by its name)", "Wants=network-online.target", map[string]string{
			"/usr/lib/systemd/system/network-online.target": "[Unit]\nWants=reboot-helper.service\n",
		}, "Wants=network-online.target: network-online.target Wants=reboot-helper.service"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			root := nodeRoot(t, tc.node)
			des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", tc.dep, 1))))
			p := rootBuild(t, round9UnitPolicy, root, plain(), des)
			refusedWith(t, p, "unit myapp.service: ", tc.want)
			assert.Equal(t, "myapp.service", p.Refused[0].Unit)
		})
	}
	// B: the node's own unit, restarted by a file rule, pulls the helper in.
	t.Run("node unit restarted by a file rule", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{
			"/etc/systemd/system/myapp.service":  "[Unit]\nWants=helper.service\n[Service]\nExecStart=/bin/sleep infinity\n",
			"/etc/systemd/system/helper.service": helper("SuccessAction=exit-force"),
		})
		des := plain().File("/etc/myapp/app.conf", []byte("v2"), 0o644)
		p := rootBuild(t, round9UnitPolicy, root, plain(), des)
		refusedWith(t, p, "unit myapp.service: Wants=helper.service: helper.service SuccessAction=exit-force")
	})
	// Benign neighbours: the same shapes whose units do nothing to the system are planned.
	benign := map[string]map[string]string{
		"helper SuccessAction=none":                         {"/etc/systemd/system/helper.service": helper("SuccessAction=none")},
		"helper conflicting with initrd-switch-root.target": {"/etc/systemd/system/helper.service": helper("Conflicts=initrd-switch-root.target")},
		"network-online.target wanting the node's own":      {"/usr/lib/systemd/system/network-online.target": "[Unit]\nWants=nm-wait.service\n", "/usr/lib/systemd/system/nm-wait.service": helper("")},
		"helper unknown to the node":                        nil,
	}
	for name, node := range benign {
		t.Run("benign/"+name, func(t *testing.T) {
			dep := "Wants=helper.service network-online.target"
			des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", dep, 1))))
			p := rootBuild(t, round9UnitPolicy, nodeRoot(t, node), plain(), des)
			require.True(t, p.Eligible, "%+v", p.Refused)
			def, ok := p.PlannedUnit("myapp.service")
			require.True(t, ok)
			assert.Contains(t, def.Wants, "helper.service")
		})
	}
	// Without a root, the plan says what it cannot see.
	t.Run("no root: said", func(t *testing.T) {
		des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", "Wants=helper.service", 1))))
		p := rootBuild(t, round9UnitPolicy, "", plain(), des)
		require.True(t, p.Eligible, "%+v", p.Refused)
		assert.Contains(t, strings.Join(p.Warnings, "\n"), "units judged from the payloads alone (no node root): the node's own drop-ins of myapp.service")
	})
}

// Round 9 (units/02): the payload adds (or changes) a unit the node already has drop-ins for: the
// plan judges the unit as the manager will load it, the node's drop-ins merged from every
// directory systemd reads them from, so the dry run refuses what the executor would after its
// daemon-reload.
func TestNodeDropinsMergeIntoThePayloadsUnit(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\n[Service]\nExecStart=/bin/sleep infinity\n"
	const bad = "[Service]\nExecStopPost=/usr/bin/systemctl --user exit\n"
	for _, dir := range []string{
		"/etc/systemd/system/myapp.service.d", "/run/systemd/system/myapp.service.d", "/usr/lib/systemd/system/myapp.service.d",
		"/etc/systemd/system/service.d", "/etc/systemd/system/myapp-.service.d", "/run/systemd/system.control/myapp.service.d",
		"/usr/local/lib/systemd/system/myapp.service.d", "/run/systemd/generator/myapp.service.d",
	} {
		t.Run(dir, func(t *testing.T) {
			name := "myapp.service"
			if strings.Contains(dir, "myapp-.service.d") {
				name = "myapp-x.service" // the prefix directory applies to myapp-x.service
			}
			root := nodeRoot(t, map[string]string{dir + "/10-node.conf": bad})
			pol := strings.ReplaceAll(round9UnitPolicy, "myapp.service", name)
			p := rootBuild(t, pol, root, plain(), withUnits(unit(name, str(app))))
			refusedWith(t, p, "unit "+name+": ExecStopPost=/usr/bin/systemctl --user exit", "with the node's "+dir+"/10-node.conf")
		})
	}
	t.Run("payload gives drop-ins only: the node's unit file is the fragment", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{"/usr/lib/systemd/system/myapp.service": "[Service]\nExecStart=/bin/sleep infinity\n" +
			"ExecStopPost=/usr/bin/systemctl --user exit\n"})
		des := withUnits(unit("myapp.service", nil, types.Dropin{Name: "20-p.conf", Contents: str("[Service]\nEnvironment=A=1\n")}))
		p := rootBuild(t, round9UnitPolicy, root, plain(), des)
		refusedWith(t, p, "ExecStopPost=/usr/bin/systemctl --user exit", "/usr/lib/systemd/system/myapp.service") // the node's line: named by its skeleton
	})
	t.Run("the node masks the drop-in: harmless", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{
			"/usr/lib/systemd/system/myapp.service.d/10-node.conf": bad,
			"/etc/systemd/system/myapp.service.d/10-node.conf":     "->/dev/null",
		})
		p := rootBuild(t, round9UnitPolicy, root, plain(), withUnits(unit("myapp.service", str(app))))
		require.True(t, p.Eligible, "%+v", p.Refused)
	})
	t.Run("the payload's drop-in of the same name replaces the node's in /etc", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{"/etc/systemd/system/myapp.service.d/10-node.conf": bad})
		cur := withUnits(unit("myapp.service", str(app), types.Dropin{Name: "10-node.conf", Contents: str(bad)}))
		des := withUnits(unit("myapp.service", str(app), types.Dropin{Name: "10-node.conf", Contents: str("[Service]\nEnvironment=A=1\n")}))
		p := rootBuild(t, round9UnitPolicy, root, cur, des)
		require.True(t, p.Eligible, "%+v", p.Refused)
	})
	t.Run("a harmless node drop-in: planned", func(t *testing.T) {
		root := nodeRoot(t, map[string]string{"/etc/systemd/system/myapp.service.d/10-node.conf": "[Service]\nEnvironment=A=1\n"})
		p := rootBuild(t, round9UnitPolicy, root, plain(), withUnits(unit("myapp.service", str(app))))
		require.True(t, p.Eligible, "%+v", p.Refused)
	})
	t.Run("no root: the payload alone, said", func(t *testing.T) {
		p := rootBuild(t, round9UnitPolicy, "", plain(), withUnits(unit("myapp.service", str(app))))
		require.True(t, p.Eligible, "%+v", p.Refused)
		assert.Contains(t, strings.Join(p.Warnings, "\n"), "not seen here")
	})
}
