package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/test/fixture"
)

// Round-4b adversary F1, through the binary: a real apply with the widest ceiling (all of /etc/ and
// /var/, no-reboot-paths asking for both) and a payload writing every file the adversary wrote (a
// CDI spec with a root hook, systemd's offline-update and initrd markers, pam_nologin's file,
// crictl's endpoint, the console keymap, cifs.idmap's plugin, chrony's state, shadow-utils' locks,
// systemd's image directories) is refused whole, naming each, and writes nothing; a ceiling for a
// boot marker directly under / does not load.
func TestApplyWideCeilingRefusesRound4bPaths(t *testing.T) {
	root := nodeRoot(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, data, 0o600))
		return f
	}
	paths := []string{"/etc/cdi/evil.json", "/etc/system-update", "/etc/initrd-release", "/etc/nologin", "/etc/crictl.yaml",
		"/etc/vconsole.conf", "/etc/locale.conf", "/etc/cifs-utils/idmap-plugin", "/var/lib/chrony/drift", "/etc/passwd.lock",
		"/etc/shadow.lock", "/etc/group.lock", "/etc/gshadow.lock", "/var/lib/portables/x.raw", "/var/lib/machines/x.raw",
		"/var/lib/extensions/x.raw", "/var/lib/confexts/x.raw", "/etc/extensions/x.raw", "/etc/NetworkManager/VPN/x.name",
		"/etc/pki/tls/fips_local.cnf", "/etc/.updated", "/var/.updated", "/var/run/cdi/x.json",
		// Round 7a (F3): terminfo, e2scrub's sourced file, NTO's image, Kata's hypervisor, zipl, DNSSEC
		// anchors, libgcrypt's FIPS switch, usbguard, configure-ovs's bridge, rpm-ostree's origin, fwupd.
		"/etc/terminfo/x/xterm-256color", "/etc/e2scrub.conf", "/var/lib/ocp-tuned/image.env", "/etc/kata-containers/configuration.toml",
		"/etc/zipl.conf", "/etc/dnssec-trust-anchors.d/root.positive", "/etc/gcrypt/fips_enabled", "/etc/usbguard/rules.conf",
		"/etc/ovnk/extra_bridge", "/etc/rpm-ostree/origin.d/x.yaml", "/var/lib/fwupd/remotes.d/x.conf"}
	des := fixture.Ignition("3.2.0")
	for _, p := range paths {
		des = des.File(p, []byte("x\n"), 0o644)
	}
	cur := write("cur.ign", fixture.Ignition("3.2.0").JSON())
	desired := write("des.ign", des.JSON())
	wide := write("wide.yaml", []byte("configMapCeiling:\n- {prefix: /etc/, actions: [None]}\n- {prefix: /var/, actions: [None]}\n"))
	nrp := write("nrp.json", []byte(`[{"path": "/etc/", "action": "None"}, {"path": "/var/", "action": "None"}]`))
	before, err := fixture.TreeHash(root)
	require.NoError(t, err)

	code, out, stderr := run(t, "apply", "--root", root, "--current", cur, "--desired", desired, "--policy", wide,
		"--no-reboot-paths", nrp, "--systemd", "none", "--cri-socket", "none", "--output", "json")
	require.Equal(t, exitRefused, code, stderr)
	var got struct {
		Applied, Eligible bool
		Refused           []struct{ Path, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Applied)
	assert.False(t, got.Eligible)
	refused := map[string]string{}
	for _, r := range got.Refused {
		refused[r.Path] = r.Reason
	}
	for _, p := range paths {
		if assert.Contains(t, refused, p) {
			assert.Regexp(t, `under denied prefix|only the node policy's own rules may name`, refused[p], p)
		}
	}
	after, err := fixture.TreeHash(root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")

	// Exact ceilings for the markers directly under /: the policy does not load.
	markers := write("markers.yaml", []byte("configMapCeiling:\n- {prefix: /.autorelabel, actions: [None]}\n- {prefix: /system-update, actions: [None]}\n"))
	code, _, stderr = run(t, "apply", "--root", root, "--current", cur, "--desired", desired, "--policy", markers,
		"--systemd", "none", "--cri-socket", "none")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "configMapCeiling[0]: prefix /.autorelabel is under denied prefix /.autorelabel")
	srv := write("srv.yaml", []byte("configMapCeiling:\n- {prefix: /srv/, actions: [None]}\n"))
	code, _, stderr = run(t, "apply", "--root", root, "--current", cur, "--desired", desired, "--policy", srv,
		"--systemd", "none", "--cri-socket", "none")
	assert.Equal(t, exitInvalid, code)
	assert.True(t, strings.Contains(stderr, "prefix /srv/ is outside /etc and /var"), stderr)
	after, err = fixture.TreeHash(root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")
}

// Round 11 (units 06), through the binary: with the widest ceiling, a payload writing criu's
// configuration (/etc/criu/default.conf, runc.conf: action-script runs a program as root when
// crio, runc or crun checkpoint or restore), pacemaker's authkey and etcd's database is refused
// whole, naming each path and its row, and writes nothing.
func TestApplyWideCeilingRefusesRound11Paths(t *testing.T) {
	applyWideCeilingRefuses(t, map[string]string{"/etc/criu/default.conf": "/etc/criu", "/etc/criu/runc.conf": "/etc/criu",
		"/etc/pacemaker/authkey": "/etc/pacemaker", "/var/lib/etcd/member/snap/db": "/var/lib/etcd"})
}

// Round 12 (units 03-06): e2fsck's and libblkid's configurations (a file they write as root, named
// by the payload), the locale lang.sh evals, the env file host-network pods source.
func TestApplyWideCeilingRefusesRound12Paths(t *testing.T) {
	applyWideCeilingRefuses(t, map[string]string{"/etc/e2fsck.conf": "/etc/e2fsck.conf", "/etc/blkid.conf": "/etc/blkid.conf",
		"/etc/locale.conf": "/etc/locale.conf", "/etc/kubernetes/apiserver-url.env": "/etc/kubernetes/apiserver-url.env",
		"/etc/ModemManager/connection.d/10-x": "/etc/ModemManager", "/etc/oddjobd.conf.d/x.conf": "/etc/oddjob",
		"/etc/netns/blue/resolv.conf": "/etc/netns", "/etc/machine-info": "/etc/machine-info", "/etc/terminal-colors.d/dmesg.scheme": "/etc/terminal-colors.d"})
}

// applyWideCeilingRefuses runs a real apply with a ceiling of all of /etc/ and /var/ and a payload
// writing each path: refused whole, each path named with its row, nothing written.
func applyWideCeilingRefuses(t *testing.T, paths map[string]string) {
	root := nodeRoot(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, data, 0o600))
		return f
	}
	des := fixture.Ignition("3.2.0")
	for p := range paths {
		des = des.File(p, []byte("action-script /tmp/x\n"), 0o644)
	}
	cur := write("cur.ign", fixture.Ignition("3.2.0").JSON())
	desired := write("des.ign", des.JSON())
	wide := write("wide.yaml", []byte("configMapCeiling:\n- {prefix: /etc/, actions: [None]}\n- {prefix: /var/, actions: [None]}\n"))
	nrp := write("nrp.json", []byte(`[{"path": "/etc/", "action": "None"}, {"path": "/var/", "action": "None"}]`))
	before, err := fixture.TreeHash(root)
	require.NoError(t, err)
	code, out, stderr := run(t, "apply", "--root", root, "--current", cur, "--desired", desired, "--policy", wide,
		"--no-reboot-paths", nrp, "--systemd", "none", "--cri-socket", "none", "--output", "json")
	require.Equal(t, exitRefused, code, stderr)
	var got struct {
		Applied, Eligible bool
		Refused           []struct{ Path, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Applied)
	assert.False(t, got.Eligible)
	refused := map[string]string{}
	for _, r := range got.Refused {
		refused[r.Path] = r.Reason
	}
	for p, row := range paths {
		if assert.Contains(t, refused, p) {
			assert.Contains(t, refused[p], "under denied prefix "+row, p)
		}
	}
	after, err := fixture.TreeHash(root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")
}
