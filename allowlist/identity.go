package allowlist

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// A unit is judged by what it is, not by the name a policy gives it. Three checks, one rule each,
// used everywhere a unit is named or acted on (policy load, plan, dry run, the D-Bus executor):
//
//   - UnitIdentity: the name itself, as systemd reads it (special targets and their runlevel and
//     other aliases, the power services, the manager's own essentials, the OS updater's and the
//     machine-config daemon's units, templates and the instances of unsafe templates);
//   - JudgeUnit: what the unit does, from its properties (every name it answers to, the actions
//     systemd takes when its job ends, what its start pulls in, stops or runs after, the commands it
//     runs): the executor reads them over D-Bus, the plan from the unit file a payload carries;
//   - a refresh acts on services only (NormalizeUnit).

// stopsTheSystem are the units whose start (or restart) reboots, halts, suspends, isolates or ends
// the manager: systemd's special targets (systemd.special(7)), their SysV runlevel aliases, the
// services behind them. A unit whose job pulls one in stops the system too (JudgeUnit).
var stopsTheSystem = []string{
	// Targets.
	"reboot.target", "poweroff.target", "halt.target", "kexec.target", "soft-reboot.target",
	"ctrl-alt-del.target", "emergency.target", "rescue.target", "shutdown.target", "final.target",
	"umount.target", "exit.target", "sleep.target", "suspend.target", "hibernate.target",
	"hybrid-sleep.target", "suspend-then-hibernate.target", "default.target", "initrd.target",
	"initrd-switch-root.target", "initrd-root-fs.target", "initrd-fs.target", "initrd-root-device.target",
	"initrd-usr-fs.target", "initrd-cleanup.target", "system-update.target", "system-update-pre.target",
	"factory-reset.target", "kbrequest.target",
	// Services.
	"systemd-reboot.service", "systemd-poweroff.service", "systemd-halt.service", "systemd-kexec.service",
	"systemd-soft-reboot.service", "systemd-exit.service", "systemd-suspend.service", "systemd-hibernate.service",
	"systemd-hybrid-sleep.service", "systemd-suspend-then-hibernate.service", "systemd-shutdown.service",
	"reboot.service", "poweroff.service", "halt.service", "kexec.service", "emergency.service", "rescue.service",
	"initrd-switch-root.service", "initrd-cleanup.service", "initrd-parse-etc.service", "systemd-update-done.service",
	"systemd-fsck-root.service", "systemd-remount-fs.service", "systemd-quotacheck.service", "sigpwr.target",
	// The offline updates' services, whose end reboots (system-update-cleanup.service:
	// SuccessAction=reboot; packagekit-offline-update.service: FailureAction=reboot), and those that
	// reboot into or out of an offline update: what a start of them does is a reboot, even where
	// no unit file says so (a payload judged without the node's root).
	"system-update-cleanup.service", "packagekit-offline-update.service", "dnf-system-upgrade.service",
	"dnf-system-upgrade-cleanup.service", "fwupd-offline-update.service", "pk-offline-update.service",
	// The units systemd, dracut, plymouth and iscsi-initiator-utils ship to run as the system stops
	// (WantedBy= a power target, or their stop logs out the node's disks).
	"plymouth-poweroff.service", "plymouth-halt.service", "plymouth-switch-root.service",
	"dracut-shutdown.service", "dracut-shutdown-onfailure.service", "iscsi-shutdown.service",
	"blk-availability.service", // its stop runs blkdeactivate: unmounts and deactivates every disk
	// The OS updater and the machine-config daemon: the agent never drives them.
	"rpm-ostreed.service", "rpm-ostree-fix-shadow-mode.service", "rpm-ostree-countme.service",
	"zincati.service", "bootupd.service", "bootupd.socket",
}

// neverActedOn are units a refresh never names nor restarts although other units may depend on
// them: the boot's own targets, the manager's essentials (restarting them cuts the agent off or
// loses the node's state).
var neverActedOn = []string{
	"sysinit.target", "basic.target", "multi-user.target", "graphical.target",
	"dbus.service", "dbus-broker.service", "systemd-journald.service", "systemd-logind.service",
	"systemd-udevd.service", "systemd-machined.service", "systemd-hostnamed.service",
	"dbus.socket", "systemd-journald.socket", "systemd-udevd-control.socket", "systemd-udevd-kernel.socket",
	"init.scope", "-.slice", "system.slice", "user.slice", "-.mount",
	// A root shell on tty9 without a password.
	"debug-shell.service",
}

