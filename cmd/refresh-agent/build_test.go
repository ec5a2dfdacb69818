package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDockerfileBuildIsStatic runs the Dockerfile's build command (there is no Docker engine here)
// and checks the binary is static, so it runs on a scratch image.
func TestDockerfileBuildIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	df, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)RUN (CGO_ENABLED=0 GOOS=linux go build .*?)-o /out/refresh-agent`).FindSubmatch(df)
	require.NotNil(t, m, "the Dockerfile's go build command")
	assert.Contains(t, string(df), "FROM scratch")
	out := filepath.Join(t.TempDir(), "refresh-agent")
	cmdline := strings.ReplaceAll(string(m[1]), "\\\n", " ")
	cmdline = strings.ReplaceAll(cmdline, "${VERSION}", "test")
	cmd := exec.Command("sh", "-c", cmdline+" -o "+out+" ./cmd/refresh-agent")
	cmd.Dir = "../.."
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", cmdline, b)
	f, err := elf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "dynamically linked: needs a loader scratch does not have")
	}
	v, err := exec.Command(out, "version").Output()
	require.NoError(t, err)
	assert.Equal(t, "test\n", string(v))
}
