package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// grantedUnit is a unit whose lines are judged as the node's own (changed false) or as lines a
// payload changed (changed true); granted: the node policy grants the unit every program the lines
// run (Programs = OwnPrograms: the most a unitPrograms grant or the unit's own definition can give).
func grantedUnit(t *testing.T, changed, granted bool, lines ...string) error {
	t.Helper()
	p := unitOfLines(t, changed, lines...)
	if granted {
		p.Programs = allowlist.OwnPrograms(p.Exec)
	}
	return allowlist.JudgeUnit(p)
}

// Adversary round 14 (c/04): a program that attaches to, signals, injects into or re-schedules
// another process is judged by what it does to that process. One that can reach PID 1 or an
// arbitrary process (a number, a variable, a substitution: PID 1, kubelet, crio) is refused by
// class in every line, the node's own and a changed one, with or without a unitPrograms grant:
// strace -p 1 -e inject=all:signal=INT sends SIGINT to PID 1, ctrl-alt-del, a reboot.
func TestRound14ProcessActorsAreAClassNoGrantLifts(t *testing.T) {
	const noGrant = "no unitPrograms grant lifts that"
	refused := []struct{ line, why string }{
		// tracers and debuggers: attaching is the class, whatever they then do
		{`ExecStartPre=/usr/bin/strace -p 1 -e inject=all:signal=INT`, "strace attaches to PID 1 and injects signals into it: it can reboot the node"},
		{`ExecStartPre=/usr/bin/strace -p1 -e inject=all:signal=INT`, "strace attaches to PID 1"},
		{`ExecStartPre=/usr/bin/strace -fp1 -e inject=all:signal=INT`, "strace attaches to PID 1"},
		{`ExecStartPre=/usr/bin/strace --attach=1 --inject=kill:signal=INT`, "strace attaches to PID 1 and injects signals"},
		{`ExecStartPre=/usr/bin/strace -e trace=none --attach 0x1`, "strace attaches to PID 1"},
		{`ExecStartPre=/usr/bin/strace -qq -p "1 2" -e inject=all:error=EIO`, "strace attaches to PID 1"},
		{`ExecStartPre=/usr/bin/strace -f -p 1234 -o /tmp/x`, "strace attaches to process 1234"},
		{`ExecStartPre=/bin/sh -c 'strace -p "$(pidof kubelet)" -e inject=all:signal=KILL'`, "strace attaches to process $(pidof kubelet)"},
		{`ExecStartPost=/usr/bin/strace -p $MAINPID -e inject=all:signal=KILL`, "strace attaches to process $MAINPID"},
		{`ExecStartPre=/usr/bin/env /usr/bin/strace -p 1 -e inject=all:signal=INT`, "strace attaches to PID 1"},
		{`ExecStartPre=/usr/bin/ltrace -p 1`, "ltrace attaches to PID 1"},
		{`ExecStartPre=/usr/bin/gdb -p 1`, "gdb attaches to PID 1"},
		{`ExecStartPre=/usr/bin/gdb --pid=1 --batch -ex 'call kill(1,2)'`, "gdb attaches to PID 1"},
		{`ExecStartPre=/usr/bin/gdb /usr/lib/systemd/systemd 1`, "gdb attaches to PID 1"},
		{`ExecStartPre=/usr/bin/gdbserver --attach :1234 1`, "gdbserver attaches to"},
		{`ExecStartPre=/usr/bin/gcore -o /tmp/core 1`, "gcore attaches to PID 1"},
		{`ExecStartPre=/usr/bin/pstack 1`, "pstack attaches to PID 1"},
		{`ExecStartPre=/usr/bin/perf trace -p 1`, "perf attaches to PID 1"},
		{`ExecStartPre=/usr/bin/perf record -g --pid=1 -o /tmp/perf.data`, "perf attaches to PID 1"},
		{`ExecStartPre=/usr/bin/perf trace -t 1`, "perf attaches to PID 1"},
		{`ExecStartPre=/usr/bin/trace-cmd record -P 1`, "trace-cmd attaches to PID 1"},
		{`ExecStartPre=/usr/bin/bpftrace -p 1 /usr/share/bpftrace/tools/opensnoop.bt`, "bpftrace attaches to PID 1"},
		{`ExecStartPre=/usr/sbin/criu dump -t 1`, "criu attaches to PID 1"},
		// entering another process's namespaces
		{`ExecStartPre=/usr/bin/nsenter -t 1 -m -u -i -n -p /bin/true`, "nsenter joins the namespaces of PID 1"},
		{`ExecStartPre=/usr/bin/nsenter --target=1 --all /bin/true`, "nsenter joins the namespaces of PID 1"},
		{`ExecStartPre=/usr/bin/nsenter -at1 /bin/true`, "nsenter joins the namespaces of PID 1"},
		{`ExecStartPre=/usr/bin/nsenter -t 4242 -n /bin/true`, "nsenter joins the namespaces of process 4242"},
		// another process's priority, scheduling, affinity and limits
		{`ExecStartPre=/usr/bin/prlimit --pid 1 --nofile=1:1`, "prlimit changes the resource limits of PID 1"},
		{`ExecStartPre=/usr/bin/prlimit --pid=1 --nofile=1:1`, "prlimit changes the resource limits of PID 1"},
		{`ExecStartPre=/usr/bin/prlimit -p1 --nproc=1`, "prlimit changes the resource limits of PID 1"},
		{`ExecStartPre=/usr/bin/renice -n 19 -p 1`, "renice changes the priority of PID 1"},
		{`ExecStartPre=/usr/bin/renice 19 1`, "renice changes the priority of PID 1"},
		{`ExecStartPre=/usr/bin/renice +19 -u root`, "renice changes the priority of every process of a user or group"},
		{`ExecStartPre=/usr/bin/renice -n 19 -g 1`, "renice changes the priority of every process of a user or group"},
		{`ExecStartPre=/usr/bin/ionice -c 3 -p 1`, "ionice changes the I/O scheduling of PID 1"},
		{`ExecStartPre=/usr/bin/ionice -c3 -p1`, "ionice changes the I/O scheduling of PID 1"},
		{`ExecStartPre=/usr/bin/ionice -c 3 -u 0`, "ionice changes the I/O scheduling of every process of a user or group"},
		{`ExecStartPre=/usr/bin/chrt -f -p 99 1`, "chrt changes the CPU scheduling of PID 1"},
		{`ExecStartPre=/usr/bin/chrt -o -p 0 1`, "chrt changes the CPU scheduling of PID 1"},
		{`ExecStartPre=/usr/bin/chrt -a -i -p 0 777`, "chrt changes the CPU scheduling of process 777"},
		{`ExecStartPre=/usr/bin/taskset -p 1 1`, "taskset changes the CPU affinity of PID 1"},
		{`ExecStartPre=/usr/bin/taskset -cp 0 1`, "taskset changes the CPU affinity of PID 1"},
		{`ExecStartPre=/usr/bin/taskset -a -p 1 $PID`, "taskset changes the CPU affinity of process $PID"},
	}
	for _, c := range refused {
		for _, m := range []struct {
			name             string
			changed, granted bool
		}{{"the node's own line", false, false}, {"a changed line", true, false}, {"a changed line with a grant", true, true}} {
			err := grantedUnit(t, m.changed, m.granted, c.line)
			if assert.Error(t, err, "%s: %s", m.name, c.line) {
				key, _, _ := strings.Cut(c.line, "=")
				assert.Contains(t, err.Error(), key+"=", "%s: %s", m.name, c.line)
				assert.Contains(t, err.Error(), c.why, "%s: %s", m.name, c.line)
				assert.Contains(t, err.Error(), noGrant, "%s: %s", m.name, c.line)
			}
		}
	}
	// The adversary's side notes, in a changed line (the node's own boot-time units run some:
	// crio-wipe.service's crio wipe, systemd-bless-boot.service's good): removing devices, the
	// boot's verdict, the container store.
	for _, c := range []struct{ line, why string }{
		{`ExecStartPre=/usr/bin/udevadm trigger --action=remove`, "udevadm trigger --action=remove"},
		{`ExecStartPre=/usr/bin/udevadm trigger -c remove --subsystem-match=block`, "udevadm trigger -c remove"},
		{`ExecStartPre=/usr/bin/udevadm trigger -cunbind`, "udevadm trigger -cunbind"},
		{`ExecStartPre=/usr/bin/udevadm trigger --action $A`, "udevadm trigger --action $A"},
		{`ExecStartPre=/usr/bin/udevadm control --exit`, "udevadm control --exit"},
		{`ExecStartPre=/usr/lib/systemd/systemd-bless-boot bad`, "systemd-bless-boot bad: marks the boot in the boot loader's boot counting: it changes what the machine boots next"},
		{`ExecStartPre=/usr/lib/systemd/systemd-bless-boot indeterminate`, "changes what the machine boots next"},
		{`ExecStartPre=/usr/bin/crio wipe`, "crio wipe: wipes the node's container storage"},
		{`ExecStartPre=/usr/bin/crio --log-level=info wipe -f`, "wipes the node's container storage"},
		{`ExecStartPre=/usr/bin/podman system reset --force`, "wipes the node's container storage"},
	} {
		for _, granted := range []bool{false, true} {
			err := grantedUnit(t, true, granted, c.line)
			if assert.Error(t, err, "granted %v: %s", granted, c.line) {
				assert.Contains(t, err.Error(), c.line+": ", c.line) // the key and the line
				assert.Contains(t, err.Error(), c.why, c.line)
				assert.Contains(t, err.Error(), noGrant, c.line)
			}
		}
	}
	for _, l := range []string{`ExecStart=/usr/bin/crio wipe`, `ExecStart=/usr/lib/systemd/systemd-bless-boot good`,
		`ExecStart=/usr/bin/udevadm control --exit`} {
		assert.NoError(t, grantedUnit(t, false, false, l), "the node's own boot-time line: %s", l)
	}
	// Already refused by class before round 14, and still: kill and its kin to PID 1 or every
	// process, the manager's kill, a write to PID 1's /proc.
	for _, c := range []struct{ line, why string }{
		{`ExecStartPre=/usr/bin/kill -INT 1`, "PID 1 is the manager"},
		{`ExecStartPre=/usr/bin/kill -s INT -- -1`, "-1 is every process"},
		{`ExecStartPre=/usr/bin/pkill -INT systemd`, "chosen by name or pattern"},
		{`ExecStartPre=/usr/bin/killall -INT systemd`, "chosen by name or pattern"},
		{`ExecStartPre=/usr/bin/systemctl kill --signal=INT init.scope`, "controls the service manager"},
		{`ExecStartPre=/bin/sh -c 'echo -1000 > /proc/1/oom_score_adj'`, "/proc/1/oom_score_adj"},
	} {
		for _, m := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			err := grantedUnit(t, m[0], m[1], c.line)
			if assert.Error(t, err, c.line) {
				assert.Contains(t, err.Error(), c.why, c.line)
			}
		}
	}
	// What stays: a tracer or scheduler of its own command, the unit's own main process, adding or
	// changing devices, the boot's status.
	for _, l := range []string{
		`ExecStart=/usr/bin/strace -f -o /tmp/myapp.trace /usr/bin/myapp`,
		`ExecStart=/usr/bin/perf record -g -o /tmp/perf.data -- /usr/bin/myapp`,
		`ExecStart=/usr/bin/prlimit --nofile=4096:4096 /usr/bin/myapp`,
		`ExecStart=/usr/bin/ionice -c 3 /usr/bin/myapp`,
		`ExecStart=/usr/bin/taskset -c 0-3 /usr/bin/myapp`,
		`ExecStart=/usr/bin/chrt -o 0 /usr/bin/myapp`,
		`ExecStartPost=/usr/bin/renice -n 5 -p $MAINPID`,
		`ExecStart=/usr/bin/udevadm trigger --action=add --subsystem-match=net`,
		`ExecStart=/usr/bin/udevadm trigger`,
		`ExecStart=/usr/bin/udevadm settle`,
		`ExecStart=/usr/bin/crio --version`,
	} {
		assert.NoError(t, grantedUnit(t, false, false, l), "the node's own line: %s", l)
		assert.NoError(t, grantedUnit(t, false, true, l), "the node's own line, granted: %s", l)
	}
}

// The grant itself: a policy granting strace to the unit parses, and still the line is refused.
func TestRound14GrantedStraceStaysRefused(t *testing.T) {
	_, err := allowlist.ParsePolicy([]byte("nodeDisruptionPolicy:\n  units:\n  - name: myapp.service\n    actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n" +
		"unitPrograms:\n  myapp.service: [/usr/bin/strace]\n"))
	require.NoError(t, err)
	p := unitOfLines(t, true, `ExecStartPre=/usr/bin/strace -p 1 -e inject=all:signal=INT`)
	p.Programs = []string{"/usr/bin/strace"}
	err = allowlist.JudgeUnit(p)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "ExecStartPre=/usr/bin/strace -p 1 -e inject=all:signal=INT: strace attaches to PID 1 and injects signals into it: it can reboot the node")
	}
}
