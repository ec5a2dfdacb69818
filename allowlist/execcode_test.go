package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round-5 adversary F2: programs whose file operands are code (codeOperands) may not be handed a
// file the payload may write, in any line; the refusal names program, option and path. The node's
// own files (read-only /usr, denied paths) stay accepted.
func TestProgramsWhoseFilesAreCodeReadOnlyTheNodesFiles(t *testing.T) {
	refused := []struct {
		name, line, why string
	}{
		{"systemd-sysctl", `ExecStart=/usr/lib/systemd/systemd-sysctl /etc/myapp/app.conf`, "systemd-sysctl /etc/myapp/app.conf: reads kernel settings"},
		{"systemd-tmpfiles --create", `ExecStart=/usr/bin/systemd-tmpfiles --create /etc/myapp/app.conf`, "systemd-tmpfiles /etc/myapp/app.conf"},
		{"systemd-tmpfiles --prefix", `ExecStart=/usr/bin/systemd-tmpfiles --create --prefix=/usr/local /etc/myapp/app.conf`, "/etc/myapp/app.conf"},
		{"systemd-tmpfiles --replace=", `ExecStart=/usr/bin/systemd-tmpfiles --create --replace=/etc/myapp/x.conf`, "systemd-tmpfiles --replace /etc/myapp/x.conf"},
		{"systemd-sysusers", `ExecStart=/usr/bin/systemd-sysusers /etc/myapp/app.conf`, "sysusers.d"},
		{"modprobe -C", `ExecStart=/usr/sbin/modprobe -C /etc/myapp/app.conf dummy`, "modprobe -C /etc/myapp/app.conf"},
		{"modprobe --config=", `ExecStart=/usr/sbin/modprobe --config=/etc/myapp/app.conf dummy`, "modprobe --config /etc/myapp/app.conf"},
		{"modprobe -C joined", `ExecStart=/usr/sbin/modprobe -C/etc/myapp/app.conf dummy`, "modprobe -C /etc/myapp/app.conf"},
		{"insmod", `ExecStart=/usr/sbin/insmod /var/lib/myapp/x.ko`, "insmod /var/lib/myapp/x.ko"},
		{"logrotate", `ExecStart=/usr/sbin/logrotate -f /etc/myapp/app.conf`, "logrotate /etc/myapp/app.conf"},
		{"sed -f", `ExecStart=/usr/bin/sed -f /etc/myapp/app.conf /dev/null`, "sed -f /etc/myapp/app.conf"},
		{"sed --file=", `ExecStart=/usr/bin/sed --file=/etc/myapp/app.conf /dev/null`, "sed --file /etc/myapp/app.conf"},
		{"awk -E", `ExecStart=/usr/bin/awk -E /etc/myapp/app.conf`, "awk -E /etc/myapp/app.conf"},
		{"gawk --exec=", `ExecStart=/usr/bin/gawk --exec=/etc/myapp/app.conf`, "/etc/myapp/app.conf"},
		{"awk @include", `ExecStart=/usr/bin/awk '@include "/etc/myapp/app.conf"'`, "@include"},
		{"awk @load", `ExecStart=/usr/bin/awk '@load "/etc/myapp/x"; BEGIN{}'`, "@load"},
		{"python -m pdb", `ExecStart=/usr/bin/python3 -m pdb /etc/myapp/app.conf`, "python3 -m pdb"},
		{"python -m cProfile", `ExecStart=/usr/bin/python3 -m cProfile /etc/myapp/app.conf`, "python3 -m cProfile"},
		{"python -m runpy", `ExecStart=/usr/bin/python3 -m runpy /etc/myapp/app.conf`, "runpy"},
		{"python -m timeit", `ExecStart=/usr/bin/python3 -m timeit -s "import os" "os.system('reboot')"`, "timeit"},
		{"python -Im trace", `ExecStart=/usr/bin/python3 -Im trace --run /etc/myapp/app.conf`, "trace"},
		{"ssh-keygen -D", `ExecStart=/usr/bin/ssh-keygen -D /etc/myapp/app.conf`, "ssh-keygen -D /etc/myapp/app.conf"},
		{"run-parts", `ExecStart=/usr/bin/run-parts /etc/myapp`, "run-parts /etc/myapp"},
		{"ldconfig -f", `ExecStart=/usr/sbin/ldconfig -f /etc/myapp/app.conf`, "ldconfig -f /etc/myapp/app.conf"},
		{"ldconfig DIR", `ExecStart=/usr/sbin/ldconfig /var/lib/myapp/lib`, "ldconfig /var/lib/myapp/lib"},
		{"the loader runs a payload file", `ExecStart=/usr/lib64/ld-linux-x86-64.so.2 /etc/myapp/app.conf`, "ld-linux-x86-64.so.2 /etc/myapp/app.conf"},
		{"wrapped", `ExecStart=/usr/bin/timeout 5 /usr/lib/systemd/systemd-sysctl /etc/myapp/app.conf`, "systemd-sysctl /etc/myapp/app.conf"},
		{"in a script", `ExecStart=/usr/bin/sh -c 'chmod 755 /etc/myapp/x; run-parts /etc/myapp'`, "run-parts /etc/myapp"},
		{"a variable the unit does not define", `ExecStart=/usr/sbin/modprobe -C ${CONF} dummy`, "cannot resolve"},
		{"a relative file", `ExecStart=/usr/sbin/logrotate app.conf`, "relative path"},
		{"tmpfiles --root", `ExecStart=/usr/bin/systemd-tmpfiles --create --root=/etc/myapp`, "systemd-tmpfiles --root /etc/myapp"},
		{"logrotate -m", `ExecStart=/usr/sbin/logrotate -m /etc/myapp/app.conf /etc/logrotate.conf`, "logrotate -m /etc/myapp/app.conf"},
		{"make -f", `ExecStart=/usr/bin/make -f /etc/myapp/Makefile`, "make -f /etc/myapp/Makefile"},
	}
	for _, c := range refused {
		for i, err := range []error{strictUnit(t, true, c.line), strictUnit(t, false, c.line), ownUnit(t, c.line)} {
			require.Error(t, err, "%s (%s)", c.name, judgedAs[i])
			assert.Contains(t, err.Error(), c.why, "%s (%s)", c.name, judgedAs[i])
		}
	}
	// In a changed line python -m runs only the modules that read no code, and not from a working
	// directory the payload may write.
	for _, l := range [][]string{{`ExecStart=/usr/bin/python3 -m myapp`}, {"WorkingDirectory=/etc/myapp", `ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf`}} {
		require.Error(t, strictUnit(t, true, l...), "%v", l)
	}
	assert.NoError(t, strictUnit(t, false, `ExecStart=/usr/bin/python3 -m myapp`), "the node's own line")
	accepted := []string{
		`ExecStart=/usr/lib/systemd/systemd-sysctl /usr/lib/sysctl.d/50-default.conf`,
		`ExecStart=/usr/lib/systemd/systemd-sysctl`,
		`ExecStart=/usr/bin/systemd-tmpfiles --create --prefix=/var/lib/myapp`,
		`ExecStart=/usr/bin/systemd-tmpfiles --create --prefix /var/lib/myapp --exclude-prefix /var/lib/myapp/x`,
		`ExecStart=/usr/sbin/logrotate -s /var/lib/myapp/state /etc/logrotate.conf`,
		`ExecStart=/usr/bin/systemd-tmpfiles --create /usr/lib/tmpfiles.d/var.conf`,
		`ExecStart=/usr/sbin/modprobe dummy`,
		`ExecStart=/usr/sbin/modprobe -C /etc/modprobe.d/x.conf dummy`,
		`ExecStart=/usr/sbin/ldconfig`,
		`ExecStart=/usr/bin/awk -F: '{print $1}' /etc/passwd`,
		`ExecStart=/usr/bin/run-parts /usr/lib/myapp/hooks`,
		`ExecStart=/usr/sbin/logrotate /etc/logrotate.conf`,
	}
	for _, l := range accepted {
		// A changed line runs them as the unit's own programs (or granted ones) only.
		for i, err := range []error{nil, strictUnit(t, false, l), ownUnit(t, l)} {
			assert.NoError(t, err, "%s (%s)", l, judgedAs[i])
		}
	}
	// Round-7b adversary F3, F10: a changed line's sed reads no script file (whatever the file) and
	// an interpreter runs no module (json.tool wrote its second operand); the node's own lines may.
	for _, l := range []string{
		`ExecStart=/usr/bin/sed -f /usr/share/myapp/fix.sed /etc/myapp/app.conf`,
		`ExecStart=/usr/bin/python3 -m json.tool /etc/myapp/app.conf`,
	} {
		assert.NoError(t, strictUnit(t, false, l), "%s (unchanged)", l)
		assert.Error(t, ownUnit(t, l), "%s (changed, own programs)", l)
	}
}

// judgedAs names how a line is judged: changed (the payload's), unchanged (the node's), changed with
// the unit's own programs.
var judgedAs = []string{"changed", "unchanged", "changed, own programs"}
