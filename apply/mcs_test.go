package apply_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
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
	apply.Node
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
	n.Node = apply.Node{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: n.units, Pods: pods}
	return n
}

func (n *mcsNode) apply(t *testing.T, served []byte, hash string) *apply.Result {
	t.Helper()
	res, err := apply.Run(context.Background(), n.Node, apply.Request{Desired: mcs.ConfigMapValue(served), Hash: hash})
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
	require.Equal(t, apply.OutcomeNoop, res.Outcome, "%s %+v", res.Reason, res.Changes)
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
					require.Equal(t, apply.OutcomeNoop, n.apply(t, base.Served(), "P").Outcome)
				}
				want := s.Change(base.Clone())
				res := n.apply(t, want.Served(), "P2")
				require.Equal(t, apply.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
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
			require.Equal(t, apply.OutcomeRefused, res.Outcome)
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
	require.Equal(t, apply.OutcomeApplied, res.Outcome, res.Reason)
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
	require.Equal(t, apply.OutcomeNoop, n.apply(t, base.Served(), "P").Outcome)
	var s mcs.Scenario
	for _, e := range mcs.Eligible() {
		if e.Name == "haproxy-cfg" {
			s = e
		}
	}
	old := n.cri.Ready("kube-apiserver-proxy-" + nodeName)
	res := n.apply(t, s.Change(base.Clone()).Served(), "P2")
	require.Equal(t, apply.OutcomeApplied, res.Outcome, res.Reason)
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
	assert.Equal(t, apply.OutcomeFailed, res.Outcome)
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
		assert.Equal(t, apply.OutcomeNoop, res.Outcome, "%s %+v", res.Reason, res.Refused)
	})
	// The served mirror change replaces a mirror: the machine-config daemon's registries.conf rule
	// drains for that, so without an API client it is refused until the operator says it drained.
	needsDrain := map[string]bool{"mirror": true, "multi": true}
	for s, actions := range eligible {
		t.Run(s, func(t *testing.T) {
			n := provisionServed(t, base)
			if needsDrain[s] {
				res := n.apply(t, read(s), "P2")
				require.Equal(t, apply.OutcomeRefused, res.Outcome)
				assert.Contains(t, res.Reason, "needs a drain")
				assert.Empty(t, n.ran())
				n.Drained = true
			}
			res := n.apply(t, read(s), "P2")
			require.Equal(t, apply.OutcomeApplied, res.Outcome, "%s %+v", res.Reason, res.Refused)
			assert.Equal(t, actions, n.ran())
		})
	}
	for s, kinds := range refused {
		t.Run(s, func(t *testing.T) {
			n := provisionServed(t, base)
			res := n.apply(t, read(s), "bad")
			require.Equal(t, apply.OutcomeRefused, res.Outcome)
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
	res, err := apply.Run(context.Background(), apply.Node{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Units: actions.NoUnits{}},
		apply.Request{Desired: next.Served(), Current: cur})
	require.NoError(t, err)
	require.Equal(t, apply.OutcomeApplied, res.Outcome, res.Reason)
	for _, d := range []string{"var", "var/lib", "var/lib/kubelet"} {
		fi, err := os.Stat(filepath.Join(dir, d))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm(), d)
	}
	data, err := os.ReadFile(filepath.Join(dir, mcs.PullSecret))
	require.NoError(t, err)
	assert.Equal(t, `{"auths":{}}`, string(data))
}
