package allowlist_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// wideCeiling is the provider's mistake the audit must survive: all of /etc/ and /var/, any action
// on crio.
const wideCeiling = "configMapCeiling:\n- {prefix: /etc/, actions: [None, Reload, Restart], units: [crio]}\n" +
	"- {prefix: /var/, actions: [None, Reload, Restart], units: [crio]}\n"

// Issue 27, class 3: whatever the ceiling, the ConfigMap never reaches a file that makes root run
// code or moves trust. Each input is a ConfigMap entry a hostile writer would send, exactly for the
// file and as a directory above it.
func TestWideCeilingNeverReachesRootOrTrust(t *testing.T) {
	pol := mustPolicy(t, wideCeiling)
	paths := []string{
		// Named in the issue.
		"/etc/kubernetes/kubelet.conf", "/etc/containers/storage.conf", "/etc/bash_completion.d/x.sh",
		// kubelet.
		"/etc/kubernetes/kubeconfig", "/etc/kubernetes/manifests/x.yaml", "/etc/kubernetes/kubelet-env",
		"/etc/kubernetes/kubelet-workaround", "/etc/kubernetes/kubelet-ca.crt", "/etc/kubernetes/credential-providers/ecr.yaml",
		"/etc/kubernetes/static-pod-resources/x", "/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", "/etc/node-sizing-enabled.env",
		"/var/lib/kubelet/config.json", "/var/lib/kubelet/pods/u/volumes/x", "/var/lib/kubelet/seccomp/x.json",
		"/var/lib/kubelet/plugins/csi.sock", "/var/lib/kubelet/cpu_manager_state",
		// crio, conmon, containers.
		"/etc/containers/storage.conf.d/x.conf", "/etc/containers/registries.conf", "/etc/containers/registries.conf.d/x.conf",
		"/etc/containers/policy.json", "/etc/containers/oci/hooks.d/x.json", "/etc/containers/mounts.conf",
		"/etc/containers/containers.conf.d/x.conf", "/etc/crio/crio.conf.d/99-x", "/etc/crio/policies/x.json",
		"/etc/docker/certs.d/r/ca.crt", "/var/cache/containers/short-name-aliases.conf", "/etc/netgroup", "/etc/networks", "/etc/services", "/etc/protocols", "/etc/rpc", "/etc/ethers",
		"/etc/debuginfod/x.urls", "/etc/pcrlock.d/x.pcrlock", "/var/lib/pcrlock.d/x.pcrlock", "/opt/cni/bin/evil", "/var/opt/cni/bin/evil", "/var/lib/cni/bin/x",
		"/var/lib/containers/storage/overlay/x", "/var/lib/crio/version",
		// systemd.
		"/etc/systemd/system/x.service", "/etc/systemd/system.conf", "/etc/systemd/system-generators/x",
		"/etc/environment.d/x.conf", "/etc/tmpfiles.d/x.conf", "/etc/sysctl.d/x.conf", "/etc/modules-load.d/x.conf",
		"/etc/udev/rules.d/x.rules", "/etc/sysconfig/kubelet", "/etc/default/nodeip-configuration", "/var/lib/systemd/linger/core",
		"/etc/credstore/x", "/etc/machine-id", "/etc/hostname",
		// sshd and other users' keys.
		"/etc/ssh/sshd_config.d/x.conf", "/root/.ssh/authorized_keys", "/var/roothome/.ssh/authorized_keys",
		"/var/home/other/.ssh/authorized_keys",
		// shells.
		"/etc/profile", "/etc/profile.d/x.sh", "/etc/bashrc", "/etc/inputrc", "/etc/zshrc", "/etc/csh.cshrc", "/etc/skel/.bashrc",
		// cron, at.
		"/etc/cron.d/x", "/etc/crontab", "/var/spool/cron/root", "/etc/at.allow",
		// NetworkManager, name resolution, time.
		"/etc/NetworkManager/dispatcher.d/x", "/etc/NetworkManager/system-connections/x.nmconnection",
		"/etc/resolv.conf", "/etc/hosts", "/etc/chrony.conf",
		// sudo, PAM, ld.so, TLS.
		"/etc/sudoers.d/x", "/etc/sudo.conf", "/etc/pam.d/sshd", "/etc/ld.so.preload", "/etc/ld.so.conf.d/x.conf",
		"/etc/pki/ca-trust/source/anchors/x.crt", "/etc/pki/tls/openssl.cnf", "/etc/ssl/openssl.cnf",
		"/etc/crypto-policies/back-ends/opensslcnf.config", "/etc/pkcs11/modules/x.module", "/etc/nsswitch.conf",
		// the daemon's and the agent's own.
		"/etc/mco/proxy.env", "/etc/mco/internal-registry-pull-secret.json", "/etc/machine-config-daemon/x",
		"/etc/mcd-currentconfig.json", "/var/lib/refresh-agent/journal.json",
		// Others that run code.
		"/etc/tuned/x/tuned.conf", "/etc/kdump.conf", "/etc/logrotate.d/x", "/etc/rsyslog.d/x.conf",
		"/etc/alternatives/iptables", "/etc/yum.repos.d/x.repo", "/etc/dbus-1/system.d/x.conf", "/etc/polkit-1/rules.d/x",
		// The adversarial tester's (fix3): tools' rc files, upcalls, VPN, switching, boot, root daemons' state.
		"/etc/request-key.d/x.conf", "/etc/request-key.conf", "/etc/virc", "/etc/vimrc", "/etc/vim/vimrc.local",
		"/etc/nanorc", "/etc/gdbinit", "/etc/gdbinit.d/x.gdb", "/etc/gitconfig", "/etc/screenrc", "/etc/tmux.conf",
		"/etc/ipsec.d/x.conf", "/etc/ipsec.conf", "/etc/strongswan/swanctl/x.conf", "/etc/openvswitch/conf.db",
		"/etc/keepalived/keepalived.conf", "/etc/grub.d/40_custom", "/etc/system-fips", "/etc/securetty",
		"/etc/xdg/autostart/x.desktop", "/etc/security/limits.conf", "/etc/selinux/config", "/etc/krb5.conf",
		"/etc/sssd/sssd.conf", "/etc/audit/rules.d/x.rules", "/etc/default/grub", "/etc/kernel/cmdline",
		"/etc/dracut.conf.d/x.conf", "/etc/modprobe.d/x.conf", "/etc/environment",
		"/var/lib/openvswitch/pki/x.pem", "/var/lib/sss/db/x.ldb", "/var/lib/ovn-ic/etc/x.db", "/var/lib/ovnk/x",
		"/var/lib/ovn/x", "/var/lib/rpm-ostree/x", "/var/lib/machine-config-daemon/x", "/var/lib/kubelet/x",
		"/var/lib/kubelet/kubelet.conf", "/var/lib/polkit-1/x", "/var/lib/systemd/x",
	}
	paths = append(paths, round4bPaths...)
	paths = append(paths, round7aPaths...)
	paths = append(paths, round9MCOPaths...)
	paths = append(paths, round11Paths...)
	for _, p := range paths {
		for _, entry := range []string{p, p[:strings.LastIndex(p, "/")+1]} {
			rules := mustRules(t, fmt.Sprintf(`[{"path": %q, "action": "None"}]`, entry))
			extra, warnings := pol.Extra(rules)
			d := pol.Resolve(p, extra)
			if d.Source == "policy" {
				continue // the node's own rule decides, not the ConfigMap
			}
			if strings.HasSuffix(entry, "/") && entry != "/etc/" && entry != "/var/" && len(extra) == 1 {
				// A directory entry may be honoured (the ceiling covers it); the path itself never is.
				assert.False(t, d.Allowed, "%s through %s", p, entry)
				continue
			}
			assert.False(t, d.Allowed, "%s through %s", p, entry)
			if entry == p {
				assert.Len(t, warnings, 1, "the entry for %s is ignored with a warning", p)
			}
			// Even unfiltered (rules that skipped Extra), the path stays refused.
			assert.False(t, pol.Resolve(p, rules).Allowed, "%s unfiltered", p)
		}
	}
	// The ceiling still works where nothing is audited.
	extra, warnings := pol.Extra(mustRules(t, `[{"path": "/etc/myapp/", "action": "Reload", "services": ["crio"]}]`))
	assert.Empty(t, warnings)
	assert.True(t, pol.Resolve("/etc/myapp/app.conf", extra).Allowed)
}

