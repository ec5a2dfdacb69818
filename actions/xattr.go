package actions

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// copyXattrs gives out every extended attribute of in: the SELinux label (security.selinux), file
// capabilities, ACLs and user.* attributes, which a copy would otherwise lose where a hard link
// keeps them (a backup copy and its restore: adversary r15 a/05). A filesystem with none is fine.
func copyXattrs(in, out *os.File) error {
	names, err := xattrNames(int(in.Fd()))
	if err != nil {
		return err
	}
	for _, n := range names {
		v, err := xattrValue(int(in.Fd()), n)
		if errors.Is(err, unix.ENODATA) {
			continue // removed since it was listed
		}
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if err := unix.Fsetxattr(int(out.Fd()), n, v, 0); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// xattrNames lists fd's extended attribute names.
func xattrNames(fd int) ([]string, error) {
	buf, err := xattrRead(func(b []byte) (int, error) { return unix.Flistxattr(fd, b) })
	if errors.Is(err, unix.ENOTSUP) {
		return nil, nil
	}
	var names []string
	for _, n := range bytes.Split(buf, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	return names, err
}

func xattrValue(fd int, name string) ([]byte, error) {
	return xattrRead(func(b []byte) (int, error) { return unix.Fgetxattr(fd, name, b) })
}

// xattrRead calls get with a buffer of the size it reports (a zero-length call), again if the value
// grew in between (ERANGE).
func xattrRead(get func([]byte) (int, error)) ([]byte, error) {
	for {
		n, err := get(nil)
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = get(buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		return buf[:max(n, 0)], err
	}
}
