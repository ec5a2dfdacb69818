package main

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

// memCgroup is a memory cgroup of the agent's own, as the kubelet gives its pod one: what the
// kubelet, `oc adm top` and the OOM killer see of the agent is this cgroup's working set, not RSS.
type memCgroup struct {
	dir string
	v2  bool
}

// newMemCgroup makes a child memory cgroup (cgroup v1's memory hierarchy, or v2's unified one).
func newMemCgroup(name string) (*memCgroup, error) {
	leaf := fmt.Sprintf("refresh-agent-bench-%s-%d", name, os.Getpid())
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.stat"); err == nil {
		dir := filepath.Join("/sys/fs/cgroup/memory", leaf)
		return &memCgroup{dir: dir}, os.Mkdir(dir, 0o755)
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dir := filepath.Join("/sys/fs/cgroup", leaf)
		return &memCgroup{dir: dir, v2: true}, os.Mkdir(dir, 0o755)
	}
	return nil, errors.New("no memory cgroup hierarchy at /sys/fs/cgroup")
}

// command runs bin inside the cgroup from its first instruction (a shell joins it, then execs the
// agent in its place), so every page the agent faults in is charged there.
func (c *memCgroup) command(bin string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, c.dir, bin}, args...)...)
}

// memStat is the cgroup's memory as the kubelet reads it (cAdvisor: working set = usage minus
// inactive file pages, the page cache the kernel reclaims first), in MiB.
type memStat struct{ workingSet, usage, inactiveFile, anon, file float64 }

func (c *memCgroup) stat() (memStat, error) {
	usageFile, inactiveKey, anonKey, fileKey := "memory.usage_in_bytes", "total_inactive_file", "total_rss", "total_cache"
	if c.v2 {
		usageFile, inactiveKey, anonKey, fileKey = "memory.current", "inactive_file", "anon", "file"
	}
	b, err := os.ReadFile(filepath.Join(c.dir, usageFile))
	if err != nil {
		return memStat{}, err
	}
	usage, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return memStat{}, err
	}
	b, err = os.ReadFile(filepath.Join(c.dir, "memory.stat"))
	if err != nil {
		return memStat{}, err
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
	return memStat{workingSet: ws / mib, usage: usage / mib, inactiveFile: fields[inactiveKey] / mib,
		anon: fields[anonKey] / mib, file: fields[fileKey] / mib}, nil
}

// remove deletes the cgroup once its processes are gone (the kernel may take a moment).
func (c *memCgroup) remove() {
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dropPageCache writes back and drops the page cache, so that the agent's executable pages are
// read (and charged to its cgroup) by the agent itself, as on a node that just pulled the image.
func dropPageCache() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200)
}
