// Command gen writes MCS-shaped payloads (see package mcs) for the demo and for trying the binary by
// hand: base.ign and one <scenario>.ign per change as served (Ignition 3.2.0 JSON), each also as
// <scenario>.config in the upgrade ConfigMap's encoding (base64 of gzip). With -provision ROOT it
// also lays out a node root as Ignition leaves it after booting from base.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openshift/refresh-agent/test/mcs"
)

func main() {
	out := flag.String("out", "", "directory to write the payloads to")
	root := flag.String("provision", "", "also provision a node root here from base")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: gen -out DIR [-provision ROOT]")
		os.Exit(2)
	}
	if err := run(*out, *root); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out, root string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	write := func(name string, p *mcs.Pool) error {
		served := p.Served()
		if err := os.WriteFile(filepath.Join(out, name+".ign"), served, 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, name+".config"), mcs.ConfigMapValue(served), 0o644)
	}
	if err := write("base", mcs.Base()); err != nil {
		return err
	}
	for _, s := range append(mcs.Eligible(), mcs.Refused()...) {
		if err := write(s.Name, s.Change(mcs.Base().Clone())); err != nil {
			return err
		}
	}
	if root == "" {
		return nil
	}
	for _, d := range []string{"etc", "var/home/core"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "etc/group"), []byte("root:x:0:\ncore:x:1000:\n"), 0o644); err != nil {
		return err
	}
	return mcs.Base().Provision(root)
}
