package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Adversary round 19 (c/01, c/02): a secret the judge knows by its name is reached through its
// directory or a pattern as well (the whereabouts kubeconfig under /etc/kubernetes/cni, a
// registry's client.key), and libreswan's RHEL 9 NSS database is a secret. The unit's own patterns,
// a single file's copy and the programs that open nothing stay accepted.
func TestSecretsByNameAreReachedByNoDirectoryOrPattern(t *testing.T) {
	refused := []struct{ line, why string }{
		// c/01, as found
		{`ExecStart=/bin/tar -cf /tmp/cni.tar /etc/kubernetes/cni`, "a directory above /etc/kubernetes/**"},
		{`ExecStart=/bin/cat /etc/kubernetes/cni/net.d/whereabouts.d/*`, "may match /etc/kubernetes/**"},
		{`ExecStart=/bin/grep -r server /etc/kubernetes/cni`, "a directory above"},
		// the variants: the other trees, deeper names, patterns outside any listed tree
		{`ExecStart=/bin/cat /etc/kubernetes/cni/net.d/multus.d/multus.kubeconfig`, "/etc/kubernetes/**/*kubeconfig*"},
		{`ExecStart=/usr/bin/rsync -r --no-perms /etc/containers/certs.d/ /tmp/c/`, "a directory above /etc/containers/certs.d/**"},
		{`ExecStart=/usr/bin/cp -rL /etc/docker/certs.d /tmp/d`, "a directory above /etc/docker/certs.d/**"},
		{`ExecStart=/usr/bin/cp -R -L /etc/pki/ca-trust /tmp/d`, "a directory above /etc/pki/**"},
		{`ExecStart=/usr/bin/find /etc/cni -type f -exec cat {} +`, "a directory above /etc/cni"},
		{`ExecStart=/bin/sh -c 'cat /etc/containers/certs.d/*/client.*'`, "a secret of the node"},
		{`ExecStart=/bin/cat /etc/myother/tls.ke?`, "may match"},
		{`ExecStart=/bin/cat /opt/app/*`, "may match"},
		{`ExecStart=/bin/sh -c 'cat /etc/other/*.conf'`, "may match"},
		{`ExecStart=/bin/sh -c 'cat /srv/[a-z]*'`, "may match"},
		{`ExecStart=/bin/cat /opt/*/tls.key`, "a private key or credential by its name"},
		{`ExecStart=/bin/sh -c 'cd /etc/kubernetes/cni/net.d/whereabouts.d && cat *'`, "a secret of the node"},
		// c/02
		{`ExecStart=/bin/cp /var/lib/ipsec/nss/key4.db /tmp/k4.db`, "/var/lib/ipsec/nss"},
		{`ExecStart=/bin/tar -cf /tmp/nss.tar /var/lib/ipsec`, "a directory above /var/lib/ipsec/nss"},
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.line)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), c.why, c.line)
			assert.Contains(t, err.Error(), "a secret of the node", c.line)
		}
		// The node's own line is the node's.
		if own := strictUnit(t, false, c.line); own != nil {
			assert.NotContains(t, own.Error(), "a secret of the node", c.line)
		}
	}
	accepted := []string{
		`ExecStart=/usr/bin/cp /etc/kubernetes/kubelet-ca.crt /run/myapp/ca.crt`,
		`ExecStart=/usr/bin/sha256sum /etc/kubernetes/kubelet-ca.crt`,
		`ExecStart=/bin/sh -c 'for f in /etc/myapp/*.conf; do cat "$f"; done'`,
		`ExecStart=/bin/sh -c 'cat /run/myapp/*.conf > /run/myapp/all'`,
		`ExecStart=/usr/bin/find /etc/myapp -name '*.key' -exec /usr/bin/grep -l x {} +`,
		`ExecStart=/usr/bin/rm -f /tmp/myapp-*`,
		`ExecStart=/bin/sh -c 'ls -l /etc/kubernetes/cni/net.d/*'`,
		`ExecStart=/bin/cat /usr/share/myapp/*`,
		`ExecStart=/bin/cat /etc/kubernetes/cni/net.d/00-multus.conf`,
	}
	for _, l := range accepted {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
	// The manager reads EnvironmentFile= for the unit: a file the name says is secret, too.
	env := unitOfLines(t, false, `ExecStart=/bin/echo ok`)
	env.EnvironmentFiles = []string{"/etc/myapp/db-password.env"}
	if err := allowlist.JudgeUnit(env); assert.Error(t, err) {
		assert.Contains(t, err.Error(), "EnvironmentFile=/etc/myapp/db-password.env: names /etc/myapp/db-password.env, a secret of the node")
	}
}

// Adversary round 19 (c/03): GODEBUG in a changed line (a kubelet or CRI-O drop-in's Environment=,
// an env wrapper) may set only the Go runtime's tuning and tracing switches: x509sha1, tlsrsakex,
// tls3des, tls10server and every switch Go adds later change what the daemons that hold the node's
// trust accept. The MCO's own drop-in value stays accepted.
func TestGODEBUGSetsOnlyTheRuntimesTuning(t *testing.T) {
	for _, v := range []string{"x509sha1=1", "madvdontneed=1,tlsrsakex=1", "tls3des=1", "tls10server=1",
		"x509negativeserial=1", "netdns=go", "http2client=0", "tlsunsafeekm=1", "fips140=off", "X509SHA1=1"} {
		err := strictUnit(t, true, "Environment=GODEBUG="+v, `ExecStart=/usr/bin/sleep 1`)
		if assert.Error(t, err, v) {
			assert.Contains(t, err.Error(), "a Go switch", v)
		}
		err = strictUnit(t, true, `ExecStart=/usr/bin/env GODEBUG=`+v+` /usr/bin/sleep 1`)
		assert.Error(t, err, "env "+v)
	}
	for _, v := range []string{"x509ignoreCN=0,madvdontneed=1", "madvdontneed=0", "gctrace=1,schedtrace=1000", ""} {
		assert.NoError(t, strictUnit(t, true, "Environment=GODEBUG="+v, `ExecStart=/usr/bin/sleep 1`), v)
	}
}
