package actions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 9 (units/01): the executor reads every unit a job reaches as the manager reports it (the
// D-Bus property maps go-systemd returns) and judges the set with allowlist.JudgeStartSet: a
// fake manager stands in here; test/integration and the adversary's scripts drive a real one.
func TestExecutorJudgesTheStartSetFromTheManager(t *testing.T) {
	manager := map[string]map[string]any{
		"myapp.service": {"Id": "myapp.service", "Names": []string{"myapp.service"}, "LoadState": "loaded", "ActiveState": "active",
			"Wants": []string{"helper.service", "t.target"}, "RequiredBy": []string{"boom.service"}, "DefaultDependencies": true},
		"helper.service": {"Id": "helper.service", "Names": []string{"helper.service"}, "LoadState": "loaded", "ActiveState": "inactive",
			"SuccessAction": "exit-force"},
		"t.target": {"Id": "t.target", "Names": []string{"t.target"}, "LoadState": "loaded", "ActiveState": "active",
			"Wants": []string{"oneshot.service"}},
		"oneshot.service": {"Id": "oneshot.service", "LoadState": "loaded", "ActiveState": "inactive", "FailureAction": "reboot"},
		"boom.service": {"Id": "boom.service", "Names": []string{"boom.service"}, "LoadState": "loaded", "ActiveState": "active",
			"Requires": []string{"myapp.service"}},
		"masked.service": {"Id": "masked.service", "LoadState": "masked", "SuccessAction": "reboot"},
		"gone.service":   {"Id": "gone.service", "LoadState": "not-found"},
	}
	services := map[string]map[string]any{
		"boom.service": {"ExecStart": [][]any{{"/bin/true", []string{"/bin/true"}}},
			"ExecStop": [][]any{{"/usr/bin/systemctl", []string{"/usr/bin/systemctl", "--user", "exit"}}}},
	}
	load := func(name string) (allowlist.StartedUnit, error) {
		return startedUnit(manager[name], func() (map[string]any, error) { return services[name], nil })
	}
	app, err := load("myapp.service")
	require.NoError(t, err)
	require.NoError(t, allowlist.JudgeUnit(app.Props))

	refusal, err := allowlist.JudgeStartSet(app.Props, load)
	require.NoError(t, err)
	require.Error(t, refusal)
	assert.Contains(t, refusal.Error(), "Wants=helper.service: helper.service SuccessAction=exit-force")

	manager["helper.service"]["SuccessAction"] = "none"
	refusal, err = allowlist.JudgeStartSet(app.Props, load)
	require.NoError(t, err)
	require.Error(t, refusal, "boom.service follows the restart")
	assert.Contains(t, refusal.Error(), "is followed by boom.service: boom.service ExecStop=/usr/bin/systemctl --user exit")

	delete(services, "boom.service")
	refusal, err = allowlist.JudgeStartSet(app.Props, load)
	require.NoError(t, err)
	assert.NoError(t, refusal, "t.target is active: its oneshot is not started again; the rest does nothing")

	for _, n := range []string{"masked.service", "gone.service"} {
		u, err := load(n)
		require.NoError(t, err)
		assert.True(t, u.Masked || !u.Known, n)
	}
}
