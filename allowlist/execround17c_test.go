package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary round 17 c/01: tar's -I (a compressor: sh reads the archive as a script) and -F (an info
// script run through sh) inside a cluster of short options, or in tar's old-style first word
// (whose valued letters take the next words in turn), are read as the options they are; a letter
// that is a valued option's value (-cfIsh names the archive Ish) is not.
func TestTarRunnerLettersInClustersAreRefused(t *testing.T) {
	for _, line := range []string{
		`ExecStartPre=/usr/bin/tar -cIsh -f /tmp/x.tar /etc/iri-registry/registry.conf`,
		`ExecStartPre=/usr/bin/tar -vcIsh -f /tmp/x.tar /etc/iri-registry`,
		`ExecStartPre=/usr/bin/tar -cFsh -f /tmp/x.tar /etc/iri-registry`,
		`ExecStartPre=/usr/bin/tar -cvI sh -f /tmp/x.tar /etc/iri-registry`,
		`ExecStartPre=/usr/bin/tar cIf sh /tmp/x.tar /etc/iri-registry`,
		`ExecStartPre=/usr/bin/tar cMLFf 10 /usr/sbin/reboot /tmp/x.tar /usr/share/doc`,
	} {
		for _, check := range []func() error{
			func() error { return strictUnit(t, true, line) },
			func() error { return ownUnit(t, line) },
		} {
			err := check()
			if assert.Error(t, err, line) {
				assert.Contains(t, err.Error(), "runs a command or reads code", line)
			}
		}
	}
	for _, line := range []string{
		`ExecStartPre=/usr/bin/tar -czf /var/lib/myapp/Ish.tar.gz /var/lib/myapp/data`,
		`ExecStartPre=/usr/bin/tar -cfIsh /var/lib/myapp/data`,
		`ExecStartPre=/usr/bin/tar czf /var/lib/myapp/F.tgz /var/lib/myapp/data`,
		`ExecStartPre=/usr/bin/tar -xzf /var/lib/myapp/a.tgz -C /var/lib/myapp/out`,
	} {
		err := ownUnit(t, line)
		if err != nil {
			assert.NotContains(t, err.Error(), "runs a command or reads code", line)
		}
	}
	// Clusters of the other runners that cluster: rsync -avze, curl -sK, wget -qe, ssh -vo.
	for _, line := range []string{
		`ExecStartPre=/usr/bin/rsync -avze sh /var/lib/a/ /var/lib/b/`,
		`ExecStartPre=/usr/bin/curl -sK /etc/iri-registry/x https://x`,
		`ExecStartPre=/usr/bin/wget -qe use_proxy=on https://x`,
		`ExecStartPre=/usr/bin/ssh -vo ProxyCommand=sh host`,
		`ExecStartPre=/usr/bin/zip -rT /var/lib/a.zip /var/lib/a`,
	} {
		err := ownUnit(t, line)
		if assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), "runs a command or reads code", line)
		}
	}
}
