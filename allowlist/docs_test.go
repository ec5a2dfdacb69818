package allowlist_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// yamlBlocks returns the ```yaml blocks of a Markdown file, dedented (a block may sit in a list item).
func yamlBlocks(t *testing.T, file string) []string {
	t.Helper()
	doc, err := os.ReadFile(file)
	require.NoError(t, err)
	var blocks []string
	var cur []string
	indent, in := "", false
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case !in && trimmed == "```yaml":
			in, indent, cur = true, line[:len(line)-len(trimmed)], nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, strings.TrimPrefix(line, indent))
		}
	}
	require.False(t, in, "%s: an unclosed yaml block", file)
	return blocks
}

// Round-4b adversary F8: node-policy.md's own example policy did not load (its ceiling named a path
// under the denied /var/lib/kubelet). Every YAML example there is a policy the agent accepts, read
// from the docs, so that the two never drift.
func TestDocsPolicyExamplesLoad(t *testing.T) {
	blocks := yamlBlocks(t, "../docs/node-policy.md")
	require.GreaterOrEqual(t, len(blocks), 2, "the example policy and the MachineConfiguration example")
	sawCeiling := false
	for i, b := range blocks {
		pol, err := allowlist.ParsePolicy([]byte(b))
		require.NoError(t, err, "docs/node-policy.md yaml block %d:\n%s", i, b)
		for _, c := range pol.Ceiling {
			sawCeiling = true
			// Every ceiling prefix it declares is one a ConfigMap entry can use.
			p := c.Prefix
			if strings.HasSuffix(p, "/") {
				p += "x.conf"
			}
			rules := mustRules(t, fmt.Sprintf(`[{"path": %q, "action": "None"}]`, c.Prefix))
			extra, warnings := pol.Extra(rules)
			assert.Empty(t, warnings, "block %d: ceiling %s", i, c.Prefix)
			assert.True(t, pol.Resolve(p, extra).Allowed, "block %d: ceiling %s reaches %s", i, c.Prefix, p)
		}
	}
	assert.True(t, sawCeiling, "the example declares a ceiling")
}

// security.md must not call a denied path reachable (round-4b F8: it listed /var/lib/kubelet/extra.json).
// Its "Reachable by the ConfigMap" line names paths that a ConfigMap entry reaches under the widest
// ceiling; each is checked here.
func TestDocsReachablePathsAreReachable(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	require.NoError(t, err)
	var line string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "Reachable by the ConfigMap within a ceiling") {
			line = l
		}
	}
	require.NotEmpty(t, line, "security.md keeps its line of reachable paths")
	paths := regexp.MustCompile("`(/[^`]*)`").FindAllStringSubmatch(line, -1)
	require.NotEmpty(t, paths)
	pol := mustPolicy(t, wideCeiling)
	for _, m := range paths {
		entry, p := m[1], m[1]
		if strings.HasSuffix(p, "/") {
			p += "x.conf"
		}
		extra, warnings := pol.Extra(mustRules(t, fmt.Sprintf(`[{"path": %q, "action": "None"}]`, entry)))
		assert.Empty(t, warnings, entry)
		d := pol.Resolve(p, extra)
		assert.True(t, d.Allowed, "%s: %s", p, d.Reason)
		assert.Equal(t, "no-reboot-paths", d.Source, p)
	}
}
