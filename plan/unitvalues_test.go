package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
)

// A modeled setting's value check judges every assignment the payload adds, not only the last:
// systemd 252 ignores an assignment it cannot parse (for most settings an empty one) and keeps the
// one before, so Type=forking then Type= stays forking, NotifyAccess=all then NotifyAccess= stays
// all, and Type=notify-reload (unknown to 252) leaves Type=forking in force (seen on a real systemd
// 252 user manager with systemctl show). The node's own values stay as they are.
func TestValueChecksJudgeEveryAssignment(t *testing.T) {
	const base = "[Unit]\nDescription=my app\n[Service]\nExecStart=/usr/bin/myapp\n"
	for name, c := range map[string]struct{ cur, add, want string }{
		"Type=forking, then empty":          {"", "[Service]\nType=forking\nType=\n", "[Service] Type=forking: not one of"},
		"Type=forking, then notify-reload":  {"", "[Service]\nType=forking\nType=notify-reload\n", "[Service] Type=forking: not one of"},
		"NotifyAccess=all, then empty":      {"", "[Service]\nType=notify\nNotifyAccess=all\nNotifyAccess=\n", "[Service] NotifyAccess=all: not one of main, exec, none"},
		"KillMode=none, then empty":         {"", "[Service]\nKillMode=none\nKillMode=\n", "[Service] KillMode=none: "},
		"StandardOutput=tty, then journal":  {"", "[Service]\nStandardOutput=tty\nStandardOutput=journal\n", "[Service] StandardOutput=tty: "},
		"Nice=-20, then empty":              {"", "[Service]\nNice=-20\nNice=\n", "[Service] Nice=-20: not a number from 0 to 19"},
		"OOMScoreAdjust=-1000, then 0":      {"", "[Service]\nOOMScoreAdjust=-1000\nOOMScoreAdjust=0\n", "[Service] OOMScoreAdjust=-1000: "},
		"CPUWeight=10000, then empty":       {"", "[Service]\nCPUWeight=10000\nCPUWeight=\n", "[Service] CPUWeight=10000: not idle or a number from 1 to 100"},
		"DefaultDependencies=no, then ''":   {"", "[Unit]\nDefaultDependencies=no\nDefaultDependencies=\n", "[Unit] DefaultDependencies=: not yes or no"},
		"DefaultDependencies=maybe":         {"", "[Unit]\nDefaultDependencies=maybe\n", "[Unit] DefaultDependencies=maybe: not yes or no"},
		"RuntimeMaxSec, the node's forking": {"[Service]\nType=forking\n", "[Service]\nType=\nRuntimeMaxSec=1\n", "[Service] RuntimeMaxSec=1: the unit is Type=forking"},
	} {
		cur := unit("myapp.service", str(base), types.Dropin{Name: "10-node.conf", Contents: str(c.cur + "[Unit]\n")})
		des := cur
		des.Dropins = append([]types.Dropin{}, cur.Dropins...)
		des.Dropins = append(des.Dropins, types.Dropin{Name: "50-x.conf", Contents: str(c.add)})
		t.Run(name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, withUnits(cur), withUnits(des))
			assert.False(t, p.Eligible)
			if assert.NotEmpty(t, p.Refused) {
				assert.Contains(t, p.Refused[0].Reason, "unit myapp.service: "+c.want)
			}
		})
	}
	for name, c := range map[string]struct{ cur, add string }{
		"the node's Type=forking, then simple":   {"[Service]\nType=forking\n", "[Service]\nType=simple\n"},
		"the node's NotifyAccess=all, then main": {"[Service]\nType=notify\nNotifyAccess=all\n", "[Service]\nNotifyAccess=main\n"},
		"booleans":                               {"", "[Unit]\nDefaultDependencies=yes\nStopWhenUnneeded=true\nRefuseManualStart=0\nRefuseManualStop=off\n"},
		"values in range":                        {"", "[Service]\nNice=5\nNice=\nCPUWeight=idle\nCPUWeight=50\nType=notify\nNotifyAccess=main\n"},
	} {
		cur := unit("myapp.service", str(base), types.Dropin{Name: "10-node.conf", Contents: str(c.cur + "[Unit]\n")})
		des := cur
		des.Dropins = append([]types.Dropin{}, cur.Dropins...)
		des.Dropins = append(des.Dropins, types.Dropin{Name: "50-x.conf", Contents: str(c.add)})
		t.Run("accepted/"+name, func(t *testing.T) {
			p := ndpBuild(t, ndpPolicy, withUnits(cur), withUnits(des))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
}
