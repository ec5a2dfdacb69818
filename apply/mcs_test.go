package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/critest"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/mcs"
)

const nodeName = "node-1"

// mcsNode is a node root provisioned by Ignition from base's served payload and never refreshed:
// no record of the agent's, only what the machine-config server left (its content file).
type mcsNode struct {
	apply.Host
	dir   string
	units *fakeUnits
	cri   *critest.Runtime
}

func provision(t *testing.T, base *mcs.Pool) *mcsNode {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, fixture.NodeRoot(dir))
	if base != nil {
		require.NoError(t, base.Provision(dir))
	}
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	rt := critest.Start(t)
	rt.AddPod("kube-system", "kube-apiserver-proxy-"+nodeName, true)
	pods, err := actions.DialCRI(rt.Socket, nodeName)
	require.NoError(t, err)
	t.Cleanup(pods.Close)
	n := &mcsNode{dir: dir, units: &fakeUnits{fail: map[string]int{}}, cri: rt}
	n.Host = apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: n.units, Pods: pods}
	return n
}

func (n *mcsNode) apply(t *testing.T, served []byte, hash string) *apply.Result {
	t.Helper()
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: mcs.ConfigMapValue(served), Hash: hash})
	require.NoError(t, err)
	return res
}

// ran lists the actions run, units as "Reload crio.service", pods as "Restart pod ns/name".
func (n *mcsNode) ran() []string {
	var out []string
	for _, a := range n.units.ran {
		out = append(out, string(a.Action)+" "+a.Unit)
	}
	if n.cri.Stops("kube-apiserver-proxy-"+nodeName) > 0 {
		out = append(out, "Restart pod "+"kube-system/kube-apiserver-proxy")
	}
	return out
}

// The first refresh of a node provisioned from P, with P: nothing to do, P becomes the record.
func TestFirstRefreshOfTheProvisioningPayloadIsANoop(t *testing.T) {
	base := mcs.Base()
	base.CloudCA = []byte("cloud ca\n")
	base.RegistryCAs = map[string][]byte{"quay.io": []byte("registry ca\n")}
	n := provision(t, base)
	before := treeHashes(t, n.dir)
	res := n.apply(t, base.Served(), "P")
	require.Equal(t, api.OutcomeNoop, res.Outcome, "%s %+v", res.Reason, res.Changes)
	for _, c := range res.Changes {
		assert.NotEmpty(t, c.Skipped, "only skipped changes: %+v", c)
	}
	assert.Equal(t, "P", apply.CurrentHash(n.StateDir))
	assert.Empty(t, n.ran())
	assert.Equal(t, before, treeHashes(t, n.dir), "nothing on the node changed")
}

// treeHashes hashes the node's /etc, /usr and core's home (not the agent's state dir).
func treeHashes(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, d := range []string{"etc", "usr", "var/home", "var/lib/kubelet"} {
		h, err := fixture.TreeHash(filepath.Join(dir, d))
		require.NoError(t, err)
		out = append(out, h)
	}
	return out
}

// Each eligible change, as the first refresh after provisioning and as a later one: eligible with
// exactly its own changes and actions, applied with the right bytes, modes and owners.
func TestEligibleMCSChanges(t *testing.T) {
	for _, s := range mcs.Eligible() {
		for _, first := range []bool{true, false} {
			name := s.Name + map[bool]string{true: "/first-refresh", false: "/recorded"}[first]
			t.Run(name, func(t *testing.T) {
				base := mcs.Base()
				n := provision(t, base)
				if !first {
					require.Equal(t, api.OutcomeNoop, n.apply(t, base.Served(), "P").Outcome)
				}
				want := s.Change(base.Clone())
				res := n.apply(t, want.Served(), "P2")
				require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
				var written []string
				for _, c := range res.Changes {
					if c.Skipped != "" {
						continue
					}
					require.True(t, c.Eligible, "%+v", c)
					if c.Path != "" {
						written = append(written, c.Path)
					} else {
						written = append(written, "/var/home/core/.ssh/authorized_keys.d/ignition")
					}
				}
				slices.Sort(written)
				wantPaths := slices.Sorted(slices.Values(s.Paths))
				assert.Equal(t, wantPaths, written)
				assert.Equal(t, s.Actions, n.ran())
				assert.Equal(t, "P2", apply.CurrentHash(n.StateDir))
				checkFiles(t, n.dir, want)
			})
		}
	}
}

