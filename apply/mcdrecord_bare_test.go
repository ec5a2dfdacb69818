package apply_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	ignition "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vincent-petithory/dataurl"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/memtest"
)

// Adversary r13 a/01, class 8: a bare Ignition payload (no MachineConfig, no embedded content file)
// on a node with the machine-config daemon's record left that record holding the old pull secret.
// Now the record receives itself with spec.config the desired config, in the same transaction.

// bare is a bare Ignition config whose files say secret: no MachineConfig, no metadata files.
func bare(secret string) *fixture.Config {
	return fixture.Ignition("3.2.0").
		File(registries, []byte("# "+secret+" mirrors"), 0o644).
		File(pullSecret, []byte(`{"auths":{"`+secret+`":{}}}`), 0o600).
		SSHKeys("ssh-ed25519 AAAA one")
}

// recordMachine is the reboot-class state of the node's record: every field set, none the
// defaults a refresh could mistake for "unchanged".
var recordMachine = fixture.Machine{OSImageURL: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:4444",
	KernelArguments: []string{"systemd.unified_cgroup_hierarchy=1", "nosmt"}, FIPS: true, KernelType: "realtime",
	Extensions: []string{"usbguard", "kerberos"}}

// nodeRecord is a daemon's record as the daemon writes it, indented (so that "every other member
// byte for byte" is visible), with metadata and baseOSExtensionsContainerImage besides m and cfg.
func nodeRecord(t *testing.T, m fixture.Machine, cfg []byte, drop ...string) []byte {
	t.Helper()
	var mc map[string]any
	require.NoError(t, json.Unmarshal(fixture.MachineConfigJSON(m, cfg), &mc))
	mc["metadata"] = map[string]any{"name": "rendered-worker-0a1b2c", "uid": "5f0c",
		"annotations": map[string]any{"machineconfiguration.openshift.io/generated-by-controller-version": "4.18.0"},
		"labels":      map[string]any{"machineconfiguration.openshift.io/role": "worker"}}
	mc["spec"].(map[string]any)["baseOSExtensionsContainerImage"] = "quay.io/openshift-release-dev/ext@sha256:5555"
	for _, k := range drop {
		delete(mc, k)
	}
	out, err := json.MarshalIndent(mc, "", "  ")
	require.NoError(t, err)
	return out
}

// newBareNode is a node refreshed to bare("old") (the agent's record a bare Ignition config), whose
// daemon record (mode 0600, core's) is record.
func newBareNode(t *testing.T, record []byte) (*node, string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	n := &node{dir: dir, units: &fakeUnits{fail: map[string]int{}}}
	n.Host = apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: n.units}
	empty, err := decode(fixture.Ignition("3.2.0").JSON())
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: bare("old").JSON(), Hash: "old", Current: empty})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	n.units.ran = nil
	mcd := filepath.Join(dir, "etc/mcd-currentconfig.json")
	if record != nil {
		require.NoError(t, os.WriteFile(mcd, record, 0o600))
		require.NoError(t, os.Chmod(mcd, 0o600))
		require.NoError(t, os.Chown(mcd, 1000, 1000))
	}
	return n, mcd
}

func (n *node) apply(t *testing.T, raw []byte, hash string, dry bool) *apply.Result {
	t.Helper()
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: raw, Hash: hash, DryRun: dry})
	require.NoError(t, err)
	return res
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// withoutConfig is a MachineConfig JSON's members but spec.config, decoded.
func withoutConfig(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(js, &m))
	delete(m["spec"].(map[string]any), "config")
	return m
}

