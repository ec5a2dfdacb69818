package diff

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// Kind names what a change touches. The names are part of the CLI's JSON output.
type Kind string

const (
	KindFile            Kind = "file"
	KindSSHKeys         Kind = "sshKeys"
	KindDirectory       Kind = "directory"
	KindLink            Kind = "link"
	KindUnit            Kind = "unit"
	KindStorage         Kind = "storage"
	KindPasswd          Kind = "passwd"
	KindKernelArguments Kind = "kernelArguments"
	KindOSImage         Kind = "osImage"
	KindFIPS            Kind = "fips"
	KindKernelType      Kind = "kernelType"
	KindExtensions      Kind = "extensions"
	KindIgnition        Kind = "ignition"
)

// Op is what happens to the changed item.
type Op string

const (
	OpAdd    Op = "add"
	OpModify Op = "modify"
	OpRemove Op = "remove"
)

// CoreUser is the only user whose SSH keys a refresh may change.
const CoreUser = "core"

// Change is one difference between the current and the desired payload. Detail says what differs in
// words (field names, modes, old -> new values of reboot-class fields) and never carries file contents.
type Change struct {
	Kind   Kind
	Op     Op
	Path   string // file, directory or link
	Unit   string // systemd unit
	User   string // passwd user, sshKeys
	Detail string
	// For file changes: the entries on each side (nil when absent).
	Old, New *types.File
	// For unit changes: the units on each side (nil when absent).
	OldUnit, NewUnit *types.Unit
	// For sshKeys changes: the desired keys.
	Keys []string
	// DirtyPath is set when Ignition rejected the entry's path as relative or unclean.
	DirtyPath bool
}

// Diff lists every difference between cur and des, in a deterministic order: reboot-class fields,
// storage, passwd, SSH keys, then files, directories, links and units, each sorted by name. It fails
// only when a changed file's contents cannot be decoded.
func Diff(cur, des *Payload) ([]Change, error) {
	var out []Change
	out = append(out, diffMachine(cur.Machine, des.Machine)...)
	out = append(out, diffKernelArgs(cur.Config.KernelArguments, des.Config.KernelArguments)...)
	out = append(out, diffIgnitionSection(cur.Config.Ignition, des.Config.Ignition)...)
	out = append(out, diffStorage(cur.Config.Storage, des.Config.Storage)...)
	out = append(out, diffPasswd(cur.Config.Passwd, des.Config.Passwd)...)
	files, err := diffFiles(cur, des)
	if err != nil {
		return nil, err
	}
	out = append(out, files...)
	out = append(out, diffNodes(KindDirectory, byPath(cur.Config.Storage.Directories, dirPath), byPath(des.Config.Storage.Directories, dirPath), des)...)
	out = append(out, diffNodes(KindLink, byPath(cur.Config.Storage.Links, linkPath), byPath(des.Config.Storage.Links, linkPath), des)...)
	out = append(out, diffUnits(cur.Config.Systemd.Units, des.Config.Systemd.Units)...)
	return out, nil
}

func dirPath(d types.Directory) string { return d.Path }
func linkPath(l types.Link) string     { return l.Path }

func byPath[T any](items []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[key(it)] = it
	}
	return m
}

// unionKeys returns the sorted union of two maps' keys.
func unionKeys[T any](a, b map[string]T) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func opOf(inCur, inDes bool) Op {
	switch {
	case !inCur:
		return OpAdd
	case !inDes:
		return OpRemove
	default:
		return OpModify
	}
}

// fieldsChanged returns the sorted JSON field names whose values differ between a and b.
func fieldsChanged(a, b any) []string {
	if ua, ok := a.(types.Unit); ok {
		return unitFieldsChanged(ua, b.(types.Unit))
	}
	ma, mb := jsonFields(a), jsonFields(b)
	var out []string
	for _, k := range unionKeys(ma, mb) {
		if string(ma[k]) != string(mb[k]) {
			out = append(out, k)
		}
	}
	return out
}

// unitFieldsChanged is fieldsChanged for units, field by field: a unit's contents are a string of
// up to the payload's size, which the JSON round trip would copy several times over (a 30 MB unit
// text cost 290 MiB to compare). The fields and their order are the JSON form's.
func unitFieldsChanged(a, b types.Unit) []string {
	var out []string
	if !ptrEq(a.Contents, b.Contents) {
		out = append(out, "contents")
	}
	if !slices.EqualFunc(a.Dropins, b.Dropins, func(x, y types.Dropin) bool { return x.Name == y.Name && ptrEq(x.Contents, y.Contents) }) {
		out = append(out, "dropins")
	}
	if !ptrEq(a.Enabled, b.Enabled) {
		out = append(out, "enabled")
	}
	if !ptrEq(a.Mask, b.Mask) {
		out = append(out, "mask")
	}
	if a.Name != b.Name {
		out = append(out, "name")
	}
	return out
}

func jsonFields(v any) map[string]json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]json.RawMessage{"(unmarshalable)": json.RawMessage(err.Error())}
	}
	m := map[string]json.RawMessage{}
	_ = json.Unmarshal(b, &m) // the marshaled form of a struct is always an object
	return m
}

// diffKeyed reports one change per key whose JSON form differs between cur and des.
func diffKeyed[T any](cur, des map[string]T, mk func(key string, op Op, fields []string) Change) []Change {
	var out []Change
	for _, k := range unionKeys(cur, des) {
		c, inCur := cur[k]
		d, inDes := des[k]
		fields := fieldsChanged(c, d)
		if inCur && inDes && len(fields) == 0 {
			continue
		}
		out = append(out, mk(k, opOf(inCur, inDes), fields))
	}
	return out
}