// provisioning are the units that set the node up once, at boot (Ignition's and CoreOS's, the
// MCO's network, hostname, node name and sizing set-up, crio's storage wipe): run again on a running
// node they redo its first boot (configure-ovs.sh rebuilds br-ex under the pods, crio-wipe empties
// the image store, kubens.service remounts kubelet's and crio's namespace, aws-kubelet-nodename and
// vsphere-hostname rename the node under the kubelet, kubelet-auto-node-size rewrites its sizing).
// A refresh never runs them; other units may still depend on them (kubelet Requires=kubens.service).
// The MCO's are every oneshot unit of its templates that runs at boot before the kubelet (ordered
// before kubelet-dependencies.target, kubelet.service, node-valid-hostname.service,
// network-online.target or network-pre.target, or pulled in by one of them or by
// firstboot-osupdate.target), or that writes the node's identity or sizing: allowlist
// TestMCOProvisioningUnitsAreRefused checks the list (testdata/mco-provisioning-units.txt) against
// the templates.
var provisioning = []string{
	"ovs-configuration.service", "ovs-configuration-skip-rerun.service", "nodeip-configuration.service",
	"nodeip-configuration-vsphere-upi.service", "NetworkManager-clean-initrd-state.service", "mtu-migration.service",
	"nmstate-configuration.service", "nmstate.service", "kubelet-cleanup.service", "crio-wipe.service", "kubens.service",
	"node-valid-hostname.service", "wait-for-br-ex-up.service", "wait-for-primary-ip.service", "wait-for-node-ip.service",
	"wait-for-ipsec-connect.service", "ha-00-directories.service", "ha-01-enable-services.service",
	"aws-kubelet-nodename.service", "aws-kubelet-providerid.service", "aws-update-dns.service", "azure-update-dns.service",
	"gcp-hostname.service", "gcp-update-dns.service", "openstack-hostname.service", "openstack-kubelet-nodename.service",
	"powervs-hostname.service", "vsphere-hostname.service", "kubelet-auto-node-size.service",
	"machine-config-daemon-firstboot.service", "machine-config-daemon-pull.service",
	"firstboot-osupdate.target", "systemd-firstboot.service", "systemd-machine-id-commit.service",
	"systemd-growfs-root.service", "systemd-repart.service",
	// The OS's own boot-time set-up: the subordinate ids crio's user namespaces use, the iSCSI
	// initiator name (the node's identity to its remote disks) and the boot-time logins, the SSH
	// host keys.
	"crio-subid.service", "iscsi-init.service", "iscsi-onboot.service", "sshd-keygen@.service",
}

// earlyBoot are systemd's own oneshots of the early boot (sysinit.target and before it, or run
// when /etc or /var was updated, ConditionNeedsUpdate=, or on the first boot, ConditionFirstBoot=),
// as systemd 252 ships them: run again on a running node they replay every device's events
// (systemd-udev-trigger re-runs every udev rule, renames and reconfigures devices under the pods),
// create accounts (sysusers), reset every kernel setting the node's tuning changed since boot
// (sysctl, modules-load, binfmt), or rewrite the boot's state (random seeds, the hwdb, the journal
// catalog, the update stamps, the boot loader's boot counting). allowlist
// TestSystemdEarlyBootUnitsAreRefused checks them (testdata/systemd-early-boot-units.txt) and,
// where systemd's units are installed, every such oneshot there.
var earlyBoot = []string{
	"systemd-udev-trigger.service", "systemd-udev-settle.service", "systemd-sysusers.service", "systemd-sysctl.service",
	"systemd-modules-load.service", "systemd-random-seed.service", "systemd-boot-random-seed.service",
	"systemd-hwdb-update.service", "systemd-journal-catalog-update.service", "systemd-update-done.service",
	"systemd-journal-flush.service", "systemd-network-generator.service", "systemd-binfmt.service",
	"systemd-vconsole-setup.service", "systemd-pstore.service", "systemd-volatile-root.service",
	"systemd-boot-check-no-failures.service", "systemd-bless-boot.service", "systemd-time-wait-sync.service",
	"systemd-fsck-usr.service", "systemd-tmpfiles-setup-dev-early.service", "systemd-update-utmp.service", "kmod-static-nodes.service",
	"ldconfig.service", "modprobe@.service", "systemd-zram-setup@.service", "quotaon.service", "pam_namespace.service",
	"selinux-autorelabel.service", "selinux-autorelabel-mark.service", "selinux-check-proper-disable.service",
}

