package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// The round-7a adversary's F8 on the binary: a payload adding a file under one the node holds as a
// regular file (also one the same payload removes) exited 1 "failed … is not a directory", dry run
// and real run alike, and the real run said "removed" of a file it had restored. Both now refuse
// (exit 3) naming the path, writing nothing.
func TestAncestorIsAFileRefusedAlike(t *testing.T) {
	f := newFaultNode(t, 1)
	dirOf := "/etc/containers/registries.d/"
	base := func() *fixture.Config {
		return fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).File(pullSecret, []byte("v1"), 0o600)
	}
	for _, tc := range []struct {
		name, file string
		desired    *fixture.Config
	}{
		// extra.yaml is on the node, in no payload.
		{"under an existing file", dirOf + "extra.yaml", base().File(dirOf+"f000.yaml", []byte("v1 0 "), 0o644).File(dirOf+"extra.yaml/x", []byte("x"), 0o644)},
		// f000.yaml is in v1: the payload removes it and adds a file under it.
		{"the file removed, a child added", dirOf + "f000.yaml", base().File(dirOf+"f000.yaml/x", []byte("x"), 0o644)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f.copyTo(t, dir)
			require.NoError(t, os.WriteFile(filepath.Join(dir, dirOf, "extra.yaml"), []byte("someone's"), 0o644))
			des := filepath.Join(t.TempDir(), "des.ign")
			require.NoError(t, os.WriteFile(des, tc.desired.JSON(), 0o644))
			before := snapshot(t, dir)
			for _, dry := range []bool{true, false} {
				args := applyArgs(dir, des, "v2")
				if dry {
					args = append(args, "--dry-run")
				}
				r := runProc(t, nil, args...)
				require.Equal(t, 3, r.code, "dry run %v: %s %s", dry, r.out(), r.errOut())
				require.Contains(t, r.out(), tc.file+" is a regular file, not a directory")
				require.Equal(t, before, snapshot(t, dir), "nothing written (dry run %v)", dry)
			}
		})
	}
}
