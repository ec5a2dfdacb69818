package actions

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// CrashEnv names the environment variable that makes the process kill itself with SIGKILL at a given
// step of a refresh, for crash tests: "STEP:N" crashes at the Nth time STEP is reached (N defaults
// to 1). Steps: journal, temp, backup, rename, action, record, finish. Unset, it does nothing.
const CrashEnv = "REFRESH_AGENT_CRASH_AT"

var crash struct {
	once  sync.Once
	step  string
	at    int
	mu    sync.Mutex
	count int
}

// CrashPoint marks a step of the transaction; see CrashEnv.
func CrashPoint(step string) {
	crash.once.Do(func() {
		v := os.Getenv(CrashEnv)
		if v == "" {
			return
		}
		name, n, _ := strings.Cut(v, ":")
		crash.step, crash.at = name, 1
		if i, err := strconv.Atoi(n); err == nil && i > 0 {
			crash.at = i
		}
	})
	if crash.step == "" || crash.step != step {
		return
	}
	crash.mu.Lock()
	crash.count++
	hit := crash.count == crash.at
	crash.mu.Unlock()
	if hit {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns: the signal is on its way
	}
}