func TestBareIgnitionPayloadRewritesTheMCDRecord(t *testing.T) {
	newJSON := bare("new").JSON()
	toYAML, err := yaml.JSONToYAML(newJSON)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		raw  []byte
		drop []string // members the node's record leaves out
	}{
		{name: "json", raw: newJSON},
		{name: "yaml", raw: toYAML},
		{name: "gzip", raw: gzipped(t, newJSON)},
		{name: "base64+gzip", raw: []byte(base64.StdEncoding.EncodeToString(gzipped(t, newJSON)))},
		{name: "record without kind and apiVersion", raw: newJSON, drop: []string{"kind", "apiVersion"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := nodeRecord(t, recordMachine, bare("old").JSON(), tc.drop...)
			n, mcd := newBareNode(t, old)

			// The dry run lists the record's write, with its mode and owner (the node's narrower
			// mode kept, root's), and writes nothing.
			before, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			res := n.apply(t, tc.raw, "new", true)
			require.Equal(t, api.OutcomePlanned, res.Outcome, res.Reason)
			assert.Contains(t, res.Writes, plan.Write{Path: apply.MCDCurrentConfig, Mode: "0600", ModeCeiling: "0600", OwnerCeiling: "root:root", For: "mcdCurrentConfig"})
			after, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			require.Equal(t, before, after, "the dry run wrote nothing")

			res = n.apply(t, tc.raw, "new", false)
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			assert.Contains(t, res.Writes, plan.Write{Path: apply.MCDCurrentConfig, Mode: "0600", ModeCeiling: "0600", OwnerCeiling: "root:root", For: "mcdCurrentConfig"})
			assert.Equal(t, `{"auths":{"new":{}}}`, n.read(t, pullSecret))

			got, err := os.ReadFile(mcd)
			require.NoError(t, err)
			fi, err := os.Stat(mcd)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the record's mode is kept")
			uid, gid := ids(fi)
			assert.Equal(t, [2]int{0, 0}, [2]int{uid, gid}, "the record is root's (r21 d/06)")

			// What the daemon reads: a MachineConfig whose spec.config parses as Ignition and holds
			// the new pull secret.
			var rec fixture.MCDRecord
			require.NoError(t, json.Unmarshal(got, &rec))
			assert.Equal(t, "MachineConfig", rec.Kind)
			assert.Equal(t, "machineconfiguration.openshift.io/v1", rec.APIVersion)
			cfg, rpt, err := ignition.Parse(rec.Spec.Config)
			require.NoError(t, err, "spec.config parses as Ignition: %s", rpt)
			assert.JSONEq(t, string(newJSON), string(rec.Spec.Config), "spec.config is the desired config")
			var secret string
			for _, f := range cfg.Storage.Files {
				if f.Path == pullSecret {
					secret = *f.Contents.Source
				}
			}
			d, err := decode(newJSON)
			require.NoError(t, err)
			for _, f := range d.Config.Storage.Files {
				if f.Path == pullSecret {
					assert.Equal(t, *f.Contents.Source, secret, "the record's pull secret is the new one")
				}
			}

			// Every other field is the node's: metadata, osImageURL, kernelArguments, fips,
			// kernelType, extensions, baseOSExtensionsContainerImage.
			want := withoutConfig(t, old)
			want["kind"], want["apiVersion"] = "MachineConfig", "machineconfiguration.openshift.io/v1"
			assert.Equal(t, want, withoutConfig(t, got))
			if len(tc.drop) == 0 {
				// Byte for byte: up to spec.config, and from the member after it on.
				i := bytes.Index(old, []byte(`"config": `)) + len(`"config": `)
				k := bytes.Index(old, []byte(",\n    \"extensions\""))
				require.Positive(t, i)
				require.Positive(t, k)
				assert.True(t, bytes.HasPrefix(got, old[:i]), "the members before spec.config as they were")
				assert.True(t, bytes.HasSuffix(got, old[k:]), "the members after spec.config as they were")
			}

			// A later bare payload, the baseline the agent's own record: rewritten again.
			res = n.apply(t, bare("newer").JSON(), "newer", false)
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			got, err = os.ReadFile(mcd)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(got, &rec))
			assert.JSONEq(t, string(bare("newer").JSON()), string(rec.Spec.Config))
			assert.Equal(t, want, withoutConfig(t, got))
		})
	}
}

