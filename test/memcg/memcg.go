// Package memcg runs a process in a memory cgroup of its own and reads the cgroup's memory as the
// kubelet does: what the kubelet, `oc adm top` and the OOM killer see of a pod is its memory
// cgroup's working set (usage minus inactive file pages), not RSS. test/bench and test/scale use it.
package memcg

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cgroup is a child memory cgroup (cgroup v1's memory hierarchy, or v2's unified one).
type Cgroup struct {
	dir string
	v2  bool
}

// New makes a child memory cgroup named after name and this process.
func New(name string) (*Cgroup, error) {
	leaf := fmt.Sprintf("refresh-agent-%s-%d", name, os.Getpid())
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.stat"); err == nil {
		dir := filepath.Join("/sys/fs/cgroup/memory", leaf)
		return &Cgroup{dir: dir}, os.Mkdir(dir, 0o755)
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dir := filepath.Join("/sys/fs/cgroup", leaf)
		return &Cgroup{dir: dir, v2: true}, os.Mkdir(dir, 0o755)
	}
	return nil, errors.New("no memory cgroup hierarchy at /sys/fs/cgroup")
}

// Command runs bin inside the cgroup from its first instruction (a shell joins it, then execs bin
// in its place), so every page it faults in is charged there.
func (c *Cgroup) Command(bin string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, c.dir, bin}, args...)...)
}

// Stat is the cgroup's memory as the kubelet reads it (cAdvisor: working set = usage minus
// inactive file pages, the page cache the kernel reclaims first), in MiB.
type Stat struct{ WorkingSet, Usage, InactiveFile, Anon, File float64 }

// Stat reads the cgroup's memory now.
func (c *Cgroup) Stat() (Stat, error) {
	usageFile, inactiveKey, anonKey, fileKey := "memory.usage_in_bytes", "total_inactive_file", "total_rss", "total_cache"
	if c.v2 {
		usageFile, inactiveKey, anonKey, fileKey = "memory.current", "inactive_file", "anon", "file"
	}
	b, err := os.ReadFile(filepath.Join(c.dir, usageFile))
	if err != nil {
		return Stat{}, err
	}
	usage, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return Stat{}, err
	}
	b, err = os.ReadFile(filepath.Join(c.dir, "memory.stat"))
	if err != nil {
		return Stat{}, err
	}
	fields := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok {
			fields[k], _ = strconv.ParseFloat(v, 64)
		}
	}
	const mib = 1 << 20
	ws := max(usage-fields[inactiveKey], 0)
	return Stat{WorkingSet: ws / mib, Usage: usage / mib, InactiveFile: fields[inactiveKey] / mib,
		Anon: fields[anonKey] / mib, File: fields[fileKey] / mib}, nil
}

// Remove deletes the cgroup once its processes are gone (the kernel may take a moment).
func (c *Cgroup) Remove() {
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DropPageCache writes back and drops the page cache, so that an executable's pages are read (and
// charged to its cgroup) by the process itself, as on a node that just pulled the image.
func DropPageCache() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200)
}
