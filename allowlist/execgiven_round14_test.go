package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// round14Kubelet is the kubelet line the MCO's template writes (templates/worker/01-worker-kubelet,
// as the adversary's payload and the MCS serve it), its variables left as the node's manager
// reads them (EnvironmentFile=).
const round14Kubelet = `ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf ` +
	`--bootstrap-kubeconfig=/etc/kubernetes/kubeconfig --kubeconfig=/var/lib/kubelet/kubeconfig ` +
	`--container-runtime-endpoint=/var/run/crio/crio.sock --runtime-cgroups=/system.slice/crio.service ` +
	`--node-labels=node-role.kubernetes.io/worker,node.openshift.io/os_id=${ID} --node-ip=${KUBELET_NODE_IP} ` +
	`--minimum-container-ttl-duration=6m0s --cloud-provider= --volume-plugin-dir=/etc/kubernetes/kubelet-plugins/volume/exec ` +
	`--hostname-override=${KUBELET_NODE_NAME} --provider-id=${KUBELET_PROVIDERID} ` +
	`--register-with-taints=node-role.kubernetes.io/master=:NoSchedule --pod-infra-container-image=quay.io/openshift/pause ` +
	`--system-reserved=cpu=${SYSTEM_RESERVED_CPU},memory=${SYSTEM_RESERVED_MEMORY},ephemeral-storage=${SYSTEM_RESERVED_ES} ` +
	`--v=${KUBELET_LOG_LEVEL}`

// givenUnit judges line as the changed line of a unit whose node's definition runs old (its own
// programs, writes, secrets and the paths it gives its unmodeled programs, as the plan gathers
// them); grant adds the policy's unitPrograms grant of the changed line's programs.
func givenUnit(t *testing.T, old, line string, grant bool) error {
	t.Helper()
	cur := unitOfLines(t, false, old)
	p := unitOfLines(t, true, line)
	p.Programs = allowlist.OwnPrograms(cur.Exec)
	if grant {
		p.Programs = append(p.Programs, allowlist.OwnPrograms(p.Exec)...)
	}
	p.OwnWrites = allowlist.OwnWrites(cur)
	p.OwnSecrets = allowlist.OwnSecrets(cur)
	p.OwnArgs = allowlist.OwnArgs(cur)
	return allowlist.JudgeUnit(p)
}

