package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An adversary's unit contents under a rule that grants only Restart of myapp.service: exec lines
// judged as systemd splits them and through shells and wrappers, and [Install]/[Unit] settings that
// reach units no rule names. Each was accepted before the exec lines were tokenized.
func TestPlanRefusesHiddenPowerCommandsAndReach(t *testing.T) {
	base := "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	cur := withUnits(unit("myapp.service", str(base)))
	svc := func(body string) string { return "[Service]\n" + body + "\n" }
	bad := map[string]string{
		"quoted verb":          svc(`ExecStart=/usr/bin/systemctl "reboot"`),
		"escaped verb":         svc(`ExecStart=/usr/bin/systemctl re\x62oot`),
		"sh -c":                svc(`ExecStart=/bin/sh -c 'systemctl reboot'`),
		"bash -ec":             svc(`ExecStart=/bin/bash -ec "true; systemctl --force poweroff"`),
		"env":                  svc(`ExecStart=/usr/bin/env systemctl reboot`),
		"env -S":               svc(`ExecStart=/usr/bin/env -S "systemctl reboot"`),
		"nohup setsid":         svc(`ExecStart=/usr/bin/nohup /usr/bin/setsid -f /sbin/reboot`),
		"systemd-run":          svc(`ExecStart=/usr/bin/systemd-run --unit x systemctl isolate rescue.target`),
		"at prefix":            svc(`ExecStart=@/usr/bin/systemctl foo reboot`),
		"busctl StartUnit":     svc(`ExecStart=/usr/bin/busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager StartUnit ss reboot.target replace-irreversibly`),
		"sh shutdown":          svc(`ExecStart=/bin/sh -c 'shutdown -r now'`),
		"sh sysrq":             svc(`ExecStart=/bin/sh -c 'echo b > /proc/sysrq-trigger'`),
		"sh subst":             svc(`ExecStart=/bin/sh -c 'x=$(systemctl reboot)'`),
		"nested sh":            svc(`ExecStart=/bin/sh -c "sh -c 'loginctl poweroff'"`),
		"variable program":     svc(`ExecStart=/bin/sh -c '$CMD reboot'`),
		"variable verb":        svc(`ExecStart=/usr/bin/systemctl $VERB`),
		"unterminated quote":   svc(`ExecStart=/bin/sh -c 'systemctl reboot`),
		"second command":       svc(`ExecStart=/bin/true ; /usr/bin/systemctl reboot`),
		"Alias kubelet":        svc("ExecStart=/bin/true\n[Install]\nAlias=kubelet.service"),
		"Alias sshd":           svc("ExecStart=/bin/true\n[Install]\nAlias=sshd.service"),
		"RequiredBy kubelet":   svc("ExecStart=/bin/true\n[Install]\nRequiredBy=kubelet.service"),
		"UpheldBy kubelet":     svc("ExecStart=/bin/true\n[Install]\nUpheldBy=kubelet.service"),
		"WantedBy reboot":      svc("ExecStart=/bin/true\n[Install]\nWantedBy=reboot.target"),
		"PropagatesStopTo":     "[Unit]\nPropagatesStopTo=kubelet.service crio.service\n" + svc("ExecStart=/bin/true"),
		"StopPropagatedFrom":   "[Unit]\nStopPropagatedFrom=sshd.service\n" + svc("ExecStart=/bin/true"),
		"PartOf crio":          "[Unit]\nPartOf=crio.service\n" + svc("ExecStart=/bin/true"),
		"BindsTo kubelet":      "[Unit]\nBindsTo=kubelet.service\n" + svc("ExecStart=/bin/true"),
		"Wants Reboot.target":  "[Unit]\nWants=Reboot.target\n" + svc("ExecStart=/bin/true"),
		"Requires reboot.path": "[Unit]\nRequires=systemd-reboot.path\n" + svc("ExecStart=/bin/true"),
		// Issue 27 F2 changed this contract: a unit's commands may not drive the manager at all
		// (systemctl try-restart of a helper was accepted before; the judge refuses the class).
		"systemctl try-restart": svc("ExecStart=/usr/bin/myapp\nExecStartPost=-/usr/bin/systemctl try-restart myapp-helper.service"),
	}
	for name, contents := range bad {
		t.Run("unit rule/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(contents))))
			assert.False(t, p.Eligible)
			require.NotEmpty(t, p.Refused)
			assert.Contains(t, p.Refused[0].Reason, "unit myapp.service")
			assert.Empty(t, p.Actions)
		})
		t.Run("dropin/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(base), types.Dropin{Name: "50-x.conf", Contents: str(contents)})))
			assert.False(t, p.Eligible)
		})
	}
	good := map[string]string{
		"WantedBy multi-user": svc("ExecStart=/usr/bin/myapp\n[Install]\nWantedBy=multi-user.target"),
		"sh -c ordinary":      svc(`ExecStart=/bin/sh -c 'echo "ready" > /run/myapp; exec /usr/bin/myapp --reboot-policy=never'`),
		"quoted args":         svc(`ExecStart=/usr/bin/myapp --name "a b" 'c d'` + "\nExecReload=/bin/kill -HUP $MAINPID"),
	}
	for name, contents := range good {
		p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(contents))))
		assert.True(t, p.Eligible, "%s: %+v", name, p.Refused)
	}
}
