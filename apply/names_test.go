package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// A target name of 255 bytes (the most a name can have, and what Ignition accepts) is written like
// any other: the side files beside it have short names of a fixed length (issue 27, item 6).
func TestLongestNameApplies(t *testing.T) {
	n := newNode(t)
	long := "/etc/containers/registries.d/" + strings.Repeat("a", 250) + ".yaml"
	require.Len(t, filepath.Base(long), 255)
	res := n.run(t, v2().File(long, []byte("mirror"), 0o644).JSON(), "v2")
	require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
	assert.Equal(t, "mirror", n.read(t, long))
	for _, s := range sides(long) {
		assert.Less(t, len(filepath.Base(s)), 64, "a short side file name")
	}
	tmp, _, _ := actions.SideFiles("/etc/x")
	tmp2, _, _ := actions.SideFiles("/etc/" + strings.Repeat("y", 255))
	assert.Equal(t, len(tmp), len(tmp2), "of a fixed length")
}

func sides(p string) []string { a, b, c := actions.SideFiles(p); return []string{a, b, c} }

// Every node check the real run makes, the dry run makes (issue 27, item 7): a side file name taken by
// a directory or a symlink is a refusal in the plan, the same in both, with nothing written.
func TestSideFileTakenRefusedByTheDryRunToo(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(p string) error
	}{
		{"backup is a directory", func(p string) error { return os.MkdirAll(filepath.Join(p, "x"), 0o755) }},
		{"temp is a symlink", func(p string) error { return os.Symlink("/etc/shadow", p) }},
		{"restore is a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			temp, backup, restore := actions.SideFiles(registries)
			target := map[string]string{"backup is a directory": backup, "temp is a symlink": temp, "restore is a directory": restore}[tc.name]
			require.NoError(t, tc.make(filepath.Join(n.dir, target)))
			before := n.treeHash(t)
			dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: v2().JSON(), Hash: "v2", DryRun: true})
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
			assert.Contains(t, dry.Reason, target)
			res := n.run(t, v2().JSON(), "v2")
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the dry run is the whole truth")
			assert.Equal(t, before, n.treeHash(t), "nothing written")
			assert.Empty(t, n.units.ran)
		})
	}
}

// A payload file under a directory named like a sibling's side file (adversary round 9, 09:
// /etc/docker/certs.d/.refresh-agent-<sha256("x")[:24]>-tmp/ca.crt beside /etc/docker/certs.d/x) is
// refused by the plan, naming the path, in the dry run as in the real run, whether it comes with x
// or alone; such a directory already on the node, not the agent's, refuses x's refresh in both
// alike, writing nothing.
func TestSideNameAsADirectoryIsRefused(t *testing.T) {
	const x = "/etc/docker/certs.d/x"
	temp, backup, _ := actions.SideFiles(x)
	for _, side := range []string{temp, backup} {
		under := side + "/ca.crt"
		for name, des := range map[string][]byte{
			"with x": v2().File(x, []byte("X"), 0o644).File(under, []byte("C"), 0o644).JSON(),
			"alone":  v2().File(under, []byte("C"), 0o644).JSON(),
		} {
			t.Run(filepath.Base(side)+" "+name, func(t *testing.T) {
				n := newNode(t)
				before := n.treeHash(t)
				dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: des, Hash: "v2", DryRun: true})
				require.NoError(t, err)
				assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
				assert.Contains(t, dry.Reason, under)
				assert.Contains(t, dry.Reason, "is named like one")
				res := n.run(t, des, "v2")
				assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
				assert.Equal(t, dry.Reason, res.Reason)
				assert.Equal(t, before, n.treeHash(t), "nothing written")
				assert.Empty(t, n.units.ran)
			})
		}
		t.Run(filepath.Base(side)+" on the node", func(t *testing.T) {
			n := newNode(t)
			require.NoError(t, os.MkdirAll(filepath.Join(n.dir, side), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(n.dir, under), []byte("C"), 0o644))
			before := n.treeHash(t)
			des := v2().File(x, []byte("X"), 0o644).JSON()
			dry, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: des, Hash: "v2", DryRun: true})
			require.NoError(t, err)
			assert.Equal(t, api.OutcomeRefused, dry.Outcome, dry.Reason)
			assert.Contains(t, dry.Reason, side)
			res := n.run(t, des, "v2")
			assert.Equal(t, api.OutcomeRefused, res.Outcome, res.Reason)
			assert.Equal(t, dry.Reason, res.Reason, "the dry run is the whole truth")
			assert.Equal(t, before, n.treeHash(t), "nothing written, the directory kept")
		})
	}
}
