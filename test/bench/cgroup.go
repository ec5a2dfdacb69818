package main

import (
	"os/exec"

	"github.com/openshift/refresh-agent/test/memcg"
)

// memCgroup is a memory cgroup of the agent's own, as the kubelet gives its pod one (test/memcg).
type memCgroup struct{ cg *memcg.Cgroup }

func newMemCgroup(name string) (*memCgroup, error) {
	cg, err := memcg.New("bench-" + name)
	return &memCgroup{cg: cg}, err
}

func (c *memCgroup) command(bin string, args ...string) *exec.Cmd { return c.cg.Command(bin, args...) }

func (c *memCgroup) remove() { c.cg.Remove() }

// memStat is the cgroup's memory as the kubelet reads it, in MiB (memcg.Stat).
type memStat struct{ workingSet, usage, inactiveFile, anon, file float64 }

func (c *memCgroup) stat() (memStat, error) {
	s, err := c.cg.Stat()
	return memStat{workingSet: s.WorkingSet, usage: s.Usage, inactiveFile: s.InactiveFile, anon: s.Anon, file: s.File}, err
}

func dropPageCache() error { return memcg.DropPageCache() }
