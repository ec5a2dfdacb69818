package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

// Round 23 (c/07): a unit text the lexer refuses, or that systemd reads differently from the
// judge, is refused without its text: go-systemd quoted what followed a section header's "]" and
// the judge quoted both readings' values, a secret among them.
func TestUnreadableUnitTextsAreRefusedWithoutTheirText(t *testing.T) {
	const secret = "Hunter2Secret"
	garbage := map[string]string{
		"garbage after a section":       "[Service] DB_PASS=" + secret + "\nExecStart=/usr/bin/myapp\n",
		"garbage after a later section": "[Unit]\nDescription=x\n[Service]Environment=DB_PASS=" + secret + "\n",
	}
	for name, text := range garbage {
		// Ignition's own validation refuses the payload: its message names the place, not the text.
		_, err := diff.Decode(withUnits(unit("myapp.service", str(text))).JSON())
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "$.systemd.units.0.contents")
		assert.NotContains(t, err.Error(), secret)
		_, err = diff.Decode(withUnits(unit("myapp.service", nil, types.Dropin{Name: "10-x.conf", Contents: str(text)})).JSON())
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), secret)
		// A node's drop-in is read by the judge's lexer alone.
		root := nodeRoot(t, map[string]string{
			"/etc/systemd/system/myapp.service":             "[Service]\nExecStart=/usr/bin/myapp\n",
			"/etc/systemd/system/myapp.service.d/10-x.conf": text,
		})
		p := rootBuild(t, ndpPolicy, root, plain(), plain().File("/etc/myapp/restart.conf", []byte("x"), 0o644))
		for _, r := range p.Refused {
			assert.NotContains(t, r.Reason, secret, name)
		}
		for _, w := range p.Warnings {
			assert.NotContains(t, w, secret, name)
		}
	}
	for name, text := range map[string]string{
		"a comment in a continuation": "[Service]\nExecStart=/usr/bin/myapp \\\n#\nEnvironment=DB_PASS=" + secret + "\n",
		"a backslash pair":            "[Service]\nEnvironment=DB_PASS=" + secret + "\\\\\nExecStart=/usr/bin/myapp\n",
		"a carriage return":           "[Service]\nEnvironment=DB_PASS=" + secret + "\rExecStart=/usr/bin/myapp\n",
	} {
		for _, where := range []string{"unit", "dropin"} {
			t.Run(where+"/"+name, func(t *testing.T) {
				u := unit("myapp.service", str(text))
				if where == "dropin" {
					u = unit("myapp.service", nil, types.Dropin{Name: "10-x.conf", Contents: str(text)})
				}
				p := ndpBuild(t, ndpPolicy, plain(), withUnits(u))
				assert.False(t, p.Eligible)
				require.NotEmpty(t, p.Refused)
				for _, r := range p.Refused {
					assert.NotContains(t, r.Reason, secret)
					assert.NotContains(t, r.Reason, "DB_PASS")
				}
			})
		}
	}
}
