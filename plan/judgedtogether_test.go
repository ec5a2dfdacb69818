package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// Adversary r14 d/01-02: every judged file is bounded, but a payload may hold thousands of them
// (2 500 nmstate files of 7 990 nested nodes each, 574 KB of payload, cost 149 s of CPU to plan on
// every node of a pool). Together they are bounded too: past plan.MaxJudgedNodesTogether YAML
// nodes the plan refuses the next judged file unparsed, naming it and the bound, whatever the
// judge (nmstate's state, credential provider configs); under it the same files plan as before.
func TestJudgedFilesAreBoundedTogether(t *testing.T) {
	// 3 990 nodes (a judged file's bound is 8 000), wide rather than deep: a judged file nests at
	// most 64 deep.
	nested := "[" + strings.Repeat("a, ", 3988) + "a]"
	per := diff.YAMLNodes([]byte(nested))
	fit := plan.MaxJudgedNodesTogether / per
	for _, dir := range []string{"/etc/nmstate/openshift/x%d.yml", "/etc/kubernetes/credential-providers/x%d.yaml"} {
		for _, n := range []int{fit, fit + 1, 3 * fit} {
			t.Run(fmt.Sprintf("%s/%d", dir, n), func(t *testing.T) {
				des := base()
				for i := 0; i < n; i++ {
					des.File(fmt.Sprintf(dir, i), []byte(nested), 0o644)
				}
				p := build(t, base(), des, "")
				var together []string
				for _, r := range p.Refused {
					if strings.Contains(r.Reason, "YAML nodes together") {
						together = append(together, r.Path)
					}
				}
				if n <= fit {
					assert.Empty(t, together, "under the bound nothing is refused for it")
					if strings.HasPrefix(dir, "/etc/nmstate") {
						assert.True(t, p.Eligible, "%v", p.Refused)
					}
					return
				}
				require.False(t, p.Eligible)
				assert.Len(t, together, n-fit, "every judged file past the bound, each unparsed")
				assert.Contains(t, p.Refused[len(p.Refused)-1].Reason, fmt.Sprint(plan.MaxJudgedNodesTogether))
			})
		}
	}
}