// checkFiles asserts every file of the pool (and what the server adds) is on disk with its bytes
// and mode, owned by root, and core's keys are in place owned by core.
func checkFiles(t *testing.T, dir string, p *mcs.Pool) {
	t.Helper()
	files := p.Files
	for path, f := range p.ServerAdded() {
		if path != mcs.Kubeconfig {
			files[path] = f
		}
	}
	for path, f := range files {
		full := filepath.Join(dir, path)
		data, err := os.ReadFile(full)
		require.NoError(t, err, path)
		assert.Equal(t, string(f.Data), string(data), path)
		fi, err := os.Stat(full)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(f.Mode), fi.Mode().Perm(), path)
		uid, gid := ids(fi)
		assert.Equal(t, [2]int{0, 0}, [2]int{uid, gid}, path)
	}
	keys := filepath.Join(dir, "var/home/core/.ssh/authorized_keys.d/ignition")
	data, err := os.ReadFile(keys)
	require.NoError(t, err)
	want := ""
	for _, k := range p.SSHKeys {
		want += k + "\n"
	}
	assert.Equal(t, want, string(data))
	fi, err := os.Stat(keys)
	require.NoError(t, err)
	uid, gid := ids(fi)
	assert.Equal(t, [2]int{1000, 1000}, [2]int{uid, gid})
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
}

// Each reboot-class change is refused with its kind and writes nothing, first refresh or not.
func TestRefusedMCSChanges(t *testing.T) {
	for _, s := range mcs.Refused() {
		t.Run(s.Name, func(t *testing.T) {
			base := mcs.Base()
			n := provision(t, base)
			before, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			res := n.apply(t, s.Change(base.Clone()).Served(), "bad")
			require.Equal(t, api.OutcomeRefused, res.Outcome)
			var kinds []string
			for _, r := range res.Refused {
				if !slices.Contains(kinds, string(r.Kind)) {
					kinds = append(kinds, string(r.Kind))
				}
			}
			slices.Sort(kinds)
			assert.Equal(t, s.Refused, kinds)
			after, err := fixture.TreeHash(n.dir)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing written")
			assert.Empty(t, n.ran())
		})
	}
}

// A first refresh with P plus a change to a server-added file that differs on disk sees exactly
// that change; a server-added file missing on disk is an addition.
func TestFirstRefreshBaselineIsTheDisk(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	require.NoError(t, os.Remove(filepath.Join(n.dir, mcs.KubeletCA)))
	res := n.apply(t, base.Served(), "P")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	var changed []string
	for _, c := range res.Changes {
		if c.Skipped == "" {
			changed = append(changed, string(c.Op)+" "+c.Path)
		}
	}
	assert.Equal(t, []string{"add " + mcs.KubeletCA}, changed)
	data, err := os.ReadFile(filepath.Join(n.dir, mcs.KubeletCA))
	require.NoError(t, err)
	assert.Equal(t, string(base.KubeletCA), string(data))
}

