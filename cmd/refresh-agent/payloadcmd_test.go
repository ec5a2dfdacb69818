package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/mcs"
)

func TestPayloadEditCommands(t *testing.T) {
	dir := t.TempDir()
	cur := writeFile(t, "cur.cfg", mcs.ConfigMapValue(mcs.Base().Served()))
	secret := writeFile(t, "secret.json", []byte(`{"auths":{"quay.io":{"auth":"eDp5"}}}`))
	out := filepath.Join(dir, "new.cfg")

	code, stdout, stderr := cli("payload", "set-file", "--payload", cur, "--path", mcs.PullSecret, "--from-file", secret, "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "modify file "+mcs.PullSecret)
	assert.Contains(t, stderr, "updated the embedded MachineConfig "+diff.MachineConfigContentPath)
	assert.Contains(t, stderr, "written as base64+gzip+ignition")
	assert.NotContains(t, stderr, "eDp5", "contents never printed")
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "payloads hold secrets")

	// diff accepts it: eligible, exit 0.
	code, stdout, stderr = cli("diff", "--current", cur, "--desired", out)
	assert.Equal(t, exitOK, code, stdout+stderr)

	// stdin to stdout, then keys.
	keys := writeFile(t, "keys", []byte("# rotated\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJvdGF0ZWQ new@example\n"))
	data, _ := os.ReadFile(out)
	stdin = bytes.NewReader(data)
	t.Cleanup(func() { stdin = os.Stdin })
	var o, e bytes.Buffer
	code = dispatch([]string{"payload", "set-ssh-keys", "--payload", "-", "--from-file", keys}, &o, &e)
	require.Equal(t, exitOK, code, e.String())
	assert.Contains(t, e.String(), "modify sshKeys core's SSH keys")
	withKeys := writeFile(t, "keys.cfg", o.Bytes())
	code, stdout, _ = cli("diff", "--current", cur, "--desired", withKeys, "-o", "json")
	assert.Equal(t, exitOK, code, stdout)
	assert.Contains(t, stdout, `"kind": "sshKeys"`)

	// Bad input: exit 2, one line naming what is wrong, nothing written.
	for name, args := range map[string][]string{
		"no payload":   {"payload", "set-file", "--path", "/etc/x", "--from-file", secret},
		"bad mode":     {"payload", "set-file", "--payload", cur, "--path", "/etc/x", "--from-file", secret, "--mode", "999"},
		"metadata":     {"payload", "set-file", "--payload", cur, "--path", diff.MachineConfigContentPath, "--from-file", secret},
		"missing file": {"payload", "remove-file", "--payload", cur, "--path", "/etc/nope"},
		"no key":       {"payload", "remove-ssh-keys", "--payload", cur, "--from-file", keys},
		"unknown sub":  {"payload", "frobnicate"},
	} {
		code, stdout, stderr := cli(args...)
		assert.Equal(t, exitInvalid, code, name)
		assert.Empty(t, stdout, name)
		assert.NotEmpty(t, stderr, name)
	}
	code, stdout, _ = cli("payload", "--help")
	assert.Equal(t, exitOK, code)
	for _, s := range payloadSynopses {
		assert.Contains(t, stdout, s.name)
		code, help, _ := cli("payload", s.name, "--help")
		assert.Equal(t, exitOK, code)
		assert.True(t, strings.HasPrefix(help, "usage: refresh-agent payload "+s.name), help)
	}
}
