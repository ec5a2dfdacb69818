package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

const readersPolicy = `paths:
- {path: /etc/myapp/, action: None}
nodeDisruptionPolicy:
  files:
  - path: /etc/vendor/env
    actions: [{type: Restart, restart: {serviceName: vendor.service}}]
allowedUnits: [vendor.service]
`

// Round 23 (d/04-d/06): a file a unit of the node (or the payload) reads as root is refused to
// every rule, whatever its action: its environment, a program or script it runs, a path a .path
// unit watches, a credential, a tree bound into its processes.
func TestAFileAUnitReadsAsRootIsNeverWritten(t *testing.T) {
	cases := []struct {
		name, unitFile, unitText, write string
		want                            []string
	}{
		{"environment file, action None", "/etc/systemd/system/foo.service",
			"[Service]\nEnvironmentFile=-/etc/myapp/env\nExecStart=/usr/bin/foo $OPTS\n", "/etc/myapp/env", []string{"foo.service", "EnvironmentFile="}},
		{"NodeDisruptionPolicy file with a restart", "/usr/lib/systemd/system/vendor.service",
			"[Service]\nEnvironmentFile=/etc/vendor/env\nExecStart=/usr/bin/vendor\n", "/etc/vendor/env", []string{"vendor.service", "EnvironmentFile="}},
		{"the unit's program", "/etc/systemd/system/foo.service",
			"[Service]\nExecStart=/etc/myapp/run\n", "/etc/myapp/run", []string{"foo.service", "ExecStart="}},
		{"a script after a shell's options", "/etc/systemd/system/foo.service",
			"[Service]\nExecStartPre=/bin/bash -e -o pipefail /etc/myapp/pre.sh\nExecStart=/usr/bin/foo\n", "/etc/myapp/pre.sh", []string{"ExecStartPre="}},
		{"an interpreter's script", "/etc/systemd/system/foo.service",
			"[Service]\nExecStart=/usr/bin/python3 -u /etc/myapp/app.py\n", "/etc/myapp/app.py", []string{"ExecStart="}},
		{"a shell's rc file", "/etc/systemd/system/foo.service",
			"[Service]\nExecStart=/bin/bash --rcfile /etc/myapp/rc -i\n", "/etc/myapp/rc", []string{"ExecStart="}},
		{"a watched path", "/etc/systemd/system/spool.path",
			"[Path]\nPathChanged=/etc/myapp/trigger\n", "/etc/myapp/trigger", []string{"spool.path", "PathChanged="}},
		{"a watched glob", "/etc/systemd/system/spool.path",
			"[Path]\nPathExistsGlob=/etc/myapp/*.req\n", "/etc/myapp/x.req", []string{"PathExistsGlob="}},
		{"a watched directory", "/etc/systemd/system/spool.path",
			"[Path]\nDirectoryNotEmpty=/etc/myapp/queue\n", "/etc/myapp/queue/job", []string{"DirectoryNotEmpty="}},
		{"a program search directory", "/etc/systemd/system/foo.service",
			"[Service]\nExecSearchPath=/etc/myapp/bin:/usr/bin\nExecStart=foo\n", "/etc/myapp/bin/foo", []string{"ExecSearchPath="}},
		{"a node drop-in's environment", "/etc/systemd/system/crio.service.d/99-x.conf",
			"[Service]\nEnvironmentFile=/etc/myapp/crio.env\n", "/etc/myapp/crio.env", []string{"crio.service", "EnvironmentFile="}},
		{"every service's type drop-in, by unit name", "/etc/systemd/system/service.d/10-env.conf",
			"[Service]\nEnvironmentFile=-/etc/myapp/%n.env\n", "/etc/myapp/sshd.service.env", []string{"every service", "EnvironmentFile="}},
		{"a template's instance file", "/etc/systemd/system/worker@.service",
			"[Service]\nEnvironmentFile=/etc/myapp/%i.conf\nExecStart=/usr/bin/worker\n", "/etc/myapp/a.conf", []string{"worker@.service"}},
		{"a credential", "/etc/systemd/system/foo.service",
			"[Service]\nLoadCredential=token:/etc/myapp/token\nExecStart=/usr/bin/foo\n", "/etc/myapp/token", []string{"LoadCredential="}},
		{"a bound tree", "/etc/systemd/system/foo.service",
			"[Service]\nBindReadOnlyPaths=/etc/myapp/lib:/usr/lib64/foo\nExecStart=/usr/bin/foo\n", "/etc/myapp/lib/libfoo.so", []string{"BindReadOnlyPaths="}},
		{"its root directory", "/etc/systemd/system/foo.service",
			"[Service]\nRootDirectory=/etc/myapp/root\nExecStart=/usr/bin/foo\n", "/etc/myapp/root/usr/bin/foo", []string{"RootDirectory="}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := nodeRoot(t, map[string]string{c.unitFile: c.unitText})
			p := rootBuild(t, readersPolicy, root, plain(), plain().File(c.write, []byte("LD_PRELOAD=/tmp/x.so\n"), 0o600))
			refusedWith(t, p, append([]string{"file " + c.write + ": ", "denied to every rule"}, c.want...)...)
			for _, r := range p.Refused {
				assert.NotContains(t, r.Reason, "LD_PRELOAD=/tmp", "the contents are never shown")
			}
		})
	}
}

// The removal of such a file is refused too (a unit's environment or program gone), and so is a
// write of a file the payload's own unit reads.
func TestRemovingOrThePayloadsOwnReaderIsRefusedToo(t *testing.T) {
	root := nodeRoot(t, map[string]string{"/etc/systemd/system/foo.service": "[Service]\nEnvironmentFile=/etc/myapp/env\nExecStart=/usr/bin/foo\n"})
	cur := plain().File("/etc/myapp/env", []byte("A=1\n"), 0o644)
	p := rootBuild(t, readersPolicy, root, cur, plain())
	refusedWith(t, p, "file /etc/myapp/env: ", "EnvironmentFile=")

	own := func() *fixture.Config {
		return withUnits(types.Unit{Name: "app.service", Contents: str("[Service]\nEnvironmentFile=/etc/myapp/app.env\nExecStart=/usr/bin/app\n")})
	}
	p = rootBuild(t, readersPolicy, nodeRoot(t, nil), own(), own().File("/etc/myapp/app.env", []byte("A=1\n"), 0o644))
	refusedWith(t, p, "file /etc/myapp/app.env: ", "app.service", "the payload's /etc/systemd/system/app.service")
}

// What no unit reads stays writable: a file beside a read one, a file its shell string does not
// name. (A path a node unit's shell string names is a read: round 25 a/04, cat F | sh.)
func TestAFileNoUnitReadsStaysWritable(t *testing.T) {
	root := nodeRoot(t, map[string]string{
		"/etc/systemd/system/foo.service": "[Service]\nEnvironmentFile=-/etc/myapp/env\nExecStart=/bin/sh -c 'cat /etc/myapp/conf.json'\n",
		"/etc/systemd/system/spool.path":  "[Path]\nPathChanged=/etc/myapp/trigger\n",
	})
	for _, f := range []string{"/etc/myapp/other.json", "/etc/myapp/env.d", "/etc/myapp/triggered"} {
		p := rootBuild(t, readersPolicy, root, plain(), plain().File(f, []byte("{}\n"), 0o644))
		require.True(t, p.Eligible, "%s: %+v", f, p.Refused)
		require.Len(t, p.Files, 1)
	}
}
