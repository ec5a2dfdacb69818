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
	configHome string // $XDG_CONFIG_HOME
	cgroup     string
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

// Default returns the manager Main started, or nil and the reason there is none.
func Default() (*Manager, string) { return manager, skipReason }

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
	if out, err := exec.Command("mount", "-t", "tmpfs", "tmpfs", "/run").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount tmpfs on /run: %v: %s", err, out)
	}
	if err := os.MkdirAll("/run/systemd/system", 0o755); err != nil {
		return nil, err
	}
	m, err := startManager("/run/user/0")
	if err != nil {
		return nil, err
	}
	// systemctl and the code under test find the default manager through the environment.
	os.Setenv("XDG_RUNTIME_DIR", m.RuntimeDir)
	os.Setenv("XDG_CONFIG_HOME", m.configHome)
	return m, nil
}

// startManager starts a user manager with its own runtime and config directories. Several can run
// side by side in the namespace, one per simulated node.
func startManager(runtimeDir string) (*Manager, error) {
	if err := os.MkdirAll(runtimeDir, 0o700); err != nil {
		return nil, err
	}
	cfg, err := os.MkdirTemp("", "systemdtest-config-")
	if err != nil {
		return nil, err
	}
	m := &Manager{RuntimeDir: runtimeDir, configHome: cfg, UnitDir: filepath.Join(cfg, "systemd", "user"), MarkerDir: filepath.Join(cfg, "markers")}
	for _, d := range []string{m.UnitDir, m.MarkerDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	// Each manager gets cgroups of its own: managers started side by side in one cgroup would create
	// the same <cgroup>/crio.service, and restarting a unit in one would kill the others' processes.
	m.cgroup = fmt.Sprintf("refresh-agent-test-%d-%s", os.Getpid(), filepath.Base(runtimeDir))
	script := `for h in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified /sys/fs/cgroup; do
  [ -e "$h/cgroup.procs" ] || continue
  mkdir -p "$h/$CG" 2>/dev/null && echo $$ > "$h/$CG/cgroup.procs" 2>/dev/null
done
exec /lib/systemd/systemd --user --log-target=console --log-level=warning`
	m.proc = exec.Command("/bin/sh", "-c", script)
	m.proc.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "XDG_CONFIG_HOME="+cfg, "CG="+m.cgroup)
	if err := m.proc.Start(); err != nil {
		return nil, err
	}
	// Ready when systemctl gets an answer (the socket file alone can precede the listener).
	for i := 0; i < 100; i++ {
		if _, err = os.Stat(m.Socket()); err == nil {
			if _, err = m.Systemctl("show-environment"); err == nil {
				return m, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("manager at %s not answering after 5s: %v", m.Socket(), err)
}

// Socket is the manager's private D-Bus socket.
func (m *Manager) Socket() string { return filepath.Join(m.RuntimeDir, "systemd", "private") }

// Another starts an additional manager (stopped at the end of the test), for a second simulated node.
func Another(t testing.TB, name string) *Manager {
	t.Helper()
	Require(t)
	m, err := startManager(filepath.Join("/run/user", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	return m
}

func (m *Manager) stop() {
	_, _ = m.Systemctl("exit")
	done := make(chan struct{})
	go func() { _ = m.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = m.proc.Process.Kill()
	}
	for _, h := range []string{"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		removeCgroup(filepath.Join(h, m.cgroup))
	}
}

// removeCgroup removes an empty cgroup tree, deepest first (best effort).
func removeCgroup(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeCgroup(filepath.Join(dir, e.Name()))
		}
	}
	_ = os.Remove(dir)
}

// Systemctl runs systemctl --user with args.
func (m *Manager) Systemctl(args ...string) (string, error) {
	cmd := exec.Command("systemctl", append([]string{"--user"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+m.RuntimeDir, "XDG_CONFIG_HOME="+m.configHome)
	out, err := cmd.CombinedOutput()
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
	reload := m.MarkerReload(name)
	if failReload {
		reload = "/bin/false"
	}
	m.StandInReload(t, name, reload)
}

// StandInReload is StandIn with the given ExecReload command line.
func (m *Manager) StandInReload(t testing.TB, name, reload string) {
	t.Helper()
	if err := m.InstallStandIn(name, reload); err != nil {
		t.Fatal(err)
	}
}

// MarkerReload is the ExecReload of a stand-in that records each reload.
func (m *Manager) MarkerReload(name string) string {
	return fmt.Sprintf("/bin/sh -c 'date +%%%%s%%%%N >> %s/%s.reload'", m.MarkerDir, name)
}

// InstallStandIn writes the stand-in unit, reloads the manager and (re)starts the unit.
func (m *Manager) InstallStandIn(name, reload string) error {
	unit := fmt.Sprintf("[Service]\nExecStartPre=/bin/sh -c 'echo %s >> %s/starts'\nExecStart=/bin/sleep infinity\nExecReload=%s\n",
		name, m.MarkerDir, reload)
	if err := os.WriteFile(filepath.Join(m.UnitDir, name), []byte(unit), 0o644); err != nil {
		return err
	}
	if _, err := m.Systemctl("daemon-reload"); err != nil {
		return err
	}
	_, err := m.Systemctl("restart", name)
	return err
}

// PID returns the unit's main PID (0 when not running).
func (m *Manager) PID(unit string) (int, error) {
	out, err := m.Systemctl("show", "-p", "MainPID", "--value", unit)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("MainPID of %s: %q", unit, out)
	}
	return pid, nil
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
	pid, err := m.PID(unit)
	if err != nil {
		t.Fatal(err)
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

// Kill stops the manager abruptly (its D-Bus connections drop), and returns a function that starts
// a new one on the same runtime directory, with the same units installed by InstallStandIn callers.
func (m *Manager) Kill() error {
	if err := m.proc.Process.Kill(); err != nil {
		return err
	}
	_, _ = m.proc.Process.Wait()
	_ = os.Remove(filepath.Join(m.RuntimeDir, "bus")) // a stale bus socket would refuse systemctl
	return os.RemoveAll(filepath.Join(m.RuntimeDir, "systemd"))
}

// Restart starts a fresh manager on m's runtime directory (after Kill) and returns it.
func Restart(t testing.TB, m *Manager) *Manager {
	t.Helper()
	n, err := startManager(m.RuntimeDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.stop)
	return n
}
