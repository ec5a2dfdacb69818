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

// TestDockerfileFIPSBuild runs the Dockerfile's FIPS build command (target fips) and checks what
// check-payload looks for: CGO on, dynamically linked, the FIPS crypto module selected.
func TestDockerfileFIPSBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler: the FIPS build needs cgo")
	}
	df, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)RUN (CGO_ENABLED=1 GOEXPERIMENT=\$\{FIPS_GOEXPERIMENT\} GOOS=linux go build .*?)-o /out/refresh-agent`).FindSubmatch(df)
	require.NotNil(t, m, "the Dockerfile's FIPS go build command")
	exp := regexp.MustCompile(`ARG FIPS_GOEXPERIMENT=(\S+)`).FindSubmatch(df)
	require.NotNil(t, exp)
	assert.Contains(t, string(df), "AS fips")
	out := filepath.Join(t.TempDir(), "refresh-agent")
	cmdline := strings.ReplaceAll(string(m[1]), "\\\n", " ")
	cmdline = strings.ReplaceAll(cmdline, "${VERSION}", "test")
	cmdline = strings.ReplaceAll(cmdline, "${FIPS_GOEXPERIMENT}", string(exp[1]))
	cmd := exec.Command("sh", "-c", cmdline+" -o "+out+" ./cmd/refresh-agent")
	cmd.Dir = "../.."
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", cmdline, b)
	f, err := elf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	dynamic := false
	for _, p := range f.Progs {
		dynamic = dynamic || p.Type == elf.PT_INTERP
	}
	assert.True(t, dynamic, "dynamically linked")
	info, err := exec.Command("go", "version", "-m", out).Output()
	require.NoError(t, err)
	assert.Contains(t, string(info), "CGO_ENABLED=1")
	assert.Contains(t, string(info), "GOEXPERIMENT="+string(exp[1]))
	syms, err := exec.Command("go", "tool", "nm", out).Output()
	require.NoError(t, err)
	assert.Contains(t, string(syms), "crypto/internal/boring", "the BoringCrypto module is linked in")
	v, err := exec.Command(out, "version").Output()
	require.NoError(t, err)
	assert.Equal(t, "test\n", string(v))
}
