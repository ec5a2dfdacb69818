package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round 11 (units/03, 04): a payload's unit pulls in a unit the node already has (not in the
// payload), whose own dependencies reach a provisioning or node-wiping unit. One hop through a
// node unit is no way around the rule a payload's own entries are judged by: every unit the job
// reaches through another unit is judged by DependencyIdentity, naming the chain. A node socket's
// Service= is the service it activates (units/04).
func TestOneHopThroughANodeUnitIsJudgedByIdentity(t *testing.T) {
	const app = "[Unit]\nDescription=myapp\n%s\n[Service]\nExecStart=/bin/sleep infinity\n"
	const svc = "[Service]\nType=oneshot\nExecStart=/bin/true\n"
	helper := func(unit string) string { return "[Unit]\n" + unit + "\n" + svc }
	wipe := map[string]string{
		"/usr/lib/systemd/system/crio-wipe.service":       "[Service]\nType=oneshot\nExecStart=/usr/bin/crio wipe\n",
		"/usr/lib/systemd/system/kubelet-cleanup.service": "[Service]\nType=oneshot\nExecStart=/bin/rm -rf /var/lib/kubelet/cpu_manager_state\n",
		"/usr/lib/systemd/system/kubens.service":          svc,
	}
	node := func(files map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range wipe {
			out[k] = v
		}
		for k, v := range files {
			out[k] = v
		}
		return out
	}
	refused := []struct {
		name, dep string
		node      map[string]string
		want      []string
	}{
		{"Wants=", "Wants=helper.service", node(map[string]string{"/etc/systemd/system/helper.service": helper("Wants=crio-wipe.service")}),
			[]string{"myapp.service: Wants=helper.service Wants=crio-wipe.service: unit crio-wipe.service sets the node up once", "reached through the node's units"}},
		{"Requires=", "Wants=helper.service", node(map[string]string{"/etc/systemd/system/helper.service": helper("Requires=kubelet-cleanup.service")}),
			[]string{"Wants=helper.service Requires=kubelet-cleanup.service: unit kubelet-cleanup.service"}},
		{"BindsTo=", "Requires=helper.service", node(map[string]string{"/usr/lib/systemd/system/helper.service": helper("BindsTo=crio-wipe.service")}),
			[]string{"Requires=helper.service BindsTo=crio-wipe.service"}},
		{"Upholds=", "Wants=helper.service", node(map[string]string{"/etc/systemd/system/helper.service": helper("Upholds=kubelet-cleanup.service")}),
			[]string{"Upholds=kubelet-cleanup.service"}},
		{"OnSuccess=", "Wants=helper.service", node(map[string]string{"/etc/systemd/system/helper.service": helper("OnSuccess=crio-wipe.service")}),
			[]string{"OnSuccess=crio-wipe.service"}},
		{"OnFailure=", "Wants=helper.service", node(map[string]string{"/etc/systemd/system/helper.service": helper("OnFailure=kubens.service")}),
			[]string{"OnFailure=kubens.service: unit kubens.service"}},
		{"a provisioning unit by family", "Wants=helper.service", node(map[string]string{"/etc/systemd/system/helper.service": helper("Wants=ignition-firstboot-complete.service")}),
			[]string{"Wants=ignition-firstboot-complete.service"}},
		{"the node's drop-in adds Wants=", "Wants=helper.service", node(map[string]string{
			"/usr/lib/systemd/system/helper.service":         svc,
			"/etc/systemd/system/helper.service.d/10-x.conf": "[Unit]\nWants=crio-wipe.service\n",
		}), []string{"Wants=helper.service Wants=crio-wipe.service"}},
		{"the node's .wants/ link", "Wants=helper.service", node(map[string]string{
			"/usr/lib/systemd/system/helper.service":                     svc,
			"/etc/systemd/system/helper.service.wants/crio-wipe.service": "->/usr/lib/systemd/system/crio-wipe.service",
		}), []string{"Wants=helper.service Wants=crio-wipe.service"}},
		{"two hops", "Wants=a.service", node(map[string]string{
			"/etc/systemd/system/a.service": helper("Requires=b.service"),
			"/etc/systemd/system/b.service": helper("Wants=crio-wipe.service"),
		}), []string{"Wants=a.service Requires=b.service Wants=crio-wipe.service"}},
		{"a node timer's Unit=", "Wants=helper.timer", node(map[string]string{
			"/etc/systemd/system/helper.timer": "[Timer]\nOnActiveSec=1\nUnit=crio-wipe.service\n",
		}), []string{"Wants=helper.timer Triggers=crio-wipe.service"}},
		{"a node path unit's Unit=", "Wants=helper.path", node(map[string]string{
			"/etc/systemd/system/helper.path": "[Path]\nPathExists=/etc/hostname\nUnit=kubelet-cleanup.service\n",
		}), []string{"Wants=helper.path Triggers=kubelet-cleanup.service"}},
		{"a node timer's service pulling it in", "Wants=helper.timer", node(map[string]string{
			"/etc/systemd/system/helper.timer":   "[Timer]\nOnActiveSec=1\n",
			"/etc/systemd/system/helper.service": helper("Wants=crio-wipe.service"),
		}), []string{"Wants=helper.timer Triggers=helper.service Wants=crio-wipe.service"}},
		{"units/04: a node socket's Service=", "Wants=helper.socket", node(map[string]string{
			"/etc/systemd/system/helper.socket":  "[Socket]\nListenStream=/run/helper.sock\nService=crio-wipe.service\n",
			"/etc/systemd/system/helper.service": svc,
		}), []string{"Wants=helper.socket Triggers=crio-wipe.service"}},
		{"units/04: a node socket's Service= through a benign name", "Wants=helper.socket", node(map[string]string{
			"/etc/systemd/system/helper.socket": "[Socket]\nListenStream=/run/helper.sock\nService=other.service\n",
			"/etc/systemd/system/other.service": helper("Wants=crio-wipe.service"),
		}), []string{"Wants=helper.socket Triggers=other.service Wants=crio-wipe.service"}},
		{"a template instance", "Wants=helper@x.service", node(map[string]string{
			"/etc/systemd/system/helper@.service": helper("Wants=crio-wipe.service"),
		}), []string{"Wants=helper@x.service Wants=crio-wipe.service"}},
		{"a template instance's provisioning instance", "Wants=helper@x.service", node(map[string]string{
			"/etc/systemd/system/helper@.service": helper("Wants=sshd-keygen@%i.service"),
		}), []string{"Wants=helper@x.service", "sshd-keygen@x.service"}},
		{"a node link in the second hop", "Wants=helper.service", node(map[string]string{
			"/etc/systemd/system/helper.service":         helper("Wants=vendor-cleanup.service"),
			"/etc/systemd/system/vendor-cleanup.service": "->/usr/lib/systemd/system/kubelet-cleanup.service",
		}), []string{"Wants=helper.service Wants=vendor-cleanup.service", "kubelet-cleanup.service"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", tc.dep, 1))))
			p := rootBuild(t, round9UnitPolicy, nodeRoot(t, tc.node), plain(), des)
			refusedWith(t, p, append([]string{"unit myapp.service: "}, tc.want...)...)
		})
	}
	// The node's own unit restarted by a file rule, reaching it through a node unit.
	t.Run("node unit restarted by a file rule", func(t *testing.T) {
		root := nodeRoot(t, node(map[string]string{
			"/etc/systemd/system/myapp.service":  "[Unit]\nWants=helper.service\n[Service]\nExecStart=/bin/sleep infinity\n",
			"/etc/systemd/system/helper.service": helper("Wants=crio-wipe.service"),
		}))
		p := rootBuild(t, round9UnitPolicy, root, plain(), plain().File("/etc/myapp/app.conf", []byte("v2"), 0o644))
		refusedWith(t, p, "unit myapp.service: Wants=helper.service Wants=crio-wipe.service")
	})
	// Benign: a node unit whose dependencies are boot targets, essentials or ordinary units plans;
	// so does the acted-on unit's own dependency as the node writes it.
	benign := map[string]map[string]string{
		"network-online.target":        {"/etc/systemd/system/helper.service": helper("Wants=network-online.target\nAfter=network-online.target")},
		"essentials":                   {"/etc/systemd/system/helper.service": helper("Requires=crio.service dbus.socket\nWants=kubelet.service")},
		"an ordinary unit two hops on": {"/etc/systemd/system/helper.service": helper("Wants=other.service"), "/etc/systemd/system/other.service": svc},
		"a socket's own service":       {"/etc/systemd/system/helper.socket": "[Socket]\nListenStream=/run/h.sock\n", "/etc/systemd/system/helper.service": svc},
		"ordered only":                 {"/etc/systemd/system/helper.service": helper("After=crio-wipe.service kubelet-cleanup.service")},
	}
	for name, files := range benign {
		t.Run("benign/"+name, func(t *testing.T) {
			dep := "Wants=helper.service"
			if strings.Contains(name, "socket") {
				dep = "Wants=helper.socket"
			}
			des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", dep, 1))))
			p := rootBuild(t, round9UnitPolicy, nodeRoot(t, node(files)), plain(), des)
			require.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	t.Run("benign/the acted-on node unit's own dependency", func(t *testing.T) {
		root := nodeRoot(t, node(map[string]string{
			"/etc/systemd/system/myapp.service": "[Unit]\nRequires=crio-wipe.service\n[Service]\nExecStart=/bin/sleep infinity\n",
		}))
		p := rootBuild(t, round9UnitPolicy, root, plain(), plain().File("/etc/myapp/app.conf", []byte("v2"), 0o644))
		assert.True(t, p.Eligible, "%+v", p.Refused)
	})
}
