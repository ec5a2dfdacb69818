package diff

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/vincent-petithory/dataurl"
)

// leafFields lists every field reachable from t that holds no struct: "A.B.C" paths by Go name,
// embedded structs transparent, pointers and slices entered.
func leafFields(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		*out = append(*out, prefix)
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name := prefix
		if !f.Anonymous {
			name = strings.TrimPrefix(prefix+"."+f.Name, ".")
		}
		leafFields(f.Type, name, out)
	}
}

// coveredBy returns the list entry (in Compared or Ignored) that covers path, if any.
func coveredBy(path string, list map[string]string) (string, bool) {
	for p := path; p != ""; {
		if _, ok := list[p]; ok {
			return p, true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return "", false
}

// TestFieldCoverage: every field of types.Config is compared or ignored with a reason, never both,
// and the lists name only fields that exist.
func TestFieldCoverage(t *testing.T) {
	var leaves []string
	leafFields(reflect.TypeOf(types.Config{}), "", &leaves)
	if len(leaves) < 100 {
		t.Fatalf("the walk found only %d fields", len(leaves))
	}
	used := map[string]bool{}
	for _, leaf := range leaves {
		c, compared := coveredBy(leaf, Compared)
		i, ignored := coveredBy(leaf, Ignored)
		switch {
		case !compared && !ignored:
			t.Errorf("%s is neither compared nor ignored (add it to diff.Compared, or to diff.Ignored with the reason)", leaf)
		case compared && ignored:
			t.Errorf("%s is both compared (%s) and ignored (%s)", leaf, c, i)
		}
		used[c], used[i] = true, true
	}
	for _, list := range []map[string]string{Compared, Ignored} {
		for p, why := range list {
			if !used[p] {
				t.Errorf("%s names no field of types.Config", p)
			}
			if why == "" {
				t.Errorf("%s has no reason", p)
			}
		}
	}
}

// Subtrees compared as a whole go through their JSON form: a field JSON leaves out would be unseen.
func TestWholeComparedSubtreesMarshalEveryField(t *testing.T) {
	var check func(reflect.Type, string)
	check = func(t2 reflect.Type, path string) {
		for t2.Kind() == reflect.Pointer || t2.Kind() == reflect.Slice {
			t2 = t2.Elem()
		}
		if t2.Kind() != reflect.Struct {
			return
		}
		for i := range t2.NumField() {
			f := t2.Field(i)
			if tag := f.Tag.Get("json"); tag == "-" || (!f.Anonymous && tag == "") {
				t.Errorf("%s.%s is not marshaled under its own json name", path, f.Name)
			}
			check(f.Type, path+"."+f.Name)
		}
	}
	cfg := reflect.TypeOf(types.Config{})
	for p := range Compared {
		if strings.HasPrefix(p, "Storage.Files.") {
			continue // compared field by field, not through JSON
		}
		f, ok := fieldByPath(cfg, p)
		if !ok {
			t.Fatalf("%s: no such field", p)
		}
		check(f, p)
	}
}

func fieldByPath(t reflect.Type, path string) (reflect.Type, bool) {
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		f, ok := t.FieldByName(name)
		if !ok {
			return nil, false
		}
		t = f.Type
	}
	return t, true
}

// TestEveryComparedFieldIsSeen: for every field not ignored, two configs that differ in that field
// alone (built by reflection: one entry in each slice on the way, the field set on one side) have at
// least one change. The lists above are claims; this holds them to the code.
func TestEveryComparedFieldIsSeen(t *testing.T) {
	var leaves []string
	leafFields(reflect.TypeOf(types.Config{}), "", &leaves)
	for _, leaf := range leaves {
		if _, ignored := coveredBy(leaf, Ignored); ignored {
			continue
		}
		t.Run(leaf, func(t *testing.T) {
			cur, des := configWith(leaf, false), configWith(leaf, true)
			if prep, ok := specialCases[leaf]; ok {
				prep(&cur, &des)
			}
			changes, err := Diff(&Payload{Config: cur}, &Payload{Config: des})
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) == 0 {
				t.Fatalf("a change of %s alone is not seen", leaf)
			}
			for _, c := range changes {
				if strings.Contains(c.Detail, "data:") {
					t.Errorf("detail carries contents: %q", c.Detail)
				}
			}
		})
	}
}

