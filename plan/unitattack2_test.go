package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The second adversary round against the unit-content judge (adv27 round 2, findings 1-3): what
// the judge cannot see is refused, in the unit file and in a dropin, naming the unit and the line.
func TestPlanRefusesRound2UnitAttacks(t *testing.T) {
	base := "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := withUnits(unit("myapp.service", str(base)))
	svc := func(body string) string { return "[Service]\n" + body + "\n" }
	bad := map[string]struct{ contents, line string }{
		// Finding 1: the [Unit] actions under their legacy [Service] spelling.
		"svc-failureaction":    {svc("FailureAction=reboot-force\nExecStart=/bin/false"), "FailureAction=reboot-force"},
		"svc-startlimitaction": {svc("StartLimitAction=poweroff-force\nStartLimitBurst=1\nExecStart=/bin/false\nRestart=always"), "StartLimitAction=poweroff-force"},
		"svc-rebootarg":        {svc("RebootArgument=x\nExecStart=/bin/false"), "RebootArgument=x"},
		"unit-rebootarg":       {"[Unit]\nJobTimeoutRebootArgument=x\n" + svc("ExecStart=/bin/true"), "JobTimeoutRebootArgument=x"},
	}
	for name, c := range bad {
		t.Run("unit/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(c.contents))))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, "unit myapp.service")
			assert.Contains(t, p.Refused[0].Reason, c.line)
			assert.Empty(t, p.Actions)
		})
		t.Run("dropin/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(base), types.Dropin{Name: "50-x.conf", Contents: str(c.contents)})))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, c.line)
		})
	}
	good := map[string]string{
		"svc-failureaction none": svc("FailureAction=none\nStartLimitAction=none\nExecStart=/usr/bin/myapp\nRestart=always"),
		"startlimit burst":       svc("StartLimitBurst=5\nStartLimitInterval=10\nExecStart=/usr/bin/myapp"),
	}
	for name, contents := range good {
		p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(contents))))
		assert.True(t, p.Eligible, "%s: %+v", name, p.Refused)
	}
}
