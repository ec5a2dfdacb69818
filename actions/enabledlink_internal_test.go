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