// specialCases: fields a generic value cannot change on its own (compression needs compressed data).
var specialCases = map[string]func(cur, des *types.Config){
	"Storage.Files.Contents.Compression": func(cur, des *types.Config) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte("x"))
		_ = zw.Close()
		src := dataurl.EncodeBytes(buf.Bytes())
		gz := "gzip"
		cur.Storage.Files[0].Contents.Source = &src // the gzip bytes themselves, uncompressed
		des.Storage.Files[0].Contents.Source = &src // "x"
		des.Storage.Files[0].Contents.Compression = &gz
	},
}

// configWith builds a config with one entry in every slice on the way to leaf (each with its key set),
// and leaf itself set when set is true.
func configWith(leaf string, set bool) types.Config {
	var cfg types.Config
	v := reflect.ValueOf(&cfg).Elem()
	names := strings.Split(leaf, ".")
	for i, name := range names {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Kind() == reflect.Slice {
			if v.Len() == 0 {
				v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
			}
			v = v.Index(0)
			setKeys(v)
		}
		v = v.FieldByName(name)
		if i == len(names)-1 && set {
			setLeaf(v, name)
		}
	}
	return cfg
}

// setKeys gives a new slice entry the key fields Diff matches entries by.
func setKeys(v reflect.Value) {
	if v.Kind() != reflect.Struct {
		return
	}
	for _, k := range []string{"Path", "Name", "Device"} {
		if f := v.FieldByName(k); f.IsValid() {
			setString(f, "/etc/x")
		}
	}
}

// setLeaf sets a leaf to a value different from its zero value and from setKeys' keys.
func setLeaf(v reflect.Value, name string) {
	s := "/etc/y"
	if name == "Source" {
		s = "data:,y"
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setLeaf(v.Elem(), name)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		setLeaf(v.Index(0), name)
	case reflect.String:
		v.SetString(s)
	case reflect.Int:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("unhandled leaf kind " + v.Kind().String())
	}
}

func setString(f reflect.Value, s string) {
	switch {
	case f.Kind() == reflect.String:
		f.SetString(s)
	case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String:
		f.Set(reflect.New(f.Type().Elem()))
		f.Elem().SetString(s)
	}
}

// The two unseen cases, by name.
func TestAppendAndRemoteHashChangesAreSeen(t *testing.T) {
	file := func(mut func(*types.File)) *Payload {
		src := "https://example.com/x"
		f := types.File{Node: types.Node{Path: "/etc/x"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &src}}}
		mut(&f)
		return &Payload{Config: types.Config{Storage: types.Storage{Files: []types.File{f}}}}
	}
	src := "data:,tail"
	h1, h2 := "sha512-"+strings.Repeat("a", 128), "sha512-"+strings.Repeat("b", 128)
	for name, pair := range map[string][2]*Payload{
		"append removed": {file(func(f *types.File) { f.Append = []types.Resource{{Source: &src}} }), file(func(*types.File) {})},
		"append changed": {file(func(f *types.File) { f.Append = []types.Resource{{Source: &src}} }),
			file(func(f *types.File) { f.Append = []types.Resource{{Source: &src}, {Source: &src}} })},
		"remote hash": {file(func(f *types.File) { f.Contents.Verification.Hash = &h1 }), file(func(f *types.File) { f.Contents.Verification.Hash = &h2 })},
	} {
		changes, err := Diff(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || changes[0].Kind != KindFile || changes[0].Path != "/etc/x" {
			t.Errorf("%s: %+v", name, changes)
			continue
		}
		want := map[bool]string{true: "contents.verification", false: "append"}[name == "remote hash"]
		if !slices.Contains(strings.Split(changes[0].Detail, ", "), want) {
			t.Errorf("%s: detail %q, want %q", name, changes[0].Detail, want)
		}
	}
}