// The node policy's own rules may name a node-policy-only location (the built-in rules do), never a
// denied one; a ceiling may not be declared under either.
func TestNodeOnlyLocationsAreForTheNodePolicy(t *testing.T) {
	for _, p := range []string{"/etc/containers/registries.conf.d/99-mirrors.conf", "/etc/pki/ca-trust/source/anchors/corp.crt",
		"/etc/chrony.conf", "/etc/NetworkManager/conf.d/x.conf"} {
		pol := mustPolicy(t, fmt.Sprintf("paths:\n- {path: %s, action: None}\n", p))
		d := pol.Resolve(p, nil)
		assert.True(t, d.Allowed, p)
		assert.Equal(t, "policy", d.Source, p)
		_, err := allowlist.ParsePolicy([]byte(fmt.Sprintf("configMapCeiling:\n- {prefix: %s, actions: [None]}\n", p)))
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "only the node policy's own rules may name", p)
	}
	for _, p := range []string{"/etc/kubernetes/kubelet.conf", "/etc/containers/storage.conf", "/etc/bash_completion.d/x",
		"/etc/mco/proxy.env", "/opt/cni/bin/x"} {
		_, err := allowlist.ParsePolicy([]byte(fmt.Sprintf("paths:\n- {path: %s, action: None}\n", p)))
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "denied prefix", p)
		_, err = allowlist.ParsePolicy([]byte(fmt.Sprintf("nodeDisruptionPolicy:\n  files:\n  - {path: %s, actions: [{type: None}]}\n", p)))
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "denied prefix", p)
	}
	// Every built-in rule is outside the deny class (the node-only class is what they are).
	for _, r := range allowlist.Default().Rules {
		_, denied := allowlist.Denied(r.Path)
		assert.False(t, denied, r.Path)
	}
}

