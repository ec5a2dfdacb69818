package apply

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
)

// maxBaselineFile bounds the size of a file read from the node for the baseline: far above any
// file the machine-config server adds (certificates, a kubeconfig).
const maxBaselineFile = 4 << 20

// withDiskBaseline completes a current state that comes from a MachineConfig (a node the agent never
// refreshed: the machine-config daemon's current config or the server's content file) with the
// node's own state for the files the desired payload carries and that MachineConfig lacks.
//
// The machine-config server adds files when it serves a payload (the kubelet CA, the cloud CA,
// registry CAs, the bootstrap kubeconfig): they are on the node since its first boot but in no
// MachineConfig, so without this every one would read as an addition and the first refresh of a
// freshly provisioned node would act on, or refuse, files that did not change. The bytes on disk
// are the truth for them: a file whose bytes, mode and owner on disk equal the desired ones is no
// change; one that differs is a change, judged by the policy like any other; one missing on disk
// stays an addition. One that exists but is not read (larger than maxBaselineFile, or unreadable, or
// behind a symlink: the transaction refuses those) is a change from contents the plan does not know
// (diff.UnreadSource, its mode and owner from the disk when known): a modification, never an
// addition, so that a rule that judges the old contents (registries.conf: removing a registry drains)
// judges it as unknown (a drain), not as a file that was not there.
func withDiskBaseline(root *actions.Root, cur, des *diff.Payload) *diff.Payload {
	have := make(map[string]bool, len(cur.Config.Storage.Files))
	for _, f := range cur.Config.Storage.Files {
		have[f.Path] = true
	}
	var added []types.File
	for _, f := range des.Config.Storage.Files {
		if have[f.Path] || diff.IsMetadataPath(f.Path) {
			continue
		}
		// Bounded: a payload may name any path, and reading a multi-gigabyte file to compare it
		// would take the agent's memory; such a file stays an addition (judged by the policy).
		data, fi, err := root.ReadFileUpTo(f.Path, maxBaselineFile)
		var src string
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, actions.ErrTooLarge):
			src = diff.UnreadSource(fmt.Sprintf("%d bytes on the node, more than the %d the baseline reads", fi.Size(), maxBaselineFile))
		case err != nil:
			src = diff.UnreadSource("unreadable on the node: " + err.Error())
		default:
			src = dataurl.EncodeBytes(data)
		}
		// What the disk holds (contents, mode, owner) comes from the disk; what has no trace on disk
		// (overwrite, append, and how the contents were fetched) is taken as the desired entry says.
		entry := f
		entry.Contents = types.Resource{Source: &src}
		if fi == nil {
			added = append(added, entry) // mode and owner unknown too: taken as the desired entry's
			continue
		}
		entry.User, entry.Group = types.NodeUser{}, types.NodeGroup{}
		mode := unixMode(fi.Mode())
		entry.Mode = &mode
		if uid, gid := ownerOf(fi); uid != 0 || gid != 0 {
			entry.User.ID, entry.Group.ID = &uid, &gid
			if uid == 0 {
				entry.User.ID = nil
			}
			if gid == 0 {
				entry.Group.ID = nil
			}
		}
		added = append(added, entry)
	}
	if len(added) == 0 {
		return cur
	}
	out := *cur
	out.Config.Storage.Files = append(append([]types.File{}, cur.Config.Storage.Files...), added...)
	return &out
}

// unixMode is the file's mode as chmod sets it: the permission bits and the set-user-ID, set-group-ID
// and sticky bits (Go keeps those apart from Perm). A node file holding the payload's contents
// under 06755 differs from the payload's 0755, so the refresh writes it (adversary r19 a/02: the
// bits were dropped and a planted setuid file was recorded as the payload's).
func unixMode(m fs.FileMode) int {
	mode := int(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
