package diff_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

// seeds are the example payloads plus every form the decoder detects.
func seeds(t testing.TB) [][]byte {
	ign := sample().EmbedMachine(fixture.DefaultMachine()).JSON()
	out := [][]byte{
		ign,
		fixture.Gzip(ign),
		fixture.GzipBase64(ign),
		[]byte(base64.StdEncoding.EncodeToString(ign)),
		fixture.MachineConfigJSON(fixture.DefaultMachine(), sample().JSON()),
		[]byte("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nspec:\n  config:\n    ignition:\n      version: 3.2.0\n"),
		[]byte(`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/../x","contents":{"source":"data:;base64,H4sIAAAAAAAA/w==","compression":"gzip"}}]}}`),
	}
	files, _ := filepath.Glob("../test/testdata/examples/*.ign*")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// FuzzDecode: no input panics; what decodes has no changes against itself and its files' contents
// decode or fail cleanly.
func FuzzDecode(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := diff.Decode(raw)
		if err != nil {
			if p != nil {
				t.Fatal("payload returned with an error")
			}
			return
		}
		for _, file := range p.Config.Storage.Files {
			_, _ = diff.FileContents(file)
		}
		changes, err := diff.Diff(p, p)
		if err == nil && len(changes) != 0 {
			t.Fatalf("a payload differs from itself: %+v", changes)
		}
	})
}

// FuzzDiff: any two decodable payloads diff without panicking, and a diff is empty only when the
// reverse diff is empty too.
func FuzzDiff(f *testing.F) {
	s := seeds(f)
	for i := range s {
		f.Add(s[i], s[(i+1)%len(s)])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, err := diff.Decode(a)
		if err != nil {
			return
		}
		pb, err := diff.Decode(b)
		if err != nil {
			return
		}
		ab, errAB := diff.Diff(pa, pb)
		ba, errBA := diff.Diff(pb, pa)
		if errAB == nil && errBA == nil && (len(ab) == 0) != (len(ba) == 0) {
			t.Fatalf("asymmetric diff: %d changes one way, %d the other", len(ab), len(ba))
		}
	})
}
