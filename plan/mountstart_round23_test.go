package plan_test

import "testing"

// Round 23 (a/04): a job that would start a node's mount, automount or swap unit is refused: the
// mount shows its What= over what root's programs read at its Where=.
func TestARefreshNeverStartsAMount(t *testing.T) {
	for name, node := range map[string]map[string]string{
		"a bind over /etc/crio": {"/etc/systemd/system/etc-crio.mount": "[Mount]\nWhat=/var/lib/evil\nWhere=/etc/crio\nOptions=bind\n"},
		"an automount":          {"/etc/systemd/system/etc-crio.automount": "[Automount]\nWhere=/etc/crio\n"},
		"a swap":                {"/etc/systemd/system/var-swap.swap": "[Swap]\nWhat=/var/swap\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var want string
			for f := range node {
				want = f[len("/etc/systemd/system/"):]
			}
			u := unit("iri-registry.service", str("[Unit]\nWants="+want+"\n[Service]\nExecStart=/bin/echo\n[Install]\nWantedBy=multi-user.target\n"))
			u.Enabled = boolp(true)
			p := rootBuild(t, "{}", nodeRoot(t, node), plain(), withUnits(u))
			refusedWith(t, p, "Wants="+want, "a refresh never mounts")
		})
	}
}
