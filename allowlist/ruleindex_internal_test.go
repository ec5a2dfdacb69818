package allowlist

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The index finds what comparing every rule finds (the rule, or none), for exact and prefix rules,
// nested prefixes, a path equal to a prefix without its "/", and the root.
func FuzzRuleIndexAgreesWithLongestMatch(f *testing.F) {
	f.Add("/etc/a/\n/etc/a/b\n/etc/a/b/\n/etc/\n/etc/a", "/etc/a/b/c")
	f.Add("/x/\n/x", "/x")
	f.Add("/\n/a/", "/a/b")
	f.Fuzz(func(t *testing.T, list, p string) {
		if len(list) > 8192 {
			return
		}
		var rules []Rule
		for _, r := range strings.Split(list, "\n") {
			rules = append(rules, Rule{Path: r})
		}
		for len(rules) <= indexedRules {
			rules = append(rules, Rule{Path: fmt.Sprintf("/pad/%d", len(rules))})
		}
		want, wok := Rule{}, false
		bestLen := -1
		for _, r := range rules {
			if n, ok := r.matches(p); ok && n > bestLen {
				want, bestLen, wok = r, n, true
			}
		}
		got, gok := ruleIndexOf(rules).match(p)
		assert.Equal(t, wok, gok, "%q", p)
		assert.Equal(t, want.Path, got.Path, "%q", p)
	})
}
