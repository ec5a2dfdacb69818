package allowlist

import (
	"slices"
	"strings"
)

// A location's class decides who may ever write it.
const (
	// Deny: no one. Writing it runs code as root, changes how the node boots or authenticates, or
	// corrupts the state of the agent or the machine-config daemon.
	Deny = "denied"
	// NodeOnly: only the node policy's own rules (built in, the policy file's paths and
	// NodeDisruptionPolicy files); the ConfigMap never, whatever the configMapCeiling says. Writing
	// it moves trust (which CAs, registries, signatures, credentials or name servers the node
	// believes) or reconfigures a root-run component without running code of the writer's choice.
	NodeOnly = "node policy only"
)

// Location is one row of the audit of what RHCOS's root-run programs read under /etc and /var
// (docs/security.md prints the same table, checked by TestAuditTableMatchesTheDocs). Prefix
// matches by path component (/etc/ssh covers /etc/ssh/x, not /etc/sshd); a prefix ending in "*"
// matches every path that starts with the rest (/etc/cron* covers /etc/crontab and /etc/cron.d/x).
type Location struct {
	Prefix string
	Class  string // Deny or NodeOnly
	Reader string // what reads or runs it, as root
	Why    string
}

// Audit is the compiled-in list. The mechanism is by class, not by file: a whole tree is listed
// where its readers run code or move trust (all of /etc/kubernetes and /etc/containers are node
// policy only; the parts of them that run code are denied outright).
var Audit = []Location{
	// The OS tree, kernel and boot.
	{"/boot", Deny, "the boot loader, ostree", "the kernel, initramfs and command line the node boots"},
	{"/sysroot", Deny, "ostree", "the deployed OS tree"},
	{"/ostree", Deny, "ostree", "the deployed OS tree"},
	{"/usr", Deny, "every program", "read-only OS content: binaries, units, OCI hooks in /usr/share/containers/oci/hooks.d"},
	{"/opt", Deny, "crio (CNI plugins in /opt/cni/bin), units", "binaries run as root"},
	{"/var/opt", Deny, "the same as /opt (RHCOS's /opt)", "binaries run as root"},
	{"/var/usrlocal", Deny, "units that run /usr/local/bin scripts", "RHCOS's /usr/local: scripts run as root"},
	{"/proc", Deny, "the kernel", "kernel state, never files on disk"},
	{"/sys", Deny, "the kernel", "kernel state, never files on disk"},
	{"/dev", Deny, "the kernel", "devices"},
	{"/run", Deny, "every daemon", "runtime state and sockets"},
	{"/var/run", Deny, "every daemon", "a symlink to /run"},
	{"/var/lock", Deny, "every daemon", "a symlink to /run/lock"},
	{"/bin", Deny, "every program", "a symlink to /usr/bin: binaries run as root"},
	{"/sbin", Deny, "every program", "a symlink to /usr/sbin: binaries run as root"},
	{"/lib*", Deny, "ld.so (every process)", "/lib and /lib64, symlinks to /usr/lib and /usr/lib64: libraries loaded into every process"},
	// Markers directly under / and in /etc that change the next boot (a configMapCeiling prefix
	// outside /etc and /var is a policy error besides: nothing else under / is configuration).
	{"/.autorelabel", Deny, "selinux-autorelabel-generator", "relabels every file at the next boot, then reboots"},
	{"/system-update", Deny, "systemd-system-update-generator", "the next boot goes to system-update.target (offline updates) instead of the system"},
	{"/etc/system-update", Deny, "systemd-system-update-generator", "the next boot goes to system-update.target (offline updates) instead of the system"},
	{"/forcefsck", Deny, "systemd-fsck", "forces a check of every file system at the next boot"},
	{"/fastboot", Deny, "systemd-fsck", "skips the file system checks at the next boot"},
	{"/forcequotacheck", Deny, "systemd-quotacheck", "forces a quota check at the next boot"},
	{"/etc/initrd-release", Deny, "systemd (in_initrd)", "PID 1 believes it runs in the initrd: the boot runs initrd.target and switches root again"},
	{"/etc/.updated", Deny, "systemd (ConditionNeedsUpdate=)", "whether the boot-time update units (ldconfig, hwdb, sysusers, journal catalog) run"},
	{"/var/.updated", Deny, "systemd (ConditionNeedsUpdate=)", "whether the boot-time update units (ldconfig, hwdb, sysusers, journal catalog) run"},
	{"/etc/vconsole.conf", Deny, "systemd-vconsole-setup (loadkeys, setfont), the initramfs", "KEYMAP= and FONT= name files it loads: key bindings that type commands on root's console (as /etc/inputrc)"},
	{"/etc/locale.conf", Deny, "systemd (LANG= and LC_*= for every unit), /etc/profile.d/lang.sh and lang.csh in root's login shells", "lang.sh evals what a sed makes of its lines (its character class admits ; $ { }): runs commands in root's shells"},
	{"/etc/kernel", Deny, "kernel-install", "install hooks and the kernel command line"},
	{"/etc/modprobe.d", Deny, "modprobe", "module options and install commands run as root"},
	{"/etc/modprobe.conf", Deny, "modprobe", "module options and install commands run as root"},
	{"/etc/modules-load.d", Deny, "systemd-modules-load", "kernel modules loaded at boot"},
	{"/etc/depmod.d", Deny, "depmod", "where kernel modules are found"},
	{"/etc/dracut.conf*", Deny, "dracut", "the initramfs"},
	{"/etc/grub*", Deny, "grub2-mkconfig, the boot loader", "grub.d scripts run as root; the boot menu and kernel arguments"},
	{"/etc/zipl.conf", Deny, "zipl (s390x boot loader)", "the boot menu, kernel, initramfs and kernel arguments it installs"},
	{"/etc/microcode_ctl", Deny, "microcode_ctl, dracut", "which CPU microcode the initramfs loads at boot"},
	{"/etc/rpmrc", Deny, "rpm, rpm-ostree", "macros: %(shell) runs commands as root in package operations"},
	{"/etc/popt*", Deny, "libpopt (rpm and its tools, run by root)", "/etc/popt and /etc/popt.d: aliases rewrite a program's own options (rpm -q --eval '%(cmd)' runs commands)"},
	{"/etc/libssh", Deny, "libssh (its clients run by root)", "libssh_client.config: ProxyCommand runs commands; known hosts move trust"},
	{"/etc/rpm-ostree", Deny, "rpm-ostree", "origin.d: packages, overrides and kernel arguments layered into the next deployment"},
	{"/etc/keys", Deny, "dracut (98integrity), the kernel (IMA, EVM)", "keys loaded into the .ima and .evm keyrings at boot: which binaries the kernel lets run"},
	{"/etc/hwdb.d", Deny, "systemd-hwdb update (at boot), systemd-udevd", "device properties the udev rules act on (keymaps, device classes)"},
	{"/etc/system-fips", Deny, "FIPS-aware libraries, dracut", "FIPS mode: changes what the node boots and trusts"},
	{"/etc/gcrypt", Deny, "libgcrypt (every caller, root's included)", "fips_enabled turns its FIPS mode on or off; hwf.deny its hardware features"},
	{"/etc/sysctl.d", Deny, "systemd-sysctl", "kernel parameters (core_pattern runs a program)"},
	{"/etc/sysctl.conf", Deny, "systemd-sysctl", "kernel parameters"},
	{"/etc/default", Deny, "grub2-mkconfig, useradd, nodeip-configuration (EnvironmentFile=)", "boot arguments; environment of root units"},
	{"/etc/fstab", Deny, "systemd-fstab-generator", "mounts"},
	{"/etc/filesystems", Deny, "mount (guessing a type)", "the filesystem types mount tries, each a kernel module it loads (round 16 b/02)"},
	{"/etc/crypttab", Deny, "systemd-cryptsetup-generator", "encrypted volumes"},
	{"/etc/veritytab", Deny, "systemd-veritysetup-generator", "verity volumes"},
	{"/etc/integritytab", Deny, "systemd-integritysetup-generator", "integrity volumes"},
	{"/etc/repart.d", Deny, "systemd-repart", "partitions and formats the disks at boot"},
	{"/etc/sysupdate.d", Deny, "systemd-sysupdate", "OS updates"},
	{"/etc/mdadm*", Deny, "mdadm --monitor", "PROGRAM runs as root on array events"},
	{"/etc/vmware-tools", Deny, "vmtoolsd (open-vm-tools)", "power-op and vgauth scripts run as root; tools.conf"},
	{"/etc/qemu-ga", Deny, "qemu-guest-agent", "fsfreeze hooks run as root"},
	{"/etc/hyperv*", Deny, "hypervkvpd, hv_* daemons", "scripts run as root (hv_set_ifconfig and the like)"},
	{"/etc/google*", Deny, "google guest agent", "its configuration: scripts and accounts it manages as root"},
	{"/etc/ima", Deny, "the kernel (IMA)", "the measurement and appraisal policy: what the kernel lets run"},
	{"/etc/rdma", Deny, "rdma-load-modules, rdma-ndd", "kernel modules loaded at boot"},
	{"/etc/extensions", Deny, "systemd-sysext", "system extension images overlaid onto /usr: code run as root"},
	{"/var/lib/extensions*", Deny, "systemd-sysext", "system extension images overlaid onto /usr: code run as root"},
	{"/etc/confexts", Deny, "systemd-confext", "configuration extensions overlaid onto /etc"},
	{"/var/lib/confexts*", Deny, "systemd-confext", "configuration extensions overlaid onto /etc"},
	{"/etc/portables", Deny, "systemd-portabled (portablectl attach)", "portable service images: their units run as root"},
	{"/var/lib/portables", Deny, "systemd-portabled (portablectl attach)", "portable service images: their units run as root"},
	{"/var/lib/machines", Deny, "systemd-nspawn, machinectl, systemd-importd", "container and VM images started as root"},
	{"/etc/userdb", Deny, "nss-systemd, userdbd", "JSON user and group records: accounts, uid 0 included"},
	{"/var/lib/userdb", Deny, "nss-systemd, userdbd", "JSON user and group records"},
	{"/var/lib/systemd/home", Deny, "systemd-homed", "home areas and their accounts"},
	{"/etc/cloud", Deny, "cloud-init", "modules and scripts run as root at boot"},
	{"/var/lib/cloud", Deny, "cloud-init", "scripts run as root at boot (per-boot, per-instance)"},
	{"/etc/libvirt", Deny, "libvirtd", "hooks run as root"},
	{"/etc/target", Deny, "targetcli, target.service", "the iSCSI/LIO targets the node serves"},
	{"/etc/nvmet", Deny, "nvmetcli, nvmet.service", "the NVMe-oF targets the node serves"},
	{"/etc/libibverbs.d", Deny, "libibverbs (RDMA users, root's included)", "drivers: shared libraries loaded by name"},
	{"/etc/fwupd", Deny, "fwupd", "which firmware is flashed and from where"},
	{"/var/lib/fwupd", Deny, "fwupd", "remotes.d, pki and local.d: where firmware comes from and which signing keys it trusts"},
	{"/etc/tcsd.conf", Deny, "tcsd (TrouSerS)", "the TPM daemon's configuration"},
	{"/var/lib/tpm2-tss", Deny, "tpm2-tss", "TPM state and keys"},
	{"/etc/cifs-utils", Deny, "cifs.idmap, cifs.upcall (the kernel's key upcall, as root)", "idmap-plugin names the shared library they load"},
	{"/etc/sos", Deny, "sos report, run by root for a support case", "extras.d names commands it runs as root"},
	{"/etc/fuse.conf", Deny, "fusermount (setuid root)", "user_allow_other: a user's FUSE mount becomes visible to root and every other user"},
	{"/etc/libuser.conf", Deny, "libuser (luseradd, lchsh, … run by root)", "moduledir: shared libraries loaded as root; account defaults"},
	{"/etc/acpi", Deny, "acpid", "event actions run as root"},
	{"/etc/pm", Deny, "pm-utils", "sleep hooks run as root"},
	{"/etc/ppp", Deny, "pppd", "ip-up/ip-down scripts run as root"},
	{"/etc/X11", Deny, "X sessions (root's included)", "xinitrc.d scripts are run"},
	{"/etc/init", Deny, "upstart-style job definitions", "jobs run as root"},
	{"/etc/lsm", Deny, "libstoragemgmt (lsmd)", "plugins run as root"},
	{"/etc/smartd.conf", Deny, "smartd", "-M exec runs programs as root"},
	{"/etc/mailcap", Deny, "run-mailcap, mail and pager tools run by root", "commands run for a MIME type"},
	{"/etc/exports*", Deny, "nfsd, exportfs", "what the node serves to whom"},
	{"/etc/nfs*", Deny, "nfs-utils", "NFS client and server configuration"},
	{"/etc/idmapd.conf", Deny, "nfsidmap", "NFS identity mapping"},
	{"/var/lib/nfs", Deny, "nfs-utils", "NFS state (rpc_pipefs, statd)"},
	{"/etc/gnupg", Deny, "gpg run by root", "options that run programs and trust keys"},
	{"/etc/ipa", Deny, "IdM (FreeIPA) clients", "the identity domain and its CA"},
	{"/etc/rhsm", Deny, "subscription-manager", "where content and certificates come from"},
	{"/etc/containerd", Deny, "containerd", "runtimes and plugins run as root"},
	{"/etc/sudo_logsrvd.conf", Deny, "sudo_logsrvd", "sudo's audit trail"},
	{"/etc/.pwd.lock", Deny, "shadow-utils", "the account databases' lock"},
	{"/etc/coreos", Deny, "coreos-installer, the OS's first-boot tools", "installer and first-boot configuration"},
	{"/var/lib/ostree", Deny, "ostree, rpm-ostree", "the OS's deployments and their state"},
	{"/var/ostree", Deny, "ostree", "the OS's deployments and their state"},
	{"/var/lib/ignition", Deny, "ignition", "first-boot state"},
	{"/var/lib/coreos*", Deny, "the OS's first-boot tools", "first-boot and update state"},
	{"/var/lib/kdump", Deny, "kdump", "the crash kernel's initramfs"},
	{"/var/lib/dhclient", Deny, "dhclient", "leases: the node's address, routes and name servers"},
	{"/var/lib/gssproxy", Deny, "gssproxy", "the keytabs and credential caches it hands to root services"},
	{"/var/lib/authselect", Deny, "authselect", "the PAM and nsswitch profile it applies"},
	{"/var/lib/logrotate", Deny, "logrotate", "its state (what it rotates when)"},
	{"/var/lib/rpm-state", Deny, "rpm scriptlets", "state read by package scripts run as root"},
	{"/var/spool/anacron", Deny, "anacron", "when root's periodic jobs run"},
	{"/var/spool/mail", Deny, "mail delivery", "root's mailbox"},
	{"/etc/nvme", Deny, "nvme-cli, NVMe-oF autoconnect", "the host NQN and ID: which remote disks the node reaches"},
	{"/var/lib/iscsi", Deny, "iscsid", "node records: the remote disks logged into at boot"},
	{"/etc/multipath*", Deny, "multipathd", "disk paths and callouts"},
	{"/etc/iscsi", Deny, "iscsid", "remote disks"},
	{"/etc/zfcp.conf", Deny, "zfcp (s390x, at boot)", "the FCP LUNs attached: which remote disks the node reaches"},
	{"/etc/dasd.conf", Deny, "dasd (s390x, at boot)", "the DASDs brought online: which disks the node reaches"},
	{"/etc/zkey", Deny, "zkey, zkey-cryptsetup (s390x)", "the secure key repository of encrypted volumes"},
	{"/etc/fcoe", Deny, "fcoemon", "the FCoE interfaces: which remote disks the node reaches"},
	{"/etc/auto.*", Deny, "automount (autofs)", "auto.master and its maps: an executable map runs as root"},
	{"/etc/autofs*", Deny, "automount (autofs)", "its configuration and LDAP credentials"},
	{"/etc/lvm", Deny, "lvm", "volumes"},
	{"/etc/kdump*", Deny, "kdump", "kdump_pre and kdump_post scripts run as root"},
	{"/etc/greenboot", Deny, "greenboot", "health-check scripts run as root at boot"},
	{"/etc/tuned", Deny, "tuned", "profiles run scripts and set kernel parameters"},
	{"/var/lib/tuned", Deny, "tuned", "its persistent storage: Python pickles it loads as root"},
	{"/var/lib/ocp-tuned", Deny, "the Node Tuning Operator's ocp-tuned units", "image.env names the image its boot-time unit runs privileged; its profiles' state"},
	{"/etc/e2scrub.conf", Deny, "e2scrub, e2scrub_all (a root timer)", "sourced by their shell scripts: runs commands as root"},
	{"/etc/e2fsck.conf", Deny, "e2fsck (systemd-fsck, at every boot for the node's ext4 /boot)", "log_filename and log_dir name files it writes as root: any file replaced at the next boot"},
	{"/etc/blkid.conf", Deny, "libblkid (blkid, findfs, scripts resolving LABEL= or UUID= as root)", "CACHE_FILE= names the file it writes its cache to as root, by rename: any file replaced"},
	{"/etc/irqbalance*", Deny, "irqbalance (EnvironmentFile= in some builds)", "IRQBALANCE_ARGS --policyscript runs a program as root"},
	{"/etc/sysstat", Deny, "sa1, sa2 (sysstat's root timers)", "sysstat is sourced by their shell scripts: runs commands as root"},
	{"/etc/watchdog*", Deny, "watchdog", "repair-binary and test-binary run as root; it reboots the node on a failed test"},
	{"/etc/mcelog*", Deny, "mcelog", "trigger scripts run as root on machine-check events"},
	{"/etc/mdevctl.d", Deny, "mdevctl (udev-run, as root)", "scripts.d callouts run as root"},
	{"/etc/usbguard", Deny, "usbguard-daemon", "which USB devices the kernel authorizes, and who may change that over IPC"},
	{"/etc/tpm2-tss", Deny, "tpm2-tss (FAPI)", "its key store and the TCTI library it loads"},
	{"/etc/request-key*", Deny, "request-key (the kernel's key upcall)", "request-key.conf and request-key.d name programs the kernel runs as root"},
	{"/etc/selinux", Deny, "the kernel, every confined domain", "the SELinux policy and mode"},
	{"/var/lib/selinux", Deny, "semodule, libsemanage", "the SELinux policy store"},
	{"/etc/fapolicyd", Deny, "fapolicyd", "which binaries may run"},
	{"/etc/ostree", Deny, "ostree, rpm-ostree", "OS update remotes and their keys"},
	{"/etc/rpm-ostreed.conf", Deny, "rpm-ostreed", "OS updates and their reboots"},
	{"/etc/zincati", Deny, "zincati", "OS updates and their reboots"},
	{"/etc/yum.repos.d", Deny, "rpm-ostree", "package repositories layered into the next OS"},
	{"/etc/yum*", Deny, "yum, rpm-ostree", "yum.conf and its plugins: code run as root"},
	{"/etc/dnf", Deny, "rpm-ostree, dnf", "package sources and plugins"},
	{"/etc/rpm", Deny, "rpm", "macros that run code in scriptlets"},
	{"/var/lib/rpm", Deny, "rpm", "the package database"},
	{"/etc/os-release", Deny, "kubelet.service (EnvironmentFile=)", "the kubelet's environment (LD_PRELOAD); the OS's identity"},
	// systemd.
	{"/etc/systemd", Deny, "systemd", "units, drop-ins, generators, system.conf (written only through a NodeDisruptionPolicy unit rule)"},
	{"/etc/xdg", Deny, "systemd user managers, sessions (root's included)", "user units (xdg/systemd), autostart entries and tools' configuration"},
	{"/etc/containers/systemd", Deny, "the Quadlet generator", "files here become systemd units"},
	{"/var/lib/systemd", Deny, "systemd", "linger (starts users' managers), timers' and credentials' state"},
	{"/var/lib/private", Deny, "systemd (DynamicUser= units)", "the state directories of dynamic-user services"},
	{"/var/cache/private", Deny, "systemd (DynamicUser= units)", "the cache directories of dynamic-user services"},
	{"/var/cache/ldconfig", Deny, "ldconfig", "aux-cache: what it believes of each library when it rebuilds ld.so.cache"},
	{"/var/lib/rpm-ostree", Deny, "rpm-ostreed", "its own state: layered packages and staged deployments"},
	{"/etc/credstore*", Deny, "systemd (LoadCredential=)", "credentials handed to units"},
	{"/etc/environment*", Deny, "pam_env, systemd (environment.d)", "environment of every session and user manager (LD_PRELOAD)"},
	{"/etc/sysconfig", Deny, "system units' EnvironmentFile= (crio, kubelet among them)", "environment of root units (LD_PRELOAD)"},
	{"/etc/tmpfiles.d", Deny, "systemd-tmpfiles", "creates, removes and re-permissions any path at boot"},
	{"/etc/sysusers.d", Deny, "systemd-sysusers", "creates accounts at boot"},
	{"/etc/binfmt.d", Deny, "systemd-binfmt", "interpreters run on exec"},
	{"/etc/udev", Deny, "systemd-udevd", "rules run programs as root on device events"},
	{"/etc/rc.d", Deny, "systemd-rc-local-generator", "legacy boot scripts"},
	{"/etc/rc.local", Deny, "systemd-rc-local-generator", "a boot script"},
	{"/etc/init.d", Deny, "systemd-sysv-generator", "legacy boot scripts"},
	{"/etc/rc*", Deny, "systemd-sysv-generator", "SysV boot scripts (rc0.d … rc6.d, rcS.d)"},
	{"/etc/xinetd*", Deny, "xinetd", "services it runs as root"},
	{"/etc/machine-id", Deny, "systemd, journald", "the node's identity"},
	{"/var/lib/dbus", Deny, "dbus, systemd", "machine-id: the node's identity"},
	{"/etc/hostname", Deny, "systemd-hostnamed, kubelet (the node name)", "the node's identity"},
	{"/etc/dbus-1", Deny, "dbus-broker", "the system bus policy: who may call what, as root"},
	{"/etc/polkit-1", Deny, "polkitd", "privilege grants over D-Bus"},
	{"/var/lib/polkit-1", Deny, "polkitd", "local authority rules: the same grants"},
	{"/etc/audit", Deny, "auditd", "audit rules: hiding what happens on the node"},
	{"/etc/libaudit.conf", Deny, "libaudit (sshd, login, sudo, crond)", "failure_action: its programs exit, or hide, when audit fails (round 16 b/01)"},
	{"/etc/audisp", Deny, "audispd", "plugins run as root on every audit event"},
	{"/var/log", Deny, "journald, auditd, rsyslog", "logs and the audit trail: a write forges or hides what happened"},
	{"/var/log/journal", Deny, "journald, journalctl", "the journal: a write or a removal forges or hides what happened (a unit named journal.service has no own place here)"},
	{"/var/log/audit", Deny, "auditd, ausearch", "the audit trail: the same"},
	{"/var/log/pods", Deny, "kubelet, crio", "containers' logs, as the API's pods/log serves them"},
	{"/var/log/containers", Deny, "kubelet", "links to the containers' logs the log collectors read"},
	{"/etc/smartmontools", Deny, "smartd", "-M exec runs programs as root"},
	{"/etc/logrotate*", Deny, "logrotate (a root timer)", "postrotate scripts run as root"},
	{"/etc/rsyslog*", Deny, "rsyslogd", "omprog runs programs as root"},
	{"/etc/alternatives", Deny, "every caller of iptables, java, …", "which binary a command name runs"},
	{"/var/lib/alternatives", Deny, "alternatives", "which binary a command name runs, rebuilt from here"},
	// Accounts and authentication.
	{"/etc/passwd*", Deny, "every login, sshd, sudo; shadow-utils (pwck, vipw, useradd)", "accounts; passwd- is the backup copy restored over it, passwd+ and passwd.lock the new copy and its lock"},
	{"/etc/shadow*", Deny, "every login; shadow-utils (pwck, vipw, useradd)", "passwords; shadow- is the backup copy restored over it, shadow+ and shadow.lock the new copy and its lock"},
	{"/etc/group*", Deny, "every login, sudo (wheel); shadow-utils (pwck, vipw, useradd)", "groups; group- is the backup copy restored over it, group+ and group.lock the new copy and its lock"},
	{"/etc/gshadow*", Deny, "newgrp; shadow-utils (pwck, vipw, useradd)", "group passwords; gshadow- is the backup copy restored over it, gshadow+ and gshadow.lock the new copy and its lock"},
	{"/etc/subuid*", Deny, "user namespaces (crio, podman); shadow-utils", "id mappings; subuid- is the backup copy restored over it, subuid.lock its lock"},
	{"/etc/subgid*", Deny, "user namespaces (crio, podman); shadow-utils", "id mappings; subgid- is the backup copy restored over it, subgid.lock its lock"},
	{"/etc/sudoers", Deny, "sudo", "root for anyone listed"},
	{"/etc/sudoers.d", Deny, "sudo", "root for anyone listed"},
	{"/etc/sudo.conf", Deny, "sudo", "plugins: shared libraries loaded as root"},
	{"/etc/sudo-ldap.conf", Deny, "sudo", "where sudo's rules come from"},
	{"/var/db/sudo", Deny, "sudo", "its own state (lectured users)"},
	{"/etc/ssh", Deny, "sshd", "sshd_config (AuthorizedKeysCommand runs as root), host keys, authorized keys"},
	{"/etc/pam.d", Deny, "every login, sudo, su, sshd", "the authentication stack (pam_exec)"},
	{"/etc/security", Deny, "PAM modules", "limits, access rules, namespaces"},
	{"/etc/login.defs", Deny, "login, useradd, userdel (run as root)", "USERDEL_CMD runs a program as root; login defaults (umask, UID ranges)"},
	{"/etc/nsswitch.conf", Deny, "every process resolving names or users", "loads shared libraries"},
	{"/etc/hosts.allow", Deny, "TCP wrappers", "access control (spawn runs commands)"},
	{"/etc/hosts.deny", Deny, "TCP wrappers", "access control (spawn runs commands)"},
	{"/etc/sssd", Deny, "sssd", "authentication sources"},
	{"/var/lib/sss", Deny, "sssd", "its caches and databases: users, groups and credentials"},
	{"/etc/authselect", Deny, "authselect", "the PAM and nsswitch profile"},
	{"/etc/krb5.conf*", Deny, "every Kerberos client", "authentication sources and plugins"},
	{"/etc/krb5.keytab", Deny, "sshd (GSSAPI), Kerberos services", "the host's keys: who the node authenticates as and accepts"},
	{"/var/kerberos", Deny, "krb5 clients and the KDC", "client keytabs (krb5/user/0: root's): who root authenticates as"},
	{"/etc/sasl2", Deny, "Cyrus SASL (root daemons that use it)", "mechanisms, password checks and the plugins they load"},
	{"/var/lib/ipa-client", Deny, "ipa-client-install --uninstall", "sysrestore: files it copies back over /etc as root"},
	{"/etc/hosts.equiv", Deny, "rsh/rlogin (pam_rhosts), sshd's HostbasedAuthentication", "hosts whose users log in without a password"},
	{"/etc/shosts.equiv", Deny, "sshd's HostbasedAuthentication", "hosts whose users log in without a password"},
	{"/etc/pam.conf", Deny, "PAM (when pam.d is absent)", "the authentication stack"},
	{"/etc/gss*", Deny, "gssproxy, GSSAPI", "mechanisms: shared libraries"},
	{"/etc/pkcs11", Deny, "p11-kit (every TLS client)", "modules: shared libraries loaded into every TLS client"},
	{"/etc/opensc*", Deny, "OpenSC (loaded by p11-kit into TLS clients)", "card drivers: shared libraries it loads"},
	{"/etc/shells", Deny, "chsh, pam_shells, sshd", "which programs count as login shells"},
	{"/etc/securetty", Deny, "pam_securetty, login", "which terminals root may log in on"},
	{"/etc/nologin", Deny, "pam_nologin (login, sshd)", "every login but root's (core's over SSH) is refused while it exists"},
	{"/run/nologin", Deny, "pam_nologin (login, sshd), systemd-user-sessions", "every login but root's is refused while it exists"},
	{"/var/run/nologin", Deny, "pam_nologin (login, sshd), systemd-user-sessions", "/run/nologin through the /var/run symlink"},
	{"/etc/update-motd.d", Deny, "pam_motd (Debian-style builds)", "scripts run as root at every login"},
	{"/etc/skel", Deny, "useradd", "copied into new homes (their shell startup files)"},
	{"/root", Deny, "root's shells, sshd", "root's home: .bashrc, .ssh/authorized_keys"},
	{"/var/roothome", Deny, "root's shells, sshd", "RHCOS's /root"},
	{"/home", Deny, "users' shells, sshd", "homes (core's SSH keys have their own path; the agent writes them from the payload, so no judge reads a home as the node's)"},
	{"/var/home", Deny, "users' shells, sshd", "RHCOS's /home (core's SSH keys have their own path; the agent writes them from the payload, so no judge reads a home as the node's)"},
	// Shells.
	{"/etc/profile*", Deny, "every login shell, root's included", "profile and profile.d are sourced"},
	{"/etc/bashrc", Deny, "every interactive bash", "sourced"},
	{"/etc/bash_completion.d", Deny, "root's interactive bash", "sourced"},
	{"/etc/bash.bash*", Deny, "bash (Debian-style builds)", "sourced"},
	{"/etc/inputrc", Deny, "readline in root's shells", "key bindings that type commands"},
	{"/etc/zsh*", Deny, "zsh", "sourced"},
	{"/etc/zprofile", Deny, "zsh login shells", "sourced"},
	{"/etc/zlogin", Deny, "zsh login shells", "sourced"},
	{"/etc/zlogout", Deny, "zsh login shells", "sourced"},
	{"/etc/syslesskey", Deny, "less run by root", "its environment (LESSOPEN runs a program)"},
	{"/etc/sysless", Deny, "less run by root", "its environment (LESSOPEN runs a program)"},
	{"/etc/csh.*", Deny, "csh, tcsh", "sourced"},
	{"/etc/kshrc", Deny, "ksh, mksh", "sourced"},
	{"/etc/bash_completion", Deny, "root's interactive bash (Debian-style builds)", "sourced"},
	{"/etc/terminfo", Deny, "ncurses (every curses program, root's included; searched first)", "tput init, tset and reset pass iprog to system(): runs a program as root; key strings that type commands"},
	{"/etc/termcap", Deny, "ncurses (its termcap fallback), termcap programs", "the same capabilities as terminfo"},
	{"/etc/DIR_COLORS*", Deny, "dircolors in root's login shells (profile.d/colorls.sh)", "escape sequences written to root's terminal, as /etc/terminfo's"},
	{"/etc/ModemManager", Deny, "ModemManager", "fcc-unlock.d and connection.d scripts run as root"},
	{"/etc/oddjob*", Deny, "oddjobd", "oddjobd.conf and oddjobd.conf.d name the helpers it runs as root on D-Bus calls"},
	{"/etc/terminal-colors.d", Deny, "util-linux's dmesg, fdisk, lsblk, cfdisk in root's shells", "escape sequences written to root's terminal, as /etc/terminfo's"},
	{"/etc/machine-info", Deny, "kernel-install (systemd 252, as RHEL 9 ships it), hostnamectl", "kernel-install sources it as shell: runs commands as root"},
	{"/etc/netns", Deny, "ip netns exec (iproute2), run as root", "its files are bind-mounted over /etc's for the command run in the namespace: /etc/hosts, resolv.conf, sudoers, pam.d, an rc file replaced"},
	// Tools root runs interactively: their rc files run commands (vim's :!, gdb's shell, git's
	// core.pager and hooks, screen's and tmux's exec, nano's linter).
	{"/etc/vimrc", Deny, "vim run by root", "sourced: runs commands"},
	{"/etc/virc", Deny, "vi run by root", "sourced: runs commands"},
	{"/etc/vim", Deny, "vim run by root", "vimrc and plugins: run commands"},
	{"/etc/nanorc", Deny, "nano run by root", "linter and formatter commands"},
	{"/etc/gdbinit*", Deny, "gdb run by root", "gdbinit and gdbinit.d: run commands and Python"},
	{"/etc/gitconfig", Deny, "git run by root", "core.pager, core.fsmonitor, aliases: run commands"},
	{"/etc/screenrc", Deny, "screen run by root", "runs commands"},
	{"/etc/tmux.conf", Deny, "tmux run by root", "run-shell runs commands"},
	{"/etc/wgetrc", Deny, "wget run by root", "where downloads go and which CAs they trust"},
	{"/etc/man_db.conf", Deny, "man run by root", "DEFINE names the pager, troff and the other programs it runs"},
	{"/etc/rsyncd*", Deny, "rsync --daemon (rsyncd.service)", "pre-xfer exec and post-xfer exec run commands as root"},
	{"/etc/toprc", Deny, "top run by root", "its system rc file: which commands are allowed"},
	{"/etc/topdefaultrc", Deny, "top run by root", "its default rc file: Inspect entries run commands"},
	{"/etc/pip.conf", Deny, "pip run by root", "index-url: where the code it installs comes from"},
	// Scheduled and event-driven commands.
	{"/etc/cron*", Deny, "crond", "cron.d, crontab, cron.hourly…: commands run as root"},
	{"/etc/anacrontab", Deny, "anacron", "commands run as root"},
	{"/etc/at.*", Deny, "atd", "who may schedule commands"},
	{"/var/spool/cron", Deny, "crond", "users' crontabs, root's included"},
	{"/var/spool/at", Deny, "atd", "queued commands"},
	{"/etc/NetworkManager/dispatcher.d", Deny, "NetworkManager-dispatcher", "scripts run as root on network events"},
	{"/etc/NetworkManager/VPN", Deny, "NetworkManager", "VPN plugin .name files name the service program it runs as root"},
	{"/etc/NetworkManager/dnsmasq*", Deny, "the dnsmasq NetworkManager runs (dns=dnsmasq, shared connections)", "dnsmasq.d, dnsmasq-shared.d: dhcp-script runs a program as root"},
	{"/etc/dhcp", Deny, "dhclient (NetworkManager with dhcp=dhclient)", "dhclient-exit-hooks and dhclient.d scripts run as root"},
	{"/etc/dnsmasq*", Deny, "dnsmasq", "dhcp-script runs as root"},
	// The dynamic linker and crypto libraries.
	{"/etc/ld.so*", Deny, "ld.so (every process)", "ld.so.preload, ld.so.conf(.d), ld.so.cache: libraries loaded into every process"},
	{"/etc/pki/tls/openssl*", Deny, "OpenSSL (every TLS client)", "openssl.cnf and the openssl.d it includes load engines and providers"},
	{"/etc/pki/tls/fips*", Deny, "OpenSSL (included by openssl.cnf)", "fips_local.cnf: the FIPS provider's section, which provider loads and what it allows"},
	{"/etc/ssl", Deny, "OpenSSL", "openssl.cnf (a symlink into /etc/pki on RHEL)"},
	{"/etc/crypto-policies", Deny, "OpenSSL, GnuTLS, NSS, sshd", "protocol and cipher policy, configuration included by every TLS library"},
	{"/etc/gnutls", Deny, "GnuTLS (every GnuTLS client)", "its priority override: protocols and ciphers"},
	{"/etc/pki/nssdb", Deny, "NSS (every NSS client)", "pkcs11.txt loads modules: shared libraries"},
	{"/var/lib/ipsec", Deny, "pluto (libreswan)", "nss: pkcs11.txt loads modules (shared libraries) into pluto as root; cert9.db is the CAs it trusts"},
	{"/etc/unbound", Deny, "unbound", "unbound.conf: its python module runs code as root; name servers and trust anchors"},
	{"/var/lib/unbound", NodeOnly, "unbound", "root.key: the DNSSEC trust anchor"},
	{"/etc/samba", Deny, "smbd, winbindd", "smb.conf: add user script and the like run commands as root"},
	{"/var/lib/samba", Deny, "smbd, winbindd", "private: secrets.tdb, the machine account's credentials"},
	{"/etc/udisks2", Deny, "udisksd", "modules and mount options for every disk it mounts as root"},
	// VPN, virtual switching and failover: root daemons that run scripts and hold keys.
	{"/etc/ipsec*", Deny, "pluto (libreswan)", "ipsec.conf, ipsec.d: keys, certificates, updown scripts run as root"},
	{"/etc/strongswan*", Deny, "charon (strongSwan)", "keys and updown scripts run as root"},
	{"/etc/openvswitch", Deny, "ovs-vswitchd, ovsdb-server", "the switch database and its keys: the node's network"},
	{"/var/lib/openvswitch", Deny, "ovs-vswitchd, ovsdb-server", "the switch database and pki: the node's network and its keys"},
	{"/var/lib/ovn*", Deny, "OVN-Kubernetes (ovn-controller, northd, ovn-ic)", "databases and certificates: the cluster network"},
	{"/etc/ovn*", Deny, "configure-ovs and configure-ip-forwarding (MCO units, at boot), OVN-Kubernetes", "/etc/ovnk's extra_bridge and default_bridge: which interfaces become the node's bridges"},
	{"/etc/haproxy", Deny, "haproxy (the on-prem masters' API load balancer, an MCO static pod)", "haproxy.cfg: external-check command runs programs; who reaches the API"},
	{"/var/lib/haproxy", Deny, "haproxy (the on-prem masters' API load balancer, an MCO static pod)", "its runtime sockets: the admin socket reconfigures it"},
	{"/var/lib/pacemaker", Deny, "pacemaker (two-node-with-fencing masters, MCO templates)", "alerts/*.sh (tnf-taint-alert.sh) run as root on cluster events; the cluster's configuration"},
	{"/var/lib/pcsd", Deny, "pcsd (two-node-with-fencing masters)", "its tokens and settings: administers the cluster as root"},
	{"/etc/pacemaker", Deny, "pacemaker, pacemaker-remoted (two-node-with-fencing masters)", "authkey: who may run the cluster's resource agents and fencing, as root"},
	{"/etc/corosync", Deny, "corosync (two-node-with-fencing masters)", "the cluster's membership and its authentication key; fencing follows it"},
	{"/var/lib/corosync", Deny, "corosync (two-node-with-fencing masters)", "the cluster's membership state"},
	{"/etc/wireguard", Deny, "wg-quick (as root)", "PostUp and PreDown run commands as root; the tunnels' keys"},
	{"/etc/wpa_supplicant", Deny, "wpa_supplicant", "pkcs11_module_path and opensc_engine_path load libraries; its networks' credentials"},
	{"/etc/keepalived", Deny, "keepalived", "notify scripts run as root; who holds the virtual IPs"},
	// Containers: the runtime and what it runs.
	{"/etc/containers/oci/hooks.d", Deny, "crio", "OCI hooks run as root around every container"},
	{"/etc/containers/containers.conf*", Deny, "crio, podman", "runtimes, hooks directories, default capabilities"},
	{"/etc/containers/storage.conf*", Deny, "crio, podman (containers/storage)", "mount_program runs as root; additional image stores"},
	{"/etc/containers/mounts.conf", Deny, "crio", "host paths mounted into every container"},
	{"/etc/containers/seccomp*", Deny, "crio", "the default seccomp profile"},
	{"/etc/containers/toolbox.conf", Deny, "toolbox, run by root", "the image it runs as a privileged container"},
	{"/etc/cdi", Deny, "crio (CDI)", "device specs' hooks run as root around the containers that ask for the device"},
	{"/var/run/cdi", Deny, "crio (CDI)", "device specs' hooks run as root (/run/cdi through the symlink)"},
	{"/run/cdi", Deny, "crio, podman (CDI)", "device specs' hooks run as root"},
	{"/etc/crio/crio.conf", Deny, "crio", "runtimes, hooks, default capabilities"},
	{"/etc/crio/crio.conf.d", Deny, "crio", "runtimes, hooks, default capabilities"},
	{"/etc/crun*", Deny, "crun", "runtime configuration"},
	{"/etc/criu", Deny, "criu, run as root by runc and crun when crio checkpoints or restores a container", "default.conf, runc.conf: action-script runs a program as root at each step of a dump or restore"},
	{"/etc/kata-containers", Deny, "the Kata runtime (crio's kata handler)", "hypervisor, kernel and initrd paths: binaries run as root"},
	{"/etc/nvidia-container-runtime", Deny, "nvidia-container-runtime (a crio runtime or hook)", "the CLI and ldconfig paths it runs as root"},
	{"/etc/nvidia-container-toolkit", Deny, "nvidia-ctk, the NVIDIA runtime hooks", "hook and CDI configuration: programs run as root"},
	{"/etc/nri", Deny, "crio (NRI)", "conf.d: configuration of the plugins crio runs as root"},
	{"/etc/cni", Deny, "crio (ocicni)", "CNI configuration names binaries run as root"},
	{"/etc/kubernetes/cni", Deny, "crio (Multus, OVN-Kubernetes)", "CNI configuration names binaries run as root"},
	{"/var/lib/cni", Deny, "crio", "CNI binaries and state"},
	{"/var/lib/containers", Deny, "crio", "image and container storage: a planted binary runs in pods"},
	{"/var/lib/crio", Deny, "crio", "crio's own state"},
	{"/var/lib/sriov", Deny, "the SR-IOV operator's host service", "the config daemon binary a systemd unit runs as root"},
	{"/etc/sriov-operator", Deny, "the SR-IOV operator's host service (at boot)", "which interfaces and drivers it configures"},
	{"/var/lib/etcd", Deny, "etcd (the control plane's static pod, masters)", "the cluster's database: every object and secret the API server serves"},
	// The kubelet.
	{"/var/lib/kubelet", Deny, "kubelet", "its whole state (one exception, config.json, the pull secret: node policy only)"},
	{"/etc/kubernetes/kubelet.conf", Deny, "kubelet", "staticPodPath, authentication and authorization, TLS"},
	{"/etc/openshift", Deny, "kubelet (--config-dir=/etc/openshift/kubelet.conf.d)", "kubelet configuration drop-ins: staticPodPath, authentication and authorization"},
	{"/etc/kubernetes/static-pod-resources/keepalived", Deny, "the keepalived static pod (on premise, privileged)", "its check and notify scripts run as root"},
	{"/etc/kubernetes/static-pod-resources/haproxy", Deny, "the HAProxy static pod (on premise, host network)", "external-check commands; which API servers the node reaches"},
	{"/etc/kubernetes/kubelet-env", Deny, "kubelet.service (EnvironmentFile=)", "the kubelet's environment (LD_PRELOAD)"},
	{"/etc/kubernetes/kubelet-workaround", Deny, "kubelet.service (EnvironmentFile=)", "the kubelet's environment (LD_PRELOAD)"},
	{"/etc/kubernetes/node.env", Deny, "units' EnvironmentFile=", "environment of root units"},
	{"/etc/kubernetes/apiserver-url.env", Deny, "host-network pods that source it (cloud node managers, node-label-sync); the machine-config operator writes it", "sourced as shell: runs commands in pods that hold the node's rights"},
	{"/etc/node-sizing*", Deny, "kubelet.service (EnvironmentFile=)", "the kubelet's environment"},
	{"/etc/kubernetes/manifests", Deny, "kubelet", "static pods run privileged (one exception, kube-apiserver-proxy.yaml)"},
	{"/etc/kubernetes/kubelet-plugins", Deny, "kubelet", "volume plugins it executes as root"},
	{"/etc/kubernetes/kubeconfig", Deny, "kubelet", "bootstrap credentials and the API server"},
	{"/var/lib/kubelet/kubeconfig", Deny, "kubelet", "its identity"},
	{"/var/lib/kubelet/pki", Deny, "kubelet", "its identity"},
	{"/var/lib/kubelet/pods", Deny, "kubelet", "pod volumes: files pods run"},
	{"/var/lib/kubelet/plugins", Deny, "kubelet", "CSI sockets and plugin state"},
	{"/var/lib/kubelet/plugins_registry", Deny, "kubelet", "plugin registration"},
	{"/var/lib/kubelet/device-plugins", Deny, "kubelet", "device plugin sockets"},
	{"/var/lib/kubelet/pod-resources", Deny, "kubelet", "the pod resources socket"},
	{"/var/lib/kubelet/seccomp", Deny, "kubelet", "seccomp profiles"},
	{"/var/lib/kubelet/checkpoints", Deny, "kubelet", "checkpoints restored into pods"},
	{"/var/lib/kubelet/cpu_manager_state", Deny, "kubelet", "CPU manager state"},
	{"/var/lib/kubelet/memory_manager_state", Deny, "kubelet", "memory manager state"},
	{"/var/lib/kubelet/dra_manager_state", Deny, "kubelet", "resource claims' state"},
	// The machine-config daemon, its records and the agent.
	{"/etc/machine-config-daemon", Deny, "machine-config-daemon", "its own state and scripts (one exception, the containers GPG key)"},
	{"/var/lib/machine-config-daemon", Deny, "machine-config-daemon", "its own state"},
	{"/var/lib/mco", Deny, "the machine-config operator's units", "their own state"},
	{"/etc/mcs-machine-config-content.json", Deny, "machine-config-daemon", "the embedded MachineConfig: its baseline"},
	{"/etc/ignition-machine-config-encapsulated.json", Deny, "machine-config-daemon", "the embedded MachineConfig"},
	{"/etc/mcd-currentconfig.json", Deny, "machine-config-daemon", "its baseline: written only with the checked MachineConfig"},
	{"/etc/mco/proxy.env*", Deny, "crio, kubelet, MCO units (EnvironmentFile=); proxy.env.backup: machine-config-daemon-revert.service (EnvironmentFile=)", "environment of root units (LD_PRELOAD, proxies)"},
	{"/etc/mco/machineconfig-revert.json", Deny, "machine-config-daemon-revert.service (at boot, ConditionPathExists=: a privileged machine-config-daemon firstboot-complete-machineconfig run)", "a whole MachineConfig applied as root at the next boot: files, units, kernel arguments"},
	{"/etc/ignition*", Deny, "Ignition, the machine-config daemon", "first-boot configuration"},
	{"/etc/pivot", Deny, "machine-config-daemon (UpdateTuningArgs, at the end of every update: rpm-ostree kargs --append/--delete for each ADD/DELETE line of kernel-args)", "the kernel arguments of the next boot"},
	{"/etc/cno", Deny, "mtu-migration.sh (mtu-migration.service, at boot), its NetworkManager pre-up dispatcher 99-mtu-migration.sh, configure-ovs.sh, nmstate-configuration.sh (MCO templates)", "mtu-migration/config and mtu-migration/mtu/DEV are sourced as shell by root: runs commands as root; the node's MTU"},
	{"/etc/.ignition-result.json", Deny, "Ignition (first boot), machine-config-daemon (logs its provisioning date)", "the record of the node's first provisioning"},
	{"/etc/iri-registry", NodeOnly, "iri-registry.service, the machine-config daemon's internal release image manager (masters)", "the registry's configuration and TLS material: the release images the cluster's nodes pull"},
	{"/var/lib/iri-registry", NodeOnly, "iri-registry.service, the machine-config daemon's internal release image manager (masters)", "the release images the registry serves to the cluster's nodes"},
	{"/var/lib/refresh-agent", Deny, "refresh-agent", "its own journal, backups and record"},

	// Trust: the node policy's own rules only.
	{"/etc/kubernetes", NodeOnly, "kubelet, static pods", "kubelet-ca.crt (who may call the kubelet), credential providers, static pod resources, the API server proxy"},
	{"/var/lib/kubelet/config.json", NodeOnly, "kubelet, crio", "the pull secret: credentials"},
	{"/etc/containers", NodeOnly, "crio (containers/image)", "registries.conf(.d), registries.d, policy.json, certs.d, auth: which images the node trusts"},
	{"/etc/docker", NodeOnly, "crio (containers/image)", "certs.d: registry CAs"},
	{"/var/cache/containers", NodeOnly, "crio, podman (containers/image)", "short-name-aliases.conf: root's alias cache, over registries.conf's aliases: which registry a short image name pulls from (adversary r19 a/01)"},
	{"/etc/netgroup", NodeOnly, "sudo, pam_access", "netgroups the sudoers and access.conf rules authorize by (r19 a/03)"},
	{"/etc/debuginfod", NodeOnly, "root's login shells (profile.d)", "DEBUGINFOD_URLS: the servers root's debuggers fetch from (r19 a/03)"},
	{"/etc/pcrlock.d", NodeOnly, "systemd-pcrlock", "the TPM policy that unlocks the disks (r19 a/03)"},
	{"/var/lib/pcrlock.d", NodeOnly, "systemd-pcrlock", "the TPM policy that unlocks the disks (r19 a/03)"},
	{"/etc/crio", NodeOnly, "crio", "policies: per-namespace signature policy"},
	{"/etc/pki", NodeOnly, "every TLS client, update-ca-trust", "CA trust anchors, RPM keys"},
	{"/etc/mco", NodeOnly, "the machine-config daemon, crio", "the internal registry pull secret"},
	{"/etc/NetworkManager", NodeOnly, "NetworkManager", "connections, DNS and routes: where the node's traffic goes"},
	{"/etc/nmstate", NodeOnly, "nmstate", "the node's network"},
	{"/var/lib/NetworkManager", NodeOnly, "NetworkManager", "NetworkManager-intern.conf and leases: the node's network"},
	{"/etc/firewalld", NodeOnly, "firewalld", "which traffic reaches the node"},
	{"/etc/nftables*", NodeOnly, "nftables.service", "which traffic reaches the node"},
	{"/etc/resolv.conf", NodeOnly, "every process resolving names", "name servers"},
	{"/etc/dnssec-trust-anchors.d", NodeOnly, "systemd-resolved", "DNSSEC trust anchors: which signed answers it believes"},
	{"/etc/trusted-key.key", NodeOnly, "DNSSEC validators (unbound, dig +sigchase)", "the DNSSEC root trust anchor"},
	{"/etc/gai.conf", NodeOnly, "glibc getaddrinfo (every process)", "the order a name's addresses are tried: which address the node reaches"},
	{"/etc/hosts", NodeOnly, "every process resolving names", "names to addresses (the API server's)"},
	{"/etc/host.conf", NodeOnly, "the resolver", "how names are resolved"},
	{"/etc/networks", NodeOnly, "every process resolving names (NSS files)", "network names to addresses (route, ip, netstat) (r19 a/03)"},
	{"/etc/services", NodeOnly, "every process resolving service names (NSS files)", "service names to ports: where a daemon listens or connects by name (r19 a/03)"},
	{"/etc/protocols", NodeOnly, "every process resolving protocol names (NSS files)", "protocol names to numbers: what a firewall rule by name matches"},
	{"/etc/rpc", NodeOnly, "rpcbind, NFS clients (NSS files)", "RPC program names to numbers: which service an NFS mount reaches"},
	{"/etc/ethers", NodeOnly, "ether_ntohost (NSS files)", "MAC addresses to host names"},
	{"/etc/coredns", NodeOnly, "CoreDNS (on-premise static pods)", "name servers"},
	{"/etc/openldap", NodeOnly, "LDAP clients", "which LDAP servers and CAs are trusted"},
	{"/etc/chrony*", NodeOnly, "chronyd", "the clock: certificate validity"},
	{"/var/lib/chrony", NodeOnly, "chronyd", "its drift, NTS keys and cookies: the clock, certificate validity"},
	{"/etc/timemaster.conf", Deny, "timemaster (linuxptp)", "path names the programs it runs as root; the clock"},
	{"/etc/ptp4l*", NodeOnly, "ptp4l (linuxptp)", "the PTP clock source: certificate validity"},
	{"/etc/ts2phc*", NodeOnly, "ts2phc (linuxptp)", "the clock source: certificate validity"},
	{"/etc/phc2sys*", NodeOnly, "phc2sys (linuxptp)", "which clock sets the system clock: certificate validity"},
	{"/etc/linuxptp", NodeOnly, "linuxptp's daemons", "the clock source: certificate validity"},
	{"/etc/ntp*", NodeOnly, "ntpd, ntpdate", "ntp.conf and ntp/keys: the clock, certificate validity"},
	{"/etc/adjtime", NodeOnly, "hwclock, systemd-timedated", "whether the hardware clock keeps local time: the clock at boot"},
	{"/etc/localtime", NodeOnly, "glibc (every process), crond", "the time zone: when root's cron jobs run"},
	{"/etc/crictl.yaml", NodeOnly, "crictl run by root", "which runtime endpoint root's crictl talks to and trusts"},
}

