package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
)

// Round 11 (units/02): the node's unit files as the manager loads them when a template or an
// instance is a link: systemd aliases templates (foo@.service -> bar@.service makes foo@x.service
// bar@x.service, with bar@'s files), an instance's link to a template is the template's instance,
// an instance's own file hides its template's link, and a template's link to what is no template
// loads nothing (judged by the linked file's text, as before). Checked against systemd 252's
// manager (Id, Names) by the fixer's probe and test/integration TestNodeLinksAreJudgedAsTheUnitsTheManagerLoads.
func TestNodeUnitsReadTemplateLinksAsTheManagerLoadsThem(t *testing.T) {
	const text = "[Service]\nExecStart=/bin/true\n"
	for _, tc := range []struct {
		name  string
		node  map[string]string
		read  string
		is    string
		first string // the fragment's path (the first file of the unit's)
	}{
		{"a template's link", map[string]string{"/usr/lib/systemd/system/bar@.service": text,
			"/etc/systemd/system/foo@.service": "->/usr/lib/systemd/system/bar@.service"}, "foo@x.service", "bar@x.service", "/usr/lib/systemd/system/bar@.service"},
		{"relative, in /usr/local", map[string]string{"/usr/lib/systemd/system/bar@.service": text,
			"/usr/local/lib/systemd/system/foo@.service": "->../../../lib/systemd/system/bar@.service"}, "foo@x.service", "bar@x.service", "/usr/lib/systemd/system/bar@.service"},
		{"a chain of template links", map[string]string{"/usr/lib/systemd/system/bar@.service": text,
			"/etc/systemd/system/foo@.service":   "->/usr/lib/systemd/system/bar@.service",
			"/etc/systemd/system/chain@.service": "->/etc/systemd/system/foo@.service"}, "chain@x.service", "bar@x.service", "/usr/lib/systemd/system/bar@.service"},
		{"an instance's link to a template", map[string]string{"/usr/lib/systemd/system/user@.service": text,
			"/etc/systemd/system/foo@0.service": "->/usr/lib/systemd/system/user@.service"}, "foo@0.service", "user@0.service", "/usr/lib/systemd/system/user@.service"},
		{"an instance's link to its own template", map[string]string{"/usr/lib/systemd/system/own@.service": text,
			"/etc/systemd/system/own@x.service": "->/usr/lib/systemd/system/own@.service"}, "own@x.service", "own@x.service", "/etc/systemd/system/own@x.service"},
		{"an instance's own file hides the template's link", map[string]string{"/usr/lib/systemd/system/bar@.service": text,
			"/etc/systemd/system/foo@.service": "->/usr/lib/systemd/system/bar@.service", "/etc/systemd/system/foo@a.service": text},
			"foo@a.service", "foo@a.service", "/etc/systemd/system/foo@a.service"},
		{"a template's file hides a later link of its name", map[string]string{"/usr/lib/systemd/system/bar@.service": text,
			"/etc/systemd/system/foo@.service": text, "/usr/lib/systemd/system/foo@.service": "->bar@.service"}, "foo@x.service", "foo@x.service", "/etc/systemd/system/foo@.service"},
		{"a template's link to a unit that is none", map[string]string{"/usr/lib/systemd/system/baz.service": text,
			"/etc/systemd/system/foo@.service": "->/usr/lib/systemd/system/baz.service"}, "foo@x.service", "foo@x.service", "/etc/systemd/system/foo@.service"},
		{"a unit's link (unchanged)", map[string]string{"/usr/lib/systemd/system/crio-wipe.service": text,
			"/run/systemd/transient/vendor-wipe.service": "->/usr/lib/systemd/system/crio-wipe.service"}, "vendor-wipe.service", "crio-wipe.service", "/usr/lib/systemd/system/crio-wipe.service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, ok, err := plan.NodeUnitsAt(nodeRoot(t, tc.node)).ReadUnit(tc.read)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, tc.is, u.Name)
			require.NotEmpty(t, u.Fragments)
			assert.Equal(t, tc.first, u.Fragments[0].Path)
		})
	}
}

// Round 11 (units/02): an instance of a template's link, read from the node's files alone, is the
// linked template's instance in the start set: keys@rsa.service (keys@.service -> sshd-keygen@.service)
// is sshd-keygen@rsa.service, a provisioning unit.
func TestATemplateLinkInTheStartSetIsTheLinkedInstance(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\nWants=%s\n[Service]\nExecStart=/bin/sleep infinity\n"
	root := nodeRoot(t, map[string]string{
		"/usr/lib/systemd/system/sshd-keygen@.service": "[Service]\nType=oneshot\nExecStart=/usr/libexec/openssh/sshd-keygen %i\n",
		"/usr/local/lib/systemd/system/keys@.service":  "->/usr/lib/systemd/system/sshd-keygen@.service",
	})
	p := rootBuild(t, round9UnitPolicy, root, withUnits(), withUnits(unit("myapp.service", str(strings.Replace(app, "%s", "keys@rsa.service", 1)))))
	refusedWith(t, p, "unit myapp.service", "keys@rsa.service", "sshd-keygen@rsa.service")
	assert.Contains(t, p.Refused[0].Reason, "loads it: a link")
}
