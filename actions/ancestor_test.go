package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// A write under a path that is not a directory, on the node or in the same transaction, is a
// refusal (IsRefusal: exit 3) from Check, by the dry run as by the real run, naming the path, and
// Prepare writes nothing for it (adversary round 7a F8: exit 1 "failed … is not a directory").
func TestCheckRefusesANonDirectoryAncestor(t *testing.T) {
	file := "/etc/containers/f1.conf"
	w := func(p string) actions.Op { return actions.Op{Path: p, Data: []byte("new"), Mode: 0o644} }
	rm := func(p string) actions.Op { return actions.Op{Path: p, Remove: true} }
	for _, c := range []struct {
		name   string
		onNode bool // f1.conf is a regular file on the node
		ops    []actions.Op
		names  string // "" when accepted
	}{
		{"under an existing file", true, []actions.Op{w(file + "/x")}, "/etc/containers/f1.conf is a regular file, not a directory"},
		{"two levels under an existing file", true, []actions.Op{w(file + "/d/x")}, "/etc/containers/f1.conf is a regular file"},
		{"the file removed, a child added", true, []actions.Op{rm(file), w(file + "/x")}, "/etc/containers/f1.conf is a regular file"},
		{"a child added, the file removed", true, []actions.Op{w(file + "/x"), rm(file)}, "/etc/containers/f1.conf is a regular file"},
		{"written as a file and as a parent", false, []actions.Op{w(file), w(file + "/x")}, "its parent /etc/containers/f1.conf is a file another operation writes"},
		{"a parent, then written as a file", false, []actions.Op{w(file + "/d/x"), w(file)}, "it is a parent directory of /etc/containers/f1.conf/d/x"},
		{"a missing file removed, a child added", false, []actions.Op{rm(file), w(file + "/x")}, "its parent /etc/containers/f1.conf is a file another operation writes or removes"},
		{"a child added, a missing file removed", false, []actions.Op{w(file + "/x"), rm(file)}, "it is a parent directory of /etc/containers/f1.conf/x"},
		{"a removal under a file: nothing to remove", true, []actions.Op{rm(file + "/x"), w("/etc/containers/f2.conf")}, ""},
		{"siblings", true, []actions.Op{w(file), w("/etc/containers/f2.conf")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, dir := newRoot(t)
			if c.onNode {
				require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte("old"), 0o644))
			}
			err := actions.Check(r, t.TempDir(), c.ops, actions.Meta{})
			if c.names == "" {
				require.NoError(t, err)
				txn, err := actions.Prepare(r, filepath.Join(t.TempDir(), "state"), c.ops, actions.Meta{Hash: "h"})
				require.NoError(t, err)
				assert.NotContains(t, txn.Paths(), file+"/x", "a removal with nothing to remove is dropped")
				return
			}
			require.Error(t, err)
			assert.True(t, actions.IsRefusal(err), "a refusal, not a failure: %v", err)
			assert.ErrorContains(t, err, c.names)
			before := tree(t, dir)
			state := filepath.Join(t.TempDir(), "state")
			_, err = actions.Prepare(r, state, c.ops, actions.Meta{Hash: "h"})
			assert.True(t, actions.IsRefusal(err), "%v", err)
			assert.Equal(t, before, tree(t, dir), "nothing written")
			_, err = os.Stat(filepath.Join(state, "journal.json"))
			assert.True(t, os.IsNotExist(err), "no journal")
		})
	}
	assert.Equal(t, "regular file", actions.Kind(0))
	assert.Equal(t, "special file (p---------)", actions.Kind(os.ModeNamedPipe))
}
