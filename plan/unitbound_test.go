package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/memtest"
)

// adv27 round 4, F1: every unit or dropin text the plan reads is bounded before it is parsed, and a
// judged file's contents are decoded only up to the judged-file size. Each input is a payload of a
// few KiB (gzip) that cost 0.5 to 3.3 GiB: refused, naming the file or unit and the bound, with the
// decode and the plan together allocating a small multiple of the compressed payload.
func TestPlanBoundsEveryUnitText(t *testing.T) {
	const dropin = "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf"
	headers := "[Unit]\nDescription=x\n" + strings.Repeat("[Service]\n", 3_000_000) + "[Service]\nExecStart=/usr/bin/sleep infinity\n"
	cases := map[string]struct {
		des    *fixture.Config
		policy string
		want   []string
	}{
		"the crio credential-provider dropin, 60 MB of [S] lines (f5_short)": {
			des:  plain().GzipFile(dropin, []byte(strings.Repeat("[S]\n", 15_000_000)), 0o644),
			want: []string{"file " + dropin, "decompressed size exceeds the 131072 byte limit"},
		},
		"the dropin, [Service] and 20 M A= lines (f5_keys)": {
			des:  plain().GzipFile(dropin, []byte("[Service]\n"+strings.Repeat("A=\n", 20_000_000)), 0o644),
			want: []string{"file " + dropin, "131072"},
		},
		"the dropin, 6 M [Service] lines (f5_service)": {
			des:  plain().GzipFile(dropin, []byte(strings.Repeat("[Service]\n", 6_000_000)), 0o644),
			want: []string{"file " + dropin, "131072"},
		},
		"the dropin within the size, 300 sections": {
			des:  plain().GzipFile(dropin, []byte(strings.Repeat("[Service]\n", 300)), 0o644),
			want: []string{"file " + dropin, "kubelet dropin: too large to judge: 300 sections, more than the 256"},
		},
		"the dropin within the size, 5000 settings": {
			des:  plain().GzipFile(dropin, []byte("[Service]\n"+strings.Repeat("A=\n", 5000)), 0o644),
			want: []string{"file " + dropin, "5000 settings, more than the 4096"},
		},
		"a unit of 3 M [Service] headers under a unit rule (f4_sections)": {
			des: withUnits(unit("myapp.service", str(headers))), policy: ndpPolicy,
			want: []string{"unit myapp.service", "too large to judge", "more than the 131072"},
		},
		"the same unit without a rule": {
			des:  withUnits(unit("myapp.service", str(headers))),
			want: []string{"myapp.service"},
		},
		"a dropin of 300 sections under a unit rule": {
			des: withUnits(unit("myapp.service", str("[Service]\nExecStart=/bin/a\n"),
				types.Dropin{Name: "20-x.conf", Contents: str(strings.Repeat("[Service]\n", 300))})), policy: ndpPolicy,
			want: []string{"unit myapp.service", "300 sections"},
		},
		"a kubelet.service dropin of 3 M lines": {
			des:  withUnits(unit("kubelet.service", nil, types.Dropin{Name: "20-x.conf", Contents: str(strings.Repeat("[Service]\n", 3_000_000))})),
			want: []string{"kubelet.service"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var pol *allowlist.Policy
			if c.policy != "" {
				var err error
				pol, err = allowlist.ParsePolicy([]byte(c.policy))
				require.NoError(t, err)
			}
			cur, err := diff.Decode(plain().JSON())
			require.NoError(t, err)
			payload := fixture.Gzip(c.des.JSON())
			var p *plan.Plan
			cost := memtest.Allocated(func() {
				d, derr := diff.Decode(payload)
				require.NoError(t, derr)
				p, err = plan.Build(plan.Inputs{Current: cur, Desired: d, Policy: pol})
			})
			require.NoError(t, err)
			require.False(t, p.Eligible, "refused, never eligible")
			require.NotEmpty(t, p.Refused)
			for _, w := range c.want {
				assert.Contains(t, p.Refused[0].Reason, w)
			}
			// A unit text in the config is held by the decode (a JSON string); a compressed file's
			// contents never are. Either way nothing parses it: the cost is the decode's.
			budget := uint64(len(payload))*64 + 4<<20
			if units := c.des.Systemd.Units; len(units) > 0 {
				budget += 4 * uint64(len(headers)) // measured: 3x (gunzip, unquote, the string)
			}
			t.Logf("%d bytes of payload: %d MiB allocated", len(payload), cost>>20)
			assert.Less(t, cost, budget)
		})
	}
}

