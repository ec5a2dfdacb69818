package allowlist_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// round12Paths (units 03-06 and the round's notes): files a root-run program on RHCOS turns into
// code or a write of its choosing, reachable before under a wide ceiling or by a node policy rule:
// e2fsck's log_filename (any file overwritten at the next boot's fsck), libblkid's CACHE_FILE (any
// file replaced by the next root blkid), lang.sh's eval of /etc/locale.conf, the apiserver URL env
// file host-network pods source, ModemManager's and oddjobd's scripts and helpers, and the
// DIR_COLORS files root's profile feeds to dircolors. Each maps to the row that refuses it.
var round12Paths = map[string]string{
	"/etc/e2fsck.conf":                         "/etc/e2fsck.conf",
	"/etc/blkid.conf":                          "/etc/blkid.conf",
	"/etc/locale.conf":                         "/etc/locale.conf",
	"/etc/kubernetes/apiserver-url.env":        "/etc/kubernetes/apiserver-url.env",
	"/etc/ModemManager/fcc-unlock.d/1234:5678": "/etc/ModemManager",
	"/etc/ModemManager/connection.d/10-x":      "/etc/ModemManager",
	"/etc/oddjobd.conf":                        "/etc/oddjob*",
	"/etc/oddjobd.conf.d/x.conf":               "/etc/oddjob*",
	"/etc/oddjob/mkhomedir":                    "/etc/oddjob*",
	"/etc/DIR_COLORS":                          "/etc/DIR_COLORS*",
	"/etc/DIR_COLORS.256color":                 "/etc/DIR_COLORS*",
	// Round 16 b/01-02: libaudit's failure_action (its programs exit or hide audit failures) and
	// the filesystem types mount tries when it guesses (each a kernel module loaded).
	"/etc/libaudit.conf": "/etc/libaudit.conf",
	"/etc/filesystems":   "/etc/filesystems",
}

// Round 12: under a ceiling of all of /etc/ and /var/, each is refused, the ConfigMap's entry for
// the file or its directory ignored with a warning naming the path and the row; no node policy
// rule may name one either.
func TestWideCeilingRefusesRound12Paths(t *testing.T) {
	pol := mustPolicy(t, wideCeiling)
	for p, row := range round12Paths {
		for _, entry := range []string{p, p[:strings.LastIndex(p, "/")+1]} {
			rules := mustRules(t, fmt.Sprintf(`[{"path": %q, "action": "None"}]`, entry))
			extra, warnings := pol.Extra(rules)
			assert.False(t, pol.Resolve(p, extra).Allowed, "%s through %s", p, entry)
			assert.False(t, pol.Resolve(p, rules).Allowed, "%s unfiltered", p)
			if entry == p && assert.Len(t, warnings, 1, p) {
				assert.Contains(t, warnings[0], p, "the warning names the path")
				assert.Contains(t, warnings[0], "under denied prefix "+strings.TrimSuffix(row, "*"), p)
			}
		}
		_, err := allowlist.ParsePolicy([]byte(fmt.Sprintf("paths:\n- {path: %s, action: None}\n", p)))
		if assert.Error(t, err, p) {
			assert.Contains(t, err.Error(), "denied prefix "+strings.TrimSuffix(row, "*"), p)
		}
	}
}
