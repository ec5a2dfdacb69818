package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecide(t *testing.T) {
	base := Facts{Pool: "p", Workload: "MachineDeployment ns/p", ConfigVersion: "v2", RolloutTarget: "r1", RolloutCurrent: "r1",
		Published: &Record{ConfigVersion: "v1", Rollout: "r1"}}
	with := func(f func(*Facts)) Facts {
		c := base
		p := *base.Published
		c.Published = &p
		f(&c)
		return c
	}
	cases := []struct {
		name   string
		facts  Facts
		action Action
		reason string
		adopt  bool
	}{
		{"management drift is published", base, Publish, "", false},
		{"first sight publishes the baseline", with(func(f *Facts) { f.Published = nil }), Publish, "", false},
		{"nothing changed", with(func(f *Facts) { f.ConfigVersion = "v1" }), Wait, "", false},
		{"no workload", with(func(f *Facts) { f.Workload = "" }), Wait, ReasonNoWorkload, false},
		{"no config version", with(func(f *Facts) { f.ConfigVersion = "" }), Wait, ReasonNoWorkload, false},
		{"paused wins over drift", with(func(f *Facts) { f.Paused = "rolling" }), Wait, ReasonPaused, false},
		{"paused wins over the first publication", with(func(f *Facts) { f.Paused = "rolling"; f.Published = nil }), Wait, ReasonPaused, false},
		{"rollout-class change is left to the rollout", with(func(f *Facts) { f.RolloutTarget = "r2" }), Wait, ReasonLeftToRollout, false},
		{"rollout pending without a new version", with(func(f *Facts) { f.RolloutTarget = "r2"; f.ConfigVersion = "v1" }), Wait, ReasonLeftToRollout, false},
		{"first sight during a rollout publishes nothing", with(func(f *Facts) { f.RolloutTarget = "r2"; f.Published = nil }), Wait, ReasonLeftToRollout, false},
		{"without HyperShift's record of completion, a new target waits", with(func(f *Facts) { f.RolloutTarget, f.RolloutCurrent = "r2", "" }), Wait, ReasonLeftToRollout, false},
		{"completed rollout becomes the baseline", with(func(f *Facts) { f.RolloutTarget, f.RolloutCurrent = "r2", "r2" }), Publish, "", true},
		{"a rollout hash first recorded (seeded) is adopted", with(func(f *Facts) { f.Published.Rollout = "" }), Publish, "", true},
		{"rollout annotation removed is no rollout", with(func(f *Facts) { f.RolloutTarget, f.RolloutCurrent = "", "" }), Publish, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.facts)
			assert.Equal(t, c.action, d.Action)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, c.adopt, d.Adopt)
			if c.reason != "" {
				assert.NotEmpty(t, d.Message)
			}
		})
	}
	d := Decide(with(func(f *Facts) { f.RolloutTarget = "r2" }))
	assert.Contains(t, d.Message, "v1 -> v2")
	assert.Contains(t, d.Message, "left to the rollout")
}
