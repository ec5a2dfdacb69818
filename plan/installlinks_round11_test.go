package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Round 11 (units 05): enabling a unit reads its [Install] section as systemctl enable does, the
// unit as the manager will load it (the payload's file, the node's file of a unit the payload only
// enables, every drop-in), and follows Also=. The plan refuses every Also= naming another unit (a
// refresh enables and disables only the unit its entry names; the executor refuses any link of
// another unit), an Alias=, and a WantedBy=/RequiredBy=/UpheldBy= that is not an ordinary target or
// that makes another unit follow or uphold the unit: the dry run's refusal is the real run's, where
// before the plan read only the payload's own text and the executor failed and rolled back.
func TestEnablingJudgesTheInstallSectionTheManagerReads(t *testing.T) {
	const svc = "[Unit]\nDescription=myapp\n[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n"
	const helper = "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
	nodeFiles := map[string]string{
		"/usr/lib/systemd/system/crio-wipe.service":    "[Service]\nType=oneshot\nExecStart=/usr/bin/crio wipe\n[Install]\nWantedBy=multi-user.target\n",
		"/usr/lib/systemd/system/other.service":        helper,
		"/usr/lib/systemd/system/myapp-helper.service": helper,
		"/usr/lib/systemd/system/helper.service":       helper + "Also=crio-wipe.service\n",
	}
	refused := map[string]string{
		"Also=crio-wipe.service":                    "Also=crio-wipe.service",
		"Also=reboot.target":                        "Also=reboot.target",
		"Also=other.service":                        "Also=other.service",
		"Also=helper.service":                       "Also=helper.service",
		"Also=%p-helper.service":                    "Also=myapp-helper.service",
		"Also=myapp.service x.service":              "x.service",
		"Alias=reboot.target":                       "reboot.target",
		"Alias=foo.service":                         "foo.service",
		"Alias=dbus-org.freedesktop.login1.service": "dbus-org.freedesktop.login1.service",
		"WantedBy=shutdown.target":                  "[Install] WantedBy=shutdown.target: ",
		"WantedBy=reboot.target":                    "[Install] WantedBy=reboot.target: ",
		"WantedBy=poweroff.target":                  "[Install] WantedBy=poweroff.target: ",
		"WantedBy=kexec.target":                     "[Install] WantedBy=kexec.target: ",
		"WantedBy=crio.service":                     "[Install] WantedBy=crio.service: ",
		"WantedBy=systemd-reboot.service":           "[Install] WantedBy=systemd-reboot.service: ",
		"RequiredBy=sysinit.target":                 "[Install] RequiredBy=sysinit.target: ",
		"RequiredBy=multi-user.target":              "[Install] RequiredBy=multi-user.target: ",
		"RequiredBy=kubelet.service":                "[Install] RequiredBy=kubelet.service: ",
		"RequiredBy=halt.target":                    "[Install] RequiredBy=halt.target: ",
		"UpheldBy=sysinit.target":                   "[Install] UpheldBy=sysinit.target: ",
		"UpheldBy=default.target":                   "[Install] UpheldBy=default.target: ",
		"UpheldBy=crio.service":                     "[Install] UpheldBy=crio.service: ",
		"UpheldBy=reboot.target":                    "[Install] UpheldBy=reboot.target: ",
	}
	accepted := []string{"", "WantedBy=default.target", "WantedBy=sysinit.target", "WantedBy=kubelet-dependencies.target network-online.target",
		"Also=myapp.service", "Also=%n"}
	type shape struct {
		name     string
		node     map[string]string
		cur, des *fixture.Config
	}
	shapes := func(lines string) []shape {
		with := func(m map[string]string) map[string]string {
			out := map[string]string{}
			for k, v := range nodeFiles {
				out[k] = v
			}
			for k, v := range m {
				out[k] = v
			}
			return out
		}
		entry := func(enabled bool, contents *string, dropins ...types.Dropin) *fixture.Config {
			return withUnits(types.Unit{Name: "myapp.service", Enabled: boolp(enabled), Contents: contents, Dropins: dropins})
		}
		return []shape{
			{"payload unit", with(nil), entry(false, str(svc)), entry(true, str(svc+lines+"\n"))},
			{"new payload unit", with(nil), withUnits(), entry(true, str(svc+lines+"\n"))},
			{"payload drop-in", with(nil), entry(false, str(svc)), entry(true, str(svc), types.Dropin{Name: "50-x.conf", Contents: str("[Install]\n" + lines + "\n")})},
			{"node unit", with(map[string]string{"/usr/lib/systemd/system/myapp.service": svc + lines + "\n"}), entry(false, nil), entry(true, nil)},
			{"node drop-in of a payload unit", with(map[string]string{"/etc/systemd/system/myapp.service.d/50-node.conf": "[Install]\n" + lines + "\n"}),
				entry(false, str(svc)), entry(true, str(svc))},
			{"node drop-in of a node unit", with(map[string]string{"/usr/lib/systemd/system/myapp.service": svc,
				"/usr/lib/systemd/system/myapp.service.d/50-node.conf": "[Install]\n" + lines + "\n"}), entry(false, nil), entry(true, nil)},
		}
	}
	for lines, want := range refused {
		for _, s := range shapes(lines) {
			t.Run("refused/"+s.name+"/"+lines, func(t *testing.T) {
				p := rootBuild(t, round9UnitPolicy, nodeRoot(t, s.node), s.cur, s.des)
				refusedWith(t, p, "unit myapp.service: ", want)
			})
		}
	}
	for _, lines := range accepted {
		for _, s := range shapes(lines) {
			t.Run("accepted/"+s.name+"/"+lines, func(t *testing.T) {
				p := rootBuild(t, round9UnitPolicy, nodeRoot(t, s.node), s.cur, s.des)
				assert.True(t, p.Eligible, "%+v", p.Refused)
			})
		}
	}
}

