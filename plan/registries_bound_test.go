package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// adv27 round 4, F3: a desired registries.conf is judged whole whatever the current one is, and
// one the agent cannot judge (over 1 MiB) is refused, never written with a drain. Generated as the
// adversary wrote them: gzip-compressed storage files.
func TestDesiredRegistriesConfIsJudgedWhateverTheCurrent(t *testing.T) {
	regs := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "[[registry]]\nlocation = \"r%d.io\"\n", i)
		}
		return b.String()
	}
	mib := "# " + strings.Repeat("x", 1<<20) + "\n"
	valid := "[[registry]]\nlocation = \"r.io\"\n"
	currents := map[string]string{
		"small":                          valid,
		"beyond the bounds (5 200 keys)": regs(2600),
		"over 1 MiB":                     mib + valid,
		"not TOML":                       "[[registry]\nlocation = \"x\"\n",
		"nested too deep":                "z = " + strings.Repeat("[", 30) + "1" + strings.Repeat("]", 30) + "\n",
		"absent":                         "",
	}
	desireds := map[string]struct{ data, why string }{
		"not TOML":              {"[[registry]\nlocation = \"x\"\n", "desired registries.conf is not valid TOML"},
		"nested 3 000 deep":     {"z = " + strings.Repeat("[", 3000) + "1" + strings.Repeat("]", 3000) + "\n", "desired registries.conf is not parsed: line 1: arrays or inline tables nested more than 8 deep"},
		"over 5 000 keys":       {regs(2600) + "# changed\n", "desired registries.conf is not parsed"},
		"over 1 MiB, not TOML":  {mib + "[[registry]\nlocation = \"x\"\n", "desired registries.conf is not judged: contents: decompressed size exceeds the 1048576 byte limit"},
		"over 1 MiB, valid":     {mib + valid + "# changed\n", "1048576 byte limit"},
		"dotted header 9 parts": {"[a.b.c.d.e.f.g.h.i]\n", "desired registries.conf is not parsed"},
	}
	for cn, cur := range currents {
		curCfg := base()
		if cur != "" {
			curCfg = curCfg.GzipFile(registries, []byte(cur), 0o644)
		} else {
			curCfg = fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).
				File(pullSecret, []byte(`{"auths":{}}`), 0o600).SSHKeys("ssh-ed25519 AAAA one")
		}
		for dn, d := range desireds {
			if d.data == cur {
				continue // no change
			}
			t.Run(cn+"/"+dn, func(t *testing.T) {
				p := build(t, curCfg, base().GzipFile(registries, []byte(d.data), 0o644), "")
				require.False(t, p.Eligible, "refused, never eligible with a drain")
				require.Len(t, p.Refused, 1)
				assert.Equal(t, registries, p.Refused[0].Path)
				assert.Contains(t, p.Refused[0].Reason, "file "+registries+": ")
				assert.Contains(t, p.Refused[0].Reason, d.why)
				assert.False(t, p.Drain)
			})
		}
		// A valid desired file is still planned: with a drain when the current one cannot be judged.
		t.Run(cn+"/valid", func(t *testing.T) {
			p := build(t, curCfg, base().GzipFile(registries, []byte(valid+"[[registry]]\nlocation = \"s.io\"\nblocked = true\n"), 0o644), "")
			require.True(t, p.Eligible, "%+v", p.Refused)
			if cn != "small" && cn != "absent" {
				assert.True(t, p.Drain)
				assert.Contains(t, strings.Join(p.DrainReasons, "\n"), "current file")
			}
		})
	}
}

// Adversary r21 c/01: the TOML parser's errors quote the file (a value, a key, a table's name),
// and the refusal reason carried them into the plan, the logs, the Node's annotation and Events:
// 6 KB of a registries.conf came back. The reason says where, never what.
func TestRegistriesConfErrorsNeverQuoteTheFile(t *testing.T) {
	const marker = "SECRETMARKER"
	for name, data := range map[string]string{
		"a bare value":        "[[registry]]\nlocation = " + marker + strings.Repeat("x", 6000) + "\n",
		"a key defined twice": "[" + marker + "]\na = 1\n[" + marker + "]\nb = 2\n",
		"a hex number":        "x = 0x" + marker + "\n",
		"a wrong type":        "[[registry]]\nlocation = 1\nprefix = \"" + marker + "\"\n",
		"a wrong-typed key":   "unqualified-search-registries = \"" + marker + "\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := build(t, base(), base().File(registries, []byte(data), 0o644), "")
			require.False(t, p.Eligible)
			require.Len(t, p.Refused, 1)
			r := p.Refused[0].Reason
			assert.Contains(t, r, "is not valid TOML")
			assert.Contains(t, r, "line ")
			assert.NotContains(t, r, marker, "the reason never quotes the file")
		})
	}
}
