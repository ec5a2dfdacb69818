package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Round 24 (a/03-a/11, d/01-d/08): what a node unit runs as code is found however its line spells
// it: through a wrapper, in a shell's -c string, relative to its working directory, by another
// shell or interpreter, by -f, in its Environment=, beside a python script; a unit file, drop-in or
// drop-in directory reached through a link; a mount's What=; a text go-systemd's lexer reads
// differently from systemd; a specifier the reader cannot fix.
func TestWhatANodeUnitRunsIsFoundHoweverItIsSpelled(t *testing.T) {
	const u = "/etc/systemd/system/vendor.service"
	svc := func(lines string) map[string]string { return map[string]string{u: "[Service]\n" + lines + "\n"} }
	cases := map[string]struct {
		node  map[string]string
		write string
	}{
		"env bash":             {svc("ExecStart=/usr/bin/env bash /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"nice":                 {svc("ExecStart=/usr/bin/nice -n 19 /bin/bash /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"timeout":              {svc("ExecStart=/usr/bin/timeout 300 /bin/sh /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"flock":                {svc("ExecStart=/usr/bin/flock -n /run/l /bin/bash /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"systemd-cat":          {svc("ExecStart=/usr/bin/systemd-cat -t x /bin/bash /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"sh -c source":         {svc(`ExecStart=/bin/bash -c 'source /etc/myapp/agent.env && exec /usr/bin/agent'`), "/etc/myapp/agent.env"},
		"sh -c dot":            {svc(`ExecStart=/bin/sh -c ". /etc/myapp/env; exec myapp"`), "/etc/myapp/env"},
		"sh -c bash F":         {svc(`ExecStart=/bin/sh -c 'bash /etc/myapp/run.sh'`), "/etc/myapp/run.sh"},
		"sh -c exec $0":        {svc(`ExecStart=/bin/sh -c 'exec "$0"' /etc/myapp/run`), "/etc/myapp/run"},
		"relative operand":     {svc("WorkingDirectory=/etc/myapp\nExecStart=/usr/bin/python3 app.py"), "/etc/myapp/app.py"},
		"./ operand":           {svc("WorkingDirectory=/etc/myapp\nExecStart=/bin/bash ./run.sh"), "/etc/myapp/run.sh"},
		"dash":                 {svc("ExecStart=/bin/dash /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"busybox sh":           {svc("ExecStart=/usr/bin/busybox sh /etc/myapp/run.sh"), "/etc/myapp/run.sh"},
		"python -O":            {svc("ExecStart=/usr/bin/python3 -O /etc/myapp/app.py"), "/etc/myapp/app.py"},
		"awk -f":               {svc("ExecStart=/usr/bin/awk -f /etc/myapp/prog.awk /var/log/x"), "/etc/myapp/prog.awk"},
		"python module beside": {svc("ExecStart=/usr/bin/python3 /etc/myapp/agent.py"), "/etc/myapp/json.py"},
		"LD_PRELOAD":           {svc("Environment=LD_PRELOAD=/etc/myapp/hook.so\nExecStart=/usr/bin/agent"), "/etc/myapp/hook.so"},
		"BASH_ENV":             {svc("Environment=BASH_ENV=/etc/myapp/bashenv\nExecStart=/bin/bash -c true"), "/etc/myapp/bashenv"},
		"PATH":                 {svc(`Environment="PATH=/etc/myapp/bin:/usr/bin"` + "\nExecStart=/bin/sh -c agent"), "/etc/myapp/bin/agent"},
		"PYTHONPATH":           {svc("Environment=PYTHONPATH=/etc/myapp/lib\nExecStart=/usr/bin/python3 -m agent"), "/etc/myapp/lib/agent.py"},
		"linked unit file": {map[string]string{"/etc/systemd/system/vendor.service": "->/etc/myapp/vendor.service",
			"/etc/myapp/vendor.service": "[Service]\nExecStart=/usr/bin/sleep infinity\n"}, "/etc/myapp/vendor.service"},
		"linked drop-in": {map[string]string{u: "[Service]\nExecStart=/usr/bin/x\n", "/etc/systemd/system/vendor.service.d/50-v.conf": "->/etc/myapp/v.conf",
			"/etc/myapp/v.conf": "[Service]\nEnvironment=A=1\n"}, "/etc/myapp/v.conf"},
		"linked drop-in directory, a new drop-in": {map[string]string{u: "[Service]\nExecStart=/usr/bin/x\n",
			"/etc/systemd/system/vendor.service.d": "->/etc/myapp/dropins", "/etc/myapp/dropins/10-a.conf": "[Service]\nEnvironment=A=1\n"}, "/etc/myapp/dropins/99-x.conf"},
		"linked wants": {map[string]string{"/etc/systemd/system/multi-user.target.wants/vendor.service": "->/etc/myapp/vendor.service",
			"/etc/myapp/vendor.service": "[Service]\nExecStart=/usr/bin/x\n"}, "/etc/myapp/vendor.service"},
		"mount What=": {map[string]string{"/etc/systemd/system/etc-containers-oci-hooks.d.mount": "[Mount]\nWhat=/etc/myapp/hooks.d\nWhere=/etc/containers/oci/hooks.d\nOptions=bind\n"},
			"/etc/myapp/hooks.d/x.json"},
		"a comment in a continuation":     {svc("ExecStart=/usr/bin/sleep \\\n# the interval\n    infinity\nEnvironmentFile=/etc/myapp/agent.env"), "/etc/myapp/agent.env"},
		"a comment ending in a backslash": {svc("# a comment \\\nEnvironmentFile=/etc/myapp/agent.env\nExecStart=/usr/bin/x"), "/etc/myapp/agent.env"},
		"%f of a template":                {map[string]string{"/etc/systemd/system/foo@.service": "[Service]\nEnvironmentFile=%f\nExecStart=/usr/bin/x\n"}, "/etc/myapp/x"},
		"%Y of a unit":                    {svc("EnvironmentFile=%Y/zz.env\nExecStart=/usr/bin/x"), "/etc/myapp/zz.env"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, readersPolicy, nodeRoot(t, c.node), plain(), plain().File(c.write, []byte("LD_PRELOAD=/tmp/x.so\n"), 0o600))
			refusedWith(t, p, "file "+c.write+": ", "denied to every rule")
		})
	}
	// A unit text neither systemd's reading nor the lexer can read fails the scan: every write is
	// refused, naming the file (its reads cannot be known).
	long := svc("ExecStart=/usr/bin/podman run " + string(make([]byte, 0)) + repeatWord("--env=A=1 ", 300) + "\nEnvironmentFile=/etc/myapp/agent.env")
	p := rootBuild(t, readersPolicy, nodeRoot(t, long), plain(), plain().File("/etc/myapp/other", []byte("x"), 0o600))
	refusedWith(t, p, "cannot all be read", u)
	// What the node's units do not run stays writable.
	p = rootBuild(t, readersPolicy, nodeRoot(t, svc("WorkingDirectory=/etc/myapp\nExecStart=/usr/bin/agent --config /etc/myapp/agent.conf")), plain(),
		plain().File("/etc/myapp/agent.conf", []byte("x"), 0o600))
	require.True(t, p.Eligible, "%+v", p.Refused)
}

func repeatWord(w string, n int) string {
	out := make([]byte, 0, len(w)*n)
	for range n {
		out = append(out, w...)
	}
	return string(out)
}

// Round 25 (a/01-a/15): more spellings of what a node unit runs as code.
func TestWhatANodeUnitRunsRound25(t *testing.T) {
	const u = "/etc/systemd/system/vendor.service"
	svc := func(lines string) map[string]string { return map[string]string{u: "[Service]\n" + lines + "\n"} }
	cases := map[string]struct {
		node  map[string]string
		write string
	}{
		"ld.so's $LIB":            {svc("Environment=LD_PRELOAD=/etc/myapp/$LIB/hook.so\nExecStart=/usr/bin/x"), "/etc/myapp/lib64/hook.so"},
		"%E in Environment=":      {svc("Environment=LD_PRELOAD=%E/myapp/hook.so\nExecStart=/usr/bin/x"), "/etc/myapp/hook.so"},
		"the unit's variable":     {svc("Environment=D=/etc/myapp\nExecStart=/bin/sh ${D}/run.sh"), "/etc/myapp/run.sh"},
		"flock -c":                {svc(`ExecStart=/usr/bin/flock /run/l -c "sh /etc/myapp/run.sh"`), "/etc/myapp/run.sh"},
		"su -c":                   {svc(`ExecStart=/usr/bin/su -c "sh /etc/myapp/run.sh" root`), "/etc/myapp/run.sh"},
		"cat F | sh":              {svc(`ExecStart=/bin/sh -c 'cat /etc/myapp/run.sh | sh'`), "/etc/myapp/run.sh"},
		"sh < F":                  {svc(`ExecStart=/bin/sh -c 'sh < /etc/myapp/run.sh'`), "/etc/myapp/run.sh"},
		"cd then relative":        {svc(`ExecStart=/bin/sh -c 'cd /etc/myapp && sh run.sh'`), "/etc/myapp/run.sh"},
		"make --file=":            {svc("ExecStart=/usr/bin/make --file=/etc/myapp/Makefile"), "/etc/myapp/Makefile"},
		"make -C":                 {svc("ExecStart=/usr/bin/make -C /etc/myapp"), "/etc/myapp/Makefile"},
		"sed -nf":                 {svc("ExecStart=/usr/bin/sed -nf /etc/myapp/x.sed /var/log/y"), "/etc/myapp/x.sed"},
		"PERL5OPT -I":             {svc("Environment=\"PERL5OPT=-I/etc/myapp -Mhook\"\nExecStart=/usr/bin/perl /usr/share/x.pl"), "/etc/myapp/hook.pm"},
		"HOME with a login shell": {svc("Environment=HOME=/etc/myapp\nExecStart=/bin/bash -lc true"), "/etc/myapp/.bash_profile"},
		"a dangling drop-in link": {map[string]string{u: "[Service]\nExecStart=/usr/bin/x\n", "/etc/systemd/system/vendor.service.d/10-site.conf": "->/etc/myapp/10-site.conf"}, "/etc/myapp/10-site.conf"},
		"an overlay's lowerdir":   {map[string]string{"/etc/systemd/system/usr-local-bin.mount": "[Mount]\nWhat=overlay\nWhere=/usr/local/bin\nType=overlay\nOptions=lowerdir=/etc/myapp:/usr/local/bin\n"}, "/etc/myapp/kubectl"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, readersPolicy, nodeRoot(t, c.node), plain(), plain().File(c.write, []byte("x\n"), 0o600))
			refusedWith(t, p, "file "+c.write+": ", "denied to every rule")
		})
	}
}

// Round 25 (d/01, d/07, d/08): a wrapper's program, a tool's code operand, a condition's path.
func TestWhatANodeUnitRunsRound25Operands(t *testing.T) {
	const u = "/etc/systemd/system/vendor.service"
	for name, c := range map[string]struct{ text, write string }{
		"env F":              {"ExecStart=/usr/bin/env /etc/myapp/bin/agent", "/etc/myapp/bin/agent"},
		"nice -n 19 F":       {"ExecStart=/usr/bin/nice -n 19 /etc/myapp/agent", "/etc/myapp/agent"},
		"podman kube play F": {"ExecStart=/usr/bin/podman kube play /etc/myapp/pod.yaml", "/etc/myapp/pod.yaml"},
		"run-parts DIR":      {"ExecStart=/usr/bin/run-parts /etc/myapp/hooks", "/etc/myapp/hooks/10-x"},
		"a condition":        {"ConditionPathExists=/etc/myapp/requested\nExecStart=/usr/sbin/wipefs -a /dev/sdb", "/etc/myapp/requested"},
	} {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, readersPolicy, nodeRoot(t, map[string]string{u: "[Service]\n" + c.text + "\n"}), plain(), plain().File(c.write, []byte("x\n"), 0o600))
			refusedWith(t, p, "file "+c.write+": ", "denied to every rule")
		})
	}
}

// Round 25 (a/04, a/10): a path inside a quoted substitution, and a variable the unit sets used in
// a shell string.
func TestWhatANodeUnitRunsRound25Strings(t *testing.T) {
	const u = "/etc/systemd/system/vendor.service"
	for name, text := range map[string]string{
		"eval of a substitution": `ExecStart=/bin/sh -c 'eval "$(cat /etc/myapp/run.sh)"'`,
		"a backquote":            "ExecStart=/bin/sh -c 'eval \"`cat /etc/myapp/run.sh`\"'",
		"the unit's variable":    "Environment=D=/etc/myapp\nExecStart=/bin/sh -c '. ${D}/run.sh'",
	} {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, readersPolicy, nodeRoot(t, map[string]string{u: "[Service]\n" + text + "\n"}), plain(), plain().File("/etc/myapp/run.sh", []byte("x\n"), 0o600))
			refusedWith(t, p, "file /etc/myapp/run.sh: ", "denied to every rule")
		})
	}
}

