package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Adversary r18 c/03, c/04: a changed kubelet or crio line flipped a guard with a flag that names no
// path. A trust daemon's changed line may give it only the node's options and operands, or its
// tunables; dropping a non-tunable one of the node's is refused; the tunables, the same flags
// moved or respelled, and other unmodeled programs' flags stay eligible.
func TestTrustDaemonsFlagsOnlyTheNodesOrTunables(t *testing.T) {
	const crio = `ExecStart=/usr/bin/crio --selinux --log-level=info`
	kubeletWith := func(extra string) string { return round14Kubelet + " " + extra }
	kubeletWithout := func(opt string) string {
		var out []string
		for _, w := range strings.Fields(round14Kubelet) {
			if !strings.HasPrefix(w, opt+"=") {
				out = append(out, w)
			}
		}
		return strings.Join(out, " ")
	}
	refused := []struct{ name, old, line, why string }{
		{"kubelet anonymous auth", round14Kubelet, kubeletWith("--anonymous-auth=true"), "the option --anonymous-auth, which the node's definition"},
		{"kubelet AlwaysAllow", round14Kubelet, kubeletWith("--authorization-mode=AlwaysAllow"), "--authorization-mode"},
		{"kubelet no token webhook", round14Kubelet, kubeletWith("--authentication-token-webhook=false"), "--authentication-token-webhook"},
		{"kubelet underscore spelling", round14Kubelet, kubeletWith("--anonymous_auth=true"), "--anonymous_auth"},
		{"kubelet bool as a separate word", round14Kubelet, kubeletWith("--anonymous-auth true"), "--anonymous-auth"},
		{"kubelet /usr client CA", round14Kubelet, kubeletWith("--client-ca-file=/usr/share/pki/ca-trust-source/ca-bundle.trust.p11-kit"), "--client-ca-file"},
		{"kubelet /usr credential plugins", round14Kubelet, kubeletWith("--image-credential-provider-bin-dir=/usr/libexec/kubelet-image-credential-provider-plugins"), "--image-credential-provider-bin-dir"},
		{"kubelet drops --config", round14Kubelet, kubeletWithout("--config"), "drops the option --config"},
		{"kubelet drops --kubeconfig", round14Kubelet, kubeletWithout("--kubeconfig"), "drops the option --kubeconfig"},
		{"kubelet changes the cloud provider", round14Kubelet, strings.Replace(round14Kubelet, "--cloud-provider=", "--cloud-provider=external", 1), "--cloud-provider with a value"},
		{"crio selinux off", crio, `ExecStart=/usr/bin/crio --selinux=false --log-level=info`, "--selinux with a value"},
		{"crio drops selinux", crio, `ExecStart=/usr/bin/crio --log-level=info`, "drops the option --selinux"},
		{"crio capabilities", crio, crio + " --default-capabilities=SYS_ADMIN,NET_ADMIN", "--default-capabilities"},
		{"crio insecure registry", crio, crio + " --insecure-registry=quay.io", "--insecure-registry"},
		{"crio a new operand", crio, crio + " frobnicate", "the operand frobnicate"},
		{"crio single-dash long", crio, crio + " -selinux=false", "-selinux"},
		{"sshd -o", `ExecStart=/usr/sbin/sshd -D`, `ExecStart=/usr/sbin/sshd -D -p 2222`, "the option -p"},
	}
	for _, c := range refused {
		for _, grant := range []bool{false, true} {
			err := givenUnit(t, c.old, c.line, grant)
			if assert.Error(t, err, "%s (granted: %v)", c.name, grant) {
				assert.Contains(t, err.Error(), c.why, c.name)
				assert.Contains(t, err.Error(), "holds the node's trust", c.name)
			}
		}
	}
	accepted := []struct{ name, old, line string }{
		{"kubelet --v", round14Kubelet, strings.Replace(round14Kubelet, "--v=${KUBELET_LOG_LEVEL}", "--v=6", 1)},
		{"kubelet drops --v", round14Kubelet, kubeletWithout("--v")},
		{"kubelet kube-reserved", round14Kubelet, kubeletWith("--kube-reserved=cpu=200m")},
		{"kubelet flags reordered", round14Kubelet, strings.Replace(round14Kubelet, " --cloud-provider=", "", 1) + " --cloud-provider="},
		{"crio log level", crio, `ExecStart=/usr/bin/crio --selinux --log-level=debug`},
		{"crio metrics", crio, crio + " --enable-metrics --metrics-port=9537"},
		{"crio version in a new ExecStartPre", crio, "ExecStartPre=/usr/bin/crio version\n" + crio},
		{"myapp any flag", `ExecStart=/usr/bin/myapp --mode=a`, `ExecStart=/usr/bin/myapp --mode=b --insecure`},
	}
	for _, c := range accepted {
		cur := unitOfLines(t, false, c.old)
		p := unitOfLines(t, true, strings.Split(c.line, "\n")...)
		p.Programs, p.OwnWrites, p.OwnSecrets, p.OwnArgs = allowlist.OwnPrograms(cur.Exec), allowlist.OwnWrites(cur), allowlist.OwnSecrets(cur), allowlist.OwnArgs(cur)
		assert.NoError(t, allowlist.JudgeUnit(p), c.name)
	}
}