// Round 11 (units 05): disabling follows Also= too (systemctl disable), and so does the rollback's
// undo, on the definition the rollback puts back: a disable (the entry's enabled: false, or a
// removal's stop and disable) of a unit whose definition names Also=crio-wipe.service would disable
// crio-wipe, and the undo of an enable whose current definition has Also= would disable its Also=
// units, enabled before the refresh or not. A drop-in's empty Also= resets nothing, as systemd reads it.
func TestDisablingAndUndoFollowAlsoToo(t *testing.T) {
	const svc = "[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n"
	wipe := map[string]string{"/usr/lib/systemd/system/crio-wipe.service": "[Service]\nType=oneshot\nExecStart=/usr/bin/crio wipe\n[Install]\nWantedBy=multi-user.target\n"}
	node := func(extra map[string]string) string {
		m := map[string]string{}
		for k, v := range wipe {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return nodeRoot(t, m)
	}
	u := func(enabled bool, contents *string, dropins ...types.Dropin) types.Unit {
		return types.Unit{Name: "myapp.service", Enabled: boolp(enabled), Contents: contents, Dropins: dropins}
	}
	also := svc + "Also=crio-wipe.service\n"
	cases := []struct {
		name     string
		root     string
		cur, des *fixture.Config
		want     string
	}{
		{"disable a node unit", node(map[string]string{"/usr/lib/systemd/system/myapp.service": also}),
			withUnits(u(true, nil)), withUnits(u(false, nil)), "Also=crio-wipe.service: to disable it would disable crio-wipe.service too"},
		{"disable a payload unit", node(nil), withUnits(u(true, str(also))), withUnits(u(false, str(also))), "to disable it would disable crio-wipe.service"},
		{"remove a payload unit over a node unit", node(map[string]string{"/usr/lib/systemd/system/myapp.service": also}),
			withUnits(u(true, str(svc))), withUnits(), "to disable it would disable crio-wipe.service"},
		{"undo of an enable", node(nil), withUnits(u(false, str(also))), withUnits(u(true, str(svc))),
			"undoing it on rollback (the current definition): [Install] Also=crio-wipe.service: to disable it"},
		{"undo of an enable, the current drop-in", node(nil),
			withUnits(u(false, str(svc), types.Dropin{Name: "50-x.conf", Contents: str("[Install]\nAlso=crio-wipe.service\n")})), withUnits(u(true, str(svc))), "undoing it on rollback"},
		{"an empty Also= in a drop-in resets nothing", node(nil), withUnits(u(false, str(svc))),
			withUnits(u(true, str(also), types.Dropin{Name: "90-reset.conf", Contents: str("[Install]\nAlso=\n")})), "Also=crio-wipe.service: to enable it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := rootBuild(t, round9UnitPolicy, tc.root, tc.cur, tc.des)
			refusedWith(t, p, "unit myapp.service: ", tc.want)
			for _, r := range p.Refused {
				assert.False(t, strings.Contains(r.Reason, "\n"), "one line: %q", r.Reason)
			}
		})
	}
	// The same payloads without Also= pass.
	p := rootBuild(t, round9UnitPolicy, node(map[string]string{"/usr/lib/systemd/system/myapp.service": svc}), withUnits(u(true, nil)), withUnits(u(false, nil)))
	assert.True(t, p.Eligible, "%+v", p.Refused)
	p = rootBuild(t, round9UnitPolicy, node(nil), withUnits(u(false, str(svc))), withUnits(u(true, str(svc))))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
