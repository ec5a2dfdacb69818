package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Round 8 (units A1, A2): every unit a payload's unit or dropin names as a dependency is judged by
// the one identity function (allowlist.DependencyIdentity) whatever the setting, an alias as the
// unit it links to; PartOf=/BindsTo=/StopPropagatedFrom= name only the unit's own, a target or a
// service a unit rule names. The adversary's cases, as a unit file, a new unit and a dropin, under
// the docs' policy and (A1c) under the built-in default policy's iri-registry.service rule.
func TestPayloadDependenciesAreJudgedByIdentity(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	refused := map[string]string{
		// A1: instances of unsafe templates, in every setting that names a unit.
		"Wants=systemd-fsck@dev-sda1.service":     "Wants=systemd-fsck@dev-sda1.service: ",
		"Requires=systemd-fsck@dev-sda1.service":  "Requires=systemd-fsck@dev-sda1.service: ",
		"Upholds=systemd-fsck@dev-sda1.service":   "Upholds=systemd-fsck@dev-sda1.service: ",
		"Requisite=systemd-fsck@dev-vda4.service": "Requisite=systemd-fsck@dev-vda4.service: ",
		"BindsTo=systemd-fsck@dev-vda4.service":   "BindsTo=systemd-fsck@dev-vda4.service: ",
		"OnFailure=systemd-fsck@dev-sda1.service": "OnFailure=systemd-fsck@dev-sda1.service: ",
		"OnSuccess=user@0.service":                "OnSuccess=user@0.service: ",
		"Wants=user@0.service":                    "Wants=user@0.service: ",
		"Requires=user@0.service":                 "Requires=user@0.service: ",
		"Wants=user-runtime-dir@0.service":        "Wants=user-runtime-dir@0.service: ",
		"Wants=systemd-cryptsetup@luks.service":   "Wants=systemd-cryptsetup@luks.service: ",
		"Wants=systemd-fsck\\x40dev-sda1.service": "Wants=systemd-fsck\\x40dev-sda1.service: ",
		"Wants=SYSTEMD-FSCK@dev-sda1.service":     "Wants=SYSTEMD-FSCK@dev-sda1.service: ",
		// Round 9: an instance of a template the judge cannot read (no --root) that no rule names.
		"Wants=getty@tty1.service": "Wants=getty@tty1.service: an instance of getty@.service",
		// …and the essentials, the MCD's and special units, by the same function.
		"Wants=debug-shell.service":           "Wants=debug-shell.service: ",
		"Wants=machine-config-daemon.service": "Wants=machine-config-daemon.service: ",
		"Upholds=systemd-journald.service":    "Upholds=systemd-journald.service: ",
		"Wants=systemd-sysctl.service":        "Wants=systemd-sysctl.service: ",
		// A2: systemd's D-Bus aliases are the units they link to.
		"Wants=dbus-org.freedesktop.portable1.service":                 "Wants=dbus-org.freedesktop.portable1.service: ",
		"Upholds=dbus-org.freedesktop.portable1.service":               "Upholds=dbus-org.freedesktop.portable1.service: ",
		"Wants=dbus-org.freedesktop.sysupdate1.service":                "Wants=dbus-org.freedesktop.sysupdate1.service: ",
		"Wants=dbus-org.freedesktop.login1.service":                    "Wants=dbus-org.freedesktop.login1.service: ",
		"Wants=dbus-org.example.unknown.service":                       "Wants=dbus-org.example.unknown.service: ",
		"PartOf=dbus-org.freedesktop.login1.service":                   "PartOf=dbus-org.freedesktop.login1.service: ",
		"BindsTo=dbus-org.freedesktop.login1.service":                  "BindsTo=dbus-org.freedesktop.login1.service: ",
		"StopPropagatedFrom=dbus-org.freedesktop.login1.service":       "StopPropagatedFrom=dbus-org.freedesktop.login1.service: ",
		"PartOf=dbus-org.freedesktop.NetworkManager.service":           "PartOf=dbus-org.freedesktop.NetworkManager.service: ",
		"BindsTo=dbus-org.freedesktop.NetworkManager.service":          "BindsTo=dbus-org.freedesktop.NetworkManager.service: ",
		"PartOf=dbus-org.freedesktop.resolve1.service":                 "PartOf=dbus-org.freedesktop.resolve1.service: ",
		"StopPropagatedFrom=dbus-org.fedoraproject.FirewallD1.service": "StopPropagatedFrom=dbus-org.fedoraproject.FirewallD1.service: ",
		// A2: a service the judge knows nothing of is no evidence of safety.
		"PartOf=randomname.service":               "PartOf=randomname.service: ",
		"PartOf=openvswitch.service":              "PartOf=openvswitch.service: ",
		"BindsTo=openvswitch.service":             "BindsTo=openvswitch.service: ",
		"StopPropagatedFrom=chronyd.service":      "StopPropagatedFrom=chronyd.service: ",
		"PartOf=other.service (rule says Reboot)": "PartOf=other.service: ",
		// A5: prefix drop-in and type names, wherever a unit is named.
		"Wants=systemd-.service":  "Wants=systemd-.service: ",
		"After=crio-.service":     "After=crio-.service: ",
		"Before=kubelet-.service": "Before=kubelet-.service: ",
		"PartOf=myapp-.service":   "PartOf=myapp-.service: ",
	}
	policies := map[string]string{"docs": reachPolicy}
	for name, want := range refused {
		line, _, _ := strings.Cut(name, " ")
		for pname, pol := range policies {
			for _, shape := range []struct {
				name     string
				cur, des types.Unit
			}{
				{"unit", unit("myapp.service", str(base)), unit("myapp.service", str("[Unit]\n"+line+"\n"+base[len("[Unit]\n"):]))},
				{"dropin", unit("myapp.service", str(base)), unit("myapp.service", str(base), types.Dropin{Name: "10-x.conf", Contents: str("[Unit]\n" + line + "\n")})},
			} {
				t.Run(pname+"/"+shape.name+"/"+name, func(t *testing.T) {
					p := ndpBuild(t, pol, withUnits(shape.cur), withUnits(shape.des))
					refusedWith(t, p, "unit myapp.service: ", want)
				})
			}
		}
	}
	accepted := []string{
		"Wants=network-online.target", "Requires=crio.service", "Wants=sysinit.target", "Requires=basic.target",
		"PartOf=myapp.target", "BindsTo=myapp-helper.service", "PartOf=myapp-helper.service",
		"StopPropagatedFrom=network-online.target", "After=-.mount", "Requires=-.mount", "After=systemd-journald.service",
		"After=systemd-fsck@dev-sda1.service",
	}
	for _, line := range accepted {
		t.Run("accepted/"+line, func(t *testing.T) {
			p := ndpBuild(t, reachPolicy, withUnits(unit("myapp.service", str(base))),
				withUnits(unit("myapp.service", str("[Unit]\n"+line+"\n"+base[len("[Unit]\n"):]))))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	// [Install]: WantedBy= of the boot's own targets stays accepted; an unsafe instance is refused.
	install := map[string]string{"WantedBy=user@0.service": "WantedBy=user@0.service", "WantedBy=systemd-.target": "WantedBy=systemd-.target"}
	for line, want := range install {
		t.Run("install/"+line, func(t *testing.T) {
			p := ndpBuild(t, reachPolicy, withUnits(unit("myapp.service", str(base))),
				withUnits(unit("myapp.service", str(base+"[Install]\n"+line+"\n"))))
			refusedWith(t, p, "unit myapp.service: ", want)
		})
	}
	p := ndpBuild(t, reachPolicy, withUnits(unit("myapp.service", str(base))),
		withUnits(unit("myapp.service", str(base+"[Install]\nWantedBy=multi-user.target\n"))))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}

// A1c: the built-in default policy's MCO rule for iri-registry.service lets a payload change that
// unit's dropins; one pulling in systemd-fsck@ or user@0 is refused, as OnFailure= of them was.
func TestDefaultPolicyDropinPullsInNoUnsafeInstance(t *testing.T) {
	const base = "[Unit]\nDescription=IRI\n[Service]\nType=oneshot\nExecStart=/bin/echo a\n"
	for _, d := range []string{"Upholds=systemd-fsck@dev-sda1.service", "Requires=systemd-fsck@dev-vda4.service\nAfter=systemd-fsck@dev-vda4.service",
		"Wants=user@0.service", "OnFailure=systemd-fsck@dev-sda1.service"} {
		t.Run(d, func(t *testing.T) {
			cur := withUnits(unit("iri-registry.service", str(base)))
			des := withUnits(unit("iri-registry.service", str(base), types.Dropin{Name: "10-x.conf", Contents: str("[Unit]\n" + d + "\n")}))
			p := planOf(t, cur, des) // the built-in default policy
			refusedWith(t, p, "unit iri-registry.service: ", "acts on the whole node")
		})
	}
}

// A2, the node's links: with the node's unit links (apply reads them under --root), a dependency on
// a link is judged as the unit it links to; without them, by its name.
func TestPayloadDependencyOnANodeLinkIsTheLinkedUnit(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	pol, err := allowlist.ParsePolicy([]byte(reachPolicy))
	require.NoError(t, err)
	linked, err := pol.WithUnitAliases(map[string]string{"vendor-portable.service": "systemd-portabled.service",
		"myapp-fsck.service": "systemd-fsck@dev-sda1.service", "helper-alias.service": "myapp-helper.service"})
	require.NoError(t, err)
	cur := withUnits(unit("myapp.service", str(base)))
	des := func(line string) *fixture.Config {
		return withUnits(unit("myapp.service", str("[Unit]\n"+line+"\n"+base[len("[Unit]\n"):])))
	}
	for _, line := range []string{"Wants=vendor-portable.service", "Upholds=myapp-fsck.service", "PartOf=myapp-fsck.service"} {
		assert.True(t, buildWith(t, pol, nil, cur, des(line)).Eligible || line == "PartOf=myapp-fsck.service", "by name alone: %s", line)
		p := buildWith(t, linked, nil, cur, des(line))
		refusedWith(t, p, "unit myapp.service: ", "a link to ")
	}
	assert.True(t, buildWith(t, linked, nil, cur, des("PartOf=helper-alias.service")).Eligible, "a link to a ruled unit")
}