// docs/security.md prints the audit: one row per location, with its class and reason, and nothing
// else. Regenerate the rows with REFRESH_AGENT_PRINT_AUDIT=1 go test ./allowlist -run TestAuditTable -v.
func TestAuditTableMatchesTheDocs(t *testing.T) {
	var rows []string
	for _, l := range allowlist.Audit {
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s | %s |", l.Prefix, l.Class, l.Reader, l.Why))
	}
	if os.Getenv("REFRESH_AGENT_PRINT_AUDIT") != "" {
		fmt.Println(strings.Join(rows, "\n"))
	}
	doc, err := os.ReadFile("../docs/security.md")
	require.NoError(t, err)
	var got []string
	for _, line := range strings.Split(string(doc), "\n") {
		if regexp.MustCompile("^\\| `[^`]+` \\| (denied|node policy only) \\|").MatchString(line) {
			got = append(got, line)
		}
	}
	assert.Equal(t, rows, got)
	seen := map[string]bool{}
	for _, l := range allowlist.Audit {
		assert.False(t, seen[l.Prefix], "one row per location: %s", l.Prefix)
		seen[l.Prefix] = true
		assert.True(t, l.Class == allowlist.Deny || l.Class == allowlist.NodeOnly, l.Prefix)
		assert.NotEmpty(t, l.Reader, l.Prefix)
		assert.NotEmpty(t, l.Why, l.Prefix)
	}
}

