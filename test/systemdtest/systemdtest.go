// Package systemdtest runs a real systemd user manager for tests. systemd --user refuses to start
// unless the machine was booted with systemd, so the test binary re-executes itself under
// `unshare -m` with a private tmpfs on /run, where it can (see shared/notes/real-systemd.md).
package systemdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const envInside = "REFRESH_AGENT_SYSTEMD_NS"

var (
	skipReason string
	manager    *Manager
)

// Manager is the running user manager.
type Manager struct {
	RuntimeDir string // $XDG_RUNTIME_DIR
	UnitDir    string // where unit files go
	MarkerDir  string // stand-in units write reload/start markers here
	proc       *exec.Cmd
}

// Runner runs a package's tests (a *testing.M, or a wrapper that adds its own setup and teardown).
type Runner interface{ Run() int }

// Main wraps a package's tests: call it from TestMain as os.Exit(systemdtest.Main(m)). Outside the
// namespace it re-executes the test binary inside one; when that is impossible (not root, no
// unshare, no systemd) the tests run and Require skips them with the reason.
func Main(m Runner) int {
	if os.Getenv(envInside) == "" {
		if reason := unavailable(); reason != "" {
			skipReason = reason
			return m.Run()
		}
		cmd := exec.Command("unshare", append([]string{"-m", "--propagation", "private", os.Args[0]}, os.Args[1:]...)...)
		cmd.Env = append(os.Environ(), envInside+"=1")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			fmt.Fprintf(os.Stderr, "systemdtest: re-exec under unshare: %v\n", err)
			return 1
		}
		return 0
	}
	mgr, err := start()
	if err != nil {
		skipReason = "starting systemd --user: " + err.Error()
		return m.Run()
	}
	manager = mgr
	code := m.Run()
	mgr.stop()
	return code
}

func unavailable() string {
	if os.Getuid() != 0 {
		return "needs root for unshare -m (CI runs as root)"
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return "unshare not found"
	}
	if _, err := os.Stat("/lib/systemd/systemd"); err != nil {
		return "/lib/systemd/systemd not found (apt-get install systemd)"
	}
	return ""
}

// Require returns the manager or skips the test with the reason it is not there.
func Require(t testing.TB) *Manager {
	t.Helper()
	if manager == nil {
		if skipReason == "" {
			skipReason = "TestMain does not call systemdtest.Main"
		}
		t.Skip("real systemd unavailable: " + skipReason)
	}
	return manager
}

func start() (*Manager, error) {
	run := func(name string, args ...string) error {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("mount", "-t", "tmpfs", "tmpfs", "/run"); err != nil {
		return nil, err
	}
	for _, d := range []string{"/run/systemd/system", "/run/user/0"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	cfg, err := os.MkdirTemp("", "systemdtest-config-")
	if err != nil {
		return nil, err
	}
	m := &Manager{RuntimeDir: "/run/user/0", UnitDir: filepath.Join(cfg, "systemd", "user"), MarkerDir: filepath.Join(cfg, "markers")}
	for _, d := range []string{m.UnitDir, m.MarkerDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	os.Setenv("XDG_RUNTIME_DIR", m.RuntimeDir)
	os.Setenv("XDG_CONFIG_HOME", cfg)
	m.proc = exec.Command("/lib/systemd/systemd", "--user", "--log-target=console", "--log-level=warning")
	if err := m.proc.Start(); err != nil {
		return nil, err
	}
	sock := filepath.Join(m.RuntimeDir, "systemd", "private")
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(sock); err == nil {
			return m, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("no socket at %s after 5s", sock)
}

func (m *Manager) stop() {
	_ = exec.Command("systemctl", "--user", "exit").Run()
	done := make(chan struct{})
	go func() { _ = m.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = m.proc.Process.Kill()
	}
}

// Systemctl runs systemctl --user with args.
func (m *Manager) Systemctl(args ...string) (string, error) {
	out, err := exec.Command("systemctl", append([]string{"--user"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("systemctl --user %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// StandIn writes a long-running unit named name whose reload appends to <MarkerDir>/<name>.reload,
// whose every start appends its name to <MarkerDir>/starts, and (with failReload) whose reload fails.
// It reloads the manager and (re)starts the unit.
func (m *Manager) StandIn(t testing.TB, name string, failReload bool) {
	t.Helper()
	reload := fmt.Sprintf("/bin/sh -c 'date +%%%%s%%%%N >> %s/%s.reload'", m.MarkerDir, name)
	if failReload {
		reload = "/bin/false"
	}
	m.StandInReload(t, name, reload)
}

// StandInReload is StandIn with the given ExecReload command line.
func (m *Manager) StandInReload(t testing.TB, name, reload string) {
	t.Helper()
	unit := fmt.Sprintf("[Service]\nExecStartPre=/bin/sh -c 'echo %s >> %s/starts'\nExecStart=/bin/sleep infinity\nExecReload=%s\n",
		name, m.MarkerDir, reload)
	if err := os.WriteFile(filepath.Join(m.UnitDir, name), []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Systemctl("daemon-reload"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Systemctl("restart", name); err != nil {
		t.Fatal(err)
	}
}

// SlowReload is an ExecReload that takes d and then writes the reload marker.
func (m *Manager) SlowReload(name string, d time.Duration) string {
	return fmt.Sprintf("/bin/sh -c 'sleep %.1f; date +%%%%s%%%%N >> %s/%s.reload'", d.Seconds(), m.MarkerDir, name)
}

// ResetMarkers clears the reload and start markers.
func (m *Manager) ResetMarkers(t testing.TB) {
	t.Helper()
	entries, _ := os.ReadDir(m.MarkerDir)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(m.MarkerDir, e.Name()))
	}
}

// MainPID returns the unit's main PID (0 when not running).
func (m *Manager) MainPID(t testing.TB, unit string) int {
	t.Helper()
	out, err := m.Systemctl("show", "-p", "MainPID", "--value", unit)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("MainPID of %s: %q", unit, out)
	}
	return pid
}

// Reloads returns how many times the stand-in unit was reloaded since the markers were reset.
func (m *Manager) Reloads(unit string) int {
	data, _ := os.ReadFile(filepath.Join(m.MarkerDir, unit+".reload"))
	return strings.Count(string(data), "\n")
}

// Starts returns the stand-in units started since the markers were reset, in order.
func (m *Manager) Starts() []string {
	data, _ := os.ReadFile(filepath.Join(m.MarkerDir, "starts"))
	return strings.Fields(string(data))
}