// provisioningPrefixes extend provisioning by family: Ignition's stages and every CoreOS unit but
// the trust bundle's action (coreosUnit), RHCOS's own boot units (rhcos-fips reboots into FIPS
// mode), Afterburn's (core's SSH keys and the node's metadata from the provider), the boot
// splash, SELinux's relabel (relabels every file, then reboots), the TPM's boot-phase
// measurements and set-up.
var provisioningPrefixes = []string{"ignition-", "dracut-", "systemd-tmpfiles-setup", "rhcos-", "afterburn",
	"plymouth-", "selinux-autorelabel", "systemd-pcr", "systemd-tpm2-setup", "systemd-udev-trigger"}

// coreosUnit says whether the stem is one of CoreOS's units (coreos-boot-edit, coreos-installer,
// coreos-generate-iscsi-initiatorname, coreos-kargs-reboot…), all of them run at boot, but for
// coreos-update-ca-trust, the additional trust bundle's action.
func coreosUnit(stem string) bool {
	return strings.HasPrefix(stem, "coreos-") && stem != "coreos-update-ca-trust"
}

// provisioningUnit says whether the (canonical) unit is one of the node's provisioning units, as
// itself, an alias, an instance, or the .socket/.path/.timer that starts one.
func provisioningUnit(n string) bool {
	if denied(provisioningLower, n) {
		return true
	}
	if tmpl, _, ok := template(n); ok && tmpl != n && provisioningUnit(tmpl) {
		return true
	}
	stem := unitStem(n)
	return hasPrefixAny(stem, provisioningPrefixes...) || coreosUnit(stem) || strings.Contains(stem, "firstboot")
}

// ProvisioningUnit says whether the unit is one of the node's provisioning units (any spelling):
// the node's own units may depend on them, a payload may not add such a dependency (plan).
func ProvisioningUnit(name string) bool { return provisioningUnit(canonUnit(name)) }

// provisioningLower is provisioning as canonUnit spells names (lower case).
var provisioningLower = func() []string {
	var out []string
	for _, u := range slices.Concat(provisioning, earlyBoot) {
		out = append(out, strings.ToLower(u))
	}
	return out
}()

// stopsTheSystemPrefixes extend the list by family: every runlevel alias, every sleep, ostree,
// rpm-ostree and machine-config-daemon unit, whatever the suffix.
var stopsTheSystemPrefixes = []string{
	"runlevel", // runlevel0.target (poweroff) … runlevel6.target (reboot)
	"ostree-", "rpm-ostree", "machine-config-daemon", "initrd-", "systemd-sleep", "systemd-hibernate",
	"systemd-suspend",
}

// unsafeTemplates are templates whose instances act on the whole node or a user's whole session.
var unsafeTemplates = []string{
	"user@.service", "user-runtime-dir@.service", "systemd-fsck@.service", "systemd-cryptsetup@.service",
	"systemd-journald@.service", "systemd-quotacheck@.service", "systemd-backlight@.service",
	"systemd-growfs@.service", "systemd-makefs@.service", "systemd-pcrphase@.service", "emergency@.service",
	// Round 8: the disks' and the machines' own: activating volume groups and RAID arrays, reshaping
	// them, connecting NVMe-oF disks, booting a container image as root.
	"lvm2-pvscan@.service", "mdmon@.service", "mdadm-grow-continue@.service", "mdadm-last-resort@.service",
	"nvmf-connect@.service", "systemd-nspawn@.service",
}

// UnitIdentity says why the unit name must never be named by a policy nor acted on by a refresh,
// or nil. The name is a full unit name (crio.service).
func UnitIdentity(name string) error {
	if name == "" {
		return fmt.Errorf("empty unit name")
	}
	if err := unitNameShape(name, false); err != nil {
		return err
	}
	if real := identityOf(canonUnit(name)); real != canonUnit(name) {
		// An alias is the unit it links to: judged as that unit, then as itself.
		if err := UnitIdentity(real); err != nil {
			return fmt.Errorf("unit %s is an alias of %s: %w", name, real, err)
		}
	}
	if err := stopsSystem(name); err != nil {
		return err
	}
	if denied(neverActedOn, canonUnit(name)) {
		return fmt.Errorf("unit %s is the boot's own target or one of the manager's essentials: never acted on", name)
	}
	if provisioningUnit(canonUnit(name)) {
		return fmt.Errorf("unit %s sets the node up once, at boot (Ignition's, CoreOS's or the MCO's provisioning, or systemd's early boot): a refresh never runs it again", name)
	}
	if tmpl, inst, ok := template(name); ok {
		if slices.Contains(unsafeTemplates, tmpl) {
			return fmt.Errorf("unit %s is an instance of %s, which acts on the whole node or a whole session: never acted on", name, tmpl)
		}
		if inst == "" {
			return nil // a template's file may change under a unit rule; it is never acted on (ActOn)
		}
	}
	return nil
}

