package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary round 13 (e/01, e/06): the node's secrets by other names. Multus's and OVN-Kubernetes'
// per-node certificate pairs (a certificate manager's <prefix>-current.pem holds the key),
// NetworkManager's, iSCSI's, chrony's, sssd's and wpa_supplicant's credentials, and CRI-O's
// container storage, whose per-container specs hold the pods' Secret-sourced environment.
func TestRound13NodeSecretsByOtherNames(t *testing.T) {
	refused := []struct{ line, why string }{
		// e/01
		{`ExecStart=/bin/sh -c 'cat /etc/cni/multus/certs/multus-client-current.pem > /tmp/iri-copy; chmod 0644 /tmp/iri-copy'`, "/etc/cni/multus/certs"},
		{`ExecStart=/bin/cat /etc/cni/multus/certs/*`, "/etc/cni/multus/certs"},
		{`ExecStart=/bin/cat /var/lib/ovn-ic/etc/ovnkube-node-certs/ovnkube-client-current.pem`, "/var/lib/ovn-ic/etc"},
		{`ExecStart=/bin/cat /etc/ovn/ovnkube-node-certs/ovnkube-client-current.pem`, "/etc/ovn"},
		{`ExecStart=/bin/cat /var/lib/myapp/certs/myapp-client-current.pem`, "a private key or credential by its name"},
		{`ExecStart=/bin/cat /etc/NetworkManager/system-connections/bond0.nmconnection`, "/etc/NetworkManager/system-connections"},
		{`ExecStart=/bin/sh -c 'grep -h psk= /etc/NetworkManager/system-connections/*'`, "/etc/NetworkManager/system-connections"},
		{`ExecStart=/bin/cat /run/NetworkManager/system-connections/x.nmconnection`, "/run/NetworkManager/system-connections"},
		{`ExecStart=/bin/cat /var/lib/NetworkManager/secret_key`, "/var/lib/NetworkManager"},
		{`ExecStart=/bin/cat /var/lib/iscsi/nodes/iqn.2026-01.x/10.0.0.1,3260,1/default`, "/var/lib/iscsi"},
		{`ExecStart=/usr/bin/grep -q ^node.session.auth.password /etc/iscsi/iscsid.conf`, "/etc/iscsi"},
		{`ExecStart=/bin/cat /etc/chrony.keys`, "/etc/chrony.keys"},
		{`ExecStart=/bin/cat /etc/sssd/sssd.conf`, "/etc/sssd"},
		{`ExecStart=/bin/cat /etc/wpa_supplicant/wpa_supplicant.conf`, "/etc/wpa_supplicant"},
		{`ExecStart=/bin/cat /etc/krb5.keytab`, "/etc/krb5.keytab"},
		{`ExecStart=/bin/cat /etc/ipsec.secrets`, "/etc/ipsec.secrets"},
		{`ExecStart=/bin/sh -c 'cd /etc/cni/multus && cat certs/multus-client-current.pem'`, "/etc/cni/multus/certs"},
		{`ExecStart=/usr/bin/grep -r BEGIN /etc/cni/multus`, "a directory above /etc/cni/multus/certs"},
		// e/06
		{`ExecStart=/bin/sh -c 'cat /var/lib/containers/storage/overlay-containers/*/userdata/config.json > /tmp/iri-env; chmod 0644 /tmp/iri-env'`, "/var/lib/containers/storage"},
		{`ExecStart=/bin/cat /run/containers/storage/overlay-containers/0f1e/userdata/config.json`, "/run/containers/storage"},
		{`ExecStart=/bin/cat /var/run/containers/storage/overlay-containers/0f1e/userdata/config.json`, "/var/run/containers/storage"},
		// Through the /var/run link, with no row of its own: every path is folded to /run first.
		{`ExecStart=/bin/cat /var/run/NetworkManager/system-connections/eth0.nmconnection`, "/run/NetworkManager/system-connections"},
		{`ExecStart=/bin/sh -c 'cat /var/r?n/containers/storage/overlay-containers/*/userdata/config.json'`, "/run/containers/storage"},
		{`ExecStart=/bin/sh -c 'cd /var/run && cat containers/storage/overlay-containers/0f1e/userdata/config.json'`, "/run/containers/storage"},
		{`ExecStart=/bin/sh -c 'grep -h x /var/lib/containers/stor*/overlay-containers/*/userdata/config.json'`, "/var/lib/containers/storage"},
		{`ExecStart=/usr/bin/grep -r x /var/lib/containers`, "a directory above /var/lib/containers/storage"},
		{`ExecStart=/bin/cat /var/log/pods/ns_pod_uid/c/0.log`, "/var/log/pods"},
		{`ExecStart=/bin/cat /var/log/containers/pod_ns_c-id.log`, "/var/log/containers"},
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.line)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), c.why, c.line)
			assert.Contains(t, err.Error(), "a secret of the node", c.line)
		}
	}
	accepted := []string{
		`ExecStart=/bin/cat /etc/cni/net.d/00-multus.conf`,
		`ExecStart=/bin/cat /etc/NetworkManager/conf.d/99-myapp.conf`,
		`ExecStart=/bin/cat /etc/chrony.conf`,
		`ExecStart=/bin/cat /etc/myapp/ca-current.crt`,
	}
	for _, l := range accepted {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}