// Every row of the audit, generated rather than listed by hand, with the variants a hostile
// ConfigMap writer tries: the file, a file below a directory row, the row itself as a directory
// entry (with and without the trailing slash) and the directory above; unclean spellings (".",
// "..", "//") are no rule at all. None of them reaches the file under the widest ceiling.
func TestWideCeilingNeverReachesAnyAuditRow(t *testing.T) {
	pol := mustPolicy(t, wideCeiling)
	for _, l := range allowlist.Audit {
		raw := strings.TrimSuffix(l.Prefix, "*")
		targets := []string{raw + "x", raw + "/x", raw + "/x/y.conf"}
		if !strings.HasSuffix(l.Prefix, "*") {
			targets = append(targets, raw)
		}
		for _, p := range targets {
			if !strings.HasPrefix(p, "/etc/") && !strings.HasPrefix(p, "/var/") {
				continue // outside the ceiling anyway
			}
			if _, under := allowlist.Denied(p); !under {
				if _, nodeOnly := allowlist.NodeOnlyUnder(p); !nodeOnly {
					continue // raw+"x" of a component row (/etc/sshx) is another file
				}
			}
			entries := []string{p, raw + "/", raw, p[:strings.LastIndex(p, "/")+1]}
			for _, entry := range entries {
				if entry == "/etc/" || entry == "/var/" || entry == "/" {
					continue
				}
				rules, err := allowlist.ParseRules([]byte(fmt.Sprintf(`[{"path": %q, "action": "None"}]`, entry)))
				if err != nil {
					continue // not a rule at all
				}
				extra, _ := pol.Extra(rules)
				d := pol.Resolve(p, extra)
				assert.False(t, d.Allowed && d.Source != "policy", "%s (%s row) through the ConfigMap entry %s", p, l.Prefix, entry)
			}
			for _, unclean := range []string{strings.Replace(p, "/", "//", 2), strings.Replace(p, "/etc/", "/etc/./", 1),
				strings.Replace(p, "/etc/", "/etc/x/../", 1), strings.Replace(p, "/var/", "/var/x/../", 1)} {
				if unclean == p {
					continue
				}
				rules, err := allowlist.ParseRules([]byte(fmt.Sprintf(`[{"path": %q, "action": "None"}]`, unclean)))
				if err == nil {
					extra, _ := pol.Extra(rules)
					assert.Empty(t, extra, "unclean %s is no rule", unclean)
				}
			}
		}
	}
}

// round4bPaths are what the round-4b adversary wrote under a ceiling of /etc/ and /var/ (F1, F7), and
// the class around each: every CDI spec directory, every boot marker in /etc and /var, pam_nologin's
// files, every shadow-utils copy and lock of the account databases, the console and locale, systemd's
// image directories, NetworkManager's VPN plugins and its dnsmasq, every file openssl.cnf includes,
// and the other readers the audit's second pass found (man, libuser, sos, fuse, toolbox, gssproxy).
var round4bPaths = []string{
	"/etc/cdi/evil.json", "/var/run/cdi/evil.yaml", "/etc/system-update", "/etc/initrd-release", "/etc/.updated",
	"/var/.updated", "/etc/nologin", "/var/run/nologin", "/etc/crictl.yaml", "/etc/vconsole.conf", "/etc/locale.conf",
	"/etc/localtime", "/etc/adjtime", "/etc/cifs-utils/idmap-plugin", "/var/lib/chrony/drift", "/var/lib/chrony/nts-keys",
	"/etc/passwd.lock", "/etc/shadow.lock", "/etc/group.lock", "/etc/gshadow.lock", "/etc/passwd+", "/etc/shadow+",
	"/etc/subuid.lock", "/etc/subgid-", "/etc/passwd-", "/etc/.pwd.lock",
	"/var/lib/portables/x.raw", "/etc/portables/x.raw", "/var/lib/machines/x.raw", "/var/lib/extensions/x.raw",
	"/var/lib/extensions.mutable/usr/bin/x", "/var/lib/confexts/x.raw", "/var/lib/confexts.mutable/x", "/etc/extensions/x.raw",
	"/etc/confexts/x.raw", "/etc/NetworkManager/VPN/nm-evil-service.name", "/etc/NetworkManager/dnsmasq.d/x.conf",
	"/etc/NetworkManager/dnsmasq-shared.d/x.conf", "/etc/pki/tls/fips_local.cnf", "/etc/pki/tls/openssl.cnf",
	"/etc/pki/tls/openssl.d/x.cnf", "/etc/crypto-policies/local.d/opensslcnf-x.config", "/var/lock/x",
	"/etc/man_db.conf", "/etc/libuser.conf", "/etc/sos/extras.d/x", "/etc/fuse.conf", "/etc/containers/toolbox.conf",
	"/var/lib/gssproxy/clients/0.keytab",
	// The readers, once more: each already denied, kept here so that it stays so.
	"/etc/containers/containers.conf.d/x.conf", "/etc/crio/crio.conf.d/99-hooks", "/etc/modprobe.d/x.conf",
	"/etc/systemd/system-generators/x", "/etc/systemd/system-environment-generators/x", "/etc/binfmt.d/x.conf",
	"/etc/ld.so.conf.d/x.conf", "/etc/security/limits.d/x.conf", "/etc/pam.d/sudo", "/etc/sudoers.d/x",
	"/var/spool/cron/core", "/etc/cron.daily/x", "/etc/cron.hourly/x", "/etc/udev/rules.d/x.rules", "/etc/udev/hwdb.d/x.hwdb",
	"/etc/tmpfiles.d/x.conf", "/etc/sysctl.d/x.conf", "/etc/environment", "/etc/profile.d/x.sh",
	"/etc/NetworkManager/dispatcher.d/pre-up.d/x", "/etc/NetworkManager/dispatcher.d/no-wait.d/x", "/etc/kernel/install.d/x.install",
}

