package allowlist

import (
	"fmt"
	"slices"
	"strings"
)

// unitClasses are families of units a policy may never name nor a refresh act on, refused by what
// they are rather than one name at a time (issue 27 F8). Each is checked against the unit's stem
// (no type suffix, canonical: lower case, escapes read), the template's for an instance; the
// classes were drawn from the units systemd 252 ships (/usr/lib/systemd/system) and RHCOS's set.
var unitClasses = []struct {
	desc  string
	match func(stem string) bool
}{
	// A root shell or login prompt on a console without a password (debug-shell on tty9,
	// emergency/rescue are in stopsTheSystem); content with StandardInput=tty and a shell is
	// refused by judgeExecution.
	{"a root shell on a console", func(s string) bool { return s == "debug-shell" || strings.HasPrefix(s, "debug-shell-") }},
	// Merging system or configuration extension images over /usr and /etc, or attaching portable
	// services: the node's OS changes under its running services.
	{"a unit that merges images over /usr or /etc", func(s string) bool {
		return hasPrefixAny(s, "systemd-sysext", "systemd-confext", "systemd-portabled", "systemd-sysupdate", "systemd-boot-update")
	}},
	// SysV compatibility: systemd-initctl reads runlevel requests (telinit 0/6) from /dev/initctl;
	// halt-local runs /usr/sbin/halt.local as the system halts.
	{"sysvinit compatibility (runlevel requests, halt scripts)", func(s string) bool {
		return hasPrefixAny(s, "systemd-initctl", "halt-local", "sysvinit", "initctl")
	}},
	// The OS updater's switch to a new deployment (rpm-ostree's, the MCO's pivot, bootc's), which
	// ends in a reboot.
	{"an OS deployment switch that ends in a reboot", func(s string) bool {
		return s == "pivot" || hasComponent(s, "pivot") || hasPrefixAny(s, "bootc", "bootupd")
	}},
	// Units named for halting (plymouth-halt, systemd-halt, halt-local): a dash-separated word
	// "halt", as *-reboot* is matched for rebooting.
	{"*-halt* (a unit that runs as the system halts)", func(s string) bool { return hasComponent(s, "halt") }},
	// Units whose start repartitions, grows or formats the disks, or extends the TPM's boot-phase
	// measurements (secrets sealed to them are lost until a reboot).
	{"a unit that repartitions disks or measures boot phases", func(s string) bool {
		return hasPrefixAny(s, "systemd-repart", "systemd-growfs", "systemd-makefs", "systemd-pcrphase", "systemd-pcrextend",
			"systemd-pcrmachine", "systemd-pcrfs", "systemd-veritysetup", "systemd-integritysetup", "systemd-cryptsetup")
	}},
}

func hasPrefixAny(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// hasComponent says whether w is one of the dash-separated words of the stem (plymouth-halt, not
// haltless).
func hasComponent(stem, w string) bool {
	name, _, _ := strings.Cut(stem, "@")
	return slices.Contains(strings.Split(name, "-"), w)
}

// unitClass says why the (canonical) unit belongs to a refused class, or nil.
func unitClass(name string) error {
	stem := unitStem(identityOf(name))
	for _, c := range unitClasses {
		if c.match(stem) {
			return fmt.Errorf("unit %s is %s: never named nor acted on", name, c.desc)
		}
	}
	return nil
}
