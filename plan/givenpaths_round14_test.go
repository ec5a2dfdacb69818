package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary round 14 (b/01, b/03): a whole payload whose changed kubelet.service or crio.service
// line points the node's own daemon at a directory the payload writes (a privileged static pod, a
// crio.conf.d drop-in with an OCI hook) is refused whole: nothing of it is eligible, the refusal
// names the unit, the program, the option and the path. The same units with the changes HyperShift
// makes (node labels, taints, --v, --system-reserved, crio's log level) stay eligible.
func TestPlanRefusesNewPathsOfTheNodesOwnDaemons(t *testing.T) {
	const pol = mcsUnitPolicy // the node's kubelet.service and crio.service under unit rules
	kubelet := mcsKubelet
	// RHCOS's crio.service with its flags given (its $CRIO_CONFIG_OPTIONS words are unknown to the
	// judge: a changed line of them is refused before, as an engine's subcommand it cannot read).
	crio := "[Unit]\nDescription=Container Runtime Interface for OCI (CRI-O)\nWants=network-online.target crio-wipe.service\n" +
		"Before=kubelet.service\nAfter=network-online.target crio-wipe.service\n[Service]\nType=notify\nEnvironmentFile=-/etc/sysconfig/crio\n" +
		"ExecStart=/usr/bin/crio\nExecReload=/bin/kill -s HUP $MAINPID\nRestart=on-failure\n[Install]\nWantedBy=multi-user.target\n"
	node := func() *fixture.Config {
		return withUnits(unit("kubelet.service", str(kubelet)), unit("crio.service", str(crio)))
	}
	changed := func(kubeletFrom, kubeletTo, crioFrom, crioTo string) *fixture.Config {
		k, c := strings.Replace(kubelet, kubeletFrom, kubeletTo, 1), strings.Replace(crio, crioFrom, crioTo, 1)
		require.NotEqual(t, kubelet+crio, k+c, "the change must apply")
		return withUnits(unit("kubelet.service", str(k)), unit("crio.service", str(c)))
	}

	pod := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: pwn, namespace: kube-system}\nspec:\n  hostPID: true\n  containers:\n" +
		"  - name: c\n    image: registry.access.redhat.com/ubi9/ubi\n    command: [nsenter, -t, '1', -a, sh, -c, 'touch /PWNED']\n    securityContext: {privileged: true}\n")
	dropin := []byte("[crio.runtime]\nhooks_dir = [\"/etc/docker/certs.d/pwn/hooks\"]\n")
	hook := []byte(`{"version": "1.0.0", "hook": {"path": "/bin/sh", "args": ["sh", "-c", "touch /PWNED"]}, "when": {"always": true}, "stages": ["prestart"]}`)

	refused := map[string]struct {
		des  *fixture.Config
		want []string
	}{
		"F01 kubelet --pod-manifest-path": {
			changed("--v=${KUBELET_LOG_LEVEL}", "--v=${KUBELET_LOG_LEVEL} --pod-manifest-path=/etc/docker/certs.d/pwn", "", "").
				File("/etc/docker/certs.d/pwn/pod.yaml", pod, 0o644),
			[]string{"unit kubelet.service: ExecStart=", "kubelet --pod-manifest-path=/etc/docker/certs.d/pwn: a changed line gives kubelet, which the judge does not model, the path /etc/docker/certs.d/pwn (by --pod-manifest-path) it was not given before"},
		},
		"F03 crio --config-dir": {
			changed("", "", "/usr/bin/crio\n", "/usr/bin/crio --config-dir=/etc/docker/certs.d/pwn\n").
				File("/etc/docker/certs.d/pwn/99-pwn.conf", dropin, 0o644).File("/etc/docker/certs.d/pwn/hooks/h.json", hook, 0o644),
			[]string{"unit crio.service: ExecStart=", "crio --config-dir=/etc/docker/certs.d/pwn: a changed line gives crio, which the judge does not model, the path /etc/docker/certs.d/pwn (by --config-dir) it was not given before"},
		},
		"F03 crio --config-dir, the pod too": {
			changed("--v=${KUBELET_LOG_LEVEL}", "--v=${KUBELET_LOG_LEVEL} --pod-manifest-path=/etc/docker/certs.d/pwn", "/usr/bin/crio\n", "/usr/bin/crio --config-dir=/etc/docker/certs.d/pwn\n").
				File("/etc/docker/certs.d/pwn/99-pwn.conf", dropin, 0o644).File("/etc/docker/certs.d/pwn/pod.yaml", pod, 0o644),
			[]string{"kubelet --pod-manifest-path=/etc/docker/certs.d/pwn", "crio --config-dir=/etc/docker/certs.d/pwn"},
		},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, pol, node(), c.des)
			assert.False(t, p.Eligible)
			assert.Empty(t, p.Files, "nothing of a refused payload is written")
			assert.Empty(t, p.Actions)
			var reasons []string
			for _, r := range p.Refused {
				reasons = append(reasons, r.Reason)
			}
			for _, w := range c.want {
				assert.Contains(t, strings.Join(reasons, "\n"), w)
			}
		})
	}

	// The payload's files alone are the built-in rules' business (not this rule's): the control.
	only := node().File("/etc/docker/certs.d/pwn/99-pwn.conf", dropin, 0o644)
	assert.True(t, ndpBuild(t, pol, node(), only).Eligible, "the control: a file under /etc/docker/certs.d/ alone")

	// What HyperShift changes in these lines stays eligible.
	for name, des := range map[string]*fixture.Config{
		"--v":             changed("--v=${KUBELET_LOG_LEVEL}", "--v=4", "", ""),
		"labels":          changed("os_id=${ID}", "os_id=${ID},hypershift.openshift.io/nodePool=workers,node-role.kubernetes.io/infra=", "", ""),
		"taints":          changed("--v=${KUBELET_LOG_LEVEL}", "--v=${KUBELET_LOG_LEVEL} --register-with-taints=node-role.kubernetes.io/infra=reserved:NoSchedule", "", ""),
		"system-reserved": changed("--v=${KUBELET_LOG_LEVEL}", "--v=${KUBELET_LOG_LEVEL} --system-reserved=cpu=500m,memory=1Gi,ephemeral-storage=1Gi", "", ""),
		"crio log level":  changed("", "", "/usr/bin/crio\n", "/usr/bin/crio --log-level=debug\n"),
	} {
		t.Run("eligible/"+name, func(t *testing.T) {
			p := ndpBuild(t, pol, node(), des)
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	// A grant of the program (unitPrograms) lifts nothing.
	granted := pol + "unitPrograms:\n  kubelet.service: [/usr/bin/kubelet]\n  crio.service: [/usr/bin/crio]\n"
	p := ndpBuild(t, granted, node(), refused["F01 kubelet --pod-manifest-path"].des)
	assert.False(t, p.Eligible, "granted")
	p = ndpBuild(t, granted, node(), refused["F03 crio --config-dir"].des)
	assert.False(t, p.Eligible, "granted")
}