// round7aPaths are what the round-7a adversary wrote under a ceiling of /etc/ and /var/ (F3), and the
// classes they point at: terminfo (tput init, tset and reset run iprog), shell-sourced configuration
// of root-run scripts, programs' plugin and module paths, boot-time and firmware configuration,
// container runtimes' binaries, operators' host state, DNSSEC trust and the node's identity; each
// line names a reader, written from the readers' documentation, not from the table.
// round9MCOPaths are files the machine-config operator's own code reads as root that no row
// covered (round 9, units/04): the MCD's kernel-argument tuning file (UpdateTuningArgs runs
// rpm-ostree kargs for each line), the MTU migration's files sourced as shell by mtu-migration.sh
// and its NetworkManager dispatcher, the first boot's record, the internal release image
// registry's, and the two-node-with-fencing and on-prem masters' root daemons (pacemaker's alert
// scripts, pcsd, corosync, haproxy).
var round9MCOPaths = []string{
	"/etc/pivot/kernel-args", "/etc/cno/mtu-migration/config", "/etc/cno/mtu-migration/mtu/br-ex",
	"/etc/.ignition-result.json", "/etc/iri-registry/config.yml", "/var/lib/iri-registry/docker/x",
	"/etc/haproxy/haproxy.cfg", "/var/lib/haproxy/run/haproxy.sock", "/var/lib/pacemaker/alerts/tnf-taint-alert.sh",
	"/var/lib/pcsd/known-hosts", "/etc/corosync/corosync.conf", "/var/lib/corosync/x",
	// The MCD's revert unit's inputs: the MachineConfig it applies at boot and its proxy environment.
	"/etc/mco/machineconfig-revert.json", "/etc/mco/proxy.env.backup",
}

var round7aPaths = []string{
	"/etc/terminfo/x/xterm-256color", "/etc/terminfo/78/xterm", "/etc/termcap", "/root/.terminfo/x/xterm", "/var/roothome/.terminfo/x/xterm",
	"/etc/e2scrub.conf", "/etc/kdump.conf", "/etc/kdump/post.d/x", "/etc/sysconfig/kdump", "/etc/sysconfig/irqbalance", "/etc/irqbalance.env",
	"/etc/sysstat/sysstat", "/etc/login.defs",
	"/var/lib/ocp-tuned/image.env", "/var/lib/tuned/save.pickle", "/etc/tuned/x/tuned.conf",
	"/etc/kata-containers/configuration.toml", "/etc/nvidia-container-runtime/config.toml", "/etc/nvidia-container-toolkit/x", "/etc/nri/conf.d/x",
	"/etc/zipl.conf", "/etc/rpm-ostree/origin.d/x.yaml", "/etc/keys/ima/x.der", "/etc/hwdb.d/x.hwdb", "/etc/gcrypt/fips_enabled",
	"/var/lib/fwupd/remotes.d/x.conf", "/var/lib/fwupd/pki/x", "/etc/usbguard/rules.conf", "/etc/usbguard/IPCAccessControl.d/x",
	"/etc/ovnk/extra_bridge", "/etc/ovnk/default_bridge", "/etc/ovn/x", "/etc/wireguard/wg0.conf", "/etc/wpa_supplicant/wpa_supplicant.conf",
	"/etc/pkcs11/modules/x.module", "/etc/opensc.conf", "/etc/gss/mech.d/x.conf", "/etc/sasl2/x.conf", "/etc/sudo.conf",
	"/etc/request-key.conf", "/etc/request-key.d/x.conf", "/etc/crypto-policies/back-ends/x", "/etc/kernel/postinst.d/x",
	"/etc/mdadm.conf", "/etc/smartmontools/smartd.conf", "/etc/dnsmasq.d/x", "/etc/dbus-1/system.d/x.conf", "/etc/tpm2-tss/fapi-config.json",
	"/etc/mcelog/mcelog.conf", "/etc/mdevctl.d/scripts.d/callouts/x", "/etc/watchdog.conf", "/etc/auto.master", "/etc/rsyncd.conf",
	"/etc/zfcp.conf", "/etc/dasd.conf", "/etc/zkey/x", "/etc/fcoe/config", "/var/lib/sriov/sriov-network-config-daemon", "/etc/sriov-operator/x",
	"/var/lib/private/x", "/var/cache/private/x", "/var/cache/ldconfig/aux-cache", "/var/kerberos/krb5/user/0/client.keytab",
	"/var/lib/ipa-client/sysrestore/x", "/var/db/sudo/lectured/root", "/etc/kshrc", "/etc/bash_completion", "/etc/toprc", "/etc/topdefaultrc",
	"/etc/pip.conf", "/etc/gitconfig", "/etc/tmux.conf", "/etc/screenrc",
	"/etc/dnssec-trust-anchors.d/root.positive", "/etc/trusted-key.key", "/etc/gai.conf",
	"/etc/hostname", "/etc/machine-id",
}

