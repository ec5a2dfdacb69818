package allowlist

import (
	"os"
	"strings"
	"testing"
)

// docs/security.md states the one list of the node's secrets: every row of nodeSecrets is named
// there, so that the two never drift.
func TestDocsNameEveryNodeSecret(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range nodeSecrets {
		if !strings.Contains(string(doc), "`"+r.name()+"`") {
			t.Errorf("docs/security.md does not name %s (%s)", r.name(), r.what)
		}
	}
}
