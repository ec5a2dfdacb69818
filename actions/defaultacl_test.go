package actions_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/openshift/refresh-agent/actions"
)

// posixACL encodes a POSIX ACL xattr (version 2): user::rwx user:1000:rwx group::r-x mask::rwx other::---.
func posixACL() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 7, 0xffffffff}, {0x02, 7, 1000}, {0x04, 5, 0xffffffff}, {0x10, 7, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// Adversary round 17 b/02: a directory's default ACL is not inherited by the file the agent writes:
// its access is its mode and owner alone, as the plan shows them.
func TestAWrittenFileDoesNotInheritTheDirectorysDefaultACL(t *testing.T) {
	r, dir := newRoot(t)
	d := filepath.Join(dir, "var/lib/myapp")
	require.NoError(t, os.MkdirAll(d, 0o755))
	if err := unix.Setxattr(d, "system.posix_acl_default", posixACL(), 0); err != nil {
		t.Skipf("no POSIX ACLs here: %v", err)
	}
	// The control: a file created there the ordinary way gets the named entry.
	ctl := filepath.Join(d, "control")
	require.NoError(t, os.WriteFile(ctl, nil, 0o640))
	_, err := unix.Getxattr(ctl, "system.posix_acl_access", make([]byte, 256))
	require.NoError(t, err, "the directory's default ACL is inherited by an ordinary create")

	state := filepath.Join(t.TempDir(), "state")
	txn, err := actions.Prepare(r, state, []actions.Op{{Path: "/var/lib/myapp/db.conf", Data: []byte("password=x\n"), Mode: 0o640}}, actions.Meta{Hash: "h"})
	require.NoError(t, err)
	require.NoError(t, txn.Commit())
	require.NoError(t, txn.MarkDone())
	require.NoError(t, txn.Finish())
	_, err = unix.Getxattr(filepath.Join(d, "db.conf"), "system.posix_acl_access", make([]byte, 256))
	require.ErrorIs(t, err, unix.ENODATA, "no ACL beyond the mode")
	fi, err := os.Stat(filepath.Join(d, "db.conf"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
