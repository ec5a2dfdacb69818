package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// r9Unit is unitOfLines with the environment and directory settings round 9 needs
// (EnvironmentFile=, PassEnvironment=, RuntimeDirectory=, StateDirectory=); own makes the lines
// the unit's own programs (the payload changed only their words); id names the unit.
func r9Unit(t *testing.T, id string, changed, own bool, lines ...string) allowlist.UnitProps {
	t.Helper()
	var rest []string
	var envFiles, pass, rt, st []string
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		switch k {
		case "EnvironmentFile":
			envFiles = append(envFiles, v)
		case "PassEnvironment":
			pass = append(pass, strings.Fields(v)...)
		case "RuntimeDirectory":
			rt = append(rt, v)
		case "StateDirectory":
			st = append(st, v)
		default:
			rest = append(rest, l)
		}
	}
	p := unitOfLines(t, changed, rest...)
	if id != "" {
		p.ID, p.Names = id, []string{id}
	}
	p.EnvironmentFiles, p.PassEnvironment, p.RuntimeDirectory, p.StateDirectory = envFiles, pass, rt, st
	if own {
		p.Programs = allowlist.OwnPrograms(p.Exec)
	}
	return p
}

// Round 9, findings 01, 02, 06: the files the agent itself writes from the payload below denied
// prefixes (core's SSH keys and home, the units and dropins, the built-in rules' files, the
// machine-config daemon's baseline, the agent's state dir), and the trees units write as they run,
// are not the node's: no EnvironmentFile=, code operand or script may name one, in any line. Core's
// key line BASH_ENV=… made bash source the keys as root; MAINPID=1 made the reload idiom
// kill -s SIGRTMIN+15 $MAINPID systemd's reboot; systemd-tmpfiles read the keys as tmpfiles.d.
func TestRound9PayloadWrittenFilesAreNotTheNodes(t *testing.T) {
	keys := "/var/home/core/.ssh/authorized_keys.d/ignition"
	payloadFiles := []string{keys, "/home/core/.ssh/authorized_keys.d/ignition", "/var/home/core/.ssh/authorized_keys",
		"/var/home/core/.bashrc", "/home/core/env", "/var/lib/kubelet/config.json",
		"/etc/machine-config-daemon/no-reboot/containers-gpg.pub", "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml",
		"/etc/systemd/system/myapp.service", "/etc/systemd/system/myapp.service.d/10-x.conf",
		"/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf",
		"/etc/mcd-currentconfig.json", "/var/lib/refresh-agent/journal",
		// RHCOS's /etc/ssl entries are links into /etc/pki/tls (node policy only: a rule's files)
		"/etc/ssl/certs/x.env", "/etc/ssl/cert.pem",
		// the trees units write as they run: a changed line of the payload's units writes its own
		// /run/S, /tmp, /var/tmp
		"/run/myapp/env", "/var/run/myapp/env", "/tmp/env", "/var/tmp/env", "/var/log/myapp/env", "/dev/shm/env"}
	for _, f := range payloadFiles {
		for _, changed := range []bool{true, false} {
			for _, lines := range [][]string{
				{"EnvironmentFile=" + f, "ExecStart=/usr/bin/bash -c 'echo ok'"},
				{"EnvironmentFile=-" + f, "ExecStart=/usr/bin/sleep infinity", "ExecStop=/usr/bin/kill -s SIGRTMIN+15 $MAINPID"},
			} {
				err := allowlist.JudgeUnit(r9Unit(t, "", changed, false, lines...))
				require.Error(t, err, "%v %q", changed, lines)
				assert.Contains(t, err.Error(), "EnvironmentFile=", "%q", lines)
				assert.Contains(t, err.Error(), f, "%q", lines)
			}
			// Code operands: the unit's own programs pointed at the file (finding 02).
			for _, l := range []string{
				"ExecStart=/usr/bin/systemd-tmpfiles --create " + f, "ExecStart=/usr/lib/systemd/systemd-sysctl " + f,
				"ExecStart=/usr/sbin/logrotate " + f, "ExecStart=/usr/sbin/modprobe -C " + f + " dummy",
				"ExecStart=/usr/sbin/modprobe --config=" + f + " dummy", "ExecStart=/usr/bin/systemd-sysusers " + f,
			} {
				err := allowlist.JudgeUnit(r9Unit(t, "", changed, true, l))
				require.Error(t, err, "%v %s", changed, l)
				assert.Contains(t, err.Error(), f, l)
			}
		}
	}
	// A variable that moves where programs read code may not lead into core's home either.
	for _, l := range []string{"Environment=XDG_CONFIG_HOME=/var/home/core/.config", "Environment=PYTHONUSERBASE=/var/home/core"} {
		err := allowlist.JudgeUnit(r9Unit(t, "", false, false, l, "ExecStart=/usr/bin/sleep 1"))
		require.Error(t, err, l)
	}
	// A program or script from there, in the node's own (unchanged) lines too.
	for _, l := range []string{"ExecStart=/var/home/core/bin/x", "ExecStart=/usr/bin/bash /var/home/core/x.sh",
		"ExecStart=/usr/bin/bash /etc/systemd/system/myapp.service.d/x.sh"} {
		err := allowlist.JudgeUnit(r9Unit(t, "", false, false, l))
		require.Error(t, err, l)
	}
	// The node's own files stay the node's: the MCO's kubelet and crio read kubens.service's
	// /run/kubens/env (a provisioning unit's runtime dir), the kubelet its /etc/kubernetes env files.
	for _, lines := range [][]string{
		{"EnvironmentFile=-/run/kubens/env", "ExecStart=/usr/bin/sleep infinity", "ExecReload=/bin/kill -HUP $MAINPID"},
		{"EnvironmentFile=/etc/os-release", "EnvironmentFile=-/etc/kubernetes/kubelet-workaround", "EnvironmentFile=-/etc/kubernetes/kubelet-env", "ExecStart=/usr/bin/sleep infinity"},
		{"EnvironmentFile=-/usr/lib/myapp/env", "ExecStart=/usr/bin/bash -c 'echo ok'"},
		{"EnvironmentFile=/etc/node-sizing-enabled.env", "ExecStart=/usr/bin/sleep infinity"},
		{"EnvironmentFile=/etc/ssl/openssl.cnf", "ExecStart=/usr/bin/sleep infinity"}, // /etc/pki/tls/openssl.cnf, denied
	} {
		for _, changed := range []bool{true, false} {
			assert.NoError(t, allowlist.JudgeUnit(r9Unit(t, "", changed, false, lines...)), "%v %q", changed, lines)
		}
	}
	assert.NoError(t, allowlist.JudgeUnit(r9Unit(t, "", true, true, "ExecStart=/usr/bin/systemd-tmpfiles --create /usr/lib/tmpfiles.d/myapp.conf")))
	// No other unit's changed line writes a provisioning unit's runtime dir: kubens@x.service's
	// own /run/kubens is not its own (kubelet's EnvironmentFile= reads /run/kubens/env).
	for _, l := range []string{"ExecStart=/usr/bin/sh -c 'echo MAINPID=1 > /run/kubens/env'", "ExecStart=/usr/bin/touch /run/kubens/env"} {
		for _, lines := range [][]string{{l}, {"RuntimeDirectory=kubens", l}} {
			err := allowlist.JudgeUnit(r9Unit(t, "kubens@x.service", true, false, lines...))
			require.Error(t, err, "%q", lines)
			assert.Contains(t, err.Error(), "/run/kubens/env", "%q", lines)
		}
	}
	assert.NoError(t, allowlist.JudgeUnit(r9Unit(t, "kubens-x.service", true, false, "ExecStart=/usr/bin/touch /run/kubens-x/env")))
	// The agent's state dir, wherever --state-dir puts it (Execution.NeverOwn), is not the node's.
	p := r9Unit(t, "", false, false, "EnvironmentFile=/var/lib/fwupd/agent/x", "ExecStart=/usr/bin/sleep 1")
	p.NeverOwn = []string{"/var/lib/fwupd/agent"}
	err := allowlist.JudgeUnit(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "state dir")
}