// under reports whether path is prefix itself or lies below it (component-wise: /etc/sshd is not
// under /etc/ssh). A prefix ending in "*" matches by string.
func under(path, prefix string) bool {
	if raw, ok := strings.CutSuffix(prefix, "*"); ok {
		return strings.HasPrefix(path, raw)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// locationOf returns the most specific audited location that path (a file, or a prefix ending in
// "/") lies under, of the given class.
func locationOf(path, class string) (Location, bool) {
	p := strings.TrimSuffix(path, "/")
	best, found := Location{}, false
	for _, l := range Audit {
		if l.Class == class && under(p, l.Prefix) && (!found || len(l.Prefix) > len(best.Prefix)) {
			best, found = l, true
		}
	}
	return best, found
}

// coveredLocation returns a location of the class that a prefix rule ("…/") would cover.
func coveredLocation(prefix, class string) (Location, bool) {
	if !strings.HasSuffix(prefix, "/") {
		return Location{}, false
	}
	for _, l := range Audit {
		if raw := strings.TrimSuffix(l.Prefix, "*"); l.Class == class && strings.HasPrefix(raw+"/", prefix) {
			return l, true
		}
	}
	return Location{}, false
}

// configMapNever returns the denied or node-policy-only location path lies under, if any: the
// rows the ConfigMap never reaches. The broad denied roots a unit's own places live in (/run,
// /var/run, /var/log) count only through a more specific row below them (/run/cdi, /run/nologin).
func configMapNever(path string) (Location, bool) {
	if l, ok := locationOf(path, Deny); ok && !slices.Contains([]string{"/run", "/var/run", "/var/log"}, l.Prefix) {
		return l, true
	}
	return NodeOnlyUnder(path)
}

// runTwin returns, for a path under /run (or /var/run), the /etc or /var/lib path of the same name
// and the denied or node-policy-only row that one lies under. Root-run programs read configuration
// from /run as from /etc and /var/lib: systemd its units and drop-ins (/run/systemd/system,
// system.control, transient, generator*), udev /run/udev/rules.d, systemd-tmpfiles, -sysctl,
// -binfmt, -modules-load and modprobe /run/tmpfiles.d, sysctl.d, binfmt.d, modules-load.d,
// modprobe.d, systemd /run/credstore and /run/environment.d, NetworkManager /run/NetworkManager
// (conf.d, system-connections), crio and podman /run/containers (auth.json). So the audit's row for
// /etc/X or /var/lib/X stands for /run/X too (round 11, exec 01): one list, not a second copy.
func runTwin(path string) (string, Location, bool) {
	c := strings.TrimSuffix(path, "/")
	rest, ok := strings.CutPrefix(c, "/run/")
	if !ok {
		rest, ok = strings.CutPrefix(c, "/var/run/")
	}
	if !ok || rest == "" {
		return "", Location{}, false
	}
	for _, base := range []string{"/etc/", "/var/lib/"} {
		if l, ok := configMapNever(base + rest); ok {
			return base + rest, l, true
		}
	}
	return "", Location{}, false
}

// NeverOwn says why path (a file, or a directory ending in "/") is no unit's own place whatever the
// unit is called or its *Directory= settings say, or "": a denied or node-policy-only row
// (configMapNever), or a path under /run whose /etc or /var/lib twin is one (runTwin).
func NeverOwn(path string) string {
	if l, ok := configMapNever(path); ok {
		return l.Prefix + " is " + l.Class + " (" + l.Why + ")"
	}
	if twin, l, ok := runTwin(path); ok {
		c := strings.TrimSuffix(path, "/")
		return c + " is the /run twin of " + twin + ", which root-run programs read as they read " + l.Prefix +
			" (" + l.Class + ": " + l.Why + ")"
	}
	return ""
}

// NodeOnlyUnder returns the node-policy-only location path lies under, if any: the ConfigMap never
// reaches it, whatever the ceiling.
func NodeOnlyUnder(path string) (Location, bool) { return locationOf(path, NodeOnly) }
