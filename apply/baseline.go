package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
)

// maxBaselineFile bounds the size of a node file the baseline compares with the desired contents:
// far above any file the machine-config server adds (certificates, a kubeconfig). keptBaseline
// bounds one whose bytes it keeps (one that differs, for the rules that judge the old contents),
// and baselineBudget all those kept bytes together, as a data URL (adversary r21 c/02: 2000 paths
// of 4 MiB node files, each kept as a data URL three times its size, took 20 GB from a 239 KB
// payload, for paths the plan then refused).
const (
	maxBaselineFile = 4 << 20
	keptBaseline    = 64 << 10
)

func baselineBudget() int64 { return diff.MaxPayloadSize / 4 }

// withDiskBaseline completes a current state that comes from a MachineConfig (a node the agent never
// refreshed: the machine-config daemon's current config or the server's content file) with the
// node's own state for the files the desired payload carries and that MachineConfig lacks.
//
// The machine-config server adds files when it serves a payload (the kubelet CA, the cloud CA,
// registry CAs, the bootstrap kubeconfig): they are on the node since its first boot but in no
// MachineConfig, so without this every one would read as an addition and the first refresh of a
// freshly provisioned node would act on, or refuse, files that did not change. The bytes on disk
// are the truth for them: a file whose bytes, mode and owner on disk equal the desired ones is no
// change (its size, then its hash, compared: nothing of it kept); one that differs is a change,
// judged by the policy like any other, from its bytes when it is small; one missing on disk stays
// an addition. One that differs and is not read (larger than keptBaseline, or the budget spent,
// or unreadable, or behind a symlink: the transaction refuses those) is a change from contents the
// plan does not know (diff.UnreadSource, its mode and owner from the disk when known): a
// modification, never an addition, so that a rule that judges the old contents (registries.conf:
// removing a registry drains) judges it as unknown (a drain), not as a file that was not there.
func withDiskBaseline(root *actions.Root, cur, des *diff.Payload) *diff.Payload {
	have := make(map[string]bool, len(cur.Config.Storage.Files))
	for _, f := range cur.Config.Storage.Files {
		have[f.Path] = true
	}
	budget := baselineBudget()
	var added []types.File
	for _, f := range des.Config.Storage.Files {
		if have[f.Path] || diff.IsMetadataPath(f.Path) {
			continue
		}
		fi, err := root.Stat(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		entry := f
		src, same := baselineSource(root, f, fi, err, &budget)
		if !same {
			entry.Contents = types.Resource{Source: &src}
		}
		// What the disk holds (contents, mode, owner) comes from the disk; what has no trace on disk
		// (overwrite, append, and how the contents were fetched) is taken as the desired entry says.
		if err != nil {
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

// baselineSource is the baseline's source for the node file at f's path (fi, err its stat): same
// when its bytes are f's (f's own source is then the baseline: no change), else a data URL of
// them when they are small and the budget holds them, else an unread source saying why.
func baselineSource(root *actions.Root, f types.File, fi fs.FileInfo, err error, budget *int64) (src string, same bool) {
	switch {
	case err != nil:
		return diff.UnreadSource("unreadable on the node: " + err.Error()), false
	case !fi.Mode().IsRegular():
		return diff.UnreadSource(fmt.Sprintf("unreadable on the node: not a regular file (%s)", fi.Mode().Type())), false
	case fi.Size() > maxBaselineFile:
		return diff.UnreadSource(fmt.Sprintf("%d bytes on the node, more than the %d the baseline reads", fi.Size(), maxBaselineFile)), false
	}
	// The same size as the desired contents (whose decode the payload's budget paid): the hashes
	// tell, the node's streamed, the desired decoded for the moment.
	if n, err := diff.ContentSize(f); err == nil && n == fi.Size() {
		sum, herr := root.HashFile(f.Path)
		data, derr := diff.FileContentsUpTo(f, maxBaselineFile)
		if herr == nil && derr == nil {
			if want := sha256.Sum256(data); hex.EncodeToString(want[:]) == sum {
				return "", true
			}
		}
	}
	if fi.Size() > keptBaseline || 3*fi.Size()+64 > *budget {
		return diff.UnreadSource(fmt.Sprintf("%d bytes on the node that differ from the desired contents, not kept (more than %d, or the baseline's %d bytes spent)", fi.Size(), keptBaseline, baselineBudget())), false
	}
	data, _, err := root.ReadFileUpTo(f.Path, keptBaseline)
	if err != nil {
		return diff.UnreadSource("unreadable on the node: " + err.Error()), false
	}
	src = dataurl.EncodeBytes(data)
	*budget -= int64(len(src))
	return src, false
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