// A record that is not the daemon's MachineConfig refuses the refresh whole, dry run and real run
// alike, naming the file and never its contents; nothing on the node changes.
func TestUnreadableMCDRecordRefusesABarePayload(t *testing.T) {
	const secret = "s3cr3t-of-the-old-record"
	good := string(nodeRecord(t, recordMachine, bare(secret).JSON()))
	for _, tc := range []struct {
		name, record, want string
	}{
		{"empty", "", "not a JSON object"},
		{"yaml", "kind: MachineConfig\nspec:\n  config: {}\n", "not a JSON object"},
		{"an array", "[" + good + "]", "not a JSON object"},
		{"truncated", good[:len(good)/2], "invalid JSON"},
		{"not a MachineConfig", `{"stale":true,"secret":"` + secret + `"}`, "no spec.config"},
		{"spec without config", `{"kind":"MachineConfig","spec":{"osImageURL":"x"}}`, "no spec.config"},
		{"spec.config not an object", `{"kind":"MachineConfig","spec":{"config":"` + secret + `"}}`, "spec.config is not a JSON object"},
		{"another kind", strings.Replace(good, `"kind": "MachineConfig"`, `"kind": "Pod"`, 1), `kind is "Pod"`},
		{"another apiVersion", strings.Replace(good, `"apiVersion": "machineconfiguration.openshift.io/v1"`, `"apiVersion": "v1"`, 1), `apiVersion is "v1"`},
		{"a key twice", strings.Replace(good, `"fips": true`, `"fips": true, "fips": false`, 1), "duplicate key"},
		{"a key in another case", strings.Replace(good, `"fips": true`, `"FIPS": true`, 1), "differs from a field name only in case"},
		{"a field of the wrong type", strings.Replace(good, `"fips": true`, `"fips": "yes"`, 1), "fips"},
		{"metadata the daemon cannot decode", strings.Replace(good, `"uid": "5f0c"`, `"uid": 7`, 1), "uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, mcd := newBareNode(t, []byte(tc.record))
			before, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			for _, dry := range []bool{true, false} {
				res := n.apply(t, bare("new").JSON(), "new", dry)
				require.Equal(t, api.OutcomeRefused, res.Outcome, "dry run %v: %s", dry, res.Reason)
				assert.Contains(t, res.Reason, apply.MCDCurrentConfig)
				assert.Contains(t, res.Reason, tc.want)
				assert.Contains(t, res.Reason, "refusing the refresh")
				assert.NotContains(t, res.Reason, secret, "the record's contents are never in a message")
				assert.Empty(t, res.Writes)
				require.NotEmpty(t, res.Plan.Refused)
				r := res.Plan.Refused[len(res.Plan.Refused)-1]
				assert.Equal(t, diff.KindMachineConfig, r.Kind)
				assert.Equal(t, apply.MCDCurrentConfig, r.Path)
				after, err := fixture.TreeHash(n.dir)
				require.NoError(t, err)
				require.Equal(t, before, after, "dry run %v: nothing written", dry)
			}
			assert.Equal(t, tc.record, n.read(t, "etc/mcd-currentconfig.json"))
			assert.Equal(t, `{"auths":{"old":{}}}`, n.read(t, pullSecret))
			assert.Equal(t, "old", apply.CurrentHash(n.StateDir))
			_ = mcd
		})
	}
}

// A record over the payload budget is never read whole: the refresh is refused naming it and the
// bound.
func TestOversizedMCDRecordRefusesABarePayload(t *testing.T) {
	n, mcd := newBareNode(t, []byte(`{"kind":"MachineConfig"}`))
	require.NoError(t, os.Truncate(mcd, 5<<30)) // sparse
	var res *apply.Result
	used := memtest.Allocated(func() { res = n.apply(t, bare("new").JSON(), "new", false) })
	require.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Contains(t, res.Reason, apply.MCDCurrentConfig+": file too large to read: more than")
	assert.Contains(t, res.Reason, "--max-payload-bytes")
	assert.Less(t, used, uint64(2*diff.MaxPayloadSize+(64<<20)), "allocated %d bytes for a 5 GB record", used)
	assert.Equal(t, `{"auths":{"old":{}}}`, n.read(t, pullSecret))
	fi, err := os.Stat(mcd)
	require.NoError(t, err)
	assert.Equal(t, int64(5<<30), fi.Size())
}

