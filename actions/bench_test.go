package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/openshift/refresh-agent/actions"
)

// benchOps returns n ops of size bytes each under /etc/containers/registries.d.
func benchOps(n, size int) []actions.Op {
	ops := make([]actions.Op, n)
	for i := range ops {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte('a' + (i+j)%26)
		}
		ops[i] = actions.Op{Path: fmt.Sprintf("/etc/containers/registries.d/f%04d.yaml", i), Data: data, Mode: 0o644}
	}
	return ops
}

// BenchmarkTransaction is a whole transaction without unit actions: stage (temp files, backups,
// journal), commit (renames, directory fsyncs), done, finish. The files exist beforehand, so every
// one is backed up, as in a real refresh.
func BenchmarkTransaction(b *testing.B) {
	for _, n := range []int{50, 500} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "etc/containers/registries.d"), 0o755); err != nil {
				b.Fatal(err)
			}
			r, err := actions.OpenRoot(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			state := filepath.Join(dir, "var/lib/refresh-agent")
			ops := benchOps(n, 20<<10)
			b.SetBytes(int64(n * 20 << 10))
			for b.Loop() {
				txn, err := actions.Prepare(r, state, ops, actions.Meta{})
				if err != nil {
					b.Fatal(err)
				}
				if err := txn.Commit(); err != nil {
					b.Fatal(err)
				}
				if err := txn.MarkDone(); err != nil {
					b.Fatal(err)
				}
				if err := txn.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBaselineWriteFsyncRename is the baseline: for each file, write a temp file, fsync it and
// rename it over the target, then fsync the directory once: the least a crash-safe writer does.
func BenchmarkBaselineWriteFsyncRename(b *testing.B) {
	for _, n := range []int{50, 500} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "etc/containers/registries.d")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			ops := benchOps(n, 20<<10)
			b.SetBytes(int64(n * 20 << 10))
			for b.Loop() {
				for _, op := range ops {
					target := filepath.Join(dir, filepath.Base(op.Path))
					f, err := os.OpenFile(target+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.Write(op.Data); err != nil {
						b.Fatal(err)
					}
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
					f.Close()
					if err := os.Rename(target+".tmp", target); err != nil {
						b.Fatal(err)
					}
				}
				d, err := os.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
				d.Close()
			}
		})
	}
}
