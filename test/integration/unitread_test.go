package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/systemdtest"
)

// Issue 27, round 4: the plan's reading of a unit text is systemd's. Each text below is one that
// go-systemd (the judge's lexer) reads differently; a real systemd user manager loads it, and the
// variables its Environment= property holds are exactly those the plan's reader finds in the
// [Service] Environment= assignments.
func TestUnitTextsReadAsRealSystemdReadsThem(t *testing.T) {
	mgr := systemdtest.Another(t, "unitread")
	texts := map[string]string{
		"backslash-pair":       "Environment=A=1\\\\\nEnvironment=B=2\n",
		"three-backslashes":    "Environment=A=1\\\\\\\nEnvironment=B=2\n",
		"comment-continued":    "Environment=A=1\n# a comment \\\nEnvironment=B=2\n",
		"comment-in-cont":      "Environment=A=1 \\\n# a comment\n C=3\nEnvironment=D=4\n",
		"cr":                   "Environment=A=1\rEnvironment=B=2\n",
		"crlf":                 "Environment=A=1\r\nEnvironment=B=2\r\n",
		"nul":                  "Environment=A=1\x00Environment=B=2\n",
		"vtab-key":             "Environment=A=1\n\vEnvironment=B=2\n",
		"semicolon-comment":    "Environment=A=1\n  ; Environment=B=2\nEnvironment=C=3\n",
		"empty-line-ends-cont": "Environment=A=1 \\\n\nEnvironment=B=2\n",
		"continued-at-eof":     "Environment=B=2\nEnvironment=A=1 \\",
		"key-with-spaces":      "Environment =A=1\n Environment= B=2\n",
	}
	for name, body := range texts {
		text := "[Service]\nExecStart=/bin/sleep infinity\n" + body
		require.NoError(t, os.WriteFile(filepath.Join(mgr.UnitDir, "read-"+name+".service"), []byte(text), 0o644))
	}
	_, err := mgr.Systemctl("daemon-reload")
	require.NoError(t, err)
	for name, body := range texts {
		t.Run(name, func(t *testing.T) {
			text := "[Service]\nExecStart=/bin/sleep infinity\n" + body
			got, err := mgr.Systemctl("show", "-p", "Environment", "--value", "read-"+name+".service")
			require.NoError(t, err)
			var real []string
			for _, a := range strings.Fields(got) {
				k, _, _ := strings.Cut(a, "=")
				real = append(real, strings.TrimPrefix(k, `"`)) // systemctl quotes a value with a backslash
			}
			settings, err := plan.ReadUnitText(text)
			require.NoError(t, err)
			var ours []string
			for _, s := range settings {
				if s.Section == "Service" && s.Key == "Environment" {
					for _, a := range strings.Fields(s.Value) {
						k, _, _ := strings.Cut(a, "=")
						ours = append(ours, k)
					}
				}
			}
			slices.Sort(real)
			slices.Sort(ours)
			assert.Equal(t, real, ours, "systemd's Environment=%q, the plan's reading %+v", got, settings)
		})
	}
}
