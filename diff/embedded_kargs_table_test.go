package diff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// kargsAt places kernel arguments where a served payload can carry them: the outer Ignition
// config, the content file's spec.config (the rendered config), the encapsulated file's spec.config,
// and both MachineConfigs' spec.kernelArguments (added to the default worker's).
type kargsAt struct {
	outer, content, encapsulated types.KernelArguments
	spec                         []string
}

func ka(exist, notExist []string) types.KernelArguments {
	var k types.KernelArguments
	for _, a := range exist {
		k.ShouldExist = append(k.ShouldExist, types.KernelArgument(a))
	}
	for _, a := range notExist {
		k.ShouldNotExist = append(k.ShouldNotExist, types.KernelArgument(a))
	}
	return k
}

// kargsPayload is a payload shaped as the machine-config server serves one, with k's arguments.
func kargsPayload(k kargsAt) *fixture.Config {
	rendered := fixture.Ignition("3.3.0").
		File("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600).
		Unit("kubelet.service", "[Service]\nExecStart=/usr/bin/kubelet\n").
		SSHKeys("ssh-ed25519 AAAA core@example")
	content := rendered.Clone()
	content.KernelArguments = k.content
	content.Ignition.Version = "3.5.0"
	enc := fixture.Ignition("3.5.0")
	enc.KernelArguments = k.encapsulated
	m := fixture.DefaultMachine()
	m.KernelArguments = append(slices.Clone(m.KernelArguments), k.spec...)
	outer := rendered.Clone()
	outer.KernelArguments = k.outer
	outer.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(m, content.JSON()), 0o644)
	outer.File(diff.MachineConfigEncapsulatedPath, fixture.MachineConfigJSON(m, enc.JSON()), 0o644)
	return outer
}

type kargsVerdict struct {
	disagrees bool // CheckEmbedded refuses the desired payload
	changed   bool // the diff has a kernelArguments change
}

func judgeKargs(t testing.TB, cur, des kargsAt) (kargsVerdict, *plan.Plan) {
	t.Helper()
	c, d := decode(t, kargsPayload(cur).JSON()), decode(t, kargsPayload(des).JSON())
	why := diff.CheckEmbedded(d)
	require.Equal(t, why, diff.CheckEmbeddedWhole(d), "streamed and whole decode agree")
	changes, err := diff.Diff(c, d)
	require.NoError(t, err)
	v := kargsVerdict{disagrees: why != ""}
	for _, ch := range changes {
		v.changed = v.changed || ch.Kind == diff.KindKernelArguments
	}
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: allowlist.Default()})
	require.NoError(t, err)
	return v, p
}

// everywhere is the same arguments in the outer config and both embedded copies.
func everywhere(k types.KernelArguments) kargsAt {
	return kargsAt{outer: k, content: k, encapsulated: k}
}

