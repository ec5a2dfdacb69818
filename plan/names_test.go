package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// Issue 27, item 6, in the pure plan: a name the transaction cannot handle (longer than a
// filesystem holds, a path whose side files would not fit, a name reserved for side files) is
// refused by the plan itself, naming the path, so `diff` and `apply --dry-run` say what the real
// apply does. Names Ignition accepts up to the filesystem's limit are planned: the side files have a
// fixed-length name whatever the target's.
func TestPlanRefusesNamesTheTransactionCannotHandle(t *testing.T) {
	pol := allowlist.Default()
	pol.Rules = append(pol.Rules, allowlist.Rule{Path: "/etc/myapp/", Action: allowlist.ActionNone})
	// 4055 bytes in 65 components: side files do not fit below it (a path of 1-byte names that long
	// has more than MaxPathComponents).
	deep := "/etc/myapp/" + strings.Repeat(strings.Repeat("d", 63)+"/", 62) + strings.Repeat("d", 75) + "/"
	build := func(cur, des []string) *plan.Plan {
		c, d := plain(), plain()
		for _, p := range cur {
			c.File(p, []byte("old"), 0o644)
		}
		for _, p := range des {
			d.File(p, []byte("new"), 0o644)
		}
		cp, err := diff.Decode(c.JSON())
		require.NoError(t, err)
		dp, err := diff.Decode(d.JSON())
		require.NoError(t, err)
		p, err := plan.Build(plan.Inputs{Current: cp, Desired: dp, Policy: pol})
		require.NoError(t, err)
		return p
	}
	planned := []string{
		"/etc/myapp/" + strings.Repeat("a", 255),
		"/etc/myapp/" + strings.Repeat("é", 127), // 254 bytes
		"/etc/myapp/.refresh-agent-x-tmp",
		"/etc/myapp/refresh-agent-tmp",
		"/etc/myapp/.refresh-agent-x-tmp/ca.crt",
		"/etc/myapp/refresh-agent-tmp/a.conf",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-tmp.d/a.conf",
		deep[:len(deep)-60] + "x",
		"/etc/myapp/" + strings.Repeat("d/", plan.MaxPathComponents-3) + "x", // 128 components
	}
	for _, p := range planned {
		pl := build(nil, []string{p})
		assert.True(t, pl.Eligible, "%.80s: %+v", p, pl.Refused)
		assert.Len(t, pl.Files, 1)
	}
	refused := map[string]string{
		"/etc/myapp/" + strings.Repeat("a", 256):         "a name is 256 bytes long (at most 255)",
		"/etc/myapp/" + strings.Repeat("é", 128):         "a name is 256 bytes long",
		"/etc/myapp/" + strings.Repeat("a/", 2050) + "x": "the path is 4112 bytes long (at most 4095)",
		deep + "x": "its side files' paths would be",
		"/etc/myapp/" + strings.Repeat("d/", plan.MaxPathComponents-2) + "x": "more than 128 path components (129)",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-tmp":             "reserved for the agent's temp and backup files",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-backup":          "reserved",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-restore":         "reserved",
		"/etc/myapp/.a.conf.refresh-agent-backup":                            "reserved",
		// A directory on the way named like a side file (adversary round 9, 09): it would take the
		// place of a sibling's temp, backup or restore file.
		"/etc/docker/certs.d/.refresh-agent-2d711642b726b04401627ca9-tmp/ca.crt":  "its directory /etc/docker/certs.d/.refresh-agent-2d711642b726b04401627ca9-tmp is named like one",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-backup/a/b.conf":      "its directory /etc/myapp/.refresh-agent-0123456789abcdef01234567-backup is named like one",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-restore/x":            "reserved",
		"/etc/myapp/.a.conf.refresh-agent-tmp/x":                                  "its directory /etc/myapp/.a.conf.refresh-agent-tmp is named like one",
		"/etc/.refresh-agent-0123456789abcdef01234567-tmp/myapp/.refresh-agent-x": "its directory /etc/.refresh-agent-0123456789abcdef01234567-tmp is",
		// As a case-insensitive (casefold) directory compares names.
		"/etc/myapp/.REFRESH-AGENT-0123456789ABCDEF01234567-TMP":         "reserved",
		"/etc/myapp/.Refresh-Agent-0123456789abcdef01234567-Backup/a":    "reserved",
		"/etc/myapp/.refre\u017fh-agent-0123456789abcdef01234567-tmp":    "reserved",
		"/etc/myapp/.refresh-agent-0123456789abcdef01234567-bac\u212aup": "reserved",
		"/etc/myapp/.refresh\u200d-agent-0123456789abcdef01234567-tmp":   "reserved",
		"/etc/myapp/.a.conf.refresh-agent-\ufe0ftmp":                     "reserved",
	}
	for p, want := range refused {
		for name, pl := range map[string]*plan.Plan{"written": build(nil, []string{p}), "removed": build([]string{p}, nil)} {
			assert.False(t, pl.Eligible, "%s %.80s", name, p)
			assert.Empty(t, pl.Files, "%s %.80s: nothing is planned to be written", name, p)
			if assert.NotEmpty(t, pl.Refused, "%s %.80s", name, p) {
				r := pl.Refused[0]
				assert.Contains(t, r.Reason, want, "%s %.80s", name, p)
				assert.Equal(t, p, r.Path, "the refusal names the path")
				assert.Contains(t, r.Reason, p[:min(len(p), 200)], "%s: the reason names the path", name)
			}
		}
	}
	// The rule is the transaction's: a name the plan passes is one its node checks pass.
	for _, p := range planned {
		assert.NoError(t, plan.CheckName(p), "%.80s", p)
	}
}