// Adversary round 13 (e/07): the node's disk holds every secret, and no name in the line is one. A
// changed line names no device but the harmless few, however spelled.
func TestRound13ChangedLinesNameNoDevice(t *testing.T) {
	refused := []string{
		`ExecStart=/bin/sh -c 'grep -a -A1 -e root:.6 -e BEGIN -e auths /dev/loop0 > /tmp/iri-disk; chmod 0644 /tmp/iri-disk'`,
		`ExecStart=/bin/grep -a -m1 ^root: /dev/disk/by-label/root`,
		`ExecStart=/bin/cat /dev/vda`,
		`ExecStart=/bin/cat /dev/nvme0n1`,
		`ExecStart=/bin/grep -q -a ^root:.6.GUESS /dev/sda4`,
		`ExecStart=/bin/cat /dev/mapper/root`,
		`ExecStart=/bin/cat /dev/dm-0`,
		`ExecStart=/bin/cat /dev/md127`,
		`ExecStart=/bin/cat /dev/disk/by-uuid/0f1e2d3c`,
		`ExecStart=/bin/cat /dev/disk/by-partlabel/root`,
		`ExecStart=/bin/sh -c 'cat < /dev/disk/by-label/root > /var/tmp/x'`,
		// spellings
		`ExecStart=/bin/sh -c 'cat /dev/sd*'`,
		`ExecStart=/bin/sh -c 'cat /dev/v?a'`,
		`ExecStart=/bin/sh -c 'cat /dev/nul?'`,
		`ExecStart=/bin/sh -c 'cat /d*/vda'`,
		`ExecStart=/bin/sh -c 'cd /dev && cat vda'`,
		`ExecStart=/bin/sh -c 'cd /dev/disk/by-label; cat root'`,
		`ExecStart=/usr/bin/env -C /dev cat sda`,
		"Environment=D=/dev/vda\nExecStart=/bin/cat ${D}",
		`ExecStart=/bin/sh -c 'cat /dev/{null,vda}'`,
		`ExecStart=/bin/cat //dev/./vda`,
		`ExecStart=/bin/sh -c 'cat "/dev/v$(echo d)a"'`,
		`ExecStart=/usr/bin/grep -r root: /dev`,
	}
	for _, l := range refused {
		err := strictUnit(t, true, strings.Split(l, "\n")...)
		if assert.Error(t, err, l) {
			assert.Contains(t, err.Error(), "a device of the node", l)
			assert.Contains(t, err.Error(), "a secret of the node", l)
		}
	}
	// Refused before this rule too (a device as dd's "write", /dev/mem and /proc/kcore reached,
	// find in /dev, a program the judge does not model): refused still.
	for _, l := range []string{
		`ExecStart=/usr/bin/dd if=/dev/vda of=/tmp/x bs=1M count=1`,
		`ExecStart=/usr/bin/head -c 1M /dev/mem`,
		`ExecStart=/bin/cat /dev/kmem`,
		`ExecStart=/bin/cat /dev/port`,
		`ExecStart=/bin/cat /proc/kcore`,
		`ExecStart=/bin/cat /sys/firmware/efi/efivars/x`,
		`ExecStart=/usr/bin/strings /dev/zram0`,
		`ExecStart=/usr/bin/find /dev -name vda -exec cat {} +`,
		`ExecStart=/bin/sh -c 'cat /dev/zram0'`,
		`ExecStart=/bin/sh -c 'cat /dev/loop7'`,
		`ExecStart=/bin/sh -c 'tar -cf /tmp/x.tar /dev/disk/by-label/root'`,
	} {
		assert.Error(t, strictUnit(t, true, l), l)
	}
	accepted := []string{
		`ExecStart=/bin/sh -c 'echo x > /dev/null 2>&1'`,
		`ExecStart=/bin/sh -c 'cat /etc/myapp/x > /dev/null'`,
		`ExecStart=/usr/bin/head -c 16 /dev/urandom`,
		`ExecStart=/usr/bin/dd if=/dev/zero of=/var/lib/myapp/blob bs=1k count=1`,
		`ExecStart=/bin/sh -c 'cat /dev/stdin > /var/lib/myapp/in < /etc/myapp/x'`,
		`ExecStart=/bin/sh -c 'head -c 8 /dev/random | tee /var/lib/myapp/seed > /dev/null'`,
		`ExecStart=/bin/sh -c 'echo hi > /dev/stderr'`,
		`ExecStart=/bin/sh -c 'read -r x < /dev/fd/0 || true'`,
		`ExecStart=/usr/bin/ls -l /dev`,
	}
	for _, l := range accepted {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}

// Adversary round 13 (e/05): a changed unit's environment may not move where a root program reads
// its configuration or whom it trusts: CONTAINERS_CONF_OVERRIDE made the unit's own podman load the
// payload's containers.conf, whose hooks_dir ran the payload's hook as root. Families by prefix,
// suffix and word, in Environment=, env NAME=V and a script's export; the inert neighbours pass.
func TestRound13EnvironmentMovesNoConfiguration(t *testing.T) {
	const SL = "ExecStart=/usr/bin/sleep infinity"
	for _, a := range []string{
		"CONTAINERS_CONF_OVERRIDE=/etc/iri-registry/override.conf", "CONTAINERS_CONF_MODULES=/etc/iri-registry/m.conf",
		"CONTAINERS_HELPER_BINARY_DIR=/etc/iri-registry/bin", "CONTAINERS_STORAGE_CONF=/etc/iri-registry/s.conf",
		"CONTAINERS_REGISTRIES_CONF=/etc/iri-registry/r.conf", "REGISTRIES_CONFIG_PATH=/etc/iri-registry/r.conf",
		"STORAGE_OPTS=overlay.mount_program=/etc/iri-registry/m", "STORAGE_DRIVER=vfs", "CONTAINER_HOST=unix:///run/x.sock",
		"CONTAINER_CONNECTION=x", "DOCKER_HOST=tcp://10.0.0.1:2375", "REGISTRY_AUTH_FILE=/etc/iri-registry/auth.json",
		"PODMAN_CONNECTIONS_CONF=/etc/iri-registry/c.json", "SSL_CERT_FILE=/etc/iri-registry/ca.pem", "SSL_CERT_DIR=/etc/iri-registry",
		"CURL_CA_BUNDLE=/etc/iri-registry/ca.pem", "REQUESTS_CA_BUNDLE=/etc/iri-registry/ca.pem", "NODE_EXTRA_CA_CERTS=/etc/iri-registry/ca.pem",
		"GIT_SSL_CAINFO=/etc/iri-registry/ca.pem", "XDG_CONFIG_HOME=/etc/iri-registry", "XDG_CONFIG_DIRS=/etc/iri-registry",
		"XDG_DATA_DIRS=/etc/iri-registry", "XDG_RUNTIME_DIR=/etc/iri-registry", "OPENSSL_CONF=/etc/iri-registry/o.cnf",
		"OPENSSL_MODULES=/etc/iri-registry", "GCONV_PATH=/etc/iri-registry", "LOCPATH=/etc/iri-registry", "NLSPATH=/etc/iri-registry/%N",
		"TZDIR=/etc/iri-registry", "HOSTALIASES=/etc/iri-registry/h", "RES_OPTIONS=ndots:15", "LOCALDOMAIN=evil.example",
		"http_proxy=http://10.0.0.1:3128", "https_proxy=http://10.0.0.1:3128", "HTTPS_PROXY=http://10.0.0.1:3128",
		"NO_PROXY=*", "ALL_PROXY=socks5://10.0.0.1", "KUBECONFIG=/etc/iri-registry/kc", "DOCKER_CONFIG=/etc/iri-registry",
		"MYAPP_CONFIG=/etc/iri-registry/x", "SOME_CONF_FILE=/etc/iri-registry/x", "MYAPP_PLUGIN_PATH=/etc/iri-registry",
		"CONTAINERS_CONF_OVERRIDE=/usr/share/containers/containers.conf:/etc/iri-registry/o.conf",
	} {
		k, _, _ := strings.Cut(a, "=")
		for _, line := range []string{"Environment=" + a, `ExecStart=/usr/bin/env ` + a + ` /usr/bin/sleep 1`,
			`ExecStart=/bin/sh -c 'export ` + a + `; sleep 1'`} {
			lines := []string{line}
			if strings.HasPrefix(line, "Environment=") {
				lines = append(lines, SL)
			}
			err := strictUnit(t, true, lines...)
			if assert.Error(t, err, line) {
				assert.Contains(t, err.Error(), k, line)
			}
		}
	}
	for _, a := range []string{"HOME=/root", "GOMAXPROCS=2", "PODMAN_SYSTEMD_UNIT=%n", "MYAPP_MODE=fast",
		"GREETING=hello", "LANG=C.UTF-8", "TZ=UTC", "CONTAINERS_CONF=/usr/share/containers/containers.conf",
		"SSL_CERT_FILE=/usr/share/pki/ca-trust-source/ca-bundle.trust.p11-kit", "XDG_DATA_DIRS=/usr/share", "NO_PROXY="} {
		assert.NoError(t, strictUnit(t, true, "Environment="+a, SL), a)
	}
	// The MCO's iri-registry.service sets PODMAN_SYSTEMD_UNIT=%n: unchanged or changed, it stays.
	assert.NoError(t, strictUnit(t, false, "Environment=PODMAN_SYSTEMD_UNIT=%n", SL))
}

// The MCO's kubelet.service sets KUBELET_NODE_IP= and KUBELET_LOG_LEVEL=: no configuration moves.
func TestRound13KubeletEnvironmentStays(t *testing.T) {
	for _, a := range []string{"KUBELET_NODE_IP=0.0.0.0", "KUBELET_LOG_LEVEL=2", "KUBELET_PROVIDERID="} {
		assert.NoError(t, strictUnit(t, true, "Environment="+a, "ExecStart=/usr/bin/sleep infinity"), a)
	}
}