// mcPayload is a MachineConfig payload of m and cfg with the node record's extensions image.
func mcPayload(t *testing.T, m fixture.Machine, cfg []byte) []byte {
	return withExtensionsImage(t, fixture.MachineConfigJSON(m, cfg))
}

// withEmbedded replaces both of the machine-config server's embedded MachineConfigs by edit of them.
func withEmbedded(t *testing.T, raw []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	var cfg types.Config
	require.NoError(t, json.Unmarshal(raw, &cfg))
	for i, f := range cfg.Storage.Files {
		if f.Path != diff.MachineConfigContentPath && f.Path != diff.MachineConfigEncapsulatedPath {
			continue
		}
		u, err := dataurl.DecodeString(*f.Contents.Source)
		require.NoError(t, err)
		src := dataurl.EncodeBytes(edit(u.Data))
		cfg.Storage.Files[i].Contents.Source = &src
	}
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	return out
}

func withExtensionsImage(t *testing.T, js []byte) []byte {
	t.Helper()
	var mc map[string]any
	require.NoError(t, json.Unmarshal(js, &mc))
	mc["spec"].(map[string]any)["baseOSExtensionsContainerImage"] = "quay.io/openshift-release-dev/ext@sha256:5555"
	out, err := json.Marshal(mc)
	require.NoError(t, err)
	return out
}

// A MachineConfig payload against a bare baseline is compared with the node's record as with a
// MachineConfig baseline: a reboot-class field that differs from the record's is refused; the same
// fields apply, and the record receives the payload.
func TestMachineConfigPayloadIsComparedWithTheNodesRecord(t *testing.T) {
	with := func(edit func(*fixture.Machine)) fixture.Machine {
		m := recordMachine
		m.KernelArguments = append([]string{}, m.KernelArguments...)
		m.Extensions = append([]string{}, m.Extensions...)
		edit(&m)
		return m
	}
	for _, tc := range []struct {
		name      string
		machine   fixture.Machine
		embed     bool   // the machine-config server's metadata files, not a MachineConfig payload
		noContent bool   // of them only the encapsulated one
		want      string // "" applies
	}{
		{name: "the record's fields, without the content file", machine: recordMachine, embed: true, noContent: true, want: "cannot verify reboot-class fields"},
		{name: "the record's fields", machine: recordMachine},
		{name: "the record's fields, embedded", machine: recordMachine, embed: true},
		{name: "extensions reordered", machine: with(func(m *fixture.Machine) { m.Extensions = []string{"kerberos", "usbguard"} })},
		{name: "osImageURL", machine: with(func(m *fixture.Machine) { m.OSImageURL = "quay.io/x@sha256:9999" }), want: "OS image change requires a reboot"},
		{name: "osImageURL, embedded", machine: with(func(m *fixture.Machine) { m.OSImageURL = "quay.io/x@sha256:9999" }), embed: true, want: "OS image change requires a reboot"},
		{name: "kernelArguments", machine: with(func(m *fixture.Machine) { m.KernelArguments = m.KernelArguments[:1] }), want: "kernel arguments change requires a reboot"},
		{name: "fips", machine: with(func(m *fixture.Machine) { m.FIPS = false }), want: "FIPS mode change requires a reboot"},
		{name: "kernelType", machine: with(func(m *fixture.Machine) { m.KernelType = "" }), want: "kernel type change requires a reboot"},
		{name: "extensions", machine: with(func(m *fixture.Machine) { m.Extensions = m.Extensions[:1] }), want: "extensions change requires a reboot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, mcd := newBareNode(t, nodeRecord(t, recordMachine, bare("old").JSON()))
			var err error
			raw := mcPayload(t, tc.machine, bare("new").JSON())
			if tc.embed {
				raw = withEmbedded(t, bare("new").EmbedMachine(tc.machine).JSON(), func(js []byte) []byte { return withExtensionsImage(t, js) })
				if tc.noContent {
					var cfg types.Config
					require.NoError(t, json.Unmarshal(raw, &cfg))
					cfg.Storage.Files = slices.DeleteFunc(cfg.Storage.Files, func(f types.File) bool { return f.Path == diff.MachineConfigContentPath })
					raw, err = json.Marshal(cfg)
					require.NoError(t, err)
				}
			}
			before, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			for _, dry := range []bool{true, false} {
				res := n.apply(t, raw, "new", dry)
				if tc.want == "" {
					want := api.OutcomePlanned
					if !dry {
						want = api.OutcomeApplied
					}
					require.Equal(t, want, res.Outcome, res.Reason)
					continue
				}
				require.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
				assert.Contains(t, res.Reason, tc.want)
				after, err := fixture.TreeHash(n.dir)
				require.NoError(t, err)
				require.Equal(t, before, after, "refused: nothing written")
			}
			if tc.want != "" {
				return
			}
			got, err := os.ReadFile(mcd)
			require.NoError(t, err)
			if !tc.embed {
				assert.Equal(t, string(raw), string(got), "the record is the desired MachineConfig, byte for byte")
			}
			var rec fixture.MCDRecord
			require.NoError(t, json.Unmarshal(got, &rec))
			assert.Equal(t, "rendered-worker", rec.Metadata.Name, "the record is the desired MachineConfig")
			assert.Equal(t, `{"auths":{"new":{}}}`, n.read(t, pullSecret))
		})
	}
	// A record that cannot be read leaves the fields unverifiable: refused, naming it.
	n, _ := newBareNode(t, []byte(`{"stale":true}`))
	res := n.apply(t, mcPayload(t, recordMachine, bare("new").JSON()), "new", false)
	require.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
	assert.Contains(t, res.Reason, apply.MCDCurrentConfig)
	assert.Contains(t, res.Reason, "no spec.config")
}

