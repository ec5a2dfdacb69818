package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

const linkRulePolicy = "nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"

// linkNode is a node root with files (node path → contents; "->target" is a symlink).
func linkNode(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	for p, c := range files {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if target, ok := strings.CutPrefix(c, "->"); ok {
			require.NoError(t, os.Symlink(target, full))
			continue
		}
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return dir
}

// dryRunWants is apply --dry-run (no manager) of a payload adding myapp.service, enabled, with
// Wants=dep, under the unit rule, on the node root dir.
func dryRunWants(t *testing.T, dir, dep string) *apply.Result {
	t.Helper()
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	pol, err := allowlist.ParsePolicy([]byte(linkRulePolicy))
	require.NoError(t, err)
	cur, err := decode(fixture.Ignition("3.2.0").JSON())
	require.NoError(t, err)
	des := fixture.Ignition("3.2.0").Unit("myapp.service",
		"[Unit]\nDescription=x\nWants="+dep+"\n[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n")
	h := apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Policy: pol}
	res, err := apply.Run(context.Background(), h, apply.Request{Desired: des.JSON(), Hash: "h", Current: cur, DryRun: true})
	require.NoError(t, err)
	return res
}

// Round 11 (units/01): the node's unit links are read from every directory of the manager's unit
// search path, the one the plan's node unit reader reads (plan.UnitSearchPath): a link
// vendor-wipe.service -> crio-wipe.service in /usr/local/lib/systemd/system, /etc/systemd/system.control,
// /run/systemd/transient … was planned, and the real run started crio-wipe. The dry run refuses
// Wants=vendor-wipe.service wherever the link is, and a link to an ordinary unit is planned.
func TestNodeLinksInEveryLoadDirectoryAreTheUnitsTheyLinkTo(t *testing.T) {
	dirs := plan.UnitSearchPath()
	for _, d := range []string{"/usr/local/lib/systemd/system", "/etc/systemd/system.control", "/run/systemd/system.control",
		"/run/systemd/transient", "/etc/systemd/system.attached", "/run/systemd/system.attached", "/run/systemd/generator",
		"/run/systemd/generator.early", "/run/systemd/generator.late", "/etc/systemd/system", "/run/systemd/system",
		"/usr/lib/systemd/system", "/lib/systemd/system"} {
		assert.Contains(t, dirs, d)
	}
	const wipe = "[Service]\nType=oneshot\nExecStart=/usr/bin/crio wipe\n"
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			dir := linkNode(t, map[string]string{"/usr/lib/systemd/system/crio-wipe.service": wipe,
				"/usr/lib/systemd/system/helper.service": "[Service]\nExecStart=/bin/true\n",
				d + "/vendor-wipe.service":               "->/usr/lib/systemd/system/crio-wipe.service",
				d + "/helper-alias.service":              "->helper.service"})
			links := apply.NodeUnitAliases(dir)
			assert.Equal(t, "crio-wipe.service", links["vendor-wipe.service"])
			res := dryRunWants(t, dir, "vendor-wipe.service")
			assert.Equal(t, api.OutcomeRefused, res.Outcome)
			assert.Contains(t, res.Reason, "Wants=vendor-wipe.service: a link to crio-wipe.service: unit crio-wipe.service sets the node up once")
			res = dryRunWants(t, dir, "helper-alias.service")
			assert.Equal(t, api.OutcomePlanned, res.Outcome, "%s %+v", res.Reason, res.Refused)
		})
	}
	// RHCOS's /usr/local is a relative link (../var/usrlocal): followed inside the root.
	dir := linkNode(t, map[string]string{"/usr/lib/systemd/system/crio-wipe.service": wipe,
		"/var/usrlocal/lib/systemd/system/vendor-wipe.service": "->/usr/lib/systemd/system/crio-wipe.service"})
	require.NoError(t, os.Symlink("../var/usrlocal", filepath.Join(dir, "usr/local")))
	assert.Equal(t, "crio-wipe.service", apply.NodeUnitAliases(dir)["vendor-wipe.service"])
	assert.Equal(t, api.OutcomeRefused, dryRunWants(t, dir, "vendor-wipe.service").Outcome)
	// The first link of a name in search order is the one kept.
	dir = linkNode(t, map[string]string{"/etc/systemd/system.control/a.service": "->/usr/lib/systemd/system/crio-wipe.service",
		"/etc/systemd/system/a.service": "->/usr/lib/systemd/system/helper.service"})
	assert.Equal(t, "crio-wipe.service", apply.NodeUnitAliases(dir)["a.service"])
}
