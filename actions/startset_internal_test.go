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
	sockets := map[string]map[string]any{}
	load := func(name string) (allowlist.StartedUnit, error) {
		return startedUnit(manager[name], func(kind string) (map[string]any, error) {
			if kind == "Socket" {
				return sockets[name], nil
			}
			return services[name], nil
		})
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

// Round 13 (units/01, 03): the executor's walk ends at a unit only by the state the manager
// reports. A boot-reached target or an essential the manager reports inactive is followed like
// any other (graphical.target on RHCOS: default.target is multi-user.target), one it reports
// active ends it; an Accept=yes socket runs its template's instance per connection, which the
// manager does not list in Triggers=.
func TestExecutorWalksByTheManagersState(t *testing.T) {
	unit := func(id, active string, kv ...any) map[string]any {
		m := map[string]any{"Id": id, "Names": []string{id}, "LoadState": "loaded", "ActiveState": active}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name, dep, target, state string
		refused                  bool
	}{
		{"graphical.target inactive", "Wants", "graphical.target", "inactive", true},
		{"multi-user.target inactive", "Wants", "multi-user.target", "inactive", true},
		{"sysinit.target inactive", "Requires", "sysinit.target", "inactive", true},
		{"network-online.target inactive", "Wants", "network-online.target", "inactive", true},
		{"kubelet-dependencies.target inactive", "Requires", "kubelet-dependencies.target", "inactive", true},
		{"sshd.service inactive", "Wants", "sshd.service", "inactive", true},
		{"crio.service inactive", "Requires", "crio.service", "inactive", true},
		{"graphical.target active", "Wants", "graphical.target", "active", false},
		{"network-online.target active", "Wants", "network-online.target", "active", false},
		{"sysinit.target active", "Requires", "sysinit.target", "active", false},
		{"crio.service active", "Requires", "crio.service", "active", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manager := map[string]map[string]any{
				"myapp.service":       unit("myapp.service", "inactive", tc.dep, []string{tc.target}),
				tc.target:             unit(tc.target, tc.state, "Wants", []string{"vendor-boom.service"}),
				"vendor-boom.service": unit("vendor-boom.service", "inactive", "SuccessAction", "exit-force"),
			}
			load := func(name string) (allowlist.StartedUnit, error) {
				return startedUnit(manager[name], func(string) (map[string]any, error) { return map[string]any{}, nil })
			}
			app, err := load("myapp.service")
			require.NoError(t, err)
			refusal, err := allowlist.JudgeStartSet(app.Props, load)
			require.NoError(t, err)
			if !tc.refused {
				assert.NoError(t, refusal)
				return
			}
			require.Error(t, refusal)
			assert.Contains(t, refusal.Error(), tc.dep+"="+tc.target+" Wants=vendor-boom.service: vendor-boom.service SuccessAction=exit-force")
		})
	}
	t.Run("Accept=yes socket", func(t *testing.T) {
		manager := map[string]map[string]any{
			"myapp.service":    unit("myapp.service", "inactive", "Wants", []string{"helper.socket"}),
			"helper.socket":    unit("helper.socket", "inactive", "Triggers", []string{}),
			"helper@0.service": unit("helper@0.service", "inactive", "SuccessAction", "exit-force"),
		}
		accept := true
		load := func(name string) (allowlist.StartedUnit, error) {
			return startedUnit(manager[name], func(kind string) (map[string]any, error) {
				if kind == "Socket" {
					return map[string]any{"Accept": accept}, nil
				}
				return map[string]any{}, nil
			})
		}
		app, err := load("myapp.service")
		require.NoError(t, err)
		refusal, err := allowlist.JudgeStartSet(app.Props, load)
		require.NoError(t, err)
		require.Error(t, refusal, "the job starts the socket: each connection then runs its template")
		assert.Contains(t, refusal.Error(), "Wants=helper.socket Triggers=helper@0.service: helper@0.service SuccessAction=exit-force")
		manager["helper.socket"]["ActiveState"] = "active"
		refusal, err = allowlist.JudgeStartSet(app.Props, load)
		require.NoError(t, err)
		assert.NoError(t, refusal, "a socket already listening: the job changes nothing of what it runs")
		manager["helper.socket"]["ActiveState"] = "inactive"
		accept = false
		refusal, err = allowlist.JudgeStartSet(app.Props, load)
		require.NoError(t, err)
		assert.NoError(t, refusal, "Accept=no: the manager's Triggers= (empty here) is what it starts")
	})
}
