package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// What encoding/json would silently resolve (the last duplicate wins, keys match whatever their
// case) is invalid in the ConfigMap's rules and in the policy file, naming the key (adversarial run).
func TestAmbiguousKeysAreInvalid(t *testing.T) {
	for in, want := range map[string]string{
		`[{"path":"/etc/foo/a","action":"None","action":"Reload","services":["crio"]}]`: `duplicate field "[0].action"`,
		`[{"path":"/etc/foo/a","Path":"/etc/cron.d/x","action":"None"}]`:                `unknown field "[0].Path"`,
		`[{"path":"/etc/foo/a","action":"None","extra":1}]`:                             `unknown field "[0].extra"`,
	} {
		_, err := allowlist.ParseRules([]byte(in))
		assert.ErrorContains(t, err, want, in)
	}
	for in, want := range map[string]string{
		"configMapCeiling:\n- prefix: /etc/foo/\n  actions: [None]\n  actions: [Reload]\n": "already set",
		`{"configMapCeiling":[{"prefix":"/etc/foo/","Actions":["Reload"]}]}`:               `unknown field "configMapCeiling[0].Actions"`,
		`{"coreSSHKeys":true,"CoreSSHKeys":false}`:                                         `unknown field "CoreSSHKeys"`,
	} {
		_, err := allowlist.ParsePolicy([]byte(in))
		assert.ErrorContains(t, err, want, in)
		if err != nil {
			assert.NotContains(t, err.Error(), "\n", "one line")
		}
	}
}
