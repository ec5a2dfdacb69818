package plan_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Adversary r21 c/04: a FIFO in the node's unit search path (a unit file, a unit's link to one, a
// drop-in, a unit directory) hung every plan that changes a unit: the scan opened it blocking.
// The plan goes on, reading it as no unit file, and ends.
func TestAFIFOInTheUnitSearchPathNeverHangsThePlan(t *testing.T) {
	for _, at := range []string{"/etc/systemd/system/other.service", "/run/systemd/system/other.service",
		"/usr/lib/systemd/system/crio.service.d/10-x.conf", "/etc/systemd/system/link.service"} {
		t.Run(at, func(t *testing.T) {
			root := nodeRoot(t, map[string]string{"/usr/lib/systemd/system/crio.service": rhcosCrioUnit})
			full := filepath.Join(root, at)
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			if filepath.Base(at) == "link.service" {
				fifo := filepath.Join(root, "var/fifo")
				require.NoError(t, os.MkdirAll(filepath.Dir(fifo), 0o755))
				require.NoError(t, syscall.Mkfifo(fifo, 0o644))
				require.NoError(t, os.Symlink("/var/fifo", full))
			} else {
				require.NoError(t, syscall.Mkfifo(full, 0o644))
			}
			cur := withUnits(crioDropin("LimitNOFILE=1048576\n"))
			des := withUnits(crioDropin("LimitNOFILE=1048577\n"))
			done := make(chan bool)
			go func() {
				p := rootBuild(t, crioRestartPolicy, root, cur, des)
				done <- p != nil
			}()
			select {
			case ok := <-done:
				assert.True(t, ok)
			case <-time.After(time.Minute):
				t.Fatal("the plan is still reading the FIFO after a minute")
			}
		})
	}
}
