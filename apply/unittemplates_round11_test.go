package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/api"
)

// Round 11 (units/02): a template link on the node (foo@.service -> systemd-fsck@.service) makes
// every instance the linked template's (systemd aliases templates: the manager reports
// Id=systemd-fsck@dev-sda1.service); the plan judged foo@dev-sda1 by the template's text and
// planned it. Now it is judged as the linked instance by identity and by content, in the plan and
// the dry run alike; an instance's link to a template too; a link to a harmless template is planned.
func TestATemplateLinkOnTheNodeIsTheLinkedTemplatesInstance(t *testing.T) {
	fsck := "[Unit]\nDescription=fsck %f\n[Service]\nType=oneshot\nExecStart=/usr/lib/systemd/systemd-fsck %f\n"
	user := "[Unit]\nDescription=User Manager for UID %i\n[Service]\nUser=%i\nExecStart=/usr/lib/systemd/systemd --user\n"
	benign := "[Unit]\nDescription=worker %i\n[Service]\nExecStart=/bin/sleep infinity\n"
	for _, tc := range []struct {
		name string
		node map[string]string
		dep  string
		want string // "" planned
	}{
		{"the finding: foo@ -> systemd-fsck@", map[string]string{"/usr/lib/systemd/system/systemd-fsck@.service": fsck,
			"/etc/systemd/system/foo@.service": "->/usr/lib/systemd/system/systemd-fsck@.service"}, "foo@dev-sda1.service",
			"Wants=foo@dev-sda1.service: a link to systemd-fsck@dev-sda1.service: unit systemd-fsck@dev-sda1.service is an instance of systemd-fsck@.service"},
		{"relative, in /usr/local", map[string]string{"/usr/lib/systemd/system/systemd-fsck@.service": fsck,
			"/usr/local/lib/systemd/system/foo@.service": "->../../../lib/systemd/system/systemd-fsck@.service"}, "foo@dev-sda1.service",
			"a link to systemd-fsck@dev-sda1.service"},
		{"a provisioning template (sshd-keygen@)", map[string]string{"/usr/lib/systemd/system/sshd-keygen@.service": benign,
			"/run/systemd/transient/keys@.service": "->/usr/lib/systemd/system/sshd-keygen@.service"}, "keys@rsa.service",
			"a link to sshd-keygen@rsa.service: unit sshd-keygen@rsa.service sets the node up once"},
		{"by content: the linked template's User=%i", map[string]string{"/usr/lib/systemd/system/bar@.service": user,
			"/etc/systemd/system/foo@.service": "->/usr/lib/systemd/system/bar@.service"}, "foo@0.service",
			"a link to bar@0.service: bar@0.service: the node's /usr/lib/systemd/system/bar@.service [Service] User=%i"},
		{"an instance's link to a template, by content", map[string]string{"/usr/lib/systemd/system/bar@.service": user,
			"/etc/systemd/system/foo@0.service": "->/usr/lib/systemd/system/bar@.service"}, "foo@0.service",
			"a link to bar@0.service"},
		{"an instance's link to user@", map[string]string{"/usr/lib/systemd/system/user@.service": user,
			"/etc/systemd/system/foo@0.service": "->/usr/lib/systemd/system/user@.service"}, "foo@0.service",
			"a link to user@0.service: unit user@0.service is an instance of user@.service"},
		{"a chain of template links", map[string]string{"/usr/lib/systemd/system/systemd-fsck@.service": fsck,
			"/etc/systemd/system/foo@.service":   "->/usr/lib/systemd/system/systemd-fsck@.service",
			"/etc/systemd/system/chain@.service": "->foo@.service"}, "chain@dev-sda1.service", "systemd-fsck@dev-sda1.service"},
		{"a link to a harmless template", map[string]string{"/usr/lib/systemd/system/bar@.service": benign,
			"/etc/systemd/system/foo@.service": "->/usr/lib/systemd/system/bar@.service"}, "foo@x.service", ""},
		{"no link: the template itself", map[string]string{"/usr/lib/systemd/system/foo@.service": benign}, "foo@x.service", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := dryRunWants(t, linkNode(t, tc.node), tc.dep)
			if tc.want == "" {
				assert.Equal(t, api.OutcomePlanned, res.Outcome, "%s %+v", res.Reason, res.Refused)
				return
			}
			assert.Equal(t, api.OutcomeRefused, res.Outcome)
			assert.Contains(t, res.Reason, tc.want)
		})
	}
}
