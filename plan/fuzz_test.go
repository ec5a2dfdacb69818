package plan_test

import (
	"testing"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// FuzzPlan: no pair of payloads and rules panics the planner, and its invariants hold: a refused plan
// carries nothing to apply; an eligible one writes only paths the policy allows, outside denied
// prefixes, never with special mode bits, and runs only allowed units.
func FuzzPlan(f *testing.F) {
	cur := base().JSON()
	m := fixture.DefaultMachine()
	m.FIPS = true
	f.Add(cur, base().File(registries, []byte("new"), 0o644).JSON(), []byte(`[{"path":"/etc/x/","action":"None"}]`))
	f.Add(cur, base().EmbedMachine(m).JSON(), []byte(``))
	f.Add(cur, base().File("/etc/ssh/x", []byte("x"), 0o4755).JSON(), []byte(`[{"path":"/etc/ssh/","action":"None"}]`))
	f.Add(cur, base().File("/etc/myapp/a", []byte("x"), 0o644).JSON(), []byte(`[{"path":"/etc/myapp/","action":"Restart","services":["crio; reboot"]}]`))
	pol := allowlist.Default()
	f.Fuzz(func(t *testing.T, a, b, rulesRaw []byte) {
		c, err := diff.Decode(a)
		if err != nil {
			return
		}
		d, err := diff.Decode(b)
		if err != nil {
			return
		}
		rules, err := allowlist.ParseRules(rulesRaw)
		if err != nil {
			return
		}
		p, err := plan.Build(plan.Inputs{Current: c, Desired: d, NoRebootPaths: rules, Policy: pol})
		if err != nil {
			return
		}
		if !p.Eligible {
			if len(p.Files) > 0 || p.SSHKeys != nil || len(p.Actions) > 0 || len(p.Refused) == 0 {
				t.Fatal("refused plan carries work")
			}
			return
		}
		extra, _ := pol.Extra(rules)
		for _, f := range p.Files {
			if _, denied := allowlist.Denied(f.Path); denied || !pol.Resolve(f.Path, extra).Allowed {
				t.Fatalf("plan writes %s", f.Path)
			}
			if f.Mode&0o7000 != 0 {
				t.Fatalf("plan writes %s with mode %o", f.Path, f.Mode)
			}
		}
		for _, a := range p.Actions {
			if !pol.UnitAllowed(a.Unit) {
				t.Fatalf("plan runs %s", a.Unit)
			}
		}
	})
}
