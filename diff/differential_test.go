package diff_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	ignerrors "github.com/coreos/ignition/v2/config/shared/errors"
	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/vcontext/report"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
)

// differentialSeeds are generated payloads of the real ones' shapes (every spec version, inline and
// gzip files, units, core's keys, the embedded MachineConfig) and adversarial ones: duplicate and
// case-variant keys, version tricks, whitespace Ignition does not allow, dirty paths, hashes.
func differentialSeeds() [][]byte {
	var out [][]byte
	for _, v := range []string{"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"} {
		c := fixture.Ignition(v).EmbedMachine(fixture.DefaultMachine()).
			File("/etc/containers/registries.conf", []byte("[[registry]]\nlocation = \"a\"\n"), 0o644).
			GzipFile("/var/lib/kubelet/config.json", []byte(`{"auths":{}}`), 0o600).
			Unit("kubelet.service", "[Service]\nExecStart=/bin/true\n").
			SSHKeys("ssh-ed25519 AAAA one")
		out = append(out, c.JSON())
	}
	for _, s := range []string{
		`{"ignition":{"version":"3.5.0"},"ignition":{"version":"3.0.0"}}`,
		`{"ignition":{"version":"3.0.0"},"Ignition":{"version":"3.5.0"},"kernelArguments":{"shouldExist":["a"]}}`,
		`{"IGNITION":{"VERSION":"3.5.0"},"KernelArguments":{"ShouldExist":["a"]}}`,
		`{"ignition":{"version":"3.5.0+meta"}}`,
		`{"ignition":{"version":"3.5.0-experimental"}}`,
		`{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["a"]}}`,
		`{"ignition":{"version":"v3.2.0"}}`,
		`{"ignition":{"version":3.2}}`,
		"\u00a0{\"ignition\":{\"version\":\"3.2.0\"}}",
		"\ufeff{\"ignition\":{\"version\":\"3.2.0\"}}",
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a/../b"},{"path":"rel"}],"directories":[{"path":"/etc//d"}],"links":[{"path":"/etc/l/.","target":"/x"}]}}`,
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","path":"/etc/b"}]}}`,
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a","verification":{"hash":"sha256-ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}}}]}}`,
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,b","verification":{"hash":"sha256-ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}}}]}}`,
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","append":[{"source":"data:,x"}],"contents":{"source":"gs://b/o"}}]}}`,
		`{"ignition":{"version":"3.1.0"},"passwd":{"users":[{"name":"core","passwordHash":"x"}],"groups":[{"name":"g","gid":5}]}}`,
		`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"gs://b/o"}}]}}`,
		`{"ignition":{"version":"3.2.0"},"x":1,"X":2}`,
		`{"ignition":{"version":"3.2.0"},"unknown":{"a":1}}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzDifferential holds the decode to Ignition's own parser (v3_5.ParseCompatibleVersion, which
// runs each spec's own parser and translates up, as the machine-config operator does). For the same
// bytes read as an Ignition config, and again wrapped as a MachineConfig's spec.config:
//   - both accept: the configs are deep-equal (3.5 types);
//   - Ignition rejects, we accept: only when every fatal finding of Ignition's is a relative or unclean
//     path of a file, directory or link entry, which the decode keeps on purpose, marked dirty so
//     that the planner refuses it by name; and the plan against an empty node is indeed not eligible;
//   - we reject, Ignition accepts: allowed. The decode is stricter on purpose (duplicate or case-
//     variant keys, inline contents that do not match their hash or exceed the memory budget,
//     undecodable compressed contents, metadata files that are no MachineConfig).
//
// The ConfigMap's own encodings (gzip, base64, YAML) are not Ignition's and are not compared.
// DecodeAgainst (which trusts data URLs validated in the node's current payload) must read every
// input exactly as Decode does.
func FuzzDifferential(f *testing.F) {
	for _, s := range differentialSeeds() {
		f.Add(s)
	}
	empty, err := diff.Decode([]byte(`{"ignition":{"version":"3.5.0"}}`))
	if err != nil {
		f.Fatal(err)
	}
	known, err := diff.Decode(differentialSeeds()[2])
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// DecodeAgainst skips re-validating data URLs known valid: it must read exactly as Decode.
		a, errA := diff.DecodeAgainst(raw, known)
		d, errD := diff.Decode(raw)
		if (errA == nil) != (errD == nil) || errA == nil && !reflect.DeepEqual(a.Config, d.Config) {
			t.Fatalf("DecodeAgainst (%v) and Decode (%v) differ", errA, errD)
		}
		want, rpt, ierr := v35.ParseCompatibleVersion(raw)
		compare(t, empty, raw, "ignition", want, rpt.Entries, ierr)
		if json.Valid(raw) {
			mc := []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","spec":{"config":` +
				string(bytes.TrimSpace(raw)) + `}}`)
			compare(t, empty, mc, "machineconfig", want, rpt.Entries, ierr)
		}
	})
}

