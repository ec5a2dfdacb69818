package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A refused unit line is named in the reason without the credential it holds (adversary r21 c: a
// refused ExecStart= was quoted whole, its bearer token with it, into the reason, the logs, the
// Node's annotation and Events); the line is still named by its key, program and paths.
func TestARefusedLineNeverQuotesItsCredential(t *testing.T) {
	const token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIzNDU2Nzg5"
	for name, tc := range map[string]struct{ line, names string }{
		"a header":    {`ExecStartPre=/bin/sh -c 'curl -H "Authorization: Bearer ` + token + `" http://x > /run/openvswitch.useropts'`, "/run/openvswitch.useropts"},
		"an option":   {`ExecStartPre=/usr/bin/evil --token=` + token, "/usr/bin/evil"},
		"an argument": {`ExecStartPre=/bin/sh -c 'eval $(echo ` + token + `)'`, "eval"},
		"a variable":  {"Environment=T=" + token + "\nExecStartPre=/usr/bin/evil $T", "/usr/bin/evil"},
	} {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, round12OVSPolicy, nodeRoot(t, round12OVSNode), plain(), ovsDropin(tc.line+"\n"))
			require.NotEmpty(t, p.Refused)
			for _, r := range p.Refused {
				for _, part := range append(strings.Split(token, "."), token) {
					assert.NotContains(t, r.Reason, part)
				}
				assert.Contains(t, r.Reason, "ExecStartPre=")
				assert.Contains(t, r.Reason, tc.names)
			}
		})
	}
}
