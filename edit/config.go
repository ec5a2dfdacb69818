package edit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strings"

	v35 "github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
)

// cfgValue is a Config of any Ignition 3.x spec. The specs' files and users have the same fields
// (Path, Contents{Source, Compression, Verification}, Mode, Overwrite; Name, SSHAuthorizedKeys), so
// one reflective view edits them all in their own types.
type cfgValue struct{ v reflect.Value }

func config(ptr any) cfgValue { return cfgValue{reflect.ValueOf(ptr).Elem()} }

func (c cfgValue) files() reflect.Value { return c.v.FieldByName("Storage").FieldByName("Files") }
func (c cfgValue) users() reflect.Value { return c.v.FieldByName("Passwd").FieldByName("Users") }

// file returns the index of the file entry at p, or -1.
func (c cfgValue) file(p string) int {
	files := c.files()
	for i := range files.Len() {
		if files.Index(i).FieldByName("Path").String() == p {
			return i
		}
	}
	return -1
}

func strPtr(v reflect.Value) *string {
	if v.IsNil() {
		return nil
	}
	s := v.Elem().String()
	return &s
}

// contents returns file i's contents as a 3.5 Resource (the fields diff.FileContents reads).
func (c cfgValue) contents(i int) v35.Resource {
	r := c.files().Index(i).FieldByName("Contents")
	return v35.Resource{Source: strPtr(r.FieldByName("Source")), Compression: strPtr(r.FieldByName("Compression")),
		Verification: v35.Verification{Hash: strPtr(r.FieldByName("Verification").FieldByName("Hash"))}}
}

// setContents replaces file i's contents with data, encoded as its old contents were: gzip
// compression kept, a base64 data URL kept base64 (with its media type), a percent-encoded one kept
// percent-encoded. The verification hash, which would no longer match, is dropped.
func (c cfgValue) setContents(i int, data []byte) error {
	r := c.files().Index(i).FieldByName("Contents")
	source, compression := encodeLike(c.contents(i), data)
	if compression != nil {
		setPtr(r.FieldByName("Compression"), *compression)
	} else {
		r.FieldByName("Compression").SetZero()
	}
	setPtr(r.FieldByName("Source"), source)
	r.FieldByName("Verification").FieldByName("Hash").SetZero()
	return nil
}

func setPtr[T any](field reflect.Value, v T) {
	p := reflect.New(field.Type().Elem())
	p.Elem().Set(reflect.ValueOf(v).Convert(field.Type().Elem()))
	field.Set(p)
}

// encodeLike encodes data as a data URL in old's style.
func encodeLike(old v35.Resource, data []byte) (string, *string) {
	src := ""
	if old.Source != nil {
		src = *old.Source
	}
	if old.Compression != nil && *old.Compression == "gzip" {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(data)
		_ = zw.Close()
		gz := "gzip"
		return "data:;base64," + base64.StdEncoding.EncodeToString(b.Bytes()), &gz
	}
	head, _, ok := strings.Cut(src, ",")
	switch {
	case ok && strings.HasPrefix(head, "data:") && strings.HasSuffix(head, ";base64"):
		return head + "," + base64.StdEncoding.EncodeToString(data), nil
	case ok && strings.HasPrefix(head, "data:"):
		return head + "," + dataurl.Escape(data), nil
	}
	return "data:;base64," + base64.StdEncoding.EncodeToString(data), nil
}

