package allowlist

import (
	"reflect"
	"strconv"
	"strings"
)

// firstSet names the first field of v (a struct, or a pointer to one) that is not its zero value,
// by its JSON path under prefix ("spec.hostPID", "spec.containers[0].securityContext.privileged"),
// or "". The judges clear every field they accept, then ask: whatever is left was not accepted, so
// an allowlist needs no list of what to refuse, and a field a newer API adds is refused too.
func firstSet(v any, prefix string) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer { // the caller's handle, not a field
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	return setField(rv, prefix)
}

func setField(v reflect.Value, at string) string {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		// A pointer that is there is set, even to a zero value: hostUsers: false, emptyDir: {}.
		if v.IsNil() {
			return ""
		}
		if s := setField(v.Elem(), at); s != "" {
			return s
		}
		return at
	}
	if v.IsZero() {
		return ""
	}
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
			if s := setField(v.Field(i), p); s != "" {
				return s
			}
		}
		return at // set, but only in unexported fields (a Quantity, a Time): name the field itself
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if s := setField(v.Index(i), at+"["+strconv.Itoa(i)+"]"); s != "" {
				return s
			}
		}
		return at
	}
	return at
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
