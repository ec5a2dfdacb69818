package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecide walks the rules over facts as HyperShift leaves them: H1/H2 are config versions
// (Hash(), naming the Secrets), R1 a rollout hash of the other flavour.
func TestDecide(t *testing.T) {
	// A settled pool under HyperShift's rollout-hash design, H1 completed and published.
	base := Facts{Pool: "p", Workload: "MachineDeployment ns/p", Deployed: "h1", Completed: "h1", Contract: true,
		Published: &Record{ConfigVersion: "h1", Baseline: "h1"}}
	with := func(f func(*Facts)) Facts {
		c := base
		p := *base.Published
		c.Published = &p
		f(&c)
		return c
	}
	drift := func(f *Facts) { f.Drift, f.Refresh = true, "h2" }
	cases := []struct {
		name    string
		facts   Facts
		action  Action
		version string
		reason  string
		drift   bool
		adopt   bool
	}{
		{"settled, nothing new", base, Wait, "h1", "", false, false},
		{"first sight publishes the completed version", with(func(f *Facts) { f.Published = nil }), Publish, "h1", "", false, false},
		{"drift is published", with(drift), Publish, "h2", "", true, false},
		{"drift over nothing published yet", with(func(f *Facts) { drift(f); f.Published = nil }), Publish, "h2", "", true, false},
		{"drift already published", with(func(f *Facts) { drift(f); f.Published.ConfigVersion = "h2" }), Wait, "h2", "", true, false},
		{"drift without the condition is not drift", with(func(f *Facts) { f.Refresh = "h2" }), Wait, "h1", "", false, false},
		{"the condition with another reason is not drift", with(func(f *Facts) { f.Refresh = "h2" }), Wait, "h1", "", false, false},
		{"drift without a refresh version", with(func(f *Facts) { f.Drift = true }), Wait, "h1", ReasonRefreshVersionUnavailable, false, false},
		{"refresh version equal to the baseline", with(func(f *Facts) { f.Drift, f.Refresh = true, "h1" }), Wait, "h1", "", false, false},
		{"drift ended: back to its baseline", with(func(f *Facts) { f.Published.ConfigVersion = "h2" }), Publish, "h1", "", false, false},
		{"in-progress annotation", with(func(f *Facts) { drift(f); f.InProgress = "r2-4.19" }), Wait, "", ReasonLeftToRollout, false, false},
		{"workload ahead of the completed version", with(func(f *Facts) { drift(f); f.Deployed = "h3" }), Wait, "", ReasonLeftToRollout, false, false},
		{"no completed rollout recorded after a publication", with(func(f *Facts) { f.Completed = "" }), Wait, "", ReasonLeftToRollout, false, false},
		{"first sight before HyperShift records completion", with(func(f *Facts) { f.Completed = ""; f.Published = nil }), Publish, "h1", "", false, false},
		{"first sight before completion waits for the workload", with(func(f *Facts) { f.Completed = ""; f.Published = nil; f.Unsettled = "rolling" }), Wait, "", ReasonPaused, false, false},
		{"workload not settled", with(func(f *Facts) { drift(f); f.Unsettled = "rolling" }), Wait, "", ReasonPaused, false, false},
		{"first sight waits for the workload to settle", with(func(f *Facts) { f.Published = nil; f.Unsettled = "rolling" }), Wait, "", ReasonPaused, false, false},
		{"completion adopts the new baseline", with(func(f *Facts) { f.Deployed, f.Completed = "h3", "h3" }), Publish, "h3", "", false, true},
		{"completion after a published drift adopts too", with(func(f *Facts) {
			f.Deployed, f.Completed, f.Published.ConfigVersion = "h3", "h3", "h2"
		}), Publish, "h3", "", false, true},
		{"no contract: the first version is the baseline", with(func(f *Facts) { f.Contract = false; f.Published = nil }), Publish, "h1", "", false, false},
		{"no contract: a new completed version is never published", with(func(f *Facts) {
			f.Contract, f.Deployed, f.Completed = false, "h3", "h3"
		}), Wait, "", ReasonRolloutContractUnavailable, false, false},
		{"no contract: drift signals are not trusted", with(func(f *Facts) { f.Contract = false; drift(f) }), Wait, "h1", "", false, false},
		{"no workload", with(func(f *Facts) { f.Workload = "" }), Wait, "", ReasonNoWorkload, false, false},
		{"no deployed version", with(func(f *Facts) { f.Deployed = "" }), Wait, "", ReasonNoWorkload, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.facts)
			assert.Equal(t, c.action, d.Action)
			assert.Equal(t, c.reason, d.Reason)
			if c.action == Publish || c.version != "" {
				assert.Equal(t, c.version, d.Version)
			}
			assert.Equal(t, c.drift, d.Drift)
			assert.Equal(t, c.adopt, d.Adopt)
			if c.reason != "" {
				assert.NotEmpty(t, d.Message)
			}
		})
	}
	d := Decide(with(func(f *Facts) { f.InProgress = "r2-4.19" }))
	assert.Contains(t, d.Message, AnnotationInProgressRolloutConfig)
	assert.Contains(t, d.Message, "h1 stays published")
	d = Decide(with(func(f *Facts) { f.Contract, f.Deployed, f.Completed = false, "h3", "h3" }))
	assert.Contains(t, d.Message, "h1 -> h3")
}

// TestDecideNeverPublishesDuringARollout: whatever the drift signals say, any rollout signal wins,
// and nothing but the completed version or the refresh version is ever published.
func TestDecideNeverPublishesDuringARollout(t *testing.T) {
	bools := []bool{false, true}
	for _, contract := range bools {
		for _, drift := range bools {
			for _, inProgress := range []string{"", "r2"} {
				for _, deployed := range []string{"h1", "h3"} {
					for _, unsettled := range []string{"", "rolling"} {
						for _, pub := range []*Record{nil, {ConfigVersion: "h1"}, {ConfigVersion: "h2", Baseline: "h1"}} {
							f := Facts{Pool: "p", Workload: "w", Deployed: deployed, Completed: "h1", Contract: contract,
								InProgress: inProgress, Drift: drift, Refresh: "h2", Unsettled: unsettled, Published: pub}
							d := Decide(f)
							rolling := inProgress != "" || deployed != "h1" || unsettled != ""
							if rolling {
								assert.Equal(t, Wait, d.Action, "%+v", f)
								assert.Contains(t, []string{ReasonLeftToRollout, ReasonPaused}, d.Reason, "%+v", f)
								continue
							}
							if d.Action == Publish {
								assert.Contains(t, []string{"h1", "h2"}, d.Version, "%+v", f)
								if d.Version == "h2" {
									assert.True(t, contract && drift, "drift published only with the contract and the condition: %+v", f)
								}
								if !contract {
									assert.Nil(t, pub, "without the contract only the first version: %+v", f)
								}
							}
						}
					}
				}
			}
		}
	}
}