// haproxy.cfg takes effect: the static pod is restarted through the CRI after the file is written,
// and a pod that does not come back rolls the file back (and restarts the pod on the old config).
func TestHAProxyConfigRestartsThePod(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	require.Equal(t, api.OutcomeNoop, n.apply(t, base.Served(), "P").Outcome)
	var s mcs.Scenario
	for _, e := range mcs.Eligible() {
		if e.Name == "haproxy-cfg" {
			s = e
		}
	}
	old := n.cri.Ready("kube-apiserver-proxy-" + nodeName)
	res := n.apply(t, s.Change(base.Clone()).Served(), "P2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	require.Len(t, res.Actions, 1)
	assert.Equal(t, "kube-system/kube-apiserver-proxy", res.Actions[0].Pod)
	now := n.cri.Ready("kube-apiserver-proxy-" + nodeName)
	require.Len(t, now, 1)
	assert.NotEqual(t, old, now, "a new sandbox")

	// The pod does not come back: rolled back, the old config restored.
	n.cri.NoRecreate = true
	n.Pods.Timeout = 500e6
	p3 := base.Clone()
	p3.Files[mcs.HAProxyCfg] = mcs.File{Data: []byte("global\n  maxconn 1\n"), Mode: 0o644}
	res = n.apply(t, p3.Served(), "P3")
	assert.Equal(t, api.OutcomeFailed, res.Outcome)
	assert.True(t, res.RolledBack)
	assert.Contains(t, res.Reason, "kube-apiserver-proxy")
	data, err := os.ReadFile(filepath.Join(n.dir, mcs.HAProxyCfg))
	require.NoError(t, err)
	assert.Equal(t, string(s.Change(base.Clone()).Files[mcs.HAProxyCfg].Data), string(data))
	assert.Equal(t, "P2", apply.CurrentHash(n.StateDir))
}

// Payloads the machine-config server really served (../shared/real-payloads beside the repository),
// when present: every eligible scenario applies with its actions on a node provisioned from the base
// payload (first refresh), every reboot-class one is refused with its kind. The payloads are never
// copied into the repository; the test extracts them into a temp dir.
func TestRealServedPayloads(t *testing.T) {
	dir := realServed(t)
	read := func(s string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, s+".ign"))
		require.NoError(t, err)
		return b
	}
	eligible := map[string][]string{
		"pullsecret": nil, "mirror": {"Reload crio.service"}, "sshkeys": nil, "haproxy": nil, "kubeletca": nil,
		"userca": {"Restart coreos-update-ca-trust.service", "Restart crio.service"},
		"regd":   {"Reload crio.service"}, "policygz": {"Reload crio.service"},
		"multi": {"Restart coreos-update-ca-trust.service", "Restart crio.service"},
	}
	refused := map[string][]string{
		"osimage": {"osImage"}, "kargs": {"kernelArguments"}, "ignkargs": {"kernelArguments"}, "fips": {"fips"},
		"extensions": {"extensions"}, "kerneltype": {"kernelType"}, "kubeletconfig": {"file"},
		"multipath": {"file", "unit"}, "bigfiles": {"file"},
	}
	base := read("base")
	t.Run("base", func(t *testing.T) {
		n := provisionServed(t, base)
		res := n.apply(t, base, "P")
		assert.Equal(t, api.OutcomeNoop, res.Outcome, "%s %+v", res.Reason, res.Refused)
	})
	// The served mirror change replaces a mirror: the machine-config daemon's registries.conf rule
	// drains for that; without an API client the drain is skipped and said so.
	needsDrain := map[string]bool{"mirror": true, "multi": true}
	for s, actions := range eligible {
		t.Run(s, func(t *testing.T) {
			n := provisionServed(t, base)
			res := n.apply(t, read(s), "P2")
			assert.Equal(t, needsDrain[s], res.DrainSkipped, s)
			require.Equal(t, api.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
			assert.Equal(t, actions, n.ran())
		})
	}
	for s, kinds := range refused {
		t.Run(s, func(t *testing.T) {
			n := provisionServed(t, base)
			res := n.apply(t, read(s), "bad")
			require.Equal(t, api.OutcomeRefused, res.Outcome)
			var got []string
			for _, r := range res.Refused {
				if !slices.Contains(got, string(r.Kind)) {
					got = append(got, string(r.Kind))
				}
			}
			slices.Sort(got)
			assert.Equal(t, kinds, got)
		})
	}
}

