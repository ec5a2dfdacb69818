package diff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

// A parser's message never quotes the payload's long value (adversary r22 c/01: "cannot decode
// !!str `data:,…<the pull secret>…` as a !!bool" reached stderr and the reason).
func TestYAMLErrorsNeverQuoteALongValue(t *testing.T) {
	const secret = "c2VjcmV0LXB1bGwtc2VjcmV0LXRva2VuLTEyMzQ1Njc4OTA="
	for name, doc := range map[string]string{
		"a tagged source": "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: x}\nspec:\n  config:\n" +
			"    ignition: {version: 3.2.0}\n    storage:\n      files:\n      - path: /var/lib/kubelet/config.json\n        contents:\n" +
			"          source: !!bool \"data:,%7B%22auths%22%3A%7B%22q%22%3A%7B%22auth%22%3A%22" + secret + "%22%7D%7D%7D\"\n",
		"a tagged key value": "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: !!int " + secret + "}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := diff.Decode([]byte(doc))
			require.Error(t, err)
			assert.NotContains(t, err.Error(), secret)
			assert.NotContains(t, err.Error(), secret[:24])
		})
	}
}
