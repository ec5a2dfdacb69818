package allowlist

import (
	"reflect"
	"strconv"
	"strings"
)

// setFields names the fields of v (a struct, or a pointer to one) that are not their zero value,
// by their JSON paths under prefix ("spec.hostPID", "spec.containers[0].securityContext.privileged").
// The judges clear every field they accept, then ask: whatever is left was not accepted, so an
// allowlist needs no list of what to refuse, and a field a newer API adds is refused too.
func setFields(v any, prefix string) []string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer { // the caller's handle, not a field
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	var out []string
	collectSet(rv, prefix, &out)
	return out
}

// collectSet appends the set leaves under v to out and reports whether v is set at all.
func collectSet(v reflect.Value, at string, out *[]string) bool {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		// A pointer that is there is set, even to a zero value: hostUsers: false, emptyDir: {}.
		if v.IsNil() {
			return false
		}
		if !collectSet(v.Elem(), at, out) {
			*out = append(*out, at)
		}
		return true
	}
	if v.IsZero() {
		return false
	}
	found := false
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, inline := jsonName(f)
			if name == "-" {
				continue
			}
			p := at
			if !inline {
				p = join(at, name)
			}
			found = collectSet(v.Field(i), p, out) || found
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			found = collectSet(v.Index(i), at+"["+strconv.Itoa(i)+"]", out) || found
		}
	}
	if !found {
		*out = append(*out, at) // a scalar, or set only in unexported fields (a Quantity, a Time)
	}
	return true
}

func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && name == "") {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
