package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 11: "$@" is one word a positional parameter even inside double quotes, so
// `set -- 0777 /etc/shadow; chmod "$@"` runs chmod 0777 /etc/shadow; judged as a split word.
func TestRound11QuotedAtIsManyWords(t *testing.T) {
	for _, line := range []string{
		`ExecStart=/bin/bash -c 'set -- 0777 /etc/shadow; chmod "$@"'`,
		`ExecStart=/bin/bash -c 'chmod "$@"' _ 0777 /etc/shadow`,
		`ExecStart=/bin/bash -c 'chown "${@}"' _ core /etc/shadow`,
		`ExecStart=/bin/bash -c 'chmod "${@:1}"' _ 0777 /etc/shadow`,
		`ExecStart=/bin/bash -c 'find "$@"' _ / -delete`,
	} {
		err := strictUnit(t, true, line)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), "expansion", line)
	}
	require.Error(t, strictUnit(t, true, `ExecStart=/bin/bash -c 'a=(0777 /etc/shadow); chmod "${a[@]}"'`))
	for _, line := range []string{
		`ExecStart=/bin/bash -c 'echo "$@"' _ a b`,
		`ExecStart=/bin/bash -c 'test -n "$@" && sleep 1' _ a`,
	} {
		assert.NoError(t, strictUnit(t, true, line), line)
	}
}