// realServed extracts shared/real-payloads/mco-served/served.tar.xz, or skips.
func realServed(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	var tarball string
	for d := wd; d != "/" && tarball == ""; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			tarball = filepath.Join(d, "..", "shared", "real-payloads", "mco-served", "served.tar.xz")
		}
	}
	if _, err := os.Stat(tarball); err != nil {
		t.Skip("no ../shared/real-payloads beside the repository")
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xJf", tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot extract %s: %v %s", tarball, err, out)
	}
	return filepath.Join(dir, "served")
}

// provisionServed lays out a node root as Ignition leaves it after booting from served.
func provisionServed(t *testing.T, served []byte) *mcsNode {
	t.Helper()
	n := provision(t, nil)
	p, err := diff.Decode(served)
	require.NoError(t, err)
	for _, f := range p.Config.Storage.Files {
		data, err := diff.FileContents(f)
		require.NoError(t, err)
		full := filepath.Join(n.dir, f.Path)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, data, fs.FileMode(diff.FileMode(f))))
		require.NoError(t, os.Chmod(full, fs.FileMode(diff.FileMode(f))))
	}
	return n
}

// A root with no /var at all: the state dir and the file's parents are created (0755), not an
// "exists" error.
func TestApplyCreatesParentsUpToVar(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("root:x:0:\n"), 0o644))
	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	base := mcs.Base()
	cur, err := diff.Decode(base.Served())
	require.NoError(t, err)
	next := base.Clone()
	next.Files[mcs.PullSecret] = mcs.File{Data: []byte(`{"auths":{}}`), Mode: 0o600}
	res, err := apply.Run(context.Background(), apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: actions.NoUnits{}},
		apply.Request{Desired: next.Served(), Current: cur})
	require.NoError(t, err)
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	for _, d := range []string{"var", "var/lib", "var/lib/kubelet"} {
		fi, err := os.Stat(filepath.Join(dir, d))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm(), d)
	}
	data, err := os.ReadFile(filepath.Join(dir, mcs.PullSecret))
	require.NoError(t, err)
	assert.Equal(t, `{"auths":{}}`, string(data))
}

// The disk baseline never reads a file larger than its bound: a payload naming a huge file on the
// node (or a device) gets a change from unknown contents judged by the policy (a modification: the
// file is there), not a read of the whole file.
func TestFirstRefreshBaselineIsBounded(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	big := filepath.Join(n.dir, "var/lib/containers/storage/blob")
	require.NoError(t, os.MkdirAll(filepath.Dir(big), 0o755))
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // sparse: 1 GiB that a read would allocate
	require.NoError(t, f.Close())
	next := base.Clone()
	next.Files["/var/lib/containers/storage/blob"] = mcs.File{Data: []byte("x"), Mode: 0o644}
	res := n.apply(t, next.Served(), "P2")
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	require.Len(t, res.Refused, 1)
	assert.Equal(t, "/var/lib/containers/storage/blob", res.Refused[0].Path)
	assert.Equal(t, "modify", string(res.Changes[len(res.Changes)-1].Op))
}

