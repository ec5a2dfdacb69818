package actions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/openshift/refresh-agent/plan"
)

// User is an account from the node root's /etc/passwd.
type User struct {
	Name     string
	UID, GID int
	Home     string
}

// CoreUser is core as RHCOS creates it.
var CoreUser = User{Name: "core", UID: 1000, GID: 1000, Home: "/var/home/core"}

// ErrNoSuchOwner marks a user or group name the node root's /etc/passwd or /etc/group does not have:
// a file owned by it cannot be written as planned on this node (a refusal, not a failure to retry).
var ErrNoSuchOwner = errors.New("no such user or group on the node")

// LookupUser finds name in <root>/etc/passwd (never the container's own).
func (r *Root) LookupUser(name string) (User, error) {
	data, _, err := r.ReadFile("/etc/passwd")
	if errors.Is(err, fs.ErrNotExist) && name == CoreUser.Name {
		// A root without any /etc/passwd is no booted RHCOS node (a bare test root, an image): core
		// is taken as RHCOS creates it. A passwd that lacks core is still an error below.
		return CoreUser, nil
	}
	if err != nil {
		return User{}, fmt.Errorf("user %s: %w", name, err)
	}
	// The first line of the name decides, as glibc's files lookup reads it (a line with its last
	// fields missing is still that user's: adversary r22 d/04, a short first line skipped for a
	// later one of the name chowned to another uid); one without its ids is malformed.
	for _, f := range colonRecords(data) {
		if f[0] != name {
			continue
		}
		if len(f) < 4 {
			return User{}, fmt.Errorf("user %s: malformed /etc/passwd entry: %d fields, no uid and gid", name, len(f))
		}
		uid, err1 := ParseID(f[2])
		gid, err2 := ParseID(f[3])
		if err1 != nil || err2 != nil {
			return User{}, fmt.Errorf("user %s: malformed /etc/passwd entry: %w", name, errors.Join(err1, err2))
		}
		home := ""
		if len(f) > 5 {
			home = f[5]
		}
		return User{Name: name, UID: uid, GID: gid, Home: home}, nil
	}
	return User{}, fmt.Errorf("user %s: %w: not in the node's /etc/passwd", name, ErrNoSuchOwner)
}

// LookupGroup finds name in <root>/etc/group.
func (r *Root) LookupGroup(name string) (int, error) {
	data, _, err := r.ReadFile("/etc/group")
	if err != nil {
		return 0, fmt.Errorf("group %s: %w", name, err)
	}
	for _, f := range colonRecords(data) {
		if f[0] == name {
			if len(f) < 3 {
				return 0, fmt.Errorf("group %s: malformed /etc/group entry: %d fields, no gid", name, len(f))
			}
			gid, err := ParseID(f[2])
			if err != nil {
				return 0, fmt.Errorf("group %s: malformed /etc/group entry: %w", name, err)
			}
			return gid, nil
		}
	}
	return 0, fmt.Errorf("group %s: %w: not in the node's /etc/group", name, ErrNoSuchOwner)
}

// colonRecords splits a passwd-style file into records, skipping comments and blank lines.
func colonRecords(data []byte) [][]string {
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Split(line, ":"))
	}
	return out
}

// ParseID reads a uid or gid as the kernel can store it: decimal digits, 0 to plan.MaxID. An id past
// it would be truncated by chown (2^32+1000 becomes core's 1000) or mean "unchanged" (-1, 2^32-1):
// what is written must be what was planned (adversary r21 d/04). The error never quotes more
// than the id's first 20 bytes.
func ParseID(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > plan.MaxID {
		if len(s) > 20 {
			s = s[:20] + "…"
		}
		return 0, fmt.Errorf("id %q is not a number from 0 to %d", s, plan.MaxID)
	}
	return int(n), nil
}

// maxHomes bounds the homes Homes returns (a real node's /etc/passwd has a few dozen users).
const maxHomes = 4096

// Homes maps each home directory the node root's /etc/passwd names to its first user: absolute,
// clean, not "/" and not a placeholder (under /usr, /bin, /sbin, /dev, /proc, /sys, /var/empty,
// /nonexistent). None without a passwd.
func (r *Root) Homes() (map[string]string, error) {
	data, _, err := r.ReadFile("/etc/passwd")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range colonRecords(data) {
		if len(f) < 6 || len(out) >= maxHomes {
			continue
		}
		h := f[5]
		if !path.IsAbs(h) || path.Clean(h) != h || h == "/" || placeholderHome(h) {
			continue
		}
		if _, ok := out[h]; !ok {
			out[h] = f[0]
		}
	}
	return out, nil
}

func placeholderHome(h string) bool {
	for _, p := range []string{"/usr", "/bin", "/sbin", "/dev", "/proc", "/sys", "/var/empty", "/nonexistent", "/nonexisting"} {
		if h == p || strings.HasPrefix(h, p+"/") {
			return true
		}
	}
	return false
}
