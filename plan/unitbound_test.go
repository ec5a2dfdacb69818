package plan_test

import (
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
