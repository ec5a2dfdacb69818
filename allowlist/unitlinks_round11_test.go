package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 11 (units/01): a unit a job reaches by a name that passes DependencyIdentity but loads a
// unit that does not (its Id or Names, as the manager reports them or the node's files define it)
// is refused: the real run refused nothing when the link sat in a load directory the plan did not
// read (vendor-wipe.service -> crio-wipe.service in /usr/local/lib/systemd/system; the manager
// reported Id=crio-wipe.service and crio-wipe ran). Whatever the unit's state: the plan judges the
// name, not the state. A name that fails by itself is where it is written (the node's own
// crio.service Requires=crio-wipe.service), and a name's shape says nothing of the unit.
func TestAReachedUnitIsJudgedAsTheUnitItLoads(t *testing.T) {
	app := func(deps ...string) allowlist.UnitProps {
		return svc("myapp.service", func(p *allowlist.UnitProps) { p.Wants = deps }).Props
	}
	loads := func(name, id string, active bool, more ...string) fakeUnits {
		u := svc(id, func(p *allowlist.UnitProps) { p.Names = append([]string{id, name}, more...) })
		u.Active = active
		return fakeUnits{name: u}
	}
	refused := []struct {
		name  string
		unit  allowlist.UnitProps
		units fakeUnits
		want  string
	}{
		{"the finding: a link to crio-wipe", app("vendor-wipe.service"), loads("vendor-wipe.service", "crio-wipe.service", false),
			"Wants=vendor-wipe.service: unit crio-wipe.service sets the node up once, at boot"},
		{"active too", app("vendor-wipe.service"), loads("vendor-wipe.service", "crio-wipe.service", true), "unit crio-wipe.service"},
		{"kubelet-cleanup", app("cleanup.service"), loads("cleanup.service", "kubelet-cleanup.service", false), "unit kubelet-cleanup.service"},
		{"a template's link (sshd-keygen@)", app("keys@rsa.service"), loads("keys@rsa.service", "sshd-keygen@rsa.service", false),
			"Wants=keys@rsa.service: unit sshd-keygen@rsa.service sets the node up once"},
		{"a template's link (systemd-fsck@)", app("foo@dev-sda1.service"), loads("foo@dev-sda1.service", "systemd-fsck@dev-sda1.service", false),
			"systemd-fsck@dev-sda1.service is an instance of systemd-fsck@.service"},
		{"an essential by a link", app("shell.service"), loads("shell.service", "debug-shell.service", false), "unit debug-shell.service"},
		{"a refused name among the Names", app("x.service"), loads("x.service", "x-real.service", false, "crio-wipe.service"), "unit crio-wipe.service"},
		{"a hop further", app("a.service"), fakeUnits{
			"a.service":           svc("a.service", func(p *allowlist.UnitProps) { p.Wants = []string{"vendor-wipe.service"} }),
			"vendor-wipe.service": loads("vendor-wipe.service", "crio-wipe.service", false)["vendor-wipe.service"],
		}, "Wants=a.service Wants=vendor-wipe.service: unit crio-wipe.service"},
		{"a follower", svc("myapp.service", func(p *allowlist.UnitProps) { p.Followers = []string{"f.service"} }).Props,
			loads("f.service", "kubelet-cleanup.service", true), "is followed by f.service: unit kubelet-cleanup.service"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			refusal, err := allowlist.JudgeStartSet(tc.unit, tc.units.load)
			require.NoError(t, err)
			require.Error(t, refusal)
			assert.Contains(t, refusal.Error(), tc.want)
			assert.Contains(t, refusal.Error(), "loads it: a link")
		})
	}
	accepted := []struct {
		name  string
		unit  allowlist.UnitProps
		units fakeUnits
	}{
		{"a link to an ordinary unit", app("alias.service"), loads("alias.service", "helper.service", false)},
		{"a template's link to an ordinary template", app("foo@x.service"), loads("foo@x.service", "bar@x.service", false, "baz@x.service")},
		{"the node's own dependency by name", app("crio-wipe.service"), fakeUnits{"crio-wipe.service": svc("crio-wipe.service", nil)}},
		{"a D-Bus alias the judge cannot resolve among the Names", app("NetworkManager.service"),
			loads("NetworkManager.service", "NetworkManager.service", true, "dbus-org.freedesktop.nm-x.service")},
		{"a link to a boot target", app("my.target"), fakeUnits{"my.target": {Props: allowlist.UnitProps{ID: "multi-user.target",
			Names: []string{"multi-user.target", "my.target"}}, Known: true, Active: true}}},
		{"a masked link", app("vendor-wipe.service"), fakeUnits{"vendor-wipe.service": {Props: allowlist.UnitProps{ID: "crio-wipe.service"}, Known: true, Masked: true}}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			refusal, err := allowlist.JudgeStartSet(tc.unit, tc.units.load)
			require.NoError(t, err)
			assert.NoError(t, refusal)
		})
	}
}
