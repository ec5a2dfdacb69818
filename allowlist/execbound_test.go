package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

func judgeLine(t *testing.T, line string) error {
	t.Helper()
	argvs, err := allowlist.SplitExec(line)
	require.NoError(t, err, line)
	return allowlist.JudgeUnit(allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"},
		DefaultDependencies: true, Exec: argvs})
}

// Issue 27, classes 1 and 2: a wrapper's command named by a variable is one that cannot be judged
// (systemd splits an unbraced $CMD into words: Environment=CMD=systemctl reboot makes env $CMD a
// reboot), both ways: a variable among the program's own arguments is fine.
func TestWrappedVariableCommand(t *testing.T) {
	for _, line := range []string{
		"/usr/bin/env $CMD", "/usr/bin/env FOO=1 ${CMD}", "/usr/bin/env -- $CMD", "/usr/bin/env -S $CMD",
		"/usr/bin/timeout 5 $CMD", "/usr/bin/nice -n 5 $PROG --flag", "/usr/bin/setsid `cat /etc/cmd`",
		"/bin/sh $SCRIPT", "/usr/bin/nice /usr/bin/env $CMD", "/usr/bin/env %i",
	} {
		err := judgeLine(t, line)
		if assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), "variable", line)
		}
	}
	for _, line := range []string{
		"/usr/bin/env /usr/bin/myapp --config $CONFIG", "/usr/bin/env FOO=$BAR /usr/bin/myapp",
		"/usr/bin/nice -n 5 /usr/bin/myapp $OPTIONS", "/bin/sh -c 'exec /usr/bin/myapp \"$@\"' myapp $ARGS",
		"/bin/bash -ec 'test -n \"$X\" && /usr/bin/myapp'", "/usr/bin/crio $CRIO_CONFIG_OPTIONS $CRIO_STORAGE_OPTIONS",
		"/bin/kill -s HUP $MAINPID",
	} {
		assert.NoError(t, judgeLine(t, line), line)
	}
}

// The work of judging a unit's commands is bounded by its words, whatever their shape: a line of
// continued words with wrappers nested as deep as the judge goes is refused as too costly to judge,
// not judged in quadratic or exponential time; a long ordinary line passes.
func TestExecJudgeCostIsBounded(t *testing.T) {
	words := func(n int, every int, w string) string {
		out := make([]string, n)
		for i := range out {
			out[i] = "a"
			if every > 0 && i%every == 0 {
				out[i] = w
			}
		}
		return strings.Join(out, " ")
	}
	max := allowlist.MaxExecWords
	costly := map[string]string{
		"/usr/bin/env " + words(200000, 25000, "nice"):                                "too long to judge", // a 1 MiB continued line
		"/usr/bin/myapp " + words(max, 0, ""):                                         "too long to judge",
		"/usr/bin/systemctl start " + words(max-2, 1, "start"):                        "controls the service manager", // linear: judged (issue 27 F2: systemctl in a unit's commands is refused outright)
		"/usr/bin/env " + words(max-1, max/8, "nice"):                                 "deep",                         // too costly or nested too deep: env's exact command nests 9 deep
		"/usr/bin/env " + words(max-1, 1, "nice"):                                     "nested too deep",
		"/bin/sh -c '" + strings.Repeat("env ", max*4) + "'":                          "too long or too deeply wrapped",
		"/bin/sh -c '" + strings.Repeat("\"x y\" ", max*4) + "'":                      "",
		"/usr/bin/env FOO=1 /usr/bin/nice -n 5 /usr/bin/myapp " + words(max-7, 0, ""): "",
		// A modeled wrapper's command is judged once per level, not twice (the grammar's reading
		// and the loose one): seven nested env with 60 arguments are judged, not too costly.
		strings.Repeat("/usr/bin/env ", 7) + "/usr/bin/myapp" + strings.Repeat(" --flag=/run/myapp/x", 60): "",
	}
	for line, want := range costly {
		err := judgeLine(t, line)
		if want == "" {
			assert.NoError(t, err, "%.60s", line)
		} else if assert.Error(t, err, "%.60s", line) {
			assert.Contains(t, err.Error(), want, "%.60s", line)
		}
	}
}
