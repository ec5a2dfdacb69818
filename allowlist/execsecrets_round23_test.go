package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r23 a/01, a/06, a/07: the node's secrets under names the list lacked: a copy of a
// listed file beside it (proxy.env.backup), the MCO's other node files, the links RHEL ships in /usr
// to the entitlement keys, the CSI volumes' global mounts, checkpoints and the users' homes. Each is
// refused; honest lines naming look-alike paths stay accepted.
func TestRound23SecretsUnderOtherNames(t *testing.T) {
	refused := []struct {
		line string
		why  string
	}{
		{`ExecStart=/bin/cat /etc/mco/proxy.env.backup`, "/etc/mco"},
		{`ExecStart=/bin/cat /etc/mco/machineconfig-revert.json`, "/etc/mco"},
		{`ExecStart=/bin/cat /etc/mcd-currentconfig.json.mcdorig`, "/etc/mcd-currentconfig.json"},
		{`ExecStart=/bin/cat /etc/krb5.keytab~`, "/etc/krb5.keytab"},
		{`ExecStart=/bin/tar -cf /tmp/x /var/lib/etcd-backup`, "/var/lib/etcd"},
		{`ExecStart=/bin/sh -c 'cat /etc/mco/proxy.env.b*'`, "/etc/mco"},
		{`ExecStart=/bin/cat /usr/share/rhel/secrets/etc-pki-entitlement/entitlement-key.pem`, "/usr/share/rhel/secrets"},
		{`ExecStart=/bin/cp -rL /usr/share/rhel/secrets /tmp/s`, "/usr/share/rhel/secrets"},
		{`ExecStart=/bin/cat /etc/pki/entitlement/123.pem`, "/etc/pki/entitlement"},
		{`ExecStart=/bin/tar -cf /tmp/x /var/lib/kubelet/plugins/kubernetes.io/csi`, "/var/lib/kubelet/plugins"},
		{`ExecStart=/bin/tar -cf /tmp/x /var/lib/kubelet/checkpoints`, "/var/lib/kubelet/checkpoints"},
		{`ExecStart=/bin/cat /var/home/core/.kube/config`, "/var/home"},
		{`ExecStart=/bin/cat /home/core/.docker/config.json`, "/home"},
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.line)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), c.why, c.line)
		}
	}
	for _, l := range []string{
		`ExecStart=/bin/cat /etc/myapp/proxy.env.backup`,
		`ExecStart=/bin/sh -c 'cat /etc/myapp/*.conf'`,
		`ExecStart=/bin/cat /var/lib/myapp/etcd-backup`,
		`ExecStart=/usr/bin/find /etc/myapp -name '*.conf' -exec /usr/bin/grep -l x {} +`,
		`ExecStart=/bin/cat /usr/share/myapp/secrets.txt`,
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}