// Round 25 (a/05, a/06, a/11, a/12, a/14, a/15): interpreters' joined options, programs' code
// options, env --chdir=, the root through /proc/self/root, the working directory's relative entries.
func TestWhatANodeUnitRunsRound25Options(t *testing.T) {
	const u = "/etc/systemd/system/vendor.service"
	for name, c := range map[string]struct{ text, write string }{
		"python -Wignore":       {"ExecStart=/usr/bin/python3 -Wignore /etc/myapp/x.py", "/etc/myapp/x.py"},
		"perl -Mstrict":         {"ExecStart=/usr/bin/perl -Mstrict /etc/myapp/x.pl", "/etc/myapp/x.pl"},
		"sqlite3 -init":         {"ExecStart=/usr/bin/sqlite3 -init /etc/myapp/x.sql :memory:", "/etc/myapp/x.sql"},
		"gdb -x":                {"ExecStart=/usr/bin/gdb -batch -x /etc/myapp/cmds", "/etc/myapp/cmds"},
		"xargs -a":              {"ExecStart=/usr/bin/xargs -a /etc/myapp/cmds sh -c", "/etc/myapp/cmds"},
		"sysctl -p":             {"ExecStart=/usr/sbin/sysctl -p /etc/myapp/k.conf", "/etc/myapp/k.conf"},
		"env --chdir=":          {"ExecStart=/usr/bin/env --chdir=/etc/myapp ./run.sh", "/etc/myapp/run.sh"},
		"/proc/self/root":       {"EnvironmentFile=/proc/self/root/etc/myapp/env\nExecStart=/usr/bin/x", "/etc/myapp/env"},
		"LD_LIBRARY_PATH=.":     {"WorkingDirectory=/etc/myapp\nEnvironment=LD_LIBRARY_PATH=.\nExecStart=/usr/bin/sleep infinity", "/etc/myapp/libc.so.6"},
		"python -m from the wd": {"WorkingDirectory=/etc/myapp\nExecStart=/usr/bin/python3 -m json.tool /dev/null", "/etc/myapp/json.py"},
	} {
		t.Run(name, func(t *testing.T) {
			p := rootBuild(t, readersPolicy, nodeRoot(t, map[string]string{u: "[Service]\n" + c.text + "\n"}), plain(), plain().File(c.write, []byte("x\n"), 0o600))
			refusedWith(t, p, "file "+c.write+": ", "denied to every rule")
		})
	}
}
