package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
)

// A node dropin's line that systemd's quoting cannot read is refused by its name and length, never
// its value (adversary r23 c/08: `Environment=DB_PASS=Kq7\mZp2…` of the node's own 50-node.conf was
// quoted whole into the refusal of any change to the unit, a hostile ConfigMap's way to read it).
func TestANodeDropinsUnreadableValueIsNotShown(t *testing.T) {
	const pass = "Kq7mZp2Lw9Rt4Xv8Ny3"
	for _, line := range []string{
		`Environment=DB_PASS=Kq7\mZp2Lw9Rt4Xv8Ny3`,
		`Environment="DB_PASS=Kq7mZp2Lw9Rt4Xv8Ny3`,
	} {
		n := newNode(t)
		unit := "iri-registry.service"
		base := "[Unit]\nDescription=x\n[Service]\nExecStart=/usr/bin/true\n"
		cur, err := decode(v2().Unit(unit, base).JSON())
		require.NoError(t, err)
		dropin := filepath.Join(n.dir, "etc/systemd/system", unit+".d", "50-node.conf")
		require.NoError(t, os.MkdirAll(filepath.Dir(dropin), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(n.dir, "etc/systemd/system", unit), []byte(base), 0o644))
		require.NoError(t, os.WriteFile(dropin, []byte("[Service]\n"+line+"\n"), 0o644))
		des := v2().Unit(unit, strings.Replace(base, "ExecStart=", "ExecStartPre=/bin/echo hi\nExecStart=", 1)).JSON()
		res, err := apply.Run(context.Background(), n.Host, apply.Request{Desired: des, Hash: "v3", Current: cur, DryRun: true})
		require.NoError(t, err)
		assert.Equal(t, api.OutcomeRefused, res.Outcome, line+" "+res.Reason)
		assert.NotContains(t, res.Reason, "Kq7", line)
		assert.NotContains(t, res.Reason, pass[5:], line)
	}
}
