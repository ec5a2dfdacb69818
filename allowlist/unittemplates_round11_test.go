package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 11 (units/02): systemd aliases templates. A node link foo@.service -> systemd-fsck@.service
// makes foo@dev-sda1.service systemd-fsck@dev-sda1.service (the manager reports that Id), and an
// instance's own link to a template (foo@0.service -> user@.service) is the template's instance;
// the policy knows it from the node's links (WithUnitAliases), so the plan judges the instance as
// the unit it is.
func TestATemplateLinkAliasesEveryInstance(t *testing.T) {
	pol, err := allowlist.Default().WithUnitAliases(map[string]string{
		"foo@.service": "systemd-fsck@.service", "keys@.service": "sshd-keygen@.service", "one@0.service": "user@.service",
		"two@a.service": "bar@b.service", "chain@.service": "foo@.service", "own@x.service": "own@.service",
		"five@.service": "baz.service", "app@.service": "bar@.service",
	})
	require.NoError(t, err)
	for _, tc := range []struct{ name, is string }{
		{"foo@dev-sda1.service", "systemd-fsck@dev-sda1.service"},
		{"foo@.service", "systemd-fsck@.service"},
		{"Foo@Dev-Sda1.service", "systemd-fsck@dev-sda1.service"},
		{"keys@rsa.service", "sshd-keygen@rsa.service"},
		{"one@0.service", "user@0.service"},
		{"chain@x.service", "systemd-fsck@x.service"},
		{"app@x.service", "bar@x.service"},
		{"two@a.service", "bar@b.service"}, // systemd loads nothing of it; judged as the link's, the stricter
		{"five@x.service", "baz.service"},  // the same
	} {
		real, ok := pol.UnitAlias(tc.name)
		assert.True(t, ok, tc.name)
		assert.Equal(t, tc.is, real, tc.name)
	}
	for _, n := range []string{"own@x.service", "own@y.service", "one@1.service", "bar@x.service", "fooz@x.service", "foo.service"} {
		real, ok := pol.UnitAlias(n)
		assert.False(t, ok, "%s is %s", n, real)
	}
	for _, u := range []string{"foo@dev-sda1.service", "keys@rsa.service", "one@0.service", "chain@x.service"} {
		real, _ := pol.UnitAlias(u)
		assert.NoError(t, allowlist.DependencyIdentity(u), "by name alone %s", u)
		assert.Error(t, allowlist.DependencyIdentity(real), u)
	}
}