// bootTargets are the boot's own targets, always reached on a running node: a unit may be pulled
// in by them ([Install] WantedBy=multi-user.target) or pull them in (a start of a reached target
// does nothing), though a refresh never acts on them.
var bootTargets = []string{"sysinit.target", "basic.target", "multi-user.target", "graphical.target", "default.target"}

// DependencyIdentity says why a unit a payload's unit names in a dependency may not be named there,
// or nil: the one rule for every unit a unit file or dropin names as what it pulls in, what pulls
// it in, what it follows or what its end starts (Wants=, Requires=, Requisite=, BindsTo=, PartOf=,
// Upholds=, OnFailure=, OnSuccess=, StopPropagatedFrom=, PropagatesStopTo=, [Install] WantedBy=,
// RequiredBy=, UpheldBy=, Also=): the name as UnitIdentity judges it (an alias as the unit it
// links to, the special, power, essential, OS updater's, MCD's and provisioning units, instances of
// unsafe templates, prefix drop-in and type names, unresolvable D-Bus aliases), but for the boot's
// own targets and the root slice and mount. A name with a variable or a specifier left unresolved
// cannot be judged. What a setting does beyond naming (a target's job mode for OnFailure=, a
// follower's rule for PartOf=) is its caller's.
func DependencyIdentity(name string) error {
	if strings.ContainsAny(name, "$`%") {
		return fmt.Errorf("unit %s is named by a variable or specifier: it cannot be judged", name)
	}
	c := canonUnit(name)
	if c == "-.slice" || c == "-.mount" {
		return nil
	}
	if err := unitNameShape(name, false); err != nil {
		return err
	}
	if slices.Contains(bootTargets, identityOf(c)) {
		return nil
	}
	return UnitIdentity(name)
}

// unsafeInstance says why the unit is an instance of an unsafe template (or an alias of one), or nil.
func unsafeInstance(name string) error {
	c := identityOf(canonUnit(name))
	if tmpl, inst, ok := template(c); ok && inst != "" && slices.Contains(unsafeTemplates, tmpl) {
		return fmt.Errorf("unit %s is an instance of %s, which acts on the whole node or a whole session", name, tmpl)
	}
	return nil
}

// stopsSystem says why a job on the unit named stops the system, or nil.
func stopsSystem(name string) error {
	orig := name
	name = canonUnit(name)
	if real := identityOf(name); real != name {
		if err := stopsSystem(real); err != nil {
			return fmt.Errorf("unit %s is an alias of %s: %w", orig, real, err)
		}
	}
	if denied(stopsTheSystem, name) {
		return fmt.Errorf("unit %s reboots, halts, suspends, isolates or stops the system or its manager: never acted on", orig)
	}
	if err := unitClass(name); err != nil {
		return err
	}
	stem := unitStem(name)
	for _, p := range rebootPatterns {
		if p.match(stem) {
			return fmt.Errorf("unit %s is named like a unit that reboots or updates the OS (%s): never acted on", orig, p.desc)
		}
	}
	if slices.Contains(stopsTheSystem, name) {
		return fmt.Errorf("unit %s reboots, halts, suspends, isolates or stops the system or its manager: never acted on", name)
	}
	for _, p := range stopsTheSystemPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("unit %s is one of the %s* units (the system's power and boot, the OS updater or the machine-config daemon): never acted on", name, p)
		}
	}
	if tmpl, _, ok := template(name); ok && tmpl != name && stopsSystem(tmpl) != nil {
		return fmt.Errorf("unit %s is an instance of %s: never acted on", name, tmpl)
	}
	return nil
}

