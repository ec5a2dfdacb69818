package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
)

// Adversary r15 d/02: files deep below a rule's prefix (each within plan.MaxPathComponents) made
// every node check walk their depth again and again: 700 files 120 deep took 38 s of CPU to plan
// on a node that had them. The walks are linear now, and the paths' components together are
// bounded: under plan.MaxComponentsTogether the files plan; past it the plan is refused, naming the
// bound, before any node check.
func TestPathComponentsAreBoundedTogether(t *testing.T) {
	dir := "/etc/docker/certs.d/" + strings.Repeat("a/", 118) + "x"
	per := strings.Count(dir, "/") + 1
	fit := plan.MaxComponentsTogether / per
	for _, n := range []int{fit, fit + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			des := base()
			for i := 0; i < n; i++ {
				des.File(fmt.Sprintf("%s/f%05d", dir, i), []byte("x"), 0o644)
			}
			p := build(t, base(), des, "")
			if n <= fit {
				assert.True(t, p.Eligible, "%v", p.Refused)
				return
			}
			require.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[len(p.Refused)-1].Reason, fmt.Sprintf("more than %d components together", plan.MaxComponentsTogether))
		})
	}
}
