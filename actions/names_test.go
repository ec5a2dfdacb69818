package actions_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
)

// A name no filesystem holds is refused by the check the dry run makes, as a refusal (ErrName).
func TestNameTooLongRefused(t *testing.T) {
	r, _ := newRoot(t)
	for _, p := range []string{"/etc/containers/" + strings.Repeat("a", 256), "/etc/" + strings.Repeat("d/", 2100) + "x"} {
		err := actions.Check(r, []actions.Op{{Path: p, Data: []byte("x"), Mode: 0o644}})
		require.ErrorIs(t, err, actions.ErrName)
		assert.True(t, actions.IsRefusal(err))
	}
	require.NoError(t, actions.Check(r, []actions.Op{{Path: "/etc/containers/" + strings.Repeat("a", 255), Data: []byte("x"), Mode: 0o644}}))
}
