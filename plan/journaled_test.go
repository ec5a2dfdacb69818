package plan_test

import (
	"fmt"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// What recovery may run from a journal is what a plan under the node's policy could have journaled
// (issue 27, class 5; adversary round 9, 08): every plan's own actions pass plan.Journaled, with
// their undos as the plan sets them or cleared (actions.WithUndo: the unit already was so).
func TestPlannedActionsAreJournaled(t *testing.T) {
	const svc = "[Service]\nExecStart=/bin/a\n[Install]\nWantedBy=multi-user.target\n"
	u := func(enabled, mask *bool, contents *string) types.Unit {
		return types.Unit{Name: "myapp.service", Contents: contents, Enabled: enabled, Mask: mask}
	}
	ndp := map[string][2]*fixture.Config{
		"enabled":        {withUnits(u(boolp(false), nil, str(svc))), withUnits(u(boolp(true), nil, str(svc)))},
		"disabled":       {withUnits(u(boolp(true), nil, str(svc))), withUnits(u(boolp(false), nil, str(svc)))},
		"masked":         {withUnits(u(nil, nil, str(svc))), withUnits(u(nil, boolp(true), nil))},
		"unmasked":       {withUnits(u(nil, boolp(true), nil)), withUnits(u(nil, boolp(false), nil))},
		"removed":        {withUnits(u(boolp(true), nil, str(svc))), plain()},
		"removed masked": {withUnits(u(nil, boolp(true), nil)), plain()},
		"files": {plain(), plain().File("/etc/myapp/restart.conf", []byte("x"), 0o644).File("/etc/myapp/drain.conf", []byte("x"), 0o644).
			File("/etc/myapp/dr.conf", []byte("x"), 0o644)},
	}
	pol, err := allowlist.ParsePolicy([]byte(ndpPolicy))
	require.NoError(t, err)
	check := func(t *testing.T, pol *allowlist.Policy, p *plan.Plan) {
		require.True(t, p.Eligible, "%+v", p.Refused)
		require.NotEmpty(t, p.Actions)
		assert.NoError(t, plan.Journaled(pol, p.Actions))
		cleared := make([]plan.UnitAction, len(p.Actions))
		for i, a := range p.Actions {
			a.Undo = ""
			cleared[i] = a
		}
		assert.NoError(t, plan.Journaled(pol, cleared))
	}
	for name, tc := range ndp {
		t.Run(name, func(t *testing.T) { check(t, pol, ndpBuild(t, ndpPolicy, tc[0], tc[1])) })
	}
	// The built-in policy: registries.conf (crio reload), the CA bundle (restarts), the credential
	// provider dropin (daemon-reload, kubelet restart), HyperShift's haproxy (a pod restart), the IRI
	// registry's unit (enabled, under its unit rule).
	t.Run("built-in", func(t *testing.T) {
		des := base().File(registries, []byte("# new"), 0o644).File(trust, []byte("ca"), 0o644).
			File("/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf", []byte("[Service]\n"), 0o644).
			File("/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", []byte("global\n"), 0o644)
		p := build(t, base(), des, "")
		check(t, allowlist.Default(), p)
		assert.Contains(t, p.Actions, plan.UnitAction{Pod: allowlist.PodAPIServerProxy, Action: allowlist.ActionRestart})
		iri := base().Clone()
		iri.Systemd.Units = append(iri.Systemd.Units, types.Unit{Name: allowlist.UnitIRIRegistry, Contents: str("[Service]\nExecStart=/usr/bin/true\n"), Enabled: boolp(true)})
		check(t, allowlist.Default(), build(t, base(), iri, ""))
	})
	// A ConfigMap entry within the ceiling.
	t.Run("ceiling", func(t *testing.T) {
		cpol, err := allowlist.ParsePolicy([]byte("configMapCeiling: [{prefix: /etc/foo/, actions: [None, Reload], units: [crio]}]"))
		require.NoError(t, err)
		c, err := diff.Decode(base().JSON())
		require.NoError(t, err)
		d, err := diff.Decode(base().File("/etc/foo/a.conf", []byte("x"), 0o644).JSON())
		require.NoError(t, err)
		rules, err := allowlist.ParseRules([]byte(`[{"path": "/etc/foo/a.conf", "action": "Reload", "services": ["crio"]}]`))
		require.NoError(t, err)
		p, err := plan.Build(plan.Inputs{Current: c, Desired: d, NoRebootPaths: rules, Policy: cpol})
		require.NoError(t, err)
		check(t, cpol, p)
	})
}

// A forged journal's unit actions that no plan under the policy could have journaled are refused,
// naming the action (adversary round 9, 08: a committed journal saying Stop or Mask of crio.service
// had recovery stop or mask crio; unknown kinds looped as rollbackIncomplete).
func TestForgedJournalActionsAreRefused(t *testing.T) {
	builtin := allowlist.Default()
	ndp, err := allowlist.ParsePolicy([]byte(ndpPolicy))
	require.NoError(t, err)
	// No unit rule, one reload of crio.
	bare := &allowlist.Policy{Rules: []allowlist.Rule{{Path: "/etc/foo.conf", Action: allowlist.ActionReload, Services: []string{allowlist.UnitCrio}}},
		AllowedUnits: []string{allowlist.UnitCrio, allowlist.UnitKubelet}}
	ua := func(unit string, a allowlist.Action) plan.UnitAction { return plan.UnitAction{Unit: unit, Action: a} }
	for _, tc := range []struct {
		name string
		pol  *allowlist.Policy
		list []plan.UnitAction
		want string
	}{
		{"stop crio", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionStop)}, "no unit rule"},
		{"mask crio", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionMask)}, "no unit rule"},
		{"disable crio", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionDisable)}, "no unit rule"},
		{"enable crio", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionEnable)}, "no unit rule"},
		{"unmask crio", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionUnmask)}, "no unit rule"},
		{"start crio", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionStart)}, "never starts a unit"},
		{"start the unit rule's unit", builtin, []plan.UnitAction{ua(allowlist.UnitIRIRegistry, allowlist.ActionStart)}, "never starts a unit"},
		{"isolate", builtin, []plan.UnitAction{ua("crio.service", "Isolate")}, "not an action a refresh journals"},
		{"frobnicate", builtin, []plan.UnitAction{ua("crio.service", "Frobnicate")}, "not an action a refresh journals"},
		{"none", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionNone)}, "not an action a refresh journals"},
		{"empty action", builtin, []plan.UnitAction{ua("crio.service", "")}, "not an action a refresh journals"},
		{"pod etcd", builtin, []plan.UnitAction{{Pod: "kube-system/etcd", Action: allowlist.ActionRestart}}, "no node policy rule names this static pod"},
		{"pod reload", builtin, []plan.UnitAction{{Pod: allowlist.PodAPIServerProxy, Action: allowlist.ActionReload}}, "only ever restarted"},
		{"unit and pod", builtin, []plan.UnitAction{{Unit: "crio.service", Pod: allowlist.PodAPIServerProxy, Action: allowlist.ActionRestart}}, "not both"},
		{"restart sshd", builtin, []plan.UnitAction{ua("sshd.service", allowlist.ActionRestart)}, "asks to restart this unit"},
		{"restart crio under a reload-only policy", bare, []plan.UnitAction{ua("crio.service", allowlist.ActionRestart)}, "asks to restart this unit"},
		{"restart kubelet under a crio-only policy", bare, []plan.UnitAction{ua("kubelet.service", allowlist.ActionRestart)}, "asks to restart this unit"},
		{"daemon-reload with no rule asking", bare, []plan.UnitAction{{Action: allowlist.ActionDaemonReload}}, "no rule of the node policy asks for a daemon-reload"},
		{"daemon-reload of a unit", builtin, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionDaemonReload}}, "names no unit"},
		{"no target", builtin, []plan.UnitAction{{Action: allowlist.ActionRestart}}, "names no unit"},
		{"reboot target", builtin, []plan.UnitAction{ua("reboot.target", allowlist.ActionRestart)}, "not a unit the agent acts on"},
		{"reboot service", builtin, []plan.UnitAction{ua("systemd-reboot.service", allowlist.ActionRestart)}, "not a unit the agent acts on"},
		{"alias spelling", builtin, []plan.UnitAction{ua("crio", allowlist.ActionReload)}, "not a unit name as a plan names units (it names crio.service)"},
		{"ifLoaded", builtin, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload, IfLoaded: true}}, "ifLoaded"},
		{"restart with an undo", builtin, []plan.UnitAction{{Unit: "crio.service", Action: allowlist.ActionReload, Undo: allowlist.ActionStop}}, "no undo"},
		{"stop undone by a mask", ndp, []plan.UnitAction{{Unit: "myapp.service", Action: allowlist.ActionStop, Undo: allowlist.ActionMask}}, "is not Stop's"},
		{"state action of a reboot rule's unit", ndp, []plan.UnitAction{ua("other.service", allowlist.ActionStop)}, "no unit rule"},
		{"twice", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionReload), ua("crio.service", allowlist.ActionReload)}, "a plan lists each once"},
		{"reload and restart", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionReload), ua("crio.service", allowlist.ActionRestart)}, "a plan lists each once"},
		{"after a good one", builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionReload), ua("crio.service", allowlist.ActionStop)}, "unit action 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := plan.Journaled(tc.pol, tc.list)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, "unit action ")
			t.Log(err)
		})
	}
	// Their benign neighbours pass.
	for _, tc := range []struct {
		pol  *allowlist.Policy
		list []plan.UnitAction
	}{
		{builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionReload)}},
		{builtin, []plan.UnitAction{ua("crio.service", allowlist.ActionRestart)}}, // the CA bundle's rule
		{builtin, []plan.UnitAction{{Pod: allowlist.PodAPIServerProxy, Action: allowlist.ActionRestart}}},
		{builtin, []plan.UnitAction{{Unit: allowlist.UnitIRIRegistry, Action: allowlist.ActionStop, Undo: allowlist.ActionStart},
			{Unit: allowlist.UnitIRIRegistry, Action: allowlist.ActionDisable}, {Action: allowlist.ActionDaemonReload}}},
		{ndp, []plan.UnitAction{{Unit: "myapp.service", Action: allowlist.ActionMask, Undo: allowlist.ActionUnmask}, {Action: allowlist.ActionDaemonReload}}},
		{bare, []plan.UnitAction{ua("crio.service", allowlist.ActionReload)}},
		{bare, nil},
	} {
		assert.NoError(t, plan.Journaled(tc.pol, tc.list), fmt.Sprint(tc.list))
	}
}
