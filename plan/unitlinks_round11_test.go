package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/plan"
)

// Round 11 (units/01): a link in any directory of the manager's search path, read from the node's
// files alone (no alias table: what a link the policy's table misses leaves), is the unit it links
// to in the start set (allowlist.JudgeStartSet, the executor's rule): Wants=vendor-wipe.service,
// a link to crio-wipe.service, is refused wherever the link is; a link to an ordinary unit is not.
func TestANodeLinkInTheStartSetIsTheUnitItLoads(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\nWants=%s\n[Service]\nExecStart=/bin/sleep infinity\n"
	for _, dir := range plan.UnitSearchPath() {
		t.Run(dir, func(t *testing.T) {
			root := nodeRoot(t, map[string]string{
				"/usr/lib/systemd/system/crio-wipe.service": "[Service]\nType=oneshot\nExecStart=/usr/bin/crio wipe\n",
				"/usr/lib/systemd/system/helper.service":    "[Service]\nExecStart=/bin/true\n",
				dir + "/vendor-wipe.service":                "->/usr/lib/systemd/system/crio-wipe.service",
				dir + "/helper-alias.service":               "->/usr/lib/systemd/system/helper.service",
			})
			p := rootBuild(t, round9UnitPolicy, root, withUnits(), withUnits(unit("myapp.service", str(strings.Replace(app, "%s", "vendor-wipe.service", 1)))))
			refusedWith(t, p, "unit myapp.service", "Wants=vendor-wipe.service: unit crio-wipe.service sets the node up once", "loads it: a link")
			p = rootBuild(t, round9UnitPolicy, root, withUnits(), withUnits(unit("myapp.service", str(strings.Replace(app, "%s", "helper-alias.service", 1)))))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
}
