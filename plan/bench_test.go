package plan_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// benchPayloads returns a current payload of n files (~20 KiB each) and a desired one in which one
// file in ten changed, both as raw JSON.
func benchPayloads(n int) (cur, des []byte) {
	c := fixture.Generated(n, n*20<<10, 1)
	d := c.Clone()
	for i := 0; i < n; i += 10 {
		d.File(fmt.Sprintf("/etc/containers/registries.d/gen-%05d.yaml", i), []byte(fmt.Sprintf("changed %d", i)), 0o644)
	}
	return c.JSON(), d.JSON()
}

// BenchmarkPlan measures what a refresh costs when a new payload arrives: decode the desired payload
// (validating what differs from the current one, already decoded), diff it against the current one,
// and plan. Each size's baseline runs right after it (baseline-unmarshal/files=N: a plain
// json.Unmarshal of the same desired payload into Ignition's types, with no validation, diff or
// plan), so that with -count each pair is measured under the same load.
func BenchmarkPlan(b *testing.B) {
	old := diff.MaxPayloadSize
	diff.MaxPayloadSize = 2 << 30 // files=5000 is a ~250 MB payload, charged about 4.5x: over the default budget
	b.Cleanup(func() { diff.MaxPayloadSize = old })
	for _, n := range []int{50, 500, 5000} {
		curRaw, desRaw := benchPayloads(n)
		cur, err := diff.Decode(curRaw)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(desRaw)))
			b.ReportAllocs()
			for b.Loop() {
				des, err := diff.DecodeAgainst(desRaw, cur)
				if err != nil {
					b.Fatal(err)
				}
				p, err := plan.Build(plan.Inputs{Current: cur, Desired: des})
				if err != nil || !p.Eligible {
					b.Fatal(err, p.Refused)
				}
			}
			b.ReportMetric(float64(len(desRaw)), "payload-bytes") // after the loop, which resets metrics
		})
		b.Run(fmt.Sprintf("baseline-unmarshal/files=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(desRaw)))
			b.ReportAllocs()
			for b.Loop() {
				var c types.Config
				if err := json.Unmarshal(desRaw, &c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(desRaw)), "payload-bytes")
		})
	}
}
