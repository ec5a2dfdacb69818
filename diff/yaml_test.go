package diff_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

const mcYAML = "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nspec:\n  config:\n    ignition:\n      version: 3.2.0\n"

func TestYAMLPayloads(t *testing.T) {
	_, err := diff.Decode([]byte(mcYAML))
	require.NoError(t, err)

	// An alias expands its anchor's whole value: a few hundred bytes could become gigabytes. Refused
	// before anything is expanded, wherever it is.
	bomb := "a: &a [\"" + strings.Repeat("x", 1000) + "\"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" + mcYAML
	_, err = diff.Decode([]byte(bomb))
	assert.ErrorContains(t, err, "anchor or alias at line 1")
	_, err = diff.Decode([]byte(mcYAML + "  extensions: &e [usbguard]\n"))
	assert.ErrorContains(t, err, "anchor or alias")

	// A second document would be ignored: refused.
	_, err = diff.Decode([]byte(mcYAML + "---\n" + strings.Replace(mcYAML, "spec:", "spec:\n  kernelArguments: [nosmt]", 1)))
	assert.ErrorContains(t, err, "more than one document")

	// Millions of tiny nodes: bounded before parsing.
	_, err = diff.Decode([]byte(mcYAML + "  extensions:\n" + strings.Repeat("  - a\n", 200000)))
	assert.ErrorContains(t, err, "exceeds the")

	// Duplicate keys stay invalid in YAML as in JSON.
	_, err = diff.Decode([]byte(mcYAML + "kind: MachineConfig\n"))
	assert.Error(t, err)
}