// Adversary round 14 (b/01-06): a changed line may give a program the judge does not model (the
// unit's own kubelet behind kubenswrapper, crio, strace, ltrace, flock) only the paths the node's
// definition of the unit gives it by the same option, or read-only OS content; and none of its
// words may set a variable the environment judge refuses. Every finding's flag is a row; a grant
// of the program lifts nothing; the neighbours (the same path, /usr paths, a changed flag that is
// no path: HyperShift's labels, taints, --v, --system-reserved) stay accepted.
func TestChangedLinesGiveUnmodeledProgramsOnlyTheirPaths(t *testing.T) {
	const (
		crio   = `ExecStart=/usr/bin/crio`
		strace = `ExecStart=/usr/bin/strace -f /usr/bin/myapp`
		ltrace = `ExecStart=/usr/bin/ltrace /usr/bin/myapp`
		flock  = `ExecStart=/usr/bin/flock /run/myapp.lock /usr/bin/myapp`
		pwn    = "/etc/docker/certs.d/pwn"
	)
	kubeletWith := func(extra string) string { return round14Kubelet + " " + extra }
	newPath := func(prog, p, opt string) string {
		return "a changed line gives " + prog + ", which the judge does not model, the path " + p + " (" + opt + ") it was not given before"
	}
	preload := "LD_PRELOAD makes the loader, a shell or an interpreter load code"
	refused := []struct {
		name, old, line, why string
	}{
		// b/01: kubelet's static pods, configuration, flexvolume drivers, credential plugins
		{"kubelet --pod-manifest-path", round14Kubelet, kubeletWith("--pod-manifest-path=" + pwn), newPath("kubelet", pwn, "by --pod-manifest-path")},
		{"kubelet --pod-manifest-path V", round14Kubelet, kubeletWith("--pod-manifest-path " + pwn), newPath("kubelet", pwn, "by --pod-manifest-path")},
		{"kubelet --pod-manifest-path relative", round14Kubelet, kubeletWith("--pod-manifest-path=etc/docker/certs.d/pwn"), newPath("kubelet", pwn, "by --pod-manifest-path")},
		{"kubelet --pod-manifest-path //", round14Kubelet, kubeletWith("--pod-manifest-path=//etc/docker/certs.d/./pwn"), newPath("kubelet", pwn, "by --pod-manifest-path")},
		{"kubelet --config", round14Kubelet, strings.Replace(round14Kubelet, "--config=/etc/kubernetes/kubelet.conf", "--config="+pwn+"/k.conf", 1), newPath("kubelet", pwn+"/k.conf", "by --config")},
		{"kubelet --volume-plugin-dir", round14Kubelet, strings.Replace(round14Kubelet, "/etc/kubernetes/kubelet-plugins/volume/exec", pwn, 1), newPath("kubelet", pwn, "by --volume-plugin-dir")},
		{"kubelet --image-credential-provider-bin-dir", round14Kubelet, kubeletWith("--image-credential-provider-bin-dir=" + pwn), newPath("kubelet", pwn, "by --image-credential-provider-bin-dir")},
		// b/02: the credential provider config outside the credential judge's directory
		{"kubelet --image-credential-provider-config", round14Kubelet,
			kubeletWith("--image-credential-provider-bin-dir=/usr/libexec/kubelet-image-credential-provider-plugins --image-credential-provider-config=" + pwn + "/cp.yaml"),
			newPath("kubelet", pwn+"/cp.yaml", "by --image-credential-provider-config")},
		// b/05: kubeconfigs with an exec plugin, the kubelet's root and runtime socket
		{"kubelet --kubeconfig", round14Kubelet, strings.Replace(round14Kubelet, "--kubeconfig=/var/lib/kubelet/kubeconfig", "--kubeconfig="+pwn+"/kc", 1), newPath("kubelet", pwn+"/kc", "by --kubeconfig")},
		{"kubelet --bootstrap-kubeconfig", round14Kubelet, strings.Replace(round14Kubelet, "--bootstrap-kubeconfig=/etc/kubernetes/kubeconfig", "--bootstrap-kubeconfig="+pwn+"/kc", 1), newPath("kubelet", pwn+"/kc", "by --bootstrap-kubeconfig")},
		{"kubelet --root-dir", round14Kubelet, kubeletWith("--root-dir=" + pwn), newPath("kubelet", pwn, "by --root-dir")},
		{"kubelet --container-runtime-endpoint", round14Kubelet, strings.Replace(round14Kubelet, "/var/run/crio/crio.sock", "unix://"+pwn+"/s.sock", 1), newPath("kubelet", pwn+"/s.sock", "by --container-runtime-endpoint")},
		// the same path by another option is a new path to that option
		{"kubelet the config as manifests", round14Kubelet, kubeletWith("--pod-manifest-path=/etc/kubernetes/kubelet.conf"), newPath("kubelet", "/etc/kubernetes/kubelet.conf", "by --pod-manifest-path")},
		// b/03: crio's configuration, plugins, runtimes and trust
		{"crio --config-dir", crio, "ExecStart=/usr/bin/crio --config-dir=" + pwn, newPath("crio", pwn, "by --config-dir")},
		{"crio --cni-plugin-dir", crio, "ExecStart=/usr/bin/crio --cni-plugin-dir=" + pwn, newPath("crio", pwn, "by --cni-plugin-dir")},
		{"crio --runtimes", crio, "ExecStart=/usr/bin/crio --runtimes=x:" + pwn + "/runc:/run/x", newPath("crio", pwn+"/runc", "by --runtimes")},
		{"crio --pinns-path", crio, "ExecStart=/usr/bin/crio --pinns-path=" + pwn + "/pinns", newPath("crio", pwn+"/pinns", "by --pinns-path")},
		{"crio --default-mounts-file", crio, "ExecStart=/usr/bin/crio --default-mounts-file=" + pwn + "/m", newPath("crio", pwn+"/m", "by --default-mounts-file")},
		{"crio --registries-conf", crio, "ExecStart=/usr/bin/crio --registries-conf=" + pwn + "/r.conf", newPath("crio", pwn+"/r.conf", "by --registries-conf")},
		{"crio --signature-policy", crio, "ExecStart=/usr/bin/crio --signature-policy=" + pwn + "/p.json", newPath("crio", pwn+"/p.json", "by --signature-policy")},
		{"crio --seccomp-profile", crio, "ExecStart=/usr/bin/crio --seccomp-profile=" + pwn + "/s.json", newPath("crio", pwn+"/s.json", "by --seccomp-profile")},
		// the table under which the rule is: its reason first
		{"crio --hooks-dir (engineCodeOptions)", crio, "ExecStart=/usr/bin/crio --hooks-dir=" + pwn, "runs code from " + pwn + ", a file or tree the payload may write"},
		// crio's daemon is no model's, whoever runs it: a unit that never ran it gives it no path
		{"crio added", `ExecStart=/usr/bin/myapp`, "ExecStart=/usr/bin/crio --config-dir=" + pwn, newPath("crio", pwn, "by --config-dir")},
		// b/04: a variable the environment judge refuses, however it is handed on
		{"crio --conmon-env", crio, "ExecStart=/usr/bin/crio --conmon-env=LD_PRELOAD=" + pwn + "/x.so", preload},
		{"crio --conmon-env of /usr", crio, "ExecStart=/usr/bin/crio --conmon-env=LD_PRELOAD=/usr/lib64/libc.so.6", preload},
		{"crio --conmon-env PATH", crio, "ExecStart=/usr/bin/crio --conmon-env=PATH=/usr/bin:/usr/sbin", "PATH makes the loader"},
		{"crio --conmon-env list", crio, "ExecStart=/usr/bin/crio --conmon-env=PATH=/usr/bin,LD_AUDIT=/usr/lib64/libc.so.6", "LD_AUDIT"},
		{"crio --conmon-env a CONF", crio, "ExecStart=/usr/bin/crio --conmon-env=CONTAINER_HOOKS_DIR=/etc/myapp/h", "moves where a root program reads its configuration"},
		{"strace -E", strace, "ExecStart=/usr/bin/strace -E LD_PRELOAD=/usr/lib64/libc.so.6 -f /usr/bin/myapp", preload},
		{"strace -E joined", strace, "ExecStart=/usr/bin/strace -ELD_PRELOAD=/usr/lib64/libc.so.6 -f /usr/bin/myapp", preload},
		// b/06: an own wrapper's output file
		{"strace -o", strace, "ExecStart=/usr/bin/strace -o /etc/passwd -f /usr/bin/myapp", newPath("strace", "/etc/passwd", "by -o")},
		{"strace -oF", strace, "ExecStart=/usr/bin/strace -o/etc/sudoers -f /usr/bin/myapp", newPath("strace", "/etc/sudoers", "by -o")},
		{"strace --output", strace, "ExecStart=/usr/bin/strace --output=/etc/ld.so.preload -f /usr/bin/myapp", newPath("strace", "/etc/ld.so.preload", "by --output")},
		{"strace -o kubelet.conf", strace, "ExecStart=/usr/bin/strace -o /etc/kubernetes/kubelet.conf -f /usr/bin/myapp", newPath("strace", "/etc/kubernetes/kubelet.conf", "by -o")},
		{"strace -o cron", strace, "ExecStart=/usr/bin/strace -o /etc/cron.d/x -f /usr/bin/myapp", newPath("strace", "/etc/cron.d/x", "by -o")},
		{"strace -o own place", strace, "ExecStart=/usr/bin/strace -o /tmp/trace -f /usr/bin/myapp", newPath("strace", "/tmp/trace", "by -o")},
		{"ltrace -o", ltrace, "ExecStart=/usr/bin/ltrace -o /etc/sudoers /usr/bin/myapp", newPath("ltrace", "/etc/sudoers", "by -o")},
		{"flock", flock, "ExecStart=/usr/bin/flock /etc/ld.so.preload /usr/bin/myapp", newPath("flock", "/etc/ld.so.preload", "as an operand")},
		// a word after an option is read as its value (the judge does not know the program's
		// grammar): the same lock after a new -n is a path -n was not given before
		{"flock -n before the lock", flock, "ExecStart=/usr/bin/flock -n /run/myapp.lock /usr/bin/myapp", newPath("flock", "/run/myapp.lock", "by -n")},
		// an own daemon's operand and a shell's exec of it
		{"myapp operand", `ExecStart=/usr/bin/myapp /etc/myapp/app.conf`, `ExecStart=/usr/bin/myapp /etc/myapp/other.conf`, newPath("myapp", "/etc/myapp/other.conf", "as an operand")},
		{"sh -c exec myapp", `ExecStart=/bin/sh -c 'exec /usr/bin/myapp --x=1'`, `ExecStart=/bin/sh -c 'exec /usr/bin/myapp --plugin=/etc/myapp/x.so'`, newPath("myapp", "/etc/myapp/x.so", "by --plugin")},
	}
	for _, c := range refused {
		for _, grant := range []bool{false, true} {
			err := givenUnit(t, c.old, c.line, grant)
			if assert.Error(t, err, "%s (granted: %v)", c.name, grant) {
				assert.Contains(t, err.Error(), c.why, "%s (granted: %v)", c.name, grant)
				assert.Contains(t, err.Error(), "ExecStart=", c.name)
			}
		}
		// The node's own line is the node's: this rule judges changed lines only.
		if own := strictUnit(t, false, c.line); own != nil {
			assert.NotContains(t, own.Error(), "it was not given before", c.name)
		}
	}

	accepted := []struct{ name, old, line string }{
		{"kubelet unchanged", round14Kubelet, round14Kubelet},
		{"kubelet --v", round14Kubelet, strings.Replace(round14Kubelet, "--v=${KUBELET_LOG_LEVEL}", "--v=4", 1)},
		{"kubelet labels", round14Kubelet, strings.Replace(round14Kubelet, "os_id=${ID}", "os_id=${ID},hypershift.openshift.io/nodePool=workers,node-role.kubernetes.io/infra=", 1)},
		{"kubelet taints", round14Kubelet, strings.Replace(round14Kubelet, "node-role.kubernetes.io/master=:NoSchedule", "node-role.kubernetes.io/infra=reserved:NoSchedule,dedicated=gpu:NoExecute", 1)},
		{"kubelet system-reserved", round14Kubelet, strings.Replace(round14Kubelet, "cpu=${SYSTEM_RESERVED_CPU},memory=${SYSTEM_RESERVED_MEMORY}", "cpu=500m,memory=1Gi", 1)},
		{"kubelet max-pods and a feature gate", round14Kubelet, kubeletWith("--max-pods=500 --feature-gates=RotateKubeletServerCertificate=true,ConfigurableFSGroupPolicy=true")},
		{"kubelet another image", round14Kubelet, strings.Replace(round14Kubelet, "quay.io/openshift/pause", "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123", 1)},
		{"kubelet same paths moved", round14Kubelet, strings.Replace(round14Kubelet, " --config=/etc/kubernetes/kubelet.conf", "", 1) + " --config /etc/kubernetes/kubelet.conf"},
		{"kubelet socket spelled", round14Kubelet, strings.Replace(round14Kubelet, "/var/run/crio/crio.sock", "unix:///run/crio/crio.sock", 1)},
		{"crio --log-level", crio, `ExecStart=/usr/bin/crio --log-level=debug`},
		{"crio --conmon-env of no variable the judge refuses", crio, `ExecStart=/usr/bin/crio --conmon-env=GODEBUG=madvdontneed=1`},
		{"crio same config dir", `ExecStart=/usr/bin/crio --config-dir=/etc/crio/crio.conf.d`, `ExecStart=/usr/bin/crio --config-dir=/etc/crio/crio.conf.d --log-level=info`},
		{"strace -tt", strace, `ExecStart=/usr/bin/strace -f -tt /usr/bin/myapp`},
		{"strace same output", `ExecStart=/usr/bin/strace -o /var/log/myapp.trace -f /usr/bin/myapp`, `ExecStart=/usr/bin/strace -o /var/log/myapp.trace -ff /usr/bin/myapp`},
		{"flock same lock", flock, `ExecStart=/usr/bin/flock /run/myapp.lock /usr/bin/myapp --verbose`},
		{"myapp same config", `ExecStart=/usr/bin/myapp --config=/etc/myapp/app.conf`, `ExecStart=/usr/bin/myapp --config=/etc/myapp/app.conf --mode reboot-free`},
		{"myapp /usr data", `ExecStart=/usr/bin/myapp`, `ExecStart=/usr/bin/myapp --data=/usr/share/myapp`},
	}
	for _, c := range accepted {
		assert.NoError(t, givenUnit(t, c.old, c.line, false), c.name)
		assert.NoError(t, givenUnit(t, c.old, c.line, true), c.name+" (granted)")
	}
}

