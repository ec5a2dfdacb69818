package main

import (
	"os/exec"
	"strings"
	"testing"
)

// forbiddenDeps are packages the release binary must not link: client-go's typed clientset registers
// every API group's types at start-up, on every node (it is what took the agent from 32 to 20 MB
// when it left; controller-runtime, dynamicinformer and leaderelection all pull it in). The agent
// talks to the API through kube/'s REST client instead.
var forbiddenDeps = []string{"k8s.io/client-go/kubernetes", "sigs.k8s.io/controller-runtime"}

// linked lists the forbidden packages pkg links, as the release build sees it (no build tags).
func linked(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		for _, f := range forbiddenDeps {
			if p == f || strings.HasPrefix(p, f+"/") {
				bad = append(bad, p)
			}
		}
	}
	return bad
}

func TestBinaryDoesNotLinkTheTypedClientset(t *testing.T) {
	if bad := linked(t, "./cmd/refresh-agent"); len(bad) > 0 {
		t.Errorf("./cmd/refresh-agent links %s: use kube/'s REST, dynamic or metadata clients instead", strings.Join(bad, ", "))
	}
	// The check can fail: the test tools use the typed clientset, and it sees that.
	if bad := linked(t, "./test/bench"); len(bad) == 0 {
		t.Error("the check does not see ./test/bench's use of k8s.io/client-go/kubernetes")
	}
}