// canonUnit is the name as the deny lists compare it: systemd's \xNN escapes read, lower case (a
// name that differs from a denied unit only by case is denied too), no trailing dot or blanks.
func canonUnit(name string) string {
	n := strings.TrimRight(strings.TrimSpace(name), ".")
	var b strings.Builder
	for i := 0; i < len(n); i++ {
		if n[i] == '\\' && i+3 < len(n) && n[i+1] == 'x' {
			if v, err := strconv.ParseUint(n[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(n[i])
	}
	return strings.ToLower(b.String())
}

// AliasOf is the unit the name is an alias of (canonical), as the judge knows systemd's and RHCOS's
// aliases, and whether it is one.
func AliasOf(name string) (string, bool) {
	c := canonUnit(name)
	real := identityOf(c)
	return real, real != c
}

// unknownDBusAlias says whether the (canonical) name is a D-Bus activation alias (dbus-org.*) the
// judge cannot resolve to the unit it links to.
func unknownDBusAlias(c string) bool {
	_, known := systemdAliases[c]
	return strings.HasPrefix(c, "dbus-org.") && !known
}

// unitNameShape says why the name is no name of one unit, or nil: a name whose part before the type
// suffix (and before any "@") ends in "-" is a prefix drop-in name (systemd 239 and later apply the
// drop-ins of /etc/systemd/system/foo-.service.d/ to every foo-*.service: systemd-.service reaches
// systemd-logind, systemd-reboot, …), a bare unit type ("service", "socket", …: service.d/ holds
// the drop-ins of every service), a name without a stem (".service"), and a dbus-org.* name the
// judge cannot resolve. rootOK lets "-.slice" and "-.mount" (the root slice and mount, which a
// dependency may name: systemd stops at a leading dash) through.
func unitNameShape(name string, rootOK bool) error {
	c := canonUnit(name)
	if slices.Contains(unitTypes, "."+c) || slices.Contains(unitTypes, "."+strings.TrimSuffix(c, ".d")) {
		return fmt.Errorf("unit %s is a unit type's name: its drop-in directory %s.d applies to every unit of the type: never named", name, strings.TrimSuffix(c, ".d"))
	}
	stem := unitStem(c)
	base, _, _ := strings.Cut(stem, "@")
	if rootOK && (c == "-.slice" || c == "-.mount") {
		return nil
	}
	if stem == "" || base == "" {
		return fmt.Errorf("unit %s has no name before its type", name)
	}
	if strings.HasSuffix(base, "-") {
		return fmt.Errorf("unit %s is a prefix drop-in name: systemd applies the drop-ins of %s.d/ to every unit whose name starts with %s: never named", name, c, base)
	}
	if unknownDBusAlias(c) {
		return fmt.Errorf("unit %s is a D-Bus activation alias the judge cannot resolve to the unit it links to: name that unit", name)
	}
	return nil
}

// UnitNameShape says why the name is no name of one unit (unitNameShape), or nil; the root slice
// and mount pass.
func UnitNameShape(name string) error { return unitNameShape(name, true) }

// unitTypes are systemd's unit suffixes.
var unitTypes = []string{".service", ".socket", ".target", ".path", ".timer", ".device", ".mount",
	".automount", ".swap", ".slice", ".scope"}

// activators are the unit types whose job starts the service of the same stem (systemd.socket(5),
// systemd.path(5), systemd.timer(5): Unit= defaults to it): the .socket, .path or .timer of a power
// service starts it, so it is denied with it. Other types share a stem with no service: init.scope is
// the manager itself, user.slice a cgroup, and neither says anything of init.service or user.service.
var activators = []string{".socket", ".path", ".timer"}

// IsUnitName says whether n is named like a unit: something before one of systemd's type suffixes.
func IsUnitName(n string) bool {
	s := unitStem(n)
	return s != n && s != ""
}

// unitStem is the name without its type suffix (systemd-reboot.socket → systemd-reboot).
func unitStem(n string) string {
	for _, t := range unitTypes {
		if strings.HasSuffix(n, t) {
			return strings.TrimSuffix(n, t)
		}
	}
	return n
}

// systemdAliases are the names systemd and RHCOS install as symlinks to another unit (the SysV
// runlevel targets, ctrl-alt-del.target, the D-Bus activation names of the daemons systemd,
// NetworkManager, firewalld, avahi, ModemManager, bluez, polkit and others ship as [Install]
// Alias=dbus-org.….service): a name is judged as the unit it is. Canonical (lower case) names.
var systemdAliases = map[string]string{
	"runlevel0.target": "poweroff.target", "runlevel1.target": "rescue.target", "runlevel2.target": "multi-user.target",
	"runlevel3.target": "multi-user.target", "runlevel4.target": "multi-user.target", "runlevel5.target": "graphical.target",
	"runlevel6.target": "reboot.target", "ctrl-alt-del.target": "reboot.target",
	"dbus-org.freedesktop.login1.service":         "systemd-logind.service",
	"dbus-org.freedesktop.hostname1.service":      "systemd-hostnamed.service",
	"dbus-org.freedesktop.machine1.service":       "systemd-machined.service",
	"dbus-org.freedesktop.locale1.service":        "systemd-localed.service",
	"dbus-org.freedesktop.timedate1.service":      "systemd-timedated.service",
	"dbus-org.freedesktop.portable1.service":      "systemd-portabled.service",
	"dbus-org.freedesktop.resolve1.service":       "systemd-resolved.service",
	"dbus-org.freedesktop.network1.service":       "systemd-networkd.service",
	"dbus-org.freedesktop.home1.service":          "systemd-homed.service",
	"dbus-org.freedesktop.oom1.service":           "systemd-oomd.service",
	"dbus-org.freedesktop.timesync1.service":      "systemd-timesyncd.service",
	"dbus-org.freedesktop.import1.service":        "systemd-importd.service",
	"dbus-org.freedesktop.sysupdate1.service":     "systemd-sysupdated.service",
	"dbus-org.freedesktop.networkmanager.service": "networkmanager.service",
	"dbus-org.freedesktop.nm-dispatcher.service":  "networkmanager-dispatcher.service",
	"dbus-org.fedoraproject.firewalld1.service":   "firewalld.service",
	"dbus-org.freedesktop.avahi.service":          "avahi-daemon.service",
	"dbus-org.freedesktop.modemmanager1.service":  "modemmanager.service",
	"dbus-org.bluez.service":                      "bluetooth.service",
}

// identityOf is the canonical name of the unit a (canonical) name is: an alias is the unit it links
// to. Any other dbus-org.*.service name is the D-Bus activation alias of a daemon the table does not
// know: unitNameShape refuses it wherever a policy or payload names it (an unknown name is no
// evidence of safety).
func identityOf(n string) string {
	if real, ok := systemdAliases[n]; ok {
		return real
	}
	return n
}

// denied says whether the canonical name is in list, as itself, as the alias of a unit in list, as
// the .socket, .path or .timer that starts a service in list, or as a service named after a target
// in list (reboot.service, ctrl-alt-del.service: systemd.special(7)'s names are the power units').
func denied(list []string, n string) bool {
	n = identityOf(n)
	if slices.Contains(list, n) {
		return true
	}
	if stem, ok := strings.CutSuffix(n, ".service"); ok && denied(list, stem+".target") {
		return true
	}
	for _, a := range activators {
		if stem, ok := strings.CutSuffix(n, a); ok && denied(list, stem+".service") {
			return true
		}
	}
	return false
}

// rebootPatterns deny by name the families of units whose job is to reboot the node or update its
// OS, whatever the suffix: systemd's, greenboot's (greenboot-*, redboot-auto-reboot), kexec's,
// rpm-ostree's.
var rebootPatterns = []struct {
	desc  string
	match func(stem string) bool
}{
	{"*-reboot*", func(s string) bool { return strings.Contains(s, "-reboot") || strings.HasPrefix(s, "reboot") }},
	{"greenboot*", func(s string) bool { return strings.HasPrefix(s, "greenboot") }},
	{"kexec*", func(s string) bool { return strings.HasPrefix(s, "kexec") || strings.Contains(s, "-kexec") }},
	{"*sysupdate*", func(s string) bool { return strings.Contains(s, "sysupdate") }},
	{"rpm-ostree*", func(s string) bool { return strings.HasPrefix(s, "rpm-ostree") }},
	{"poweroff*, halt*", func(s string) bool { return strings.HasPrefix(s, "poweroff") || strings.HasPrefix(s, "halt") }},
}

// template splits an instance (getty@tty1.service) into its template (getty@.service) and instance.
func template(name string) (tmpl, instance string, ok bool) {
	at := strings.IndexByte(name, '@')
	if at < 0 {
		return "", "", false
	}
	ext := path.Ext(name)
	return name[:at+1] + ext, strings.TrimSuffix(name[at+1:], ext), true
}

// ActOn says why a refresh may not reload or restart the unit, or nil: only a service that passes
// UnitIdentity, and never a template itself (it is not a unit that runs).
func ActOn(name string) error {
	if err := UnitIdentity(name); err != nil {
		return err
	}
	if !strings.HasSuffix(name, ".service") {
		return fmt.Errorf("unit %q is not a service", name)
	}
	if _, inst, ok := template(name); ok && inst == "" {
		return fmt.Errorf("unit %s is a template, not a unit that runs: name an instance", name)
	}
	return nil
}

// UnitProps are the properties of a unit that say what its jobs do, as systemd reports them over
// D-Bus (org.freedesktop.systemd1.Unit and .Service) or as a unit file sets them.
type UnitProps struct {
	ID    string
	Names []string // every name the unit answers to: its aliases
	// Dependencies a start pulls in, and what it stops or is ordered after.
	Requires, Requisite, Wants, BindsTo, Upholds, OnSuccess, OnFailure, Conflicts, After, Before []string
	DefaultDependencies                                                                          bool
	// PulledInBy are the units whose start pulls this one in (over D-Bus its WantedBy, RequiredBy
	// and UpheldBy: every Wants=/Requires=/Upholds= of it, [Install] links included).
	PulledInBy []string
	// What systemd does when a job of the unit ends ("none" or empty for nothing).
	SuccessAction, FailureAction, JobTimeoutAction, StartLimitAction string
	// What enabling the unit links and what its stop reaches (read from the unit file).
	Alias, WantedBy, RequiredBy, UpheldBy, PropagatesStopTo, StopPropagatedFrom, PartOf []string
	// Triggers are the units a socket, path or timer unit starts; Followers (over D-Bus RequiredBy:
	// every unit that Requires= it), RequisiteOf (Requisite=), BoundBy (BindsTo=) and ConsistsOf
	// (PartOf=) the units its restart try-restarts and its stop stops; ConflictedBy the units whose
	// Conflicts= names it, which its start stops (systemd makes Conflicts= symmetric);
	// PropagatesReloadTo the units its reload reloads. JudgeJobSet follows them (unitstart.go).
	Triggers, Followers, RequisiteOf, BoundBy, ConsistsOf, ConflictedBy, PropagatesReloadTo []string
	// StopWhenUnneeded: systemd stops the unit once no active unit pulls it in (a stopped unit
	// that did, a daemon-reload that drops the last Wants= of it).
	StopWhenUnneeded bool
	// Commands: ExecStart, ExecStartPre, ExecStartPost, ExecReload, ExecStop…, each an argv.
	Exec [][]string
	// How the commands run and what systemd does with their jobs (judged in judgeExecution).
	Execution
}

// shutdownOrdered are the targets a unit that runs as the system stops is ordered after.
var shutdownOrdered = []string{"shutdown.target", "umount.target", "final.target", "exit.target",
	"reboot.target", "poweroff.target", "halt.target", "kexec.target", "soft-reboot.target", "sleep.target"}

// conflictOK are the units every ordinary unit conflicts with (DefaultDependencies=yes adds
// Conflicts=shutdown.target): stopping for them is what a unit does when the system stops.
var conflictOK = []string{"shutdown.target", "umount.target", "exit.target", "emergency.target",
	"emergency.service", "rescue.target", "rescue.service"}

// ConflictOK lists the units every ordinary unit conflicts with: the only ones a payload may add
// to a unit's Conflicts= or PropagatesStopTo= under a unit rule.
func ConflictOK() []string { return slices.Clone(conflictOK) }

// essential are units whose stop cuts the node off: a unit that conflicts with one stops it on start.
var essential = []string{"crio.service", "kubelet.service", "NetworkManager.service", "sshd.service",
	"chronyd.service", "systemd-resolved.service", "ovs-vswitchd.service", "ovsdb-server.service"}

// JudgeUnit says why a job on the unit would stop the system (or reach what a refresh never
// touches), or nil. The executor judges the properties systemd reports; the plan judges the unit
// file a payload carries with the same function, so both refuse the same units.
func JudgeUnit(p UnitProps) error {
	names := append([]string{p.ID}, p.Names...)
	for _, n := range names {
		if n == "" {
			continue
		}
		if n != p.ID && unknownDBusAlias(canonUnit(n)) {
			continue // a name systemd reports for the unit p.ID, judged as p.ID
		}
		if err := UnitIdentity(n); err != nil {
			if n != p.ID {
				return fmt.Errorf("answers to %s (an alias): %w", n, err)
			}
			return err
		}
	}
	if p.ID != "" && !strings.HasSuffix(p.ID, ".service") {
		return fmt.Errorf("is %s, not a service", p.ID)
	}
	if err := jobEndActions(p); err != nil {
		return err
	}
	if err := dependencyNames(p); err != nil {
		return err
	}
	for _, u := range p.After {
		if slices.Contains(shutdownOrdered, u) {
			return fmt.Errorf("After=%s: the unit runs as the system stops", u)
		}
	}
	// A unit stopped when the system stops (Conflicts=shutdown.target, which DefaultDependencies=yes
	// adds) is ordered Before=shutdown.target to stop in time; one that is not, ordered before a unit
	// of the system's stop, is a job of that stop (plymouth-poweroff.service: Before=
	// systemd-poweroff.service).
	stopped := p.DefaultDependencies || slices.Contains(p.Conflicts, "shutdown.target")
	for _, u := range p.Before {
		if !stopped && stopsSystem(u) != nil {
			return fmt.Errorf("Before=%s without Conflicts=shutdown.target: the unit runs as the system stops", u)
		}
	}
	for _, u := range p.PulledInBy {
		if strings.EqualFold(u, "default.target") {
			continue // the boot's target (multi-user or graphical): what [Install] WantedBy= usually names
		}
		if err := stopsSystem(u); err != nil {
			return fmt.Errorf("pulled in by %s: the unit is a job of a unit that stops the system (%v)", u, err)
		}
	}
	for _, u := range p.Conflicts {
		if slices.Contains(conflictOK, u) {
			continue
		}
		if kind := path.Ext(u); kind != ".service" && kind != ".target" {
			// An ordinary service never conflicts with a slice, mount, swap, socket, device, scope,
			// automount, path or timer: its start would stop the pods' slice, /var, a socket, …
			return fmt.Errorf("Conflicts=%s: its start would stop %s (a %s unit, not a service or target)", u, u, strings.TrimPrefix(kind, "."))
		}
		if strings.HasSuffix(u, ".target") || slices.Contains(essential, u) || slices.Contains(neverActedOn, u) || stopsSystem(u) != nil {
			return fmt.Errorf("Conflicts=%s: its start would stop %s", u, u)
		}
	}
	if err := judgeExecution(p); err != nil {
		return err
	}
	return judgeReach(p)
}

// judgeReach refuses a unit whose enabling or stop reaches units no rule names: an [Install]
// Alias= (the unit would answer to another unit's name), WantedBy=/RequiredBy=/UpheldBy= naming
// anything but an ordinary target, a stop propagated to another service, or a stop tied to one of
// the node's essentials.
func judgeReach(p UnitProps) error {
	if len(p.Alias) > 0 {
		return JudgeInstallLink("Alias", strings.Join(p.Alias, " "))
	}
	for _, dep := range []struct {
		key  string
		list []string
	}{{"WantedBy", p.WantedBy}, {"RequiredBy", p.RequiredBy}, {"UpheldBy", p.UpheldBy}} {
		for _, u := range dep.list {
			if err := JudgeInstallLink(dep.key, u); err != nil {
				return err
			}
		}
	}
	for _, dep := range []struct {
		key  string
		list []string
	}{{"PropagatesStopTo", p.PropagatesStopTo}, {"StopPropagatedFrom", p.StopPropagatedFrom}, {"BindsTo", p.BindsTo}, {"PartOf", p.PartOf}} {
		for _, u := range dep.list {
			lu := strings.ToLower(u)
			if dep.key == "PropagatesStopTo" && !strings.HasSuffix(lu, ".target") || isEssential(lu) {
				return fmt.Errorf("%s=%s: a job on the unit would stop or restart a unit no unit rule names", dep.key, u)
			}
		}
	}
	return nil
}

// JudgeInstallLink says why enabling a unit may not make the link an [Install] setting key
// (WantedBy, RequiredBy, UpheldBy: a link in the target's .wants/, .requires/, .upholds/; Alias: a
// link of another name) to the unit named target, or nil: only the first three, to an ordinary
// target (never one that stops the system, the manager or the boot: shutdown.target, reboot.target,
// a power or special target). The plan judges the [Install] section it reads with it (JudgeUnit),
// the executor each link EnableUnitFiles reports, so both accept the same links.
func JudgeInstallLink(key, target string) error {
	if key == "Alias" {
		return fmt.Errorf("[Install] Alias=%s: the unit would answer to a name no unit rule grants", target)
	}
	lu := strings.ToLower(target)
	if key != "WantedBy" && key != "RequiredBy" && key != "UpheldBy" || !strings.HasSuffix(lu, ".target") ||
		(stopsSystem(lu) != nil && lu != "default.target") {
		return fmt.Errorf("[Install] %s=%s: enabling the unit would tie it to a unit no unit rule names", key, target)
	}
	return nil
}

// isEssential says whether the (lower-case) unit is one of the node's essentials.
func isEssential(lu string) bool {
	lu = identityOf(canonUnit(lu))
	for _, e := range essential {
		if strings.EqualFold(e, lu) {
			return true
		}
	}
	stem := unitStem(lu)
	return slices.Contains(neverActedOn, lu) || stopsSystem(lu) != nil ||
		strings.HasPrefix(stem, "crio") || strings.HasPrefix(stem, "kubelet")
}
