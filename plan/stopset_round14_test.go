package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/plan"
)

// Round 14 (c/01-03): a job of the refresh stops more than the unit it names, as systemd's
// transaction does (test/integration TestStopSideEffectsAreSystemdsJobSemantics shows a real
// manager doing each): a start stops what the unit Conflicts= with and what Conflicts= with it; a
// stop stops what Requires=, Requisite=, BindsTo= or PartOf= it (a restart restarts those); a unit
// with StopWhenUnneeded=yes that the refresh no longer pulls in is stopped by its daemon-reload.
// Each stopped unit is judged by what its stop does: its SuccessAction=/FailureAction=/
// JobTimeoutAction=, its ExecStop*= lines, and whether it keeps the node running.
func TestStopSideEffectsAreJudged(t *testing.T) {
	const lib = "/usr/lib/systemd/system/"
	const svc = "[Service]\nExecStart=/bin/sleep infinity\n"
	// What the stopped (or restarted) unit foo.service would do, and what the refusal says of it.
	does := []struct{ name, unit, service, want string }{
		{"SuccessAction=reboot", "SuccessAction=reboot\n", "", "SuccessAction=reboot"},
		{"FailureAction=poweroff", "FailureAction=poweroff\n", "", "FailureAction=poweroff"},
		{"JobTimeoutAction=reboot-force", "JobTimeoutAction=reboot-force\n", "", "JobTimeoutAction=reboot-force"},
		{"ExecStopPost=systemctl reboot", "", "ExecStopPost=/usr/bin/systemctl reboot\n", "ExecStopPost=/usr/bin/systemctl reboot"},
		{"ExecStop=sh -c reboot", "", "ExecStop=/bin/sh -c 'reboot'\n", "ExecStop=/bin/sh -c"},
	}
	// How the refresh reaches foo.service: the dependency, its direction, the job.
	const app = "[Unit]\nDescription=myapp\n%s\n" + svc
	kinds := []struct {
		name string
		// node: node files besides foo.service; fooDep: foo's own [Unit] line; cur, des: myapp's
		// payload entries (des "" removes it: a stop).
		node        map[string]string
		fooDep      string
		cur, des    string
		want, noFix string
	}{
		{name: "Conflicts=, the restarted unit's own (a files rule restarts the node's myapp)", fooDep: "",
			node: map[string]string{"/etc/systemd/system/myapp.service": "[Unit]\nConflicts=foo.service\n" + svc},
			want: "restarting myapp.service stops foo.service (Conflicts=foo.service), whose "},
		{name: "Conflicts= of the restarted unit, foo's (symmetric)", fooDep: "Conflicts=myapp.service\n",
			cur: "Wants=network.target", des: "Wants=network.target\nAfter=network.target",
			want: "restarting myapp.service stops foo.service (Conflicts=myapp.service), whose "},
		{name: "Conflicts= of a node unit the payload's Wants= starts", fooDep: "",
			node: map[string]string{lib + "helper.service": "[Unit]\nConflicts=foo.service\n" + svc},
			cur:  "Wants=network.target", des: "Wants=helper.service",
			want: "Wants=helper.service starting helper.service stops foo.service (Conflicts=foo.service), whose "},
		{name: "Conflicts= of foo on a node unit the payload's Wants= starts", fooDep: "Conflicts=helper.service\n",
			node: map[string]string{lib + "helper.service": svc},
			cur:  "Wants=network.target", des: "Wants=helper.service",
			want: "Wants=helper.service starting helper.service stops foo.service (Conflicts=helper.service), whose "},
		{name: "BindsTo=, the stop of a removed unit", fooDep: "BindsTo=myapp.service\n", cur: "Wants=network.target",
			want: "stopping myapp.service stops foo.service (BindsTo=myapp.service), whose "},
		{name: "PartOf=, the stop of a removed unit", fooDep: "PartOf=myapp.service\n", cur: "Wants=network.target",
			want: "stopping myapp.service stops foo.service (PartOf=myapp.service), whose "},
		{name: "Requisite=, the stop of a removed unit", fooDep: "Requisite=myapp.service\n", cur: "Wants=network.target",
			want: "stopping myapp.service stops foo.service (Requisite=myapp.service), whose "},
		{name: "Requires=, the stop of a removed unit", fooDep: "Requires=myapp.service\n", cur: "Wants=network.target",
			want: "stopping myapp.service stops foo.service (Requires=myapp.service), whose "},
		{name: "BindsTo=, the restart", fooDep: "BindsTo=myapp.service\n", cur: "Wants=network.target", des: "Wants=network.target\nAfter=network.target",
			want: "restarting myapp.service restarts foo.service (BindsTo=myapp.service): foo.service "},
		{name: "Requisite=, the restart", fooDep: "Requisite=myapp.service\n", cur: "Wants=network.target", des: "Wants=network.target\nAfter=network.target",
			want: "restarting myapp.service restarts foo.service (Requisite=myapp.service): foo.service "},
		{name: "Requisite= in a drop-in", fooDep: "", cur: "Wants=network.target", des: "Wants=network.target\nAfter=network.target",
			node: map[string]string{"/etc/systemd/system/foo.service.d/10-req.conf": "[Unit]\nRequisite=myapp.service\n"},
			want: "restarting myapp.service restarts foo.service (Requisite=myapp.service): foo.service "},
		{name: "StopWhenUnneeded=, the payload drops its Wants=", fooDep: "StopWhenUnneeded=yes\n",
			cur: "Wants=foo.service", des: "Wants=network.target",
			want: "dropping a dependency of myapp.service stops foo.service (Wants=foo.service, if it has StopWhenUnneeded=yes), whose "},
		{name: "StopWhenUnneeded=, the payload removes the unit wanting it", fooDep: "StopWhenUnneeded=yes\n", cur: "Requires=foo.service",
			want: "foo.service (Requires=foo.service, if it has StopWhenUnneeded=yes), whose "},
	}
	for _, k := range kinds {
		// build plans the kind's refresh on a node whose foo.service has the text after [Unit].
		build := func(t *testing.T, foo string) *plan.Plan {
			node := map[string]string{lib + "foo.service": "[Unit]\n" + k.fooDep + foo}
			for f, c := range k.node {
				node[f] = c
			}
			cur, des := plain(), plain()
			if k.cur != "" {
				cur = withUnits(unit("myapp.service", str(strings.Replace(app, "%s", k.cur, 1))))
			}
			if k.des != "" {
				des = withUnits(unit("myapp.service", str(strings.Replace(app, "%s", k.des, 1))))
			}
			if k.cur == "" && k.des == "" {
				des = plain().File("/etc/myapp/app.conf", []byte("v2"), 0o644)
			}
			return rootBuild(t, round9UnitPolicy, nodeRoot(t, node), cur, des)
		}
		for _, d := range does {
			t.Run(k.name+"/"+d.name, func(t *testing.T) {
				refusedWith(t, build(t, d.unit+svc+d.service), "unit myapp.service: ", k.want, d.want)
			})
		}
		t.Run(k.name+"/a harmless foo plans", func(t *testing.T) {
			p := build(t, svc+"ExecStop=/bin/kill -TERM $MAINPID\n")
			require.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	// A stop that takes what keeps the node running: foo is the node's sshd, or a mount.
	t.Run("the stopped unit keeps the node running", func(t *testing.T) {
		for name, tc := range map[string]struct{ file, text, want string }{
			"sshd Conflicts= the restarted unit": {lib + "sshd.service", "[Unit]\nConflicts=myapp.service\n" + svc,
				"stops sshd.service (Conflicts=myapp.service), whose stop would stop sshd.service, which keeps the node running"},
			"a mount BindsTo= the removed unit": {lib + "var-lib-x.mount", "[Unit]\nBindsTo=myapp.service\n[Mount]\nWhat=/dev/vdb\nWhere=/var/lib/x\n",
				"stops var-lib-x.mount (BindsTo=myapp.service), whose stop would stop var-lib-x.mount, a mount unit"},
		} {
			t.Run(name, func(t *testing.T) {
				cur := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", "Wants=network.target", 1))))
				des := withUnits(unit("myapp.service", str(strings.Replace(app, "%s", "Wants=network.target\nAfter=network.target", 1))))
				if strings.HasSuffix(tc.file, ".mount") {
					des = plain()
				}
				p := rootBuild(t, round9UnitPolicy, nodeRoot(t, map[string]string{tc.file: tc.text}), cur, des)
				refusedWith(t, p, "unit myapp.service: ", tc.want)
			})
		}
	})
}