// Round 9, finding 03: WorkingDirectory=-DIR (the unit file's "-", the manager's "!" over D-Bus)
// runs the command in "/" when DIR is missing: a relative path is judged from both. "~" is User='s
// home (unknown); a value that is no absolute path is "/".
func TestRound9WorkingDirectoryMayBeRoot(t *testing.T) {
	for _, wd := range []string{"-/tmp/missing", "!/tmp/missing", "-!/tmp/missing", "-/var/lib/myapp", "!/run/myapp", " -/tmp/x"} {
		for _, l := range []string{"ExecStart=/usr/bin/rm -rf etc", "ExecStart=/usr/bin/chmod -R 0777 etc",
			"ExecStart=/usr/bin/bash -c 'echo 10.6.6.6 quay.io >> etc/hosts'", "ExecStart=/usr/bin/sed -i s/x/y/ etc/hosts",
			"ExecStart=/usr/bin/rm -rf etc/kubernetes", "ExecStart=/usr/bin/touch etc/x", "ExecStart=/usr/bin/cp /etc/myapp/app.conf etc/hosts"} {
			err := strictUnit(t, true, "WorkingDirectory="+wd, l)
			require.Error(t, err, "%s %s", wd, l)
			assert.Contains(t, err.Error(), "/etc", "%s %s", wd, l)
		}
	}
	// "~" is the home of User=: relative paths there cannot be placed.
	for _, wd := range []string{"~", "-~"} {
		err := strictUnit(t, true, "WorkingDirectory="+wd, "ExecStart=/usr/bin/touch x")
		require.Error(t, err, wd)
		assert.Contains(t, err.Error(), "relative to a working directory the judge cannot know", wd)
	}
	// Not an absolute path: systemd ignores it ("-") or fails the unit: "/".
	err := strictUnit(t, true, "WorkingDirectory=-tmp/x", "ExecStart=/usr/bin/rm -rf etc")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rm changes /etc")
	// A relative write own from both readings stays accepted; so does a directory that must exist.
	for _, lines := range [][]string{
		{"WorkingDirectory=-/tmp/missing", "ExecStart=/usr/bin/touch tmp/marker"},
		{"WorkingDirectory=-/run/myapp", "ExecStart=/usr/bin/rm -f /run/myapp/x.pid"},
		{"WorkingDirectory=/tmp/x", "ExecStart=/usr/bin/rm -rf etc"},
		{"WorkingDirectory=/run/myapp", "ExecStart=/usr/bin/touch x"},
	} {
		assert.NoError(t, strictUnit(t, true, lines...), "%q", lines)
	}
	// The node's own unit's writes (OwnWrites) are read from both directories too.
	p := unitOfLines(t, false, "WorkingDirectory=-/run/myapp", "ExecStart=/usr/bin/rm -f x")
	assert.ElementsMatch(t, []string{"/run/myapp/x", "/x"}, allowlist.OwnWrites(p))
}

