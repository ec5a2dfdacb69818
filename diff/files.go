package diff

import (
	"fmt"
	"reflect"
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

// fileDifferences names what differs between two entries for the same path. Every field of the
// entry is compared (see Compared): contents by their decoded bytes, mode, owner and overwrite by
// their effective values (Ignition's defaults applied), the rest as written, slices as a whole.
func fileDifferences(c, d types.File) ([]string, error) {
	var what []string
	same, err := contentsEqual(c, d)
	if err != nil {
		return nil, err
	}
	if !same {
		what = append(what, "contents")
	}
	if !ptrEq(c.Contents.Verification.Hash, d.Contents.Verification.Hash) {
		what = append(what, "contents.verification")
	}
	if !sameSlice(c.Contents.HTTPHeaders, d.Contents.HTTPHeaders) {
		what = append(what, "contents.httpHeaders")
	}
	if !sameSlice(c.Append, d.Append) {
		what = append(what, "append")
	}
	if cm, dm := FileMode(c), FileMode(d); cm != dm {
		what = append(what, fmt.Sprintf("mode %04o -> %04o", cm, dm))
	}
	if ownerKey(c.User.ID, c.User.Name) != ownerKey(d.User.ID, d.User.Name) {
		what = append(what, fmt.Sprintf("owner %s -> %s", ownerString(c.User.ID, c.User.Name), ownerString(d.User.ID, d.User.Name)))
	}
	if ownerKey(c.Group.ID, c.Group.Name) != ownerKey(d.Group.ID, d.Group.Name) {
		what = append(what, fmt.Sprintf("group %s -> %s", ownerString(c.Group.ID, c.Group.Name), ownerString(d.Group.ID, d.Group.Name)))
	}
	if co, do := c.Overwrite != nil && *c.Overwrite, d.Overwrite != nil && *d.Overwrite; co != do {
		what = append(what, fmt.Sprintf("overwrite %t -> %t", co, do))
	}
	return what, nil
}

// ownerKey identifies an owner for comparison: a name, or a numeric id (unset, and the name root, are
// id 0: root is uid and gid 0 on every node). A name and an id are different owners even when they
// print alike ("5" the name, 5 the id).
func ownerKey(id *int, name *string) string {
	switch {
	case name != nil && *name == "root":
		return "id:0"
	case name != nil && *name != "":
		return "name:" + *name
	case id != nil:
		return fmt.Sprintf("id:%d", *id)
	default:
		return "id:0"
	}
}

// sameSlice compares two slices as a whole (elements deep-equal, in order); nil and empty are equal.
func sameSlice[T any](a, b []T) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
