package actions_test

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/plan"
)

// A name no filesystem holds is refused by the check the dry run makes, as a refusal (ErrName).
func TestNameTooLongRefused(t *testing.T) {
	r, _ := newRoot(t)
	for _, p := range []string{"/etc/containers/" + strings.Repeat("a", 256), "/etc/" + strings.Repeat("d/", 2100) + "x"} {
		err := actions.Check(r, t.TempDir(), []actions.Op{{Path: p, Data: []byte("x"), Mode: 0o644}}, actions.Meta{})
		require.ErrorIs(t, err, actions.ErrName)
		assert.True(t, actions.IsRefusal(err))
	}
	require.NoError(t, actions.Check(r, t.TempDir(), []actions.Op{{Path: "/etc/containers/" + strings.Repeat("a", 255), Data: []byte("x"), Mode: 0o644}}, actions.Meta{}))
}

// The side files' names are of one fixed length, which plan.CheckName counts on: whatever the
// target's name, they fit beside it.
func TestSideNamesHaveTheLengthThePlanCounts(t *testing.T) {
	for _, p := range []string{"/etc/a", "/etc/containers/" + strings.Repeat("a", 255), "/" + strings.Repeat("é", 127)} {
		tmp, backup, restore := actions.SideFiles(p)
		for _, s := range []string{tmp, backup, restore} {
			assert.LessOrEqual(t, len(path.Base(s)), plan.SideNameLen, s)
			assert.Equal(t, path.Dir(p), path.Dir(s))
			assert.True(t, plan.ReservedName(s), "a side file's name is reserved: %s", s)
		}
		assert.Len(t, path.Base(restore), plan.SideNameLen)
	}
}