// Round 9 (core 07): on a first refresh whose MachineConfig lacks registries.conf, the node's own
// file is the baseline; one too large to read (a 5 MB comment) was an addition, judged as a file that
// was not there: removing a registry needed no drain. A node file the baseline does not read is a
// modification from unknown contents, which the registries.conf rule drains for, as it does for a
// current file over its own 1 MiB bound, and for one it reads whole.
func TestFirstRefreshLargeNodeRegistriesConfDrains(t *testing.T) {
	node := string(mcs.Base().Files[mcs.RegistriesConf].Data) // with a digest-only mirror
	for _, pad := range []int{0, 1_100_000, 5_000_000, 9 << 20} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			base := mcs.Base()
			delete(base.Files, mcs.RegistriesConf)
			n := provision(t, base)
			full := filepath.Join(n.dir, mcs.RegistriesConf)
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			require.NoError(t, os.WriteFile(full, []byte(node+"#"+strings.Repeat("x", pad)+"\n"), 0o644))
			next := base.Clone()
			// The registry without its mirror: removing a mirror needs a drain.
			next.Files[mcs.RegistriesConf] = mcs.File{Data: []byte("unqualified-search-registries = [\"registry.access.redhat.com\", \"docker.io\"]\n" +
				"short-name-mode = \"\"\n\n[[registry]]\n  prefix = \"\"\n  location = \"registry.product.example.org/ocp/release\"\n"), Mode: 0o644}
			res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: mcs.ConfigMapValue(next.Served()), Hash: "P2", DryRun: true})
			require.NoError(t, err)
			require.Equal(t, api.OutcomePlanned, res.Outcome, "%s %+v", res.Reason, res.Refused)
			var ops []string
			for _, c := range res.Changes {
				if c.Path == mcs.RegistriesConf {
					ops = append(ops, string(c.Op))
				}
			}
			assert.Equal(t, []string{"modify"}, ops)
			assert.True(t, res.Drain, "%v", res.Plan.DrainReasons)
			require.Len(t, res.Plan.DrainReasons, 1)
			if pad > 4<<20 {
				assert.Contains(t, res.Plan.DrainReasons[0], "current file not judged: the node's file was not read")
			}
		})
	}
}

// The plan is the whole truth: a dry run resolves every write against the node (owners, the keys
// file under core's home, symlink checks) and changes nothing, recovery and record included; the
// real run then does exactly those writes.
func TestDryRunIsTheWholePlan(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	var multi mcs.Scenario
	for _, s := range mcs.Eligible() {
		if s.Name == "multi" {
			multi = s
		}
	}
	next := multi.Change(base.Clone()).Served()
	before, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: mcs.ConfigMapValue(next), Hash: "P2", DryRun: true})
	require.NoError(t, err)
	require.Equal(t, api.OutcomePlanned, res.Outcome, res.Reason)
	after, err := fixture.TreeHash(n.dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a dry run writes nothing, not even the state dir")
	assert.Empty(t, n.ran())
	var paths []string
	for _, w := range res.Writes {
		paths = append(paths, w.Path)
		if w.For == "sshKeys" {
			assert.Equal(t, [2]int{1000, 1000}, [2]int{w.UID, w.GID})
			assert.Equal(t, "0600", w.Mode)
		}
	}
	assert.ElementsMatch(t, multi.Paths, paths)

	real := n.apply(t, next, "P2")
	require.Equal(t, api.OutcomeApplied, real.Outcome, real.Reason)
	assert.Equal(t, res.Writes, real.Writes, "the run does what the dry run said")

	// A symlinked parent is a refusal of the dry run too, with nothing written.
	require.NoError(t, os.Rename(filepath.Join(n.dir, "etc/containers"), filepath.Join(n.dir, "etc/containers.real")))
	require.NoError(t, os.Symlink("/tmp", filepath.Join(n.dir, "etc/containers")))
	mirror := base.Clone()
	mirror.Files[mcs.RegistriesConf] = mcs.File{Data: []byte("# changed\n"), Mode: 0o644}
	res, err = apply.Run(context.Background(), n.Host, apply.Request{Desired: mirror.Served(), Hash: "P3", DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, api.OutcomeRefused, res.Outcome)
	assert.Contains(t, res.Reason, "symlink")
	assert.Empty(t, res.Writes)
}

// A node file far larger than any the server adds (sparse here) is neither read for the baseline
// nor for the drift check: the change is planned from its size alone (adversarial run: 21 GB RSS).
func TestHugeNodeFileIsNeverRead(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	f, err := os.OpenFile(filepath.Join(n.dir, mcs.KubeletCA), os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(8<<30))
	require.NoError(t, f.Close())
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: base.Served(), Hash: "P", DryRun: true})
	require.NoError(t, err)
	require.Equal(t, api.OutcomePlanned, res.Outcome, res.Reason)
	require.Len(t, res.Writes, 1)
	assert.Equal(t, mcs.KubeletCA, res.Writes[0].Path)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "too large to compare")
}