func diffKernelArgs(cur, des types.KernelArguments) []Change {
	fields := fieldsChanged(cur, des)
	if len(fields) == 0 {
		return nil
	}
	return []Change{{Kind: KindKernelArguments, Op: OpModify,
		Detail: fmt.Sprintf("Ignition kernelArguments.%s changed", strings.Join(fields, ", "))}}
}

// diffIgnitionSection reports a change of config merge/replace: the effective config would then
// depend on other, unseen configs. Proxy, TLS and timeouts only steer Ignition's own first-boot
// fetching and have no effect on a running node.
func diffIgnitionSection(cur, des types.Ignition) []Change {
	fields := fieldsChanged(cur.Config, des.Config)
	if len(fields) == 0 {
		return nil
	}
	return []Change{{Kind: KindIgnition, Op: OpModify,
		Detail: fmt.Sprintf("ignition.config.%s changed", strings.Join(fields, ", "))}}
}

func diffStorage(cur, des types.Storage) []Change {
	storage := func(what string) func(string, Op, []string) Change {
		return func(key string, op Op, fields []string) Change {
			return Change{Kind: KindStorage, Op: op, Path: key, Detail: fmt.Sprintf("%s %s %s", what, key, opWord(op, fields))}
		}
	}
	var out []Change
	out = append(out, diffKeyed(byPath(cur.Disks, func(d types.Disk) string { return d.Device }),
		byPath(des.Disks, func(d types.Disk) string { return d.Device }), storage("disk"))...)
	out = append(out, diffKeyed(byPath(cur.Raid, func(r types.Raid) string { return r.Name }),
		byPath(des.Raid, func(r types.Raid) string { return r.Name }), storage("raid"))...)
	out = append(out, diffKeyed(byPath(cur.Filesystems, func(f types.Filesystem) string { return f.Device }),
		byPath(des.Filesystems, func(f types.Filesystem) string { return f.Device }), storage("filesystem"))...)
	out = append(out, diffKeyed(byPath(cur.Luks, func(l types.Luks) string { return l.Name }),
		byPath(des.Luks, func(l types.Luks) string { return l.Name }), storage("luks volume"))...)
	return out
}

func opWord(op Op, fields []string) string {
	switch op {
	case OpAdd:
		return "added"
	case OpRemove:
		return "removed"
	}
	return "changed (" + strings.Join(fields, ", ") + ")"
}

// diffPasswd reports user and group changes; core's SSH keys are a change of their own kind.
func diffPasswd(cur, des types.Passwd) []Change {
	strip := func(users []types.PasswdUser) map[string]types.PasswdUser {
		m := byPath(users, func(u types.PasswdUser) string { return u.Name })
		if u, ok := m[CoreUser]; ok {
			u.SSHAuthorizedKeys = nil
			m[CoreUser] = u
		}
		return m
	}
	var out []Change
	curUsers, desUsers := strip(cur.Users), strip(des.Users)
	for _, name := range unionKeys(curUsers, desUsers) {
		c, inCur := curUsers[name]
		d, inDes := desUsers[name]
		if name == CoreUser {
			// core with nothing but SSH keys is the same as no core entry at all.
			inCur, inDes = true, true
			c.Name, d.Name = CoreUser, CoreUser
		}
		fields := fieldsChanged(c, d)
		if len(fields) == 0 {
			continue
		}
		out = append(out, Change{Kind: KindPasswd, Op: opOf(inCur, inDes), User: name,
			Detail: fmt.Sprintf("user %s %s", name, opWord(opOf(inCur, inDes), fields))})
	}
	out = append(out, diffKeyed(byPath(cur.Groups, func(g types.PasswdGroup) string { return g.Name }),
		byPath(des.Groups, func(g types.PasswdGroup) string { return g.Name }),
		func(key string, op Op, fields []string) Change {
			return Change{Kind: KindPasswd, Op: op, Detail: fmt.Sprintf("group %s %s", key, opWord(op, fields))}
		})...)
	out = append(out, diffSSHKeys(cur.Users, des.Users)...)
	return out
}

func coreKeys(users []types.PasswdUser) []string {
	for _, u := range users {
		if u.Name == CoreUser {
			keys := make([]string, len(u.SSHAuthorizedKeys))
			for i, k := range u.SSHAuthorizedKeys {
				keys[i] = string(k)
			}
			return keys
		}
	}
	return nil
}

func diffSSHKeys(cur, des []types.PasswdUser) []Change {
	ck, dk := coreKeys(cur), coreKeys(des)
	if slices.Equal(ck, dk) {
		return nil
	}
	return []Change{{Kind: KindSSHKeys, Op: opOf(len(ck) > 0, len(dk) > 0), User: CoreUser, Keys: dk,
		Detail: fmt.Sprintf("%d -> %d authorized keys", len(ck), len(dk))}}
}

func diffUnits(cur, des []types.Unit) []Change {
	var out []Change
	cm, dm := byPath(cur, func(u types.Unit) string { return u.Name }), byPath(des, func(u types.Unit) string { return u.Name })
	return append(out, diffKeyed(cm, dm,
		func(key string, op Op, fields []string) Change {
			c := Change{Kind: KindUnit, Op: op, Unit: key, Detail: fmt.Sprintf("unit %s %s", key, opWord(op, fields))}
			if u, ok := cm[key]; ok {
				c.OldUnit = &u
			}
			if u, ok := dm[key]; ok {
				c.NewUnit = &u
			}
			return c
		})...)
}

func diffNodes[T any](kind Kind, cur, des map[string]T, desPayload *Payload) []Change {
	return diffKeyed(cur, des, func(key string, op Op, fields []string) Change {
		return Change{Kind: kind, Op: op, Path: key, DirtyPath: desPayload.DirtyPath(key),
			Detail: fmt.Sprintf("%s %s %s", kind, key, opWord(op, fields))}
	})
}
