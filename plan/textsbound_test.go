package plan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Adversary r15 d/01: each text of a plan is bounded, but not their number: 7 000 refused files
// with paths of 2 000 DEL bytes (each quoted in its reason, and escaped again in JSON), a 111 KB
// ConfigMap, made 100 MB of JSON output and 870 MiB of RSS on every node. The changes and refusals
// are listed up to plan.MaxPlanTexts bytes of text together and the rest counted; the verdict is
// the whole payload's.
func TestPlanListsAreBoundedTogether(t *testing.T) {
	comp := strings.Repeat("\x7f", 250)
	for _, tc := range []struct {
		dir      string
		eligible bool
	}{
		{dir: "/etc/docker/certs.d/" + strings.Repeat(comp+"/", 7)},                                     // refused: a control character, quoted in each reason
		{dir: "/etc/docker/certs.d/" + strings.Repeat(strings.Repeat("a", 250)+"/", 7), eligible: true}, // eligible, listed as changes
	} {
		des := fixture.Ignition("3.2.0") // no embedded copy: the payload budget holds the files once
		const n = 3000
		for i := 0; i < n; i++ {
			des.File(fmt.Sprintf("%sf%05d", tc.dir, i), []byte("x"), 0o644)
		}
		p := build(t, fixture.Ignition("3.2.0"), des, "")
		require.Equal(t, tc.eligible, p.Eligible, "the verdict is every change's")
		out, err := json.Marshal(p)
		require.NoError(t, err)
		assert.Less(t, len(out), 8*plan.MaxPlanTexts, "the plan's JSON stays within a few times the bound")
		assert.Equal(t, n, len(p.Changes)+p.ChangesOmitted, "every change counted, listed or not")
		if tc.eligible {
			assert.NotZero(t, p.ChangesOmitted)
			assert.Contains(t, strings.Join(p.Warnings, "\n"), "more changes not listed")
			continue
		}
		require.NotZero(t, p.RefusedOmitted)
		assert.Contains(t, p.Refused[len(p.Refused)-1].Reason, fmt.Sprintf("and %d more refusals", p.RefusedOmitted))
	}
}
