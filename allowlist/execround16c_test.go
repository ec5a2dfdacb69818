package allowlist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// crioRPMLine is the cri-o package's crio.service ExecStart=, its words left to the node's
// EnvironmentFile=-/etc/sysconfig/crio (absent on RHCOS: every variable unset).
const crioRPMLine = `ExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS $CRIO_RUNTIME_OPTIONS $CRIO_STORAGE_OPTIONS $CRIO_NETWORK_OPTIONS $CRIO_METRICS_OPTIONS`

// Adversary round 16 c/01: crio is the node's CRI runtime, a daemon, not a container engine whose
// words name an image: a changed line of crio.service that keeps the package's unset variables, or
// changes a flag that names no path, is eligible; crio's code options, a path the node never gave
// it, crio in a unit that never ran it, and the image-running engines stay refused.
func TestCrioIsTheNodesDaemonNotAnImageRunner(t *testing.T) {
	accepted := []struct{ name, line string }{
		{"the package's line, changed by a drop-in", crioRPMLine},
		{"a log level after the variables", crioRPMLine + " --log-level info"},
		{"a log level, joined", crioRPMLine + " --log-level=debug"},
		{"metrics on a port", crioRPMLine + " --enable-metrics --metrics-port 9537"},
		{"crio config in ExecStartPre", `ExecStartPre=/usr/bin/crio config`},
		{"crio version", `ExecStartPre=/usr/bin/crio version`},
	}
	for _, c := range accepted {
		assert.NoError(t, givenUnit(t, crioRPMLine, c.line, false), c.name)
	}

	const pwn = "/etc/docker/certs.d/pwn"
	refused := []struct{ name, old, line, why string }{
		{"hooks from the payload", crioRPMLine, crioRPMLine + " --hooks-dir=" + pwn, "runs code from " + pwn},
		{"a config dir it was never given", crioRPMLine, crioRPMLine + " --config-dir=" + pwn, "the path " + pwn + " (by --config-dir) it was not given before"},
		{"a config dir, short", crioRPMLine, crioRPMLine + " -d " + pwn, "the path " + pwn},
		{"runtimes", crioRPMLine, crioRPMLine + " --runtimes=x:" + pwn + "/runc:/run/x", "the path " + pwn + "/runc"},
		{"wipe", crioRPMLine, `ExecStartPre=/usr/bin/crio wipe -f`, "wipes the node's container storage"},
		{"crio in a unit that never ran it", `ExecStart=/usr/bin/myapp`, `ExecStart=/usr/bin/crio $CRIO_CONFIG_OPTIONS`, "runs /usr/bin/crio"},
		{"podman run behind an unset variable", `ExecStart=/usr/bin/podman ps`, `ExecStart=/usr/bin/podman $PODMAN_OPTS run quay.io/x`, "podman"},
		{"podman run", `ExecStart=/usr/bin/podman ps`, `ExecStart=/usr/bin/podman run quay.io/x`, "podman run: runs code from a container image"},
	}
	for _, c := range refused {
		err := givenUnit(t, c.old, c.line, false)
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.why, c.name)
			assert.NotContains(t, err.Error(), "$CRIO_CONFIG_OPTIONS: runs code from a container image", c.name)
		}
	}
}

// Adversary round 16 c/02: kubelet is no GNU program (no abbreviated long options): a refusal of
// its line names its words as written, --v=2, never a GNU reading of them (--volno-file=2).
func TestRefusalsNameAnUnmodeledProgramsWordsAsWritten(t *testing.T) {
	const pwn = "/etc/docker/certs.d/pwn"
	for _, extra := range []string{"--v=2 --pod-manifest-path=" + pwn, "--pod-manifest-path=" + pwn + " --v=2", "--v=" + pwn} {
		line := strings.Replace(round14Kubelet, " --v=${KUBELET_LOG_LEVEL}", "", 1) + " " + extra
		err := givenUnit(t, round14Kubelet, line, false)
		if assert.Error(t, err, extra) {
			assert.NotContains(t, err.Error(), "--volno-file", extra)
			assert.NotContains(t, err.Error(), "--verbose", extra)
			assert.Contains(t, err.Error(), "the path "+pwn, extra)
		}
	}
	// A GNU program the judge models is still read as getopt_long reads it.
	err := strictUnit(t, true, `ExecStart=/usr/bin/tar -xf /usr/share/x.tar --checkpoint-act=exec=/usr/bin/reboot`)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "checkpoint")
	}
}
