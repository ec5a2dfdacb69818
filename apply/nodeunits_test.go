package apply_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
)

// Round 9 (units 06): the node's unit files under --root, as the system manager loads them: an
// instance is its own file or its template's, with the dropins of the instance, the template, the
// dash prefixes and the type, a name in /etc hiding the same name in /usr/lib; a mask is empty; a
// link to another name is an alias (not read as this unit); NodePolicy hands the reader to the plan.
func TestReadNodeUnit(t *testing.T) {
	dir := t.TempDir()
	write := func(p, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644))
	}
	write("usr/lib/systemd/system/podman-kube@.service", "[Service]\nExecStart=/usr/bin/podman kube play %I\n")
	write("usr/lib/systemd/system/podman-kube@.service.d/10-vendor.conf", "[Service]\nTimeoutStopSec=1\n")
	write("etc/systemd/system/podman-kube@.service.d/10-vendor.conf", "[Service]\nTimeoutStopSec=2\n")
	write("etc/systemd/system/podman-kube@x.service.d/20-inst.conf", "[Service]\nNice=1\n")
	write("usr/lib/systemd/system/podman-.service.d/30-prefix.conf", "[Service]\nNice=2\n")
	write("usr/lib/systemd/system/service.d/40-type.conf", "[Service]\nTimeoutAbortSec=3\n")
	write("usr/lib/systemd/system/podman-kube@.service.d/50-notconf", "[Service]\nUser=x\n")
	write("etc/systemd/system/podman-kube@own.service", "[Service]\nExecStart=/usr/bin/true\n")
	write("opt/dropin.conf", "[Service]\nNice=5\n")
	require.NoError(t, os.Symlink("/opt/dropin.conf", filepath.Join(dir, "etc/systemd/system/podman-kube@x.service.d/60-link.conf")))
	require.NoError(t, os.Symlink("/dev/null", filepath.Join(dir, "etc/systemd/system/masked@.service")))
	require.NoError(t, os.Symlink("/usr/lib/systemd/system/podman-kube@.service", filepath.Join(dir, "etc/systemd/system/alias@.service")))

	u, ok := apply.ReadNodeUnit(dir, "podman-kube@x.service")
	require.True(t, ok)
	assert.Equal(t, "/usr/lib/systemd/system/podman-kube@.service", u.Path)
	assert.Contains(t, u.Contents, "podman kube play %I")
	var names, texts []string
	for _, d := range u.Dropins {
		names, texts = append(names, d.Name), append(texts, d.Contents)
	}
	assert.Equal(t, []string{"10-vendor.conf", "20-inst.conf", "30-prefix.conf", "40-type.conf", "60-link.conf"}, names)
	assert.Equal(t, "[Service]\nTimeoutStopSec=2\n", texts[0], "/etc hides /usr/lib")
	assert.Equal(t, "[Service]\nNice=5\n", texts[4], "a dropin link is read as the file it links to")

	u, ok = apply.ReadNodeUnit(dir, "podman-kube@own.service")
	require.True(t, ok)
	assert.Equal(t, "/etc/systemd/system/podman-kube@own.service", u.Path, "an instance's own file first")
	u, ok = apply.ReadNodeUnit(dir, "masked@x.service")
	require.True(t, ok)
	assert.Empty(t, u.Contents)
	_, ok = apply.ReadNodeUnit(dir, "alias@x.service")
	assert.False(t, ok, "a link to another name is an alias")
	_, ok = apply.ReadNodeUnit(dir, "absent@x.service")
	assert.False(t, ok)
	_, ok = apply.ReadNodeUnit(dir, "../x.service")
	assert.False(t, ok)

	root, err := actions.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	pol, err := apply.Host{Root: root, StateDir: filepath.Join(dir, "var/lib/refresh-agent"), Policy: allowlist.Default()}.NodePolicy()
	require.NoError(t, err)
	_, ok = pol.NodeUnit("podman-kube@y.service")
	assert.True(t, ok, "the node policy reads the node's units")
	_, ok = allowlist.Default().NodeUnit("podman-kube@y.service")
	assert.False(t, ok, "without a root, none")
}