// Issue 27 (7aa4fc3): kernel arguments in an embedded MachineConfig's spec.config are compared with
// the outer config's and current against desired, per source. Every case that changes where or
// which kernel arguments the node would get is refused (by the embedded check, the diff, or both);
// a payload that changes none of them is not refused for them.
func TestKernelArgumentsCurrentAgainstDesired(t *testing.T) {
	none := kargsAt{}
	a := ka([]string{"mitigations=off"}, nil)
	b := ka([]string{"nosmt"}, nil)
	notA := ka(nil, []string{"mitigations=off"})
	cases := map[string]struct {
		cur, des kargsAt
		want     kargsVerdict
	}{
		"nothing anywhere":                                    {none, none, kargsVerdict{}},
		"embedded only, shouldExist added":                    {none, kargsAt{content: a}, kargsVerdict{disagrees: true, changed: true}},
		"embedded only, shouldNotExist added":                 {none, kargsAt{content: notA}, kargsVerdict{disagrees: true, changed: true}},
		"encapsulated only, shouldExist":                      {none, kargsAt{encapsulated: a}, kargsVerdict{disagrees: true, changed: true}},
		"encapsulated only, shouldNotExist":                   {none, kargsAt{encapsulated: notA}, kargsVerdict{disagrees: true, changed: true}},
		"outer only, added":                                   {none, kargsAt{outer: a}, kargsVerdict{disagrees: true, changed: true}},
		"outer only, removed":                                 {kargsAt{outer: a}, none, kargsVerdict{changed: true}},
		"both, unchanged":                                     {everywhere(a), everywhere(a), kargsVerdict{}},
		"both, shouldNotExist unchanged":                      {everywhere(notA), everywhere(notA), kargsVerdict{}},
		"both, added":                                         {none, everywhere(a), kargsVerdict{changed: true}},
		"both, changed":                                       {everywhere(a), everywhere(b), kargsVerdict{changed: true}},
		"both, shouldExist to shouldNotExist":                 {everywhere(a), everywhere(notA), kargsVerdict{changed: true}},
		"both, removed":                                       {everywhere(a), none, kargsVerdict{changed: true}},
		"outer and content, not encapsulated":                 {none, kargsAt{outer: a, content: a}, kargsVerdict{disagrees: true, changed: true}},
		"both, disagreeing":                                   {none, kargsAt{outer: a, content: b}, kargsVerdict{disagrees: true, changed: true}},
		"both, reordered":                                     {everywhere(ka([]string{"a=1", "b=2"}, nil)), everywhere(ka([]string{"b=2", "a=1"}, nil)), kargsVerdict{changed: true}},
		"moved into spec, unchanged":                          {kargsAt{content: a, spec: []string{"mitigations=off"}}, kargsAt{content: a, spec: []string{"mitigations=off"}}, kargsVerdict{}},
		"moved into spec, added":                              {none, kargsAt{content: a, spec: []string{"mitigations=off"}}, kargsVerdict{changed: true}},
		"moved into spec, removed":                            {kargsAt{content: a, spec: []string{"mitigations=off"}}, none, kargsVerdict{changed: true}},
		"moved, but not into spec":                            {none, kargsAt{content: a, spec: []string{"nosmt"}}, kargsVerdict{disagrees: true, changed: true}},
		"moved, spec only part of it":                         {none, kargsAt{content: ka([]string{"mitigations=off", "nosmt"}, nil), spec: []string{"nosmt"}}, kargsVerdict{disagrees: true, changed: true}},
		"moved shouldNotExist (never moved)":                  {none, kargsAt{content: notA, spec: []string{"mitigations=off"}}, kargsVerdict{disagrees: true, changed: true}},
		"moved, outer has its own too":                        {none, kargsAt{outer: b, content: a, spec: []string{"mitigations=off"}}, kargsVerdict{disagrees: true, changed: true}},
		"spec only, added":                                    {none, kargsAt{spec: []string{"nosmt"}}, kargsVerdict{changed: true}},
		"unchanged embedded-only (current as bad as desired)": {kargsAt{content: a}, kargsAt{content: a}, kargsVerdict{disagrees: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, p := judgeKargs(t, tc.cur, tc.des)
			assert.Equal(t, tc.want, got)
			if got.disagrees || got.changed {
				assert.False(t, p.Eligible, "refused")
				assert.Empty(t, p.Files, "nothing is written")
				var reasons []string
				for _, r := range p.Refused {
					reasons = append(reasons, r.Reason)
				}
				assert.Contains(t, strings.Join(reasons, "\n"), "kernelArguments")
			} else {
				assert.True(t, p.Eligible, "%+v", p.Refused)
			}
		})
	}
}

// The invariant, whatever the arguments and wherever they are placed: a desired payload that puts
// kernel arguments anywhere differently from the current one is never eligible; the same payload on
// both sides never shows a kernelArguments change. It does not reuse the implementation: it compares
// the placements themselves.
func FuzzKernelArgumentPlacements(f *testing.F) {
	f.Add("mitigations=off", "", uint8(0), uint8(0b00010))
	f.Add("mitigations=off", "nosmt", uint8(0b01111), uint8(0b01111))
	f.Add("init=/bin/sh", "quiet", uint8(0b10010), uint8(0b01001))
	f.Add("a", "a", uint8(0b11111), uint8(0b00100))
	f.Fuzz(func(t *testing.T, x, y string, cur, des uint8) {
		for _, s := range []string{x, y} {
			if s == "" || len(s) > 64 || strings.ContainsAny(s, " \t\n\"\\") || !strings.ContainsFunc(s, func(r rune) bool { return r > ' ' && r < 0x7f }) {
				t.Skip()
			}
			for _, r := range s {
				if r <= ' ' || r >= 0x7f {
					t.Skip()
				}
			}
		}
		place := func(bits uint8) kargsAt {
			var k kargsAt
			args := ka([]string{x}, nil)
			if bits&0b10000 != 0 {
				args = ka(nil, []string{x})
			}
			if y != x {
				args.ShouldExist = append(args.ShouldExist, types.KernelArgument(y))
			}
			if bits&1 != 0 {
				k.outer = args
			}
			if bits&2 != 0 {
				k.content = args
			}
			if bits&4 != 0 {
				k.encapsulated = args
			}
			if bits&8 != 0 {
				k.spec = []string{x}
			}
			return k
		}
		c, d := place(cur), place(des)
		// The shouldNotExist bit places nothing unless an Ignition config carries the arguments.
		norm := func(b uint8) uint8 {
			if b&0b111 == 0 {
				return b & 0b1111
			}
			return b & 0b11111
		}
		samePlacement := norm(cur) == norm(des)
		got, p := judgeKargs(t, c, d)
		if !samePlacement && p.Eligible {
			t.Fatalf("kernel arguments placed %05b -> %05b (%q, %q) planned eligible", cur, des, x, y)
		}
		if samePlacement && got.changed {
			t.Fatalf("the same placement %05b shows a kernelArguments change", cur)
		}
	})
}
