package allowlist_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 8 (units A5): a prefix drop-in name (systemd applies foo-.service.d/ to every foo-*
// unit) and a unit type's name (service.d/ holds every service's drop-ins) name no one unit: refused
// by UnitIdentity, so in a policy (allowedUnits, a paths rule's services, a NodeDisruptionPolicy
// unit rule or serviceName) and as a dependency.
func TestPrefixDropinAndTypeNamesAreRefused(t *testing.T) {
	names := []string{"systemd-.service", "systemd-fsck-.service", "machine-config-.service", "crio-.service",
		"kubelet-.service", "rpm-.service", "selinux-.service", "wait-for-.service", "nodeip-.service",
		"systemd-udev-.service", "myapp-.service", "-.service", "foo-.socket", "CRIO-.service", "crio\\x2d.service",
		"foo-@bar.service", "service", "socket", "service.d", ".service"}
	for _, n := range names {
		assert.Error(t, allowlist.UnitIdentity(n), n)
		assert.Error(t, allowlist.DependencyIdentity(n), n)
		assert.Error(t, allowlist.UnitNameShape(n), n)
	}
	for _, n := range []string{"systemd-.service", "crio-.service", "kubelet-.service", "myapp-.service", "nodeip-.service"} {
		doc := fmt.Sprintf("nodeDisruptionPolicy:\n  units:\n  - name: %s\n    actions: [{type: DaemonReload}]\n", n)
		_, err := allowlist.ParsePolicy([]byte(doc))
		if assert.Error(t, err, n) {
			assert.Contains(t, err.Error(), "prefix drop-in name")
		}
		doc = fmt.Sprintf("allowedUnits: [%s]\npaths:\n- {path: /etc/a, action: Restart, services: [%s]}\n", n, n)
		_, err = allowlist.ParsePolicy([]byte(doc))
		assert.Error(t, err, n)
	}
	// The root slice and mount may be named as dependencies (systemd stops at a leading dash).
	for _, n := range []string{"-.mount", "-.slice"} {
		assert.NoError(t, allowlist.DependencyIdentity(n), n)
		assert.NoError(t, allowlist.UnitNameShape(n), n)
	}
	for _, n := range []string{"crio.service", "kubelet.service", "myapp-helper.service", "iri-registry.service", "service.service"} {
		assert.NoError(t, allowlist.UnitIdentity(n), n)
		assert.NoError(t, allowlist.DependencyIdentity(n), n)
	}
}

// Round 8 (units A2): systemd's and RHCOS's D-Bus aliases are judged as the units they link to,
// and a policy names the unit itself, never an alias (a rule for it would write a unit file where
// the alias's link is); a dbus-org.* name the judge cannot resolve is refused.
func TestDBusAliasesAreTheUnitsTheyLinkTo(t *testing.T) {
	refused := []string{"dbus-org.freedesktop.portable1.service", "dbus-org.freedesktop.machine1.service",
		"dbus-org.freedesktop.sysupdate1.service", "dbus-org.freedesktop.login1.service", "dbus-org.freedesktop.hostname1.service",
		"DBUS-ORG.freedesktop.Portable1.service", "dbus-org.example.myapp.service"}
	for _, n := range refused {
		assert.Error(t, allowlist.UnitIdentity(n), n)
		assert.Error(t, allowlist.DependencyIdentity(n), n)
	}
	for alias, real := range map[string]string{"dbus-org.freedesktop.NetworkManager.service": "networkmanager.service",
		"dbus-org.freedesktop.resolve1.service": "systemd-resolved.service", "dbus-org.fedoraproject.FirewallD1.service": "firewalld.service",
		"dbus-org.freedesktop.timedate1.service": "systemd-timedated.service", "dbus-org.freedesktop.nm-dispatcher.service": "networkmanager-dispatcher.service"} {
		got, ok := allowlist.AliasOf(alias)
		assert.True(t, ok, alias)
		assert.Equal(t, real, got, alias)
		_, err := allowlist.NormalizeUnit(alias)
		assert.Error(t, err, "a policy names %s itself", real)
		doc := fmt.Sprintf("nodeDisruptionPolicy:\n  units:\n  - name: %s\n    actions: [{type: Restart, restart: {serviceName: crio.service}}]\n", alias)
		_, err = allowlist.ParsePolicy([]byte(doc))
		if assert.Error(t, err, alias) {
			assert.Contains(t, err.Error(), "is an alias of")
		}
	}
	// Over D-Bus a unit reports its aliases in Names: NetworkManager's passes as itself.
	nm := allowlist.UnitProps{ID: "NetworkManager.service", Names: []string{"NetworkManager.service", "dbus-org.freedesktop.NetworkManager.service"},
		DefaultDependencies: true}
	require.NoError(t, allowlist.JudgeUnit(nm))
	// Stop propagation from an essential's alias is the essential's.
	for _, k := range []string{"PartOf", "BindsTo", "StopPropagatedFrom"} {
		p := allowlist.UnitProps{ID: "myapp.service", DefaultDependencies: true}
		switch k {
		case "PartOf":
			p.PartOf = []string{"dbus-org.freedesktop.NetworkManager.service"}
		case "BindsTo":
			p.BindsTo = []string{"dbus-org.freedesktop.login1.service"}
		default:
			p.StopPropagatedFrom = []string{"dbus-org.freedesktop.resolve1.service"}
		}
		assert.Error(t, allowlist.JudgeUnit(p), k)
	}
}

// Round 8 (units A1): in every line (the executor's view too), a dependency that starts an instance
// of an unsafe template is refused as OnFailure= of it is.
func TestJudgeUnitRefusesPullingInUnsafeInstances(t *testing.T) {
	for _, u := range []string{"systemd-fsck@dev-sda1.service", "user@0.service", "systemd-cryptsetup@luks.service",
		"lvm2-pvscan@8:2.service", "mdmon@md127.service", "nvmf-connect@x.service", "systemd-nspawn@x.service"} {
		assert.Error(t, allowlist.UnitIdentity(u), u)
		for _, set := range []func(*allowlist.UnitProps){
			func(p *allowlist.UnitProps) { p.Wants = []string{u} },
			func(p *allowlist.UnitProps) { p.Requires = []string{u} },
			func(p *allowlist.UnitProps) { p.Upholds = []string{u} },
			func(p *allowlist.UnitProps) { p.Requisite = []string{u} },
			func(p *allowlist.UnitProps) { p.BindsTo = []string{u} },
			func(p *allowlist.UnitProps) { p.OnFailure = []string{u} },
			func(p *allowlist.UnitProps) { p.OnSuccess = []string{u} },
		} {
			p := allowlist.UnitProps{ID: "myapp.service", DefaultDependencies: true}
			set(&p)
			err := allowlist.JudgeUnit(p)
			if assert.Error(t, err, u) {
				assert.Contains(t, err.Error(), u)
			}
		}
	}
	// An ordinary service's default dependencies and the MCO's own still pass.
	p := allowlist.UnitProps{ID: "kubelet.service", DefaultDependencies: true, Requires: []string{"sysinit.target", "system.slice", "-.mount", "crio.service", "kubens.service"},
		Wants: []string{"network-online.target", "rpc-statd.service"}, After: []string{"basic.target", "systemd-journald.socket", "-.mount"}}
	assert.NoError(t, allowlist.JudgeUnit(p))
}