// apply makes one edit in this copy of the config, reporting whether it changed anything.
func (c cfgValue) apply(op Op, r role, outerHad map[string]bool) (bool, error) {
	if op.KeysOp != KeysNone {
		return c.setKeys(op.Keys, r)
	}
	i := c.file(op.Path)
	files := c.files()
	switch {
	case op.Remove && i >= 0:
		files.Set(reflect.AppendSlice(files.Slice(0, i), files.Slice(i+1, files.Len())))
		return true, nil
	case op.Remove && r == outer:
		return false, fmt.Errorf("the payload has no file %s to remove", op.Path)
	case op.Remove:
		return false, nil
	case i >= 0:
		if err := c.setContents(i, op.Contents); err != nil {
			return false, err
		}
		if op.Mode != nil {
			setPtr(files.Index(i).FieldByName("Mode"), *op.Mode)
		}
		return true, nil
	case r == partialCopy, r == contentCopy && outerHad[op.Path]:
		// The encapsulated copy carries no files; a file the outer config had and the content
		// copy lacks is one the machine-config server adds when serving: the copy stays without.
		return false, nil
	}
	f := reflect.New(files.Type().Elem()).Elem()
	f.FieldByName("Path").SetString(op.Path)
	mode := DefaultMode
	if op.Mode != nil {
		mode = *op.Mode
	}
	setPtr(f.FieldByName("Mode"), mode)
	setPtr(f.FieldByName("Overwrite"), true) // as the MCO renders every file: the image may have one
	setPtr(f.FieldByName("Contents").FieldByName("Source"), "data:;base64,"+base64.StdEncoding.EncodeToString(op.Contents))
	files.Set(reflect.Append(files, f))
	return true, nil
}

// core returns the index of user core, or -1.
func (c cfgValue) core() int {
	users := c.users()
	for i := range users.Len() {
		if users.Index(i).FieldByName("Name").String() == "core" {
			return i
		}
	}
	return -1
}

func (c cfgValue) coreKeys() []string {
	i := c.core()
	if i < 0 {
		return nil
	}
	keys := c.users().Index(i).FieldByName("SSHAuthorizedKeys")
	out := make([]string, keys.Len())
	for j := range out {
		out[j] = keys.Index(j).String()
	}
	return out
}

// resolveKeys turns the keys edits into one KeysSet with the list this config ends with.
func (c cfgValue) resolveKeys(ops []Op) ([]Op, error) {
	keys, touched := c.coreKeys(), false
	var out []Op
	for _, op := range ops {
		if op.KeysOp == KeysNone {
			out = append(out, op)
			continue
		}
		touched = true
		switch op.KeysOp {
		case KeysSet:
			keys = slices.Clone(op.Keys)
		case KeysAdd:
			for _, k := range op.Keys {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		case KeysRemove:
			for _, k := range op.Keys {
				j := slices.Index(keys, k)
				if j < 0 {
					return nil, fmt.Errorf("core has no SSH key %s to remove", keyName(k))
				}
				keys = slices.Delete(keys, j, j+1)
			}
		}
	}
	if !touched {
		return out, nil
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the edit would leave core without any SSH key: nodes refuse that (core could no longer log in); keep at least one")
	}
	return append(out, Op{KeysOp: KeysSet, Keys: keys}), nil
}

// keyName names a key by its type and comment, or its first characters: enough to recognise it.
func keyName(k string) string {
	f := strings.Fields(k)
	if len(f) >= 3 {
		return fmt.Sprintf("%q (%s)", strings.Join(f[2:], " "), f[0])
	}
	if len(k) > 24 {
		k = k[:24] + "..."
	}
	return fmt.Sprintf("%q", k)
}

// setKeys sets core's keys in this copy: the outer config and the content copy always carry them
// (core added when missing), the encapsulated copy only when it carries core.
func (c cfgValue) setKeys(keys []string, r role) (bool, error) {
	i := c.core()
	if slices.Equal(c.coreKeys(), keys) && i >= 0 {
		return false, nil
	}
	users := c.users()
	if i < 0 {
		if r == partialCopy {
			return false, nil
		}
		u := reflect.New(users.Type().Elem()).Elem()
		u.FieldByName("Name").SetString("core")
		users.Set(reflect.Append(users, u))
		i = users.Len() - 1
	}
	field := users.Index(i).FieldByName("SSHAuthorizedKeys")
	list := reflect.MakeSlice(field.Type(), len(keys), len(keys))
	for j, k := range keys {
		list.Index(j).SetString(k)
	}
	field.Set(list)
	return true, nil
}
