package allowlist_test

import (
	"testing"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/stretchr/testify/assert"
)

// Round 8 (A6): a unit's own places never include what the ConfigMap may never reach (denied or
// node policy only), whatever the unit: NetworkManager's changed line may not write
// /etc/NetworkManager, nftables' /etc/nftables.
func TestOwnPlacesNeverIncludeWhatTheConfigMapNeverReaches(t *testing.T) {
	for _, c := range []struct{ unit, line, path string }{
		{"NetworkManager.service", `ExecStartPre=/bin/sh -c 'printf "[main]\ndns=none\n" > /etc/NetworkManager/conf.d/99-dns.conf'`, "/etc/NetworkManager"},
		{"NetworkManager.service", `ExecStartPre=/bin/touch /etc/NetworkManager/system-connections/evil.nmconnection`, "/etc/NetworkManager"},
		{"NetworkManager.service", `ExecStartPre=/bin/touch /var/lib/NetworkManager/NetworkManager-intern.conf`, "/var/lib/NetworkManager"},
		{"firewalld.service", `ExecStartPre=/bin/touch /etc/firewalld/zones/public.xml`, "/etc/firewalld"},
		{"nftables.service", `ExecStartPre=/bin/touch /etc/nftables/main.nft`, "/etc/nftables"},
		{"chronyd.service", `ExecStartPre=/bin/touch /etc/chrony.conf`, "/etc/chrony"},
		{"crio.service", `ExecStartPre=/bin/touch /etc/crio/policies/x.json`, "/etc/crio"},
		{"sssd.service", `ExecStartPre=/bin/touch /var/lib/sss/db/x`, "/var/lib/sss"},
		{"ipsec.service", `ExecStartPre=/bin/touch /var/lib/ipsec/nss/pkcs11.txt`, "/var/lib/ipsec"},
		{"myunit.service", `ExecStartPre=/bin/touch /etc/myunit/x`, ""}, // benign neighbour below
	} {
		p := unitOfLines(t, true, c.line)
		p.ID, p.Names = c.unit, []string{c.unit}
		err := allowlist.JudgeUnit(p)
		if c.path == "" {
			assert.NoError(t, err, c.line)
			continue
		}
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), c.path, c.line)
			assert.Regexp(t, "never a unit's own place|where the node runs its programs", err.Error(), c.line)
		}
	}
	// /run/S stays the unit's own (the broad /run row counts only through rows below it, and through
	// the /run twins of the rows: round 11, exec 01, TestRunTwinsOfConfigAreNeverAUnitsOwnPlace).
	p := unitOfLines(t, true, `ExecStartPre=/bin/mkdir -p /run/NetworkManager-x/y /var/log/NetworkManager`)
	p.ID, p.Names = "NetworkManager.service", []string{"NetworkManager.service"}
	assert.NoError(t, allowlist.JudgeUnit(p))
}