// The record is one entry of the transaction: a refresh that rolls back leaves it as it was, byte for
// byte; one read again at staging time that is no longer a MachineConfig fails the refresh, nothing
// changed; one killed after the commit is rolled forward by recovery, and recorded (rule 16: the
// payload's files show it applied), with the new record.
func TestMCDRecordIsOneEntryOfTheTransaction(t *testing.T) {
	old := nodeRecord(t, recordMachine, bare("old").JSON())

	t.Run("rolled back", func(t *testing.T) {
		n, mcd := newBareNode(t, old)
		n.units.fail["crio.service"] = 1 // the refresh's reload fails, the rollback's runs
		res := n.apply(t, bare("new").JSON(), "new", false)
		require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
		require.True(t, res.RolledBack, res.Reason)
		got, err := os.ReadFile(mcd)
		require.NoError(t, err)
		assert.Equal(t, string(old), string(got), "the record as it was")
		assert.Equal(t, `{"auths":{"old":{}}}`, n.read(t, pullSecret))
	})

	t.Run("changed before staging", func(t *testing.T) {
		n, mcd := newBareNode(t, old)
		p, err := apply.Prepare(context.Background(), n.Host, apply.Request{Desired: bare("new").JSON(), Hash: "new"})
		require.NoError(t, err)
		require.Empty(t, p.Result().Outcome, p.Result().Reason)
		require.NoError(t, os.WriteFile(mcd, []byte(`{"stale":true}`), 0o600))
		res, err := p.Execute(context.Background(), nil)
		require.NoError(t, err)
		require.Equal(t, api.OutcomeFailed, res.Outcome, res.Reason)
		assert.Contains(t, res.Reason, apply.MCDCurrentConfig)
		assert.Equal(t, `{"stale":true}`, n.read(t, "etc/mcd-currentconfig.json"))
		assert.Equal(t, `{"auths":{"old":{}}}`, n.read(t, pullSecret))
		assert.Equal(t, "old", apply.CurrentHash(n.StateDir))
	})

	t.Run("killed after the commit", func(t *testing.T) {
		n, mcd := newBareNode(t, old)
		cmd := exec.Command(os.Args[0], "-test.run=^TestMCDRecordCrashHelper$")
		cmd.Env = append(os.Environ(), mcdCrashEnv+"=1", "ROOT="+n.dir, "STATE="+n.StateDir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		line, _ := bufio.NewReader(out).ReadString('\n')
		_, _ = io.Copy(io.Discard, out)
		werr := cmd.Wait()
		require.Equal(t, "killed\n", line)
		var ee *exec.ExitError
		require.ErrorAs(t, werr, &ee)
		require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())

		phase, _, err := actions.Peek(n.StateDir)
		require.NoError(t, err)
		require.Equal(t, actions.PhaseCommitted, phase)
		rec, err := apply.Recover(context.Background(), n.Host)
		require.NoError(t, err)
		assert.Equal(t, api.OutcomeApplied, rec.Outcome, rec.Reason)
		assert.True(t, rec.Recorded, "rule 16: the payload's files show it applied")
		assert.Equal(t, "new", apply.CurrentHash(n.StateDir))
		got, err := os.ReadFile(mcd)
		require.NoError(t, err)
		var r fixture.MCDRecord
		require.NoError(t, json.Unmarshal(got, &r))
		assert.JSONEq(t, string(bare("new").JSON()), string(r.Spec.Config))
		assert.Equal(t, withoutConfig(t, old), withoutConfig(t, got))
		assert.Equal(t, `{"auths":{"new":{}}}`, n.read(t, pullSecret))
	})
}