func compare(t *testing.T, empty *diff.Payload, raw []byte, wantForm diff.Form, want types.Config, findings []report.Entry, ierr error) {
	t.Helper()
	got, form, err := diff.DecodeForm(raw)
	if err != nil || form != wantForm {
		return
	}
	if ierr == nil {
		if !reflect.DeepEqual(got.Config, want) {
			g, _ := json.Marshal(got.Config)
			w, _ := json.Marshal(want)
			t.Fatalf("%s: the decode reads\n%s\nIgnition reads\n%s", form, g, w)
		}
		return
	}
	fatal := 0
	for _, e := range findings {
		if !e.Kind.IsFatal() {
			continue
		}
		fatal++
		path, ok := dirtyEntryPath(got.Config, e)
		if !ok {
			t.Fatalf("%s: Ignition rejects (%v at %s: %s), the decode accepts", form, ierr, e.Context.String(), e.Message)
		}
		if !got.DirtyPath(path) {
			t.Fatalf("%s: Ignition rejects path %q, the decode does not mark it dirty", form, path)
		}
	}
	if fatal == 0 {
		t.Fatalf("%s: Ignition rejects (%v), the decode accepts", form, ierr)
	}
	p, err := plan.Build(plan.Inputs{Current: empty, Desired: got})
	if err == nil && p.Eligible {
		t.Fatalf("%s: a payload with a dirty path plans eligible", form)
	}
}

// dirtyEntryPath reports whether e is Ignition's relative/unclean path error on a storage node entry,
// and that entry's path.
func dirtyEntryPath(cfg types.Config, e report.Entry) (string, bool) {
	if e.Message != ignerrors.ErrDirtyPath.Error() && e.Message != ignerrors.ErrPathRelative.Error() {
		return "", false
	}
	p := e.Context.Path
	if len(p) != 4 || p[0] != "storage" || p[3] != "path" {
		return "", false
	}
	i, ok := p[2].(int)
	if !ok {
		return "", false
	}
	switch s := cfg.Storage; {
	case p[1] == "files" && i < len(s.Files):
		return s.Files[i].Path, true
	case p[1] == "directories" && i < len(s.Directories):
		return s.Directories[i].Path, true
	case p[1] == "links" && i < len(s.Links):
		return s.Links[i].Path, true
	}
	return "", false
}

// Unknown keys are no error to Ignition (its report warns "unused key"), nor to the decode.
func TestUnknownKeysAreWarningsAsInIgnition(t *testing.T) {
	raw := []byte(`{"ignition":{"version":"3.2.0"},"unknown":{"a":1},"storage":{"files":[{"path":"/etc/a","colour":"blue"}]}}`)
	_, rpt, err := v35.ParseCompatibleVersion(raw)
	if err != nil || rpt.IsFatal() || len(rpt.Entries) == 0 {
		t.Fatalf("Ignition: %v, %v", err, rpt)
	}
	p, err := diff.Decode(raw)
	if err != nil || len(p.Config.Storage.Files) != 1 {
		t.Fatalf("decode: %v", err)
	}
}
