package allowlist_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// round11Paths (units 06): criu's configuration (/etc/criu/default.conf, runc.conf: action-script
// runs a program as root when crio, runc or crun checkpoint or restore) was reachable under a wide
// ceiling; so were pacemaker's authkey and etcd's database on masters. The rest are the root-run
// readers on RHCOS the audit's pass for round 11 checked again, each already a row, kept here so that
// it stays so.
var round11Paths = []string{
	// Fixed in round 11.
	"/etc/criu/default.conf", "/etc/criu/runc.conf", "/etc/criu/crun.conf", "/etc/pacemaker/authkey",
	"/var/lib/etcd/member/snap/db", "/var/lib/etcd/member/wal/0.wal",
	// Checked again: already rows.
	"/etc/containers/oci/hooks.d/x.json", "/etc/crio/crio.conf.d/99-x.conf", "/etc/containers/registries.d/default.yaml",
	"/etc/containers/registries.d/x.yaml", "/etc/sudoers.d/x", "/etc/security/limits.d/x.conf", "/etc/security/pam_env.conf",
	"/etc/pam.d/sshd", "/etc/ld.so.conf.d/x.conf", "/etc/profile.d/x.sh", "/etc/environment", "/etc/environment.d/x.conf",
	"/etc/udev/rules.d/x.rules", "/etc/udev/udev.conf", "/etc/NetworkManager/dispatcher.d/x", "/etc/NetworkManager/dispatcher.d/pre-up.d/x",
	"/etc/cron.d/x", "/etc/crontab", "/etc/cron.daily/x", "/etc/systemd/system/x.service", "/etc/systemd/system/crio.service.d/x.conf",
	"/etc/systemd/user/x.service", "/etc/systemd/system.conf.d/x.conf", "/etc/systemd/zram-generator.conf", "/etc/systemd/journald.conf",
	"/etc/sysconfig/crio", "/etc/sysconfig/kubelet", "/etc/sysconfig/openvswitch", "/etc/sysconfig/network-scripts/ifcfg-x",
	"/etc/modprobe.d/x.conf", "/etc/kubernetes/kubelet.conf", "/etc/kubernetes/apiserver-url.env", "/etc/kubernetes/credential-providers/x.yaml",
	"/etc/containers/containers.conf", "/etc/containers/mounts.conf", "/etc/containers/storage.conf", "/etc/containers/policy.json",
	"/etc/containers/networks/x.json", "/etc/openvswitch/default.conf", "/etc/tmpfiles.d/x.conf", "/etc/sysctl.d/x.conf",
	"/etc/binfmt.d/x.conf", "/etc/modules-load.d/x.conf", "/etc/sysusers.d/x.conf", "/etc/depmod.d/x.conf", "/etc/default/useradd",
	"/var/lib/pacemaker/alerts/x.sh", "/etc/corosync/authkey", "/etc/crun/x", "/etc/kata-containers/x",
}

// Round 11 (units 06): under a ceiling of all of /etc/ and /var/, each is refused, the entry for
// the file ignored with a warning naming the path and the row.
func TestWideCeilingRefusesRound11Paths(t *testing.T) {
	pol := mustPolicy(t, wideCeiling)
	for _, p := range round11Paths {
		for _, entry := range []string{p, p[:strings.LastIndex(p, "/")+1]} {
			rules := mustRules(t, fmt.Sprintf(`[{"path": %q, "action": "None"}]`, entry))
			extra, warnings := pol.Extra(rules)
			d := pol.Resolve(p, extra)
			if d.Source == "policy" {
				continue // the node's own rule decides (the built-in policy.json rule), not the ConfigMap
			}
			assert.False(t, d.Allowed, "%s through %s", p, entry)
			assert.False(t, pol.Resolve(p, rules).Allowed, "%s unfiltered", p)
			if entry == p && assert.Len(t, warnings, 1, p) {
				assert.Contains(t, warnings[0], p, "the warning names the path")
				assert.Regexp(t, `under denied prefix|only the node policy's own rules may name`, warnings[0], p)
			}
		}
	}
	for _, p := range []string{"/etc/criu/default.conf", "/etc/criu/runc.conf"} {
		_, warnings := pol.Extra(mustRules(t, fmt.Sprintf(`[{"path": %q, "action": "None"}]`, p)))
		if assert.Len(t, warnings, 1, p) {
			assert.Contains(t, warnings[0], "under denied prefix /etc/criu", p)
		}
	}
}