// Round 9, finding 05: GNU tar without -f/--file writes or reads $TAPE. A script setting TAPE was
// refused; the unit's Environment=, PassEnvironment= and env/systemd-run --setenv now follow the
// same rule in every line, and a changed line's tar naming no archive in a unit whose
// EnvironmentFile= may set TAPE is refused.
func TestRound9TapeIsTarsArchive(t *testing.T) {
	tar := "ExecStart=/usr/bin/tar -c -C /var/lib/myapp ."
	for _, c := range []struct {
		lines []string
		why   string
	}{
		{[]string{"Environment=TAPE=/etc/shadow", tar}, "TAPE"},
		{[]string{"Environment=TAPE=/etc/kubernetes/kubelet.conf", "ExecStart=/usr/bin/tar --create --directory=/var/lib/myapp ."}, "TAPE"},
		{[]string{"Environment=TAPE=/dev/watchdog", "ExecStart=/usr/bin/tar -t"}, "TAPE"},
		{[]string{"Environment=TAPE=", "ExecStart=/usr/bin/sh -c 'tar -c -C /var/lib/myapp .'"}, "TAPE"},
		{[]string{"Environment=TAPE=", "ExecStart=/usr/bin/sleep 1"}, "Environment=TAPE="},
		{[]string{"PassEnvironment=TAPE", tar}, "PassEnvironment=TAPE"},
		{[]string{"EnvironmentFile=/etc/sysconfig/myapp", tar}, "EnvironmentFile= may set"},
		{[]string{"EnvironmentFile=-/etc/sysconfig/myapp", "ExecStart=/usr/bin/bash -c 'tar -t > /run/myapp/list'"}, "$TAPE"},
		{[]string{"ExecStart=/usr/bin/env TAPE=/etc/hosts /usr/bin/tar -c -C /var/lib/myapp ."}, "TAPE"},
		{[]string{"ExecStart=/usr/bin/bash -c 'export TAPE=/etc/hosts; tar -c -C /var/lib/myapp .'"}, "TAPE"},
	} {
		for _, changed := range []bool{true, false} {
			if !changed && !strings.HasPrefix(c.lines[0], "Environment=") && !strings.HasPrefix(c.lines[0], "PassEnvironment=") {
				continue // a script's and a changed tar's rules are a changed line's
			}
			err := allowlist.JudgeUnit(r9Unit(t, "", changed, false, c.lines...))
			require.Error(t, err, "%v %q", changed, c.lines)
			assert.Contains(t, err.Error(), c.why, "%v %q", changed, c.lines)
		}
	}
	for _, lines := range [][]string{
		{tar}, // standard output
		{"ExecStart=/usr/bin/tar -c -f - -C /var/lib/myapp ."},
		{"EnvironmentFile=/etc/sysconfig/myapp", "ExecStart=/usr/bin/tar -c -f /var/lib/myapp/a.tar -C /var/lib/myapp/d ."},
		{"EnvironmentFile=/etc/sysconfig/myapp", "ExecStart=/usr/bin/tar cf /var/lib/myapp/a.tar -C /var/lib/myapp/d ."},
		{"Environment=TAPEX=1", "ExecStart=/usr/bin/sleep 1"},
	} {
		assert.NoError(t, allowlist.JudgeUnit(r9Unit(t, "", true, false, append([]string{"StateDirectory=myapp"}, lines...)...)), "%q", lines)
	}
	// The node's own unchanged tar with its EnvironmentFile= stays accepted.
	assert.NoError(t, allowlist.JudgeUnit(r9Unit(t, "", false, false, "EnvironmentFile=/etc/sysconfig/myapp", tar)))
}
