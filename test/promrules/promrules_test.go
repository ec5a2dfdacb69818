// Package promrules checks deploy/'s PrometheusRule with promtool (see check.sh).
package promrules

import (
	"os/exec"
	"testing"
)

// TestAlertRules parses every rule and runs the alert unit tests in rules_test.yaml: each alert
// fires for the series it is about, after its `for`, and not before or for healthy nodes.
func TestAlertRules(t *testing.T) {
	out, err := exec.Command("bash", "check.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("check.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
