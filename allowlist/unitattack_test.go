package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Unit names are judged as systemd reads them: case does not hide a denied unit, every unit type of
// a power service is denied, short forms are normalised before judging, and units whose name says
// they reboot or update the OS are denied by pattern.
func TestUnitIdentityIgnoresCaseTypeAndShortForm(t *testing.T) {
	for _, u := range []string{"Machine-Config-Daemon-Firstboot.service", "Reboot.target", "REBOOT.TARGET",
		"systemd-reboot.Service", "systemd-reboot.socket", "systemd-reboot.path", "systemd-reboot.timer",
		`systemd\x2dreboot.service`, "Multi-User.target", "DBus.service",
		"systemd-sysupdate-reboot.service", "systemd-sysupdate.service", "greenboot-healthcheck.service",
		"greenboot-rpm-ostree-grub2-check-fallback.service", "kexec-load.service", "redboot-auto-reboot.service",
		"rpm-ostree-bootstatus.service"} {
		assert.Error(t, allowlist.UnitIdentity(u), u)
	}
	for _, u := range []string{"ctrl-alt-del", "Ctrl-Alt-Del", "systemd-reboot", "runlevel6", "reboot", "kexec-load"} {
		_, err := allowlist.NormalizeUnit(u)
		assert.Error(t, err, u)
	}
	for _, u := range []string{"crio", "kubelet.service", "myapp.service", "NetworkManager.service", "update-ca-trust"} {
		_, err := allowlist.NormalizeUnit(u)
		assert.NoError(t, err, u)
	}
}

func TestSplitExecAsSystemd(t *testing.T) {
	got, err := allowlist.SplitExec(`-@/usr/bin/systemctl argv0 "re"boot 'a b' \x41 ; /bin/true`)
	assert.NoError(t, err)
	// '@' gives argv[0]: the line is also judged as the program that name calls (multi-call binaries
	// pick their applet by it: @/usr/bin/kmod insmod F runs insmod).
	assert.Equal(t, [][]string{{"argv0", "reboot", "a b", "A"}, {"/usr/bin/systemctl", "reboot", "a b", "A"}, {"/bin/true"}}, got)
	got, err = allowlist.SplitExec(`@/usr/bin/myapp myapp --x`)
	assert.NoError(t, err)
	assert.Equal(t, [][]string{{"/usr/bin/myapp", "--x"}}, got, "argv[0] naming the program itself adds nothing")
	for _, bad := range []string{`/bin/sh -c 'x`, `/bin/echo "x`, `/bin/echo \q`} {
		_, err := allowlist.SplitExec(bad)
		assert.Error(t, err, bad)
	}
}
