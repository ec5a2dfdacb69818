package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Credentials the payload's refused values hold, as they are written: a bearer JWT, an AWS key and
// secret, a hex API key, a base64 password.
var round21Secrets = []string{
	"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIzNDU2Nzg5",
	"AKIAIOSFODNN7EXAMPLE1234", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"3f6c0e5a9b8d7c6e5f4a3b2c1d0e9f8a", "cGFzc3dvcmQxMjM0NTY3ODkwYWJjZGVm",
}

// A refusal of a static pod's or a credential provider's value never quotes a credential held in
// it (adversary r21 c: the content judges quoted values, a reason reaches logs, the Node's
// annotation and Events); what is refused is still named by its field.
func TestContentRefusalsNeverQuoteACredential(t *testing.T) {
	for _, secret := range round21Secrets {
		refusals := map[string]error{
			"a pod's name": allowlist.JudgeStaticPod(podWith(func(p *corev1.Pod) { p.Name = "x-" + strings.ToLower(secret) })),
			"a host path": allowlist.JudgeStaticPod(podWith(func(p *corev1.Pod) {
				p.Spec.Volumes[0].HostPath.Path = "/etc/" + strings.ReplaceAll(secret, "/", "")
			})),
			"a mount path": allowlist.JudgeStaticPod(container(func(c *corev1.Container) { c.VolumeMounts[0].MountPath = secret })),
			"a plugin arg": allowlist.ContentJudge(credDir + "x.yaml")([]byte(strings.Replace(string(fixture.CredentialProviderConfig("ecr")),
				"name: ecr-credential-provider", "name: ecr-credential-provider\n  args: [\"--token="+secret+"\"]", 1))),
		}
		for what, err := range refusals {
			require.Error(t, err, what)
			assert.NotContains(t, err.Error(), secret, what)
			for _, part := range strings.FieldsFunc(secret, func(r rune) bool { return r == '.' || r == '/' }) {
				if len(part) >= 12 {
					assert.NotContains(t, err.Error(), part, "%s: a part of it", what)
				}
			}
		}
	}
}