// Round 9 (core 05): the bound on a unit's Exec*= words was applied after every word of every dropin
// had been split and held: 270 dropins (built-in policy, iri-registry.service's rule) of one long
// continued ExecStartPre= each, 16 million words, peaked near 1 GB. A unit's texts together are
// bounded (diff.MaxUnitTexts) before any of them is lexed, and within that the words are counted
// while they are split, stopping at allowlist.MaxExecWords: refused, naming the unit (and the
// dropin where the count ran out), at a cost of the texts, not of their words.
func TestPlanBoundsAUnitsTextsAndWordsWhileSplitting(t *testing.T) {
	// Each physical line 2000 bytes, continued 60 times: 60 000 one-byte words a dropin (120 KB).
	var lines []string
	for range 60 {
		lines = append(lines, strings.TrimSuffix(strings.Repeat("x ", 1000), " "))
	}
	body := "[Service]\nExecStartPre=/bin/echo " + strings.Join(lines, "\\\n") + "\n"
	dropins := func(n int) []types.Dropin {
		var out []types.Dropin
		for i := range n {
			out = append(out, types.Dropin{Name: fmt.Sprintf("d%04d.conf", i), Contents: str(body)})
		}
		return out
	}
	cases := map[string]struct {
		des  *fixture.Config
		want []string
	}{
		"270 dropins (the adversary's), 32 MB": {withUnits(unit(allowlist.UnitIRIRegistry, nil, dropins(270)...)),
			[]string{"unit iri-registry.service", "too large to judge", "270 dropins together, more than the 1048576"}},
		"8 dropins, within the texts' bound, 480 000 words": {withUnits(unit(allowlist.UnitIRIRegistry, nil, dropins(8)...)),
			[]string{"unit iri-registry.service", "dropin d0000.conf: ExecStartPre=: runs commands of more than 16384 words", "too long to judge"}},
		"one unit file of the same line": {withUnits(unit(allowlist.UnitIRIRegistry, str(body))),
			[]string{"unit iri-registry.service", "ExecStartPre=: runs commands of more than 16384 words"}},
		"words spread over ';' commands and '@' argv": {withUnits(unit(allowlist.UnitIRIRegistry, nil,
			types.Dropin{Name: "a.conf", Contents: str("[Service]\nExecStartPre=@/bin/echo " + strings.Repeat("echo a b c ; \\\n/bin/echo ", 5000) + "x\n")})),
			[]string{"unit iri-registry.service", "more than 16384 words"}},
	}
	cur, err := diff.Decode(plain().JSON())
	require.NoError(t, err)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			payload := fixture.Gzip(c.des.JSON())
			var p *plan.Plan
			var d *diff.Payload
			decoded := memtest.Allocated(func() {
				var derr error
				d, derr = diff.Decode(payload)
				require.NoError(t, derr)
			})
			planned := memtest.Allocated(func() { p, err = plan.Build(plan.Inputs{Current: cur, Desired: d}) })
			require.NoError(t, err)
			require.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			for _, w := range c.want {
				assert.Contains(t, p.Refused[0].Reason, w)
			}
			texts := uint64(len(c.des.JSON()))
			t.Logf("%d KB of unit text: decode %d MiB, plan %d MiB allocated", texts>>10, decoded>>20, planned>>20)
			// The decode holds the texts (about three times their size); the plan reads at
			// most MaxUnitTexts of them, and splits at most MaxExecWords words.
			assert.Less(t, decoded, 4*texts+8<<20)
			assert.Less(t, planned, uint64(16*diff.MaxUnitTexts+8<<20))
		})
	}
	// Within the bounds: a unit's dropins together under the texts' bound, their commands under the
	// word bound, are judged as before.
	small := withUnits(unit(allowlist.UnitIRIRegistry, nil, types.Dropin{Name: "a.conf", Contents: str("[Service]\nExecStartPre=/bin/echo " + strings.Join(lines[:8], "\\\n") + "\n")}))
	d, err := diff.Decode(small.JSON())
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: cur, Desired: d})
	require.NoError(t, err)
	for _, r := range p.Refused {
		assert.NotContains(t, r.Reason, "too long to judge")
		assert.NotContains(t, r.Reason, "too large to judge")
	}
}
