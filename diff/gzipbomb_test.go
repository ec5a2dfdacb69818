package diff_test

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Issue 27, class 1: gzip-compressed contents (Ignition's compression: gzip) inside an embedded
// MachineConfig's spec.config cost no more than the budget either: a payload whose outer config is
// small while the embedded copy carries decompression bombs (16 KiB that decompress to 16 MiB,
// forty of them), whether they agree with the outer file by contents or not, is refused or invalid,
// and deciding that allocates a bounded multiple of the budget, never the bombs' 640 MiB.
func TestEmbeddedGzipBombsAreBounded(t *testing.T) {
	old := diff.MaxPayloadSize
	diff.MaxPayloadSize = 8 << 20
	t.Cleanup(func() { diff.MaxPayloadSize = old })
	bomb := "data:;base64," + base64.StdEncoding.EncodeToString(fixture.Gzip(make([]byte, 16<<20)))
	for name, outerContents := range map[string][]byte{"outer differs": []byte("x"), "outer agrees up to its size": make([]byte, 64<<10)} {
		t.Run(name, func(t *testing.T) {
			inner := fixture.Ignition("3.5.0")
			outer := fixture.Ignition("3.2.0")
			for i := range 40 {
				p := fmt.Sprintf("/etc/docker/certs.d/r%d.example/ca.crt", i)
				inner.AddFile(types.File{Node: types.Node{Path: p}, FileEmbedded1: types.FileEmbedded1{Mode: ptr(0o644),
					Contents: types.Resource{Source: ptr(bomb), Compression: ptr("gzip")}}})
				outer.File(p, outerContents, 0o644)
			}
			outer.File(diff.MachineConfigContentPath, fixture.MachineConfigJSON(fixture.DefaultMachine(), inner.JSON()), 0o644)
			for form, raw := range map[string][]byte{"json": outer.JSON(), "gzip+base64": fixture.GzipBase64(outer.JSON())} {
				var refused string
				cost := memtest.Allocated(func() {
					d, err := diff.Decode(raw)
					if err != nil {
						refused = err.Error()
						return
					}
					c, _ := diff.Decode(fixture.Ignition("3.2.0").JSON())
					p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: allowlist.Default()})
					switch {
					case err != nil:
						refused = err.Error()
					case !p.Eligible && len(p.Refused) > 0:
						refused = p.Refused[0].Reason
					}
				})
				assert.NotEmpty(t, refused, "%s: the bombs are refused or invalid", form)
				assert.Less(t, cost, uint64(6*diff.MaxPayloadSize), "%s: allocated %d MiB for a %d MiB budget (%s)", form, cost>>20, diff.MaxPayloadSize>>20, refused)
			}
		})
	}
}