// A state dir inside the root that passes through a symlink is refused before anything is read
// or written there: the record and the payload (a pull secret) would land outside the root.
func TestSymlinkedStateDirIsRefused(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(n.dir, "var/lib"), 0o755))
	require.NoError(t, os.Symlink(outside, n.StateDir))
	next := base.Clone()
	next.Files[mcs.PullSecret] = mcs.File{Data: []byte(`{"auths":{"x":{}}}`), Mode: 0o600}
	for _, dry := range []bool{true, false} {
		_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: next.Served(), Hash: "P2", DryRun: dry})
		require.ErrorIs(t, err, actions.ErrSymlink)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written outside the root")
	_, err = apply.Recover(context.Background(), n.Host)
	assert.ErrorIs(t, err, actions.ErrSymlink)
}

// core's home comes from the node's /etc/passwd; keys are written under /var/home/ or /home/ only,
// never /root or a relative home (adversarial run: /root was created owned by core).
func TestSSHKeysOnlyUnderAHome(t *testing.T) {
	for _, home := range []string{"/root", "../../../tmp/x", "/var/home/../../etc", ""} {
		base := mcs.Base()
		n := provision(t, base)
		passwd := "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:" + home + ":/bin/bash\n"
		require.NoError(t, os.WriteFile(filepath.Join(n.dir, "etc/passwd"), []byte(passwd), 0o644))
		before := treeHashes(t, n.dir)
		next := base.Clone()
		next.SSHKeys = append(next.SSHKeys, "ssh-ed25519 AAAA second")
		res := n.apply(t, next.Served(), "P2")
		assert.Equal(t, api.OutcomeRefused, res.Outcome, home)
		assert.Contains(t, res.Reason, "not under /var/home/ or /home/", home)
		assert.Equal(t, before, treeHashes(t, n.dir), home)
		_, err := os.Stat(filepath.Join(n.dir, "root"))
		assert.True(t, os.IsNotExist(err), home)
	}
}

// A refresh killed while preparing is found and undone by recovery, and says so (adversarial run:
// it cleaned up and printed "found": false).
func TestRecoverReportsAnInterruptedPrepare(t *testing.T) {
	n := provision(t, mcs.Base())
	require.NoError(t, os.MkdirAll(n.StateDir, 0o700))
	tmp := filepath.Join(n.dir, "etc/containers/.registries.conf.refresh-agent-tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("half"), 0o600))
	j := `{"version":2,"phase":"preparing","meta":{"hash":"x"},"entries":[{"path":"/etc/containers/registries.conf","temp":"/etc/containers/.registries.conf.refresh-agent-tmp"}]}`
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
	rec, err := apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	assert.True(t, rec.Found)
	assert.Equal(t, api.OutcomeFailed, rec.Outcome)
	_, err = os.Stat(tmp)
	assert.True(t, os.IsNotExist(err), "the temp file is cleaned up")
	rec, err = apply.Recover(context.Background(), n.Host)
	require.NoError(t, err)
	assert.False(t, rec.Found, "nothing left")
}

// A hash prints as itself or is invalid: it is recorded, annotated and shown (adversarial run 2).
func TestHostileHashIsInvalid(t *testing.T) {
	n := provision(t, mcs.Base())
	for _, h := range []string{"v1\nresult: applied", "v1\x1b[2J", strings.Repeat("a", 254), "v 1"} {
		_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: mcs.Base().Served(), Hash: h})
		var inv *apply.InvalidError
		assert.ErrorAs(t, err, &inv, "%q", h)
	}
	res := n.apply(t, mcs.Base().Served(), "rendered-worker-0a1b2c:sha256/abc")
	assert.Equal(t, api.OutcomeNoop, res.Outcome)
}