// A configMapCeiling prefix outside /etc and /var is refused at load (round-4b F1: exact ceilings for
// /.autorelabel and /system-update loaded, and the payload wrote both); so is a node policy rule for a
// boot marker (the markers are denied rows) and for the code-running parts of node-policy-only trees
// (round-4b F7: /etc/NetworkManager/VPN/, /etc/pki/tls/fips_local.cnf loaded).
func TestCeilingStaysInEtcAndVar(t *testing.T) {
	for _, prefix := range []string{"/.autorelabel", "/system-update", "/forcefsck", "/fastboot", "/forcequotacheck", "/.readahead",
		"/srv/", "/mnt/x/", "/tmp/", "/media/", "/afs/", "/etcx/", "/variable/", "/x", "/bin/", "/lib64/", "/usr/local/"} {
		_, err := allowlist.ParsePolicy([]byte(fmt.Sprintf("configMapCeiling:\n- {prefix: %s, actions: [None]}\n", prefix)))
		if assert.Error(t, err, prefix) {
			assert.Regexp(t, `configMapCeiling\[0\]: prefix \S+ is (outside /etc and /var|under denied prefix)`, err.Error(), prefix)
		}
	}
	for _, prefix := range []string{"/etc/", "/var/", "/etc", "/var", "/etc/myapp/", "/var/lib/myapp/state.json"} {
		_, err := allowlist.ParsePolicy([]byte(fmt.Sprintf("configMapCeiling:\n- {prefix: %s, actions: [None]}\n", prefix)))
		assert.NoError(t, err, prefix)
	}
	for _, p := range []string{"/.autorelabel", "/system-update", "/forcefsck", "/fastboot", "/etc/system-update", "/etc/initrd-release",
		"/etc/NetworkManager/VPN/", "/etc/NetworkManager/VPN/x.name", "/etc/pki/tls/fips_local.cnf", "/etc/cdi/", "/etc/nologin",
		"/etc/passwd.lock", "/var/lib/portables/", "/etc/NetworkManager/dnsmasq.d/x.conf",
		"/etc/locale.conf", "/etc/e2fsck.conf", "/etc/blkid.conf", "/etc/kubernetes/apiserver-url.env"} {
		_, err := allowlist.ParsePolicy([]byte(fmt.Sprintf("paths:\n- {path: %s, action: None}\n", p)))
		if assert.Error(t, err, p) {
			assert.Contains(t, err.Error(), "denied prefix", p)
		}
		_, err = allowlist.ParsePolicy([]byte(fmt.Sprintf("nodeDisruptionPolicy:\n  files:\n  - {path: %s, actions: [{type: None}]}\n", strings.TrimSuffix(p, "/"))))
		if assert.Error(t, err, p) {
			assert.Contains(t, err.Error(), "denied prefix", p)
		}
	}
	// The node policy still names the node-policy-only files the second pass added.
	for _, p := range []string{"/etc/crictl.yaml", "/etc/adjtime", "/var/lib/chrony/drift", "/etc/localtime"} {
		pol := mustPolicy(t, fmt.Sprintf("paths:\n- {path: %s, action: None}\n", p))
		assert.True(t, pol.Resolve(p, nil).Allowed, p)
	}
}