// OwnArgs reads the node's lines as a changed line is read: the unmodeled programs behind the
// modeled wrappers, each path by its option, clean; the modeled programs give none.
func TestOwnArgsOfTheNodesLines(t *testing.T) {
	p := unitOfLines(t, false, `ExecStart=/usr/local/bin/kubenswrapper /usr/bin/kubelet --config=/etc/kubernetes/kubelet.conf --container-runtime-endpoint=unix:///var/run/crio/crio.sock --v=2`,
		`ExecStartPre=/bin/mkdir -p /etc/kubernetes/manifests`, `ExecStart=/usr/bin/strace -o /var/log/x -f /usr/bin/myapp`)
	assert.ElementsMatch(t, []allowlist.OwnArg{
		{Program: "/usr/bin/kubelet"}, {Program: "/usr/bin/kubelet", Option: "--config", Path: "/etc/kubernetes/kubelet.conf"},
		{Program: "/usr/bin/kubelet", Option: "--container-runtime-endpoint", Path: "/run/crio/crio.sock"},
		// kubelet's flags as written (daemonflags.go), by the line's key
		{Program: "/usr/bin/kubelet", Option: "--config", Value: "/etc/kubernetes/kubelet.conf", Flag: true, Key: "ExecStart"},
		{Program: "/usr/bin/kubelet", Option: "--container-runtime-endpoint", Value: "unix:///var/run/crio/crio.sock", Flag: true, Key: "ExecStart"},
		{Program: "/usr/bin/kubelet", Option: "--v", Value: "2", Flag: true, Key: "ExecStart"},
		{Program: "/usr/bin/strace"}, {Program: "/usr/bin/strace", Option: "-o", Path: "/var/log/x"},
		{Program: "/usr/bin/strace", Option: "-f", Path: "/usr/bin/myapp"},
	}, allowlist.OwnArgs(p))
	assert.Empty(t, allowlist.OwnArgs(allowlist.UnitProps{}))
}

