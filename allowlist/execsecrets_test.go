package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Adversary round 12 (units/01, 02): a changed line names no secret of the node, whatever the
// program reads of it, however the path is spelled: the finding's copy into /tmp and its grep
// oracle, each reader, each spelling the judge resolves, and what cannot be seen at all (a quoted
// expansion, xargs's input). The node's own lines and the legitimate shapes stay accepted.
func TestChangedLinesNameNoSecretOfTheNode(t *testing.T) {
	refused := []struct {
		lines []string
		why   string
	}{
		// the findings
		{[]string{`ExecStart=/bin/sh -c "cat /etc/shadow > /tmp/iri-shadow-copy"`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/grep -q ^root: /etc/shadow`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/cat /var/lib/kubelet/pki/kubelet-client-current.pem`}, "/var/lib/kubelet/pki"},
		{[]string{`ExecStart=/bin/cat /var/lib/kubelet/kubeconfig`}, "/var/lib/kubelet/kubeconfig"},
		{[]string{`ExecStart=/bin/cat /etc/kubernetes/kubeconfig`}, "/etc/kubernetes/kubeconfig"},
		{[]string{`ExecStart=/bin/cp /var/lib/kubelet/config.json /tmp/x`}, "/var/lib/kubelet/config.json"},
		// each reader
		{[]string{`ExecStart=/usr/bin/head -c1 /etc/gshadow`}, "/etc/gshadow"},
		{[]string{`ExecStart=/usr/bin/tail -n1 /etc/shadow-`}, "/etc/shadow-"},
		{[]string{`ExecStart=/usr/bin/dd if=/etc/gshadow- of=/tmp/x`}, "/etc/gshadow-"},
		{[]string{`ExecStart=/bin/sh -c 'cat < /etc/security/opasswd'`}, "/etc/security/opasswd"},
		{[]string{`ExecStart=/bin/sh -c 'x=$(< /etc/shadow); echo ok'`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'cat <(cat /etc/shadow)'`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'while read l; do echo $l; done < /etc/shadow'`}, "/etc/shadow"},
		{[]string{`ExecStart=/usr/bin/sed -n 1p /etc/mco/internal-registry-pull-secret.json`}, "/etc/mco/internal-registry-pull-secret.json"},
		{[]string{`ExecStart=/usr/bin/awk '{print}' /etc/ssh/ssh_host_ed25519_key`}, "/etc/ssh/ssh_host_"},
		{[]string{`ExecStart=/usr/bin/grep -f/etc/shadow /etc/myapp/x`}, "/etc/shadow"},
		{[]string{`ExecStart=/usr/bin/touch -r /etc/shadow /run/myapp/stamp`}, "/etc/shadow"},
		{[]string{`ExecStart=/usr/bin/wc -c /etc/pki/tls/private/node.key`}, "/etc/pki/tls/private"},
		{[]string{`ExecStart=/bin/cat /etc/myapp/tls.key`}, "a private key or credential by its name"},
		{[]string{`ExecStart=/bin/sh -c 'echo $(cat /var/lib/kubelet/pods/x/volumes/kubernetes.io~projected/token)'`}, "/var/lib/kubelet/pods"},
		{[]string{`ExecStart=/bin/sh -c 'cat /root/.kube/config'`}, "/root"},
		{[]string{`ExecStart=/bin/sh -c 'cat /var/roothome/.bash_history'`}, "/root"},
		// spellings
		{[]string{`ExecStart=/bin/cat //etc/./shadow`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/cat /etc/shado?`}, "may match /etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'cat /etc/sha*'`}, "may match /etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'cat /e*c/gsha[d]ow'`}, "may match /etc/gshadow"},
		{[]string{`ExecStart=/bin/sh -c "cat /etc/{passwd,shadow}"`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'cat /e""tc/shadow'`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'cat /etc/sh\\adow'`}, "/etc/shadow"},
		{[]string{`ExecStart=/bin/sh -c 'cat /etc/kubernetes/*kube*'`}, "/etc/kubernetes/"},
		{[]string{`ExecStart=/bin/cat /proc/self/root/etc/shadow`}, "/proc"},
		{[]string{`ExecStart=/bin/cat /proc/1/root/etc/shadow`}, "/proc"},
		{[]string{`ExecStart=/bin/sh -c 'cat /sysroot/ostree/deploy/rhcos/var/lib/kubelet/kubeconfig'`}, "/sysroot"},
		{[]string{`ExecStart=/bin/sh -c 'cat $HOME/.ssh/id_rsa'`}, "/root/.ssh/id_rsa"},
		{[]string{`ExecStart=/bin/sh -c 'cat ~/.ssh/id_ed25519'`}, "/root/.ssh/id_ed25519"},
		{[]string{`ExecStart=/bin/sh -c 'cd /etc && cat shadow'`}, "/etc/shadow"},
		{[]string{`ExecStart=/usr/bin/env -C /etc cat shadow`}, "/etc/shadow"},
		{[]string{"WorkingDirectory=/var/lib/kubelet", `ExecStart=/bin/cat kubeconfig`}, "a secret of the node"},
		{[]string{`ExecStart=/usr/bin/tar -C /etc -cf /tmp/x.tar shadow`}, "/etc/shadow"},
		{[]string{`ExecStart=/usr/bin/tar -cf /tmp/x.tar -C /var/lib kubelet`}, "a directory above /var/lib/kubelet"},
		{[]string{"Environment=F=/etc/shadow", `ExecStart=/bin/cat ${F}`}, "a secret of the node"},
		{[]string{"Environment=D=/etc", `ExecStart=/bin/sh -c 'cat "$D/shadow"'`}, "a secret of the node"},
		// what the judge cannot see
		{[]string{`ExecStart=/bin/sh -c 'cat "$(printf /etc/sha%sow d)"'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'p=/etc/sha; q=dow; cat "$p$q"'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'cat "$0"' /etc/shadow`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'cat "/etc/sha$(echo d)ow"'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'while read f; do cat "$f"; done < /etc/myapp/list'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'while read f; do cat < "$f"; done < /etc/myapp/list'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'for f in /etc/myapp/x; do read f < /etc/myapp/list; cat "$f"; done'`}, "a secret of the node"},
		{[]string{`ExecStart=/bin/sh -c 'printf /etc/sha%sow d | xargs cat'`}, "a secret of the node"},
		{[]string{`ExecStart=/usr/bin/xargs -a /etc/myapp/list head -c1`}, "a secret of the node"},
		// directories above a secret, for a reader below them
		{[]string{`ExecStart=/usr/bin/grep -r root: /etc`}, "a directory above"},
		{[]string{`ExecStart=/usr/bin/grep -R -l x /var/lib/kubelet`}, "a directory above"},
		{[]string{`ExecStart=/usr/bin/find /etc -name shadow -exec cat {} +`}, "a directory above"},
		{[]string{`ExecStart=/usr/bin/find /var -name '*.conf' -exec /usr/bin/grep -l x {} +`}, "a directory above"},
		{[]string{`ExecStart=/usr/bin/tar -czf /tmp/x.tgz /etc`}, "a directory above"},
		{[]string{`ExecStart=/bin/sh -c 'cd /etc && tar -cf /tmp/x.tar .'`}, "a directory above"},
		{[]string{`ExecStart=/usr/bin/rsync -r --no-perms /root/ /tmp/r/`}, "/root"},
		{[]string{`ExecStart=/bin/sh -c 'for f in /etc/*; do cat "$f"; done'`}, "may match /etc/shadow"},
		// the manager's reading
		// two-line cases: the setting, then the line
		// The node's own line is the node's: this rule does not judge it (others may).
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.lines...)
		if assert.Error(t, err, "%v", c.lines) {
			assert.Contains(t, err.Error(), c.why, "%v", c.lines)
			assert.Contains(t, err.Error(), "Exec", "%v", c.lines)
		}
		// The node's own line is the node's: this rule does not judge it (others may).
		if own := strictUnit(t, false, c.lines...); own != nil {
			assert.NotContains(t, own.Error(), "a secret of the node", "%v", c.lines)
		}
	}
	// The manager reads EnvironmentFile= for the unit: its values would be the unit's variables.
	env := unitOfLines(t, false, `ExecStart=/bin/echo ok`)
	env.EnvironmentFiles = []string{"-/etc/shadow"}
	if err := allowlist.JudgeUnit(env); assert.Error(t, err) {
		assert.Contains(t, err.Error(), "EnvironmentFile=-/etc/shadow: names /etc/shadow, a secret of the node")
	}

	accepted := []string{
		`ExecStart=/bin/sh -c 'cat /etc/passwd; grep -q core /etc/group'`,
		`ExecStart=/bin/sh -c 'for f in /etc/myapp/*.conf; do cat "$f"; done'`,
		`ExecStart=/bin/bash -c 'for f in /etc/myapp/*.conf; do read -r line < "$f"; echo "$line"; done'`,
		`ExecStart=/usr/bin/mkdir -p /var/lib/myapp`,
		`ExecStart=/bin/cat /etc/ssh/ssh_host_rsa_key.pub`,
		`ExecStart=/usr/bin/grep -r x /etc/myapp`,
		`ExecStart=/bin/sh -c 'cd /var/lib/myapp && tar -cf /tmp/x.tar .'`,
		`ExecStart=/usr/bin/tar -czf /var/lib/myapp/backup.tgz /etc/myapp`,
		`ExecStart=/usr/bin/tar -c -C /var/lib/myapp -f /tmp/x.tar .`,
		`ExecStart=/bin/sh -c 'echo "$MAINPID" > /run/myapp/pid'`,
		`ExecStart=/usr/bin/cat /etc/os-release /etc/hostname`,
		`ExecStart=/bin/sh -c 'ls -l /etc /var/lib; test -f /etc/myapp/x || true'`,
		`ExecStart=/usr/bin/rm -f /var/lib/myapp/cpu_manager_state`,
		`ExecStart=/bin/sh -c 'echo "$1"' _ hello`,
		`ExecStart=/usr/bin/sha256sum /etc/kubernetes/kubelet-ca.crt`,
	}
	for _, l := range accepted {
		assert.NoError(t, strictUnit(t, true, l), l)
		assert.NoError(t, strictUnit(t, false, l), l)
	}

	// The MCS's own lines, changed (their programs and writes the unit's own): kubens's, kubelet's
	// restorecon.
	for _, l := range []string{`ExecStart=/usr/bin/unshare --mount=/run/kubens/mnt --propagation slave mount --make-rshared /`,
		`ExecStartPre=/usr/sbin/restorecon -ri /var/lib/kubelet/pod-resources /usr/local/bin/kubenswrapper /usr/bin/kubensenter`} {
		assert.NoError(t, sameUnit(t, l), l)
	}

	// The kubelet's own line, changed: its own program names what the node's current definition
	// names (OwnSecrets); a secret the node's line does not name, or one handed to a modeled
	// reader in the same unit, stays refused.
	kubelet := `ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig --kubeconfig=/var/lib/kubelet/kubeconfig`
	assert.NoError(t, sameUnit(t, kubelet))
	p := unitOfLines(t, true, `ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --kubeconfig=/etc/shadow`)
	p.Programs = []string{"/usr/local/bin/kubenswrapper", "/usr/bin/kubelet"}
	p.OwnSecrets = []string{"/var/lib/kubelet/kubeconfig"}
	err := allowlist.JudgeUnit(p)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "/etc/shadow")
	}
	p = unitOfLines(t, true, `ExecStart=/bin/cat /var/lib/kubelet/kubeconfig`)
	p.OwnSecrets = []string{"/var/lib/kubelet/kubeconfig"}
	assert.Error(t, allowlist.JudgeUnit(p), "a modeled reader is never the secret's own program")
}
