package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bash script, run by bash: commands, payload subcommands and a command's own flags complete.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	code, script, _ := cli("completion", "bash")
	require.Equal(t, exitOK, code)
	f := filepath.Join(t.TempDir(), "c.bash")
	require.NoError(t, os.WriteFile(f, []byte(script), 0o600))
	complete := func(words ...string) []string {
		t.Helper()
		arr := "refresh-agent"
		for _, w := range words {
			arr += " '" + w + "'"
		}
		sh := "source " + f + "; COMP_WORDS=(" + arr + "); COMP_CWORD=" + strconv.Itoa(len(words)) + "; _refresh_agent; printf '%s\\n' \"${COMPREPLY[@]}\""
		out, err := exec.Command("bash", "-c", sh).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	assert.Equal(t, []string{"payload", "publish"}, complete("p"))
	assert.Equal(t, []string{"set-file", "set-ssh-keys"}, complete("payload", "set"))
	assert.Equal(t, []string{"--from-file"}, complete("payload", "set-file", "--fr"))
	assert.Contains(t, complete("status", "--"), "--watch")
	assert.Contains(t, complete("publish", "--"), "--dry-run")
	assert.NotContains(t, complete("publish", "--"), "--name", "deprecated flags are not offered")
	assert.Equal(t, []string{"zsh"}, complete("completion", "z"))
}

func TestCompletionZshFishAndBadShell(t *testing.T) {
	code, zsh, _ := cli("completion", "zsh")
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(zsh, "#compdef refresh-agent\n"))
	assert.Contains(t, zsh, "bashcompinit")
	assert.Contains(t, zsh, "complete -o filenames -F _refresh_agent refresh-agent")
	code, fish, _ := cli("completion", "fish")
	require.Equal(t, exitOK, code)
	for _, s := range synopses {
		assert.Contains(t, fish, "-a "+s.name+" ")
	}
	assert.Contains(t, fish, "__fish_seen_subcommand_from payload; and __fish_seen_subcommand_from set-file' -l from-file")
	assert.Contains(t, fish, "__fish_seen_subcommand_from status' -l watch")
	code, _, stderr := cli("completion", "tcsh")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "bash|zsh|fish")
	code, _, _ = cli("completion")
	assert.Equal(t, exitInvalid, code)
}
