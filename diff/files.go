package diff

import (
	"fmt"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// Ignition's default modes for entries that do not set one.
const (
	DefaultFileMode = 0o644
	DefaultDirMode  = 0o755
)

// FileMode returns the file's mode with Ignition's default applied.
func FileMode(f types.File) int {
	if f.Mode == nil {
		return DefaultFileMode
	}
	return *f.Mode
}

// ownerString renders an owner for comparison and messages: "root" when unset.
func ownerString(id *int, name *string) string {
	switch {
	case name != nil && *name != "":
		return *name
	case id != nil && *id != 0:
		return fmt.Sprintf("%d", *id)
	default:
		return "root"
	}
}

func diffFiles(cur, des *Payload) ([]Change, error) {
	keep := func(f types.File) string { return f.Path }
	curFiles, desFiles := byPath(cur.Config.Storage.Files, keep), byPath(des.Config.Storage.Files, keep)
	var out []Change
	for _, path := range unionKeys(curFiles, desFiles) {
		if IsMetadataPath(path) {
			continue
		}
		c, inCur := curFiles[path]
		d, inDes := desFiles[path]
		ch := Change{Kind: KindFile, Op: opOf(inCur, inDes), Path: path, DirtyPath: des.DirtyPath(path)}
		if inCur {
			ch.Old = &c
		}
		if inDes {
			ch.New = &d
		}
		if inCur && inDes {
			what, err := fileDifferences(c, d)
			if err != nil {
				return nil, err
			}
			if len(what) == 0 {
				continue
			}
			ch.Detail = strings.Join(what, ", ")
		}
		out = append(out, ch)
	}
	return out, nil
}

// fileDifferences names what differs between two entries for the same path.
func fileDifferences(c, d types.File) ([]string, error) {
	var what []string
	same, err := contentsEqual(c, d)
	if err != nil {
		return nil, err
	}
	if !same {
		what = append(what, "contents")
	}
	if len(d.Append) > 0 && len(fieldsChanged(c.Append, d.Append)) > 0 {
		what = append(what, "append")
	}
	if cm, dm := FileMode(c), FileMode(d); cm != dm {
		what = append(what, fmt.Sprintf("mode %04o -> %04o", cm, dm))
	}
	if co, do := ownerString(c.User.ID, c.User.Name), ownerString(d.User.ID, d.User.Name); co != do {
		what = append(what, fmt.Sprintf("owner %s -> %s", co, do))
	}
	if cg, dg := ownerString(c.Group.ID, c.Group.Name), ownerString(d.Group.ID, d.Group.Name); cg != dg {
		what = append(what, fmt.Sprintf("group %s -> %s", cg, dg))
	}
	return what, nil
}
