package apply_test

import (
	"io/fs"
	"syscall"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
)

func decode(raw []byte) (*diff.Payload, error) { return diff.Decode(raw) }

func ids(fi fs.FileInfo) (int, int) {
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

func restoreOf(p string) string { _, _, r := actions.SideFiles(p); return r }