const mcdCrashEnv = "REFRESH_AGENT_MCD_RECORD_CRASH_HELPER"

// TestMCDRecordCrashHelper refreshes the node at ROOT (state dir STATE) to bare("new") and kills
// itself in the unit action, after the commit.
func TestMCDRecordCrashHelper(t *testing.T) {
	if os.Getenv(mcdCrashEnv) == "" {
		t.Skip("the crash test's process")
	}
	root, err := actions.OpenRoot(os.Getenv("ROOT"))
	require.NoError(t, err)
	units := &fakeUnits{fail: map[string]int{}, hook: func(context.Context, plan.UnitAction) error {
		fmt.Println("killed")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}}
	_, _ = apply.Run(context.Background(), apply.Host{Root: root, StateDir: os.Getenv("STATE"), Units: units},
		apply.Request{Desired: bare("new").JSON(), Hash: "new"})
	t.Fatal("not killed")
}

// Adversary r21 d/06: the record holds every file of the config, the pull secret among them; one
// on the node that core owns and anyone can write (0666) was rewritten so, handing them the new
// pull secret. It is written as the secret is: 0600 at most, root's.
func TestTheMCDRecordIsNeverWiderThanTheDaemonWritesIt(t *testing.T) {
	newJSON := nodeRecord(t, recordMachine, bare("new").JSON())
	n, mcd := newBareNode(t, nodeRecord(t, recordMachine, bare("old").JSON()))
	require.NoError(t, os.Chmod(mcd, 0o666))
	res := n.apply(t, newJSON, "new", true)
	require.Equal(t, api.OutcomePlanned, res.Outcome, res.Reason)
	assert.Contains(t, res.Writes, plan.Write{Path: apply.MCDCurrentConfig, Mode: "0600", ModeCeiling: "0600", OwnerCeiling: "root:root", For: "mcdCurrentConfig"})
	res = n.apply(t, newJSON, "new", false)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	fi, err := os.Stat(mcd)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	uid, gid := ids(fi)
	assert.Equal(t, [2]int{0, 0}, [2]int{uid, gid})
	assert.Contains(t, n.read(t, "/etc/mcd-currentconfig.json"), base64.StdEncoding.EncodeToString([]byte(`{"auths":{"new":{}}}`)), "rewritten")
}
