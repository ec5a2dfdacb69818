package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 25 (c/03, c/04): a content judge's parser message never quotes a long value or key of the
// file whole: it is shown by its length.
func TestContentJudgesNeverQuoteALongValue(t *testing.T) {
	token := "ghp_AbCdEf1234567890XyZaBcDeFgHiJk"
	long := strings.Repeat("s3cr3t", 100)
	for name, f := range map[string]struct{ path, data string }{
		"nmstate type error":       {"/etc/nmstate/openshift/a.yml", "interfaces:\n- name: eth0\n  mtu: !!int " + long + "\n"},
		"nmstate duplicate key":    {"/etc/nmstate/openshift/a.yml", "interfaces: []\n" + token + ": 1\n" + token + ": 2\n"},
		"static pod unknown field": {"/etc/kubernetes/manifests/kube-apiserver-proxy.yaml", "apiVersion: v1\nkind: Pod\n" + token + ": x\n"},
	} {
		t.Run(name, func(t *testing.T) {
			p := build(t, plain(), plain().File(f.path, []byte(f.data), 0o644), "")
			require.False(t, p.Eligible)
			for _, r := range p.Refused {
				assert.NotContains(t, r.Reason, token)
				assert.NotContains(t, r.Reason, long[:60])
			}
		})
	}
}
