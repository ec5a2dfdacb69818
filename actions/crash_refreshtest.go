//go:build refreshtest

package actions

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Crash points exist only in a build with -tags refreshtest (the crash and fault tests' binary, the
// scale harness's failing nodes); a release build has the no-op in crash.go, and neither variable
// below is read.
//
// CrashEnv names the environment variable that makes the process kill itself with SIGKILL at a given
// step of a refresh: "STEP:N" crashes at the Nth time STEP is reached (N defaults to 1). StopEnv
// makes it stop itself with SIGSTOP there instead (a test then injects a fault or runs a second
// process, and continues it with SIGCONT). Steps: journal, temp, backup, rename, action, record,
// restore, finish.
const (
	CrashEnv = "REFRESH_AGENT_CRASH_AT"
	StopEnv  = "REFRESH_AGENT_STOP_AT"
)

type trigger struct {
	step  string
	at    int
	count int
}

var crash struct {
	once       sync.Once
	mu         sync.Mutex
	kill, stop trigger
}

func parseTrigger(env string) trigger {
	v := os.Getenv(env)
	if v == "" {
		return trigger{}
	}
	name, n, _ := strings.Cut(v, ":")
	t := trigger{step: name, at: 1}
	if i, err := strconv.Atoi(n); err == nil && i > 0 {
		t.at = i
	}
	return t
}

// hit counts one more passage through step and reports whether this is the one asked for.
func (t *trigger) hit(step string) bool {
	if t.step == "" || t.step != step {
		return false
	}
	t.count++
	return t.count == t.at
}

// CrashPoint marks a step of the transaction; see CrashEnv and StopEnv.
func CrashPoint(step string) {
	crash.once.Do(func() { crash.kill, crash.stop = parseTrigger(CrashEnv), parseTrigger(StopEnv) })
	crash.mu.Lock()
	kill, stop := crash.kill.hit(step), crash.stop.hit(step)
	crash.mu.Unlock()
	if stop {
		signalSelf(syscall.SIGSTOP) // returns once continued
	}
	if kill {
		signalSelf(syscall.SIGKILL)
		select {} // never returns: the signal is on its way
	}
}

// signalSelf sends sig to the calling thread: a signal to the process could be taken by another
// thread while this one runs on past the step for a moment; the calling thread acts on its own
// before the system call returns to the program.
func signalSelf(sig syscall.Signal) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
}