// A state dir another user can write into is refused before its journal or record is read: a
// journal planted there would otherwise steer root's recovery (adversary r11 core/05).
func TestStateDirOthersCanWriteIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		spoil      func(dir string) error
	}{
		{"mode 0777", "writable by group or others", func(d string) error { return os.Chmod(d, 0o777) }},
		{"group-writable", "writable by group or others", func(d string) error { return os.Chmod(d, 0o770) }},
		{"owned by another user", "not the agent's", func(d string) error {
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			return os.Chown(d, 1000, 1000)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { stateDirRefused(t, tc.spoil, tc.want) })
	}
}

func stateDirRefused(t *testing.T, spoil func(string) error, want string) {
	base := mcs.Base()
	n := provision(t, base)
	require.NoError(t, os.MkdirAll(n.StateDir, 0o700))
	require.NoError(t, spoil(n.StateDir))
	tmp := filepath.Join(n.dir, "etc/containers/.registries.conf.refresh-agent-tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("half"), 0o600))
	j := `{"version":2,"phase":"preparing","meta":{"hash":"x"},"entries":[{"path":"/etc/containers/registries.conf","temp":"/etc/containers/.registries.conf.refresh-agent-tmp"}]}`
	require.NoError(t, os.WriteFile(filepath.Join(n.StateDir, "journal.json"), []byte(j), 0o600))
	before := treeHashes(t, n.dir)
	next := base.Clone()
	next.Files[mcs.PullSecret] = mcs.File{Data: []byte(`{"auths":{"x":{}}}`), Mode: 0o600}
	for _, dry := range []bool{true, false} {
		_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: next.Served(), Hash: "P2", DryRun: dry})
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
	_, err := apply.Recover(context.Background(), n.Host)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.Equal(t, before, treeHashes(t, n.dir), "nothing touched")
}

// Adversary r21 b2/01: a state dir outside the root was not checked at all, so one another user
// made (a squat under /tmp) held a journal root trusted. It is checked as one inside the root is,
// its ancestors and the symlinks that lead to it too.
func TestStateDirOutsideTheRootIsChecked(t *testing.T) {
	asRoot := func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to chown")
		}
	}
	for _, tc := range []struct {
		name, want string
		spoil      func(t *testing.T, outside, state string) string // the state dir to use
	}{
		{"mode 0777", "writable by group or others", func(t *testing.T, _, s string) string {
			require.NoError(t, os.MkdirAll(s, 0o700))
			require.NoError(t, os.Chmod(s, 0o777))
			return s
		}},
		{"owned by another user", "not the agent's", func(t *testing.T, _, s string) string {
			asRoot(t)
			require.NoError(t, os.MkdirAll(s, 0o700))
			require.NoError(t, os.Chown(s, 65534, 65534))
			return s
		}},
		{"below a directory others can write", "writable by group or others", func(t *testing.T, o, s string) string {
			require.NoError(t, os.MkdirAll(o, 0o700))
			require.NoError(t, os.Chmod(o, 0o777))
			return s // not made yet: the agent would make it in a directory others can swap
		}},
		{"below a directory another user owns", "another user owns", func(t *testing.T, o, s string) string {
			asRoot(t)
			require.NoError(t, os.MkdirAll(s, 0o700))
			require.NoError(t, os.Chown(o, 65534, 65534))
			return s
		}},
		{"through a symlink another user owns", "symlink owned by uid 65534", func(t *testing.T, o, s string) string {
			asRoot(t)
			require.NoError(t, os.MkdirAll(s, 0o700))
			link := filepath.Join(filepath.Dir(o), "link")
			require.NoError(t, os.Symlink(o, link))
			require.NoError(t, os.Lchown(link, 65534, 65534))
			return filepath.Join(link, "state")
		}},
		{"through a symlink to a directory others can write", "writable by group or others", func(t *testing.T, o, s string) string {
			require.NoError(t, os.MkdirAll(s, 0o700))
			require.NoError(t, os.Chmod(o, 0o777))
			link := filepath.Join(filepath.Dir(o), "link")
			require.NoError(t, os.Symlink(o, link))
			return filepath.Join(link, "state")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := mcs.Base()
			n := provision(t, base)
			outside := filepath.Join(t.TempDir(), "outside")
			n.StateDir = tc.spoil(t, outside, filepath.Join(outside, "state"))
			before := treeHashes(t, n.dir)
			next := base.Clone()
			next.Files[mcs.PullSecret] = mcs.File{Data: []byte(`{"auths":{"x":{}}}`), Mode: 0o600}
			for _, dry := range []bool{true, false} {
				_, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: next.Served(), Hash: "P2", DryRun: dry})
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			}
			_, err := apply.Recover(context.Background(), n.Host)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, treeHashes(t, n.dir), "nothing touched")
		})
	}
	t.Run("the agent's own, through its own symlink", func(t *testing.T) {
		base := mcs.Base()
		n := provision(t, base)
		outside := filepath.Join(t.TempDir(), "outside")
		require.NoError(t, os.MkdirAll(outside, 0o755))
		link := filepath.Join(filepath.Dir(outside), "link")
		require.NoError(t, os.Symlink(outside, link))
		n.StateDir = filepath.Join(link, "state")
		next := base.Clone()
		next.Files[mcs.PullSecret] = mcs.File{Data: []byte(`{"auths":{"x":{}}}`), Mode: 0o600}
		res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: next.Served(), Hash: "P2"})
		require.NoError(t, err)
		assert.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	})
}

