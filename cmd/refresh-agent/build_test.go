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
	requireNoCrashPoints(t, out)
}

// crashEnvs are the environment variables with which a -tags refreshtest build kills or stops itself
// at a step of a refresh (actions/crash_refreshtest.go).
var crashEnvs = []string{"REFRESH_AGENT_CRASH_AT", "REFRESH_AGENT_STOP_AT"}

// requireNoCrashPoints checks that a release binary holds no crash point: built without the
// refreshtest tag, with neither environment variable nor the code that reads them.
func requireNoCrashPoints(t *testing.T, bin string) {
	t.Helper()
	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	for _, env := range crashEnvs {
		assert.NotContains(t, string(data), env, "a release binary never reads the crash tests' variable")
	}
	info, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	require.NoError(t, err, "%s", info)
	assert.NotContains(t, string(info), "refreshtest", "built without the refreshtest tag")
}

// The check above can fail: a -tags refreshtest build holds both variables and says its tag.
func TestRefreshtestBuildHasCrashPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	out := filepath.Join(t.TempDir(), "refresh-agent-test")
	b, err := exec.Command("go", "build", "-tags", "refreshtest", "-trimpath", "-o", out, ".").CombinedOutput()
	require.NoError(t, err, "%s", b)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	for _, env := range crashEnvs {
		assert.Contains(t, string(data), env)
	}
	info, err := exec.Command("go", "version", "-m", out).CombinedOutput()
	require.NoError(t, err, "%s", info)
	assert.Contains(t, string(info), "-tags=refreshtest")
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
