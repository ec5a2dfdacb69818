package actions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 14 (c/01-03): the executor reads what a job stops as the manager reports it: a unit's
// ConflictedBy (whose Conflicts= names it), RequisiteOf, BoundBy, ConsistsOf and StopWhenUnneeded,
// and the walk judges each stopped unit by what its stop does.
func TestExecutorJudgesWhatAJobStops(t *testing.T) {
	unit := func(id string, kv ...any) map[string]any {
		m := map[string]any{"Id": id, "Names": []string{id}, "LoadState": "loaded", "ActiveState": "active"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		prop string
		job  allowlist.Job
		want string
	}{
		{"ConflictedBy", allowlist.JobRestart, "restarting myapp.service stops foo.service (Conflicts=myapp.service), whose SuccessAction=reboot"},
		{"BoundBy", allowlist.JobStop, "stopping myapp.service stops foo.service (BindsTo=myapp.service), whose SuccessAction=reboot"},
		{"ConsistsOf", allowlist.JobStop, "stopping myapp.service stops foo.service (PartOf=myapp.service), whose SuccessAction=reboot"},
		{"RequisiteOf", allowlist.JobStop, "stopping myapp.service stops foo.service (Requisite=myapp.service), whose SuccessAction=reboot"},
		{"RequisiteOf", allowlist.JobRestart, "restarting myapp.service restarts foo.service (Requisite=myapp.service): foo.service SuccessAction=reboot"},
		{"Wants", allowlist.JobStop, "stopping myapp.service stops foo.service (Wants=foo.service, if it has StopWhenUnneeded=yes), whose SuccessAction=reboot"},
	} {
		t.Run(tc.prop, func(t *testing.T) {
			manager := map[string]map[string]any{
				"myapp.service": unit("myapp.service", tc.prop, []string{"foo.service"}),
				"foo.service":   unit("foo.service", "SuccessAction", "reboot", "StopWhenUnneeded", true),
			}
			load := func(name string) (allowlist.StartedUnit, error) {
				return startedUnit(manager[name], func(string) (map[string]any, error) { return map[string]any{}, nil })
			}
			app, err := load("myapp.service")
			require.NoError(t, err)
			refusal, err := allowlist.JudgeJobSet(app.Props, tc.job, load)
			require.NoError(t, err)
			require.Error(t, refusal)
			assert.Contains(t, refusal.Error(), tc.want)
		})
	}
}