// Adversary r21 c/02: the first refresh's disk baseline read every node file the payload named up
// to 4 MiB and kept it as a data URL (three times its size), with no bound on them all: 2000 names
// of 4 MiB files took 20 GB from a 239 KB payload, before any pacing slot. Now a node file is
// compared by size and hash with the desired contents, kept only when it differs and is small,
// within one budget: a payload naming many large node files costs what its own contents cost.
func TestFirstRefreshBaselineCostsWhatThePayloadCosts(t *testing.T) {
	base := mcs.Base()
	n := provision(t, base)
	next := base.Clone()
	const files = 150
	for i := range files {
		p := fmt.Sprintf("/etc/docker/certs.d/big%03d/ca.crt", i)
		full := filepath.Join(n.dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		f, err := os.Create(full)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(4<<20)) // sparse: 4 MiB a read would hold
		require.NoError(t, f.Close())
		next.Files[p] = mcs.File{Data: []byte("x"), Mode: 0o644}
	}
	// One large node file equal to the desired contents: no change, though it is not kept.
	same := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	require.NoError(t, os.MkdirAll(filepath.Join(n.dir, "etc/docker/certs.d/same"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, "etc/docker/certs.d/same/ca.crt"), same, 0o644))
	next.Files["/etc/docker/certs.d/same/ca.crt"] = mcs.File{Data: same, Mode: 0o644}
	// One small file that differs: kept, so its change is judged from its bytes.
	require.NoError(t, os.MkdirAll(filepath.Join(n.dir, "etc/docker/certs.d/small"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(n.dir, "etc/docker/certs.d/small/ca.crt"), []byte("old"), 0o644))
	next.Files["/etc/docker/certs.d/small/ca.crt"] = mcs.File{Data: []byte("new"), Mode: 0o644}
	served := next.Served()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: mcs.ConfigMapValue(served), Hash: "P2", DryRun: true})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, api.OutcomePlanned, res.Outcome, "%s %+v", res.Reason, res.Refused)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(files)<<20, "allocated %d MiB for %d node files of 4 MiB (the payload is %d KiB)", allocated>>20, files, len(served)>>10)
	ops := map[string]string{}
	for _, c := range res.Changes {
		ops[c.Path] = string(c.Op)
	}
	assert.Equal(t, "modify", ops["/etc/docker/certs.d/big000/ca.crt"], "a file there is a modification, from unknown contents")
	assert.Equal(t, "modify", ops["/etc/docker/certs.d/small/ca.crt"])
	_, changed := ops["/etc/docker/certs.d/same/ca.crt"]
	assert.False(t, changed, "the node's file is the desired one: no change")
}
