package actions

import (
	"errors"
	"testing"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/stretchr/testify/assert"
)

// Round 11 (units 05): the executor accepts of what EnableUnitFiles reports exactly the links the
// plan plans: the unit's own link into a .wants/, .requires/ or .upholds/ directory of an ordinary
// target (allowlist.JudgeInstallLink, which the plan's JudgeUnit applies to the [Install] section).
// A link of another unit (its Also=, transitively), of another name (Alias=), or into a directory
// of a target that stops the system is refused, and the rollback disables the unit again.
func TestEnabledLinksAreOnlyThePlannedOnes(t *testing.T) {
	const unit = "myapp.service"
	const etc = "/etc/systemd/system/"
	link := func(file, dest string) sd.EnableUnitFileChange {
		return sd.EnableUnitFileChange{Type: "symlink", Filename: file, Destination: dest}
	}
	accepted := []sd.EnableUnitFileChange{
		link(etc+"multi-user.target.wants/myapp.service", etc+"myapp.service"),
		link(etc+"default.target.wants/myapp.service", "/usr/lib/systemd/system/myapp.service"),
		link("/root/.config/systemd/user/default.target.wants/myapp.service", "/root/.config/systemd/user/myapp.service"),
		link(etc+"kubelet-dependencies.target.wants/myapp.service", etc+"myapp.service"),
		link(etc+"sysinit.target.wants/myapp.service", etc+"myapp.service"),
		link(etc+"myapp.target.requires/myapp.service", etc+"myapp.service"),
	}
	for _, c := range accepted {
		assert.NoError(t, enabledLink(unit, c), c.Filename)
	}
	refused := map[string]sd.EnableUnitFileChange{
		"Also=crio-wipe.service":   link(etc+"multi-user.target.wants/crio-wipe.service", "/usr/lib/systemd/system/crio-wipe.service"),
		"Also=other.service":       link(etc+"default.target.wants/other.service", "/usr/lib/systemd/system/other.service"),
		"Also=, an alias":          link(etc+"dbus-org.freedesktop.x.service", "/usr/lib/systemd/system/other.service"),
		"Alias=reboot.target":      link(etc+"reboot.target", etc+"myapp.service"),
		"Alias=foo.service":        link(etc+"foo.service", etc+"myapp.service"),
		"WantedBy=shutdown.target": link(etc+"shutdown.target.wants/myapp.service", etc+"myapp.service"),
		"WantedBy=reboot.target":   link(etc+"reboot.target.wants/myapp.service", etc+"myapp.service"),
		"WantedBy=crio.service":    link(etc+"crio.service.wants/myapp.service", etc+"myapp.service"),
		"UpheldBy=poweroff.target": link(etc+"poweroff.target.upholds/myapp.service", etc+"myapp.service"),
		"RequiredBy=halt.target":   link(etc+"halt.target.requires/myapp.service", etc+"myapp.service"),
		"not a link dir":           link(etc+"multi-user.target.d/myapp.service", etc+"myapp.service"),
		"an unlink":                {Type: "unlink", Filename: etc + "multi-user.target.wants/myapp.service"},
	}
	for name, c := range refused {
		err := enabledLink(unit, c)
		if assert.Error(t, err, name) {
			assert.True(t, errors.Is(err, ErrUnitRefused), name)
			assert.Contains(t, err.Error(), c.Filename, name)
		}
	}
}

// Round 13 (units 02): systemd's "destination not present" notice of the unit's own WantedBy=
// link to a target the node has no file of (kubelet-dependencies.target, before the MCO writes it)
// is accepted, as systemctl enable accepts it (the plan warns); one of no link the call made, of
// another unit, or of a target JudgeInstallLink refuses is not, and no refusal blames Also=.
func TestDestinationNotPresentIsTheUnitsOwnLink(t *testing.T) {
	const unit = "myapp.service"
	const etc = "/etc/systemd/system/"
	link := func(file, dest string) sd.EnableUnitFileChange {
		return sd.EnableUnitFileChange{Type: "symlink", Filename: file, Destination: dest}
	}
	notice := func(target, dest string) sd.EnableUnitFileChange {
		return sd.EnableUnitFileChange{Type: destinationNotPresent, Filename: target, Destination: dest}
	}
	own := link(etc+"kubelet-dependencies.target.wants/myapp.service", etc+"myapp.service")
	for _, tc := range []struct {
		name    string
		changes []sd.EnableUnitFileChange
		want    string // "" accepted
	}{
		{"WantedBy=kubelet-dependencies.target", []sd.EnableUnitFileChange{own, notice("kubelet-dependencies.target", etc+"myapp.service")}, ""},
		{"RequiredBy=nosuch.target", []sd.EnableUnitFileChange{link(etc+"nosuch.target.requires/myapp.service", etc+"myapp.service"), notice("nosuch.target", etc+"myapp.service")}, ""},
		{"no link of the notice's target", []sd.EnableUnitFileChange{notice("kubelet-dependencies.target", etc+"myapp.service")}, `reported "destination not present" for kubelet-dependencies.target`},
		{"another unit's notice", []sd.EnableUnitFileChange{own, notice("kubelet-dependencies.target", etc+"other.service")}, "no notice of a link of the unit's own"},
		{"WantedBy=reboot.target not present", []sd.EnableUnitFileChange{link(etc+"reboot.target.wants/myapp.service", etc+"myapp.service"), notice("reboot.target", etc+"myapp.service")}, "reboot.target"},
		{"another change type", []sd.EnableUnitFileChange{{Type: "unlink", Filename: etc + "x.service"}}, `reported "unlink"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			for _, c := range tc.changes {
				if err == nil {
					err = enabledChange(unit, c, tc.changes)
				}
			}
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.True(t, errors.Is(err, ErrUnitRefused))
				assert.Contains(t, err.Error(), tc.want)
				assert.NotContains(t, err.Error(), "Also=")
			}
		})
	}
}