// Adversary r16 c/03-04: a payload that sets WorkingDirectory= to a directory it writes and gives
// the unit's own kubelet or crio a bare name there (--pod-manifest-path=pwn, --config=crio.conf, .)
// had it read a payload file: a bare name is no path where the line runs in /, and was none below
// another directory either. Below a directory other than / every bare name is a path now, judged as
// any other; the node's own line read the same way still matches itself.
func TestBareNamesBelowAWorkingDirectoryArePaths(t *testing.T) {
	const wd = "WorkingDirectory=/etc/docker/certs.d/x"
	for _, c := range []struct{ old, line, path string }{
		{round14Kubelet, round14Kubelet + " --pod-manifest-path=pwn", "/etc/docker/certs.d/x/pwn"},
		{round14Kubelet, round14Kubelet + " --pod-manifest-path=.", "/etc/docker/certs.d/x"},
		{`ExecStart=/usr/bin/crio`, `ExecStart=/usr/bin/crio --config=crio.conf`, "/etc/docker/certs.d/x/crio.conf"},
		{`ExecStart=/usr/bin/kubelet --v=2`, `ExecStart=/usr/bin/kubelet --v=2 --pod-manifest-path=pwn`, "/etc/docker/certs.d/x/pwn"},
		{`ExecStart=/usr/bin/kubelet --v=2`, `ExecStart=/usr/bin/kubelet --v=2 --pod-manifest-path=.`, "/etc/docker/certs.d/x"},
		{round14Kubelet, round14Kubelet + " --volume-plugin-dir plugins", "/etc/docker/certs.d/x/plugins"},
	} {
		cur := unitOfLines(t, false, c.old)
		p := unitOfLines(t, true, wd, c.line)
		p.Programs = allowlist.OwnPrograms(cur.Exec)
		p.OwnWrites, p.OwnSecrets, p.OwnArgs = allowlist.OwnWrites(cur), allowlist.OwnSecrets(cur), allowlist.OwnArgs(cur)
		err := allowlist.JudgeUnit(p)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), "it was not given before", c.line) // the first new path it meets: c.path or a label below the new directory
		}
	}
	// The node's unit below its own directory: the same words are its own.
	line := `ExecStart=/usr/bin/myapp --data=state --mode=fast`
	cur := unitOfLines(t, false, wd, line)
	p := unitOfLines(t, true, wd, line+" --verbose")
	p.Programs = allowlist.OwnPrograms(cur.Exec)
	p.OwnWrites, p.OwnSecrets, p.OwnArgs = allowlist.OwnWrites(cur), allowlist.OwnSecrets(cur), allowlist.OwnArgs(cur)
	assert.NoError(t, allowlist.JudgeUnit(p))
}
