package plan_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
)

// Round 7b through the plan: the adversary's units (f1, f7, f8, f11) under a unit rule are refused
// naming the unit and the line, as the payload writes them (quoted Environment= values, dropins),
// and the node's reload idiom stays accepted.
func TestRound7bUnitsRefused(t *testing.T) {
	svc := func(body string) string {
		return "[Unit]\nDescription=myapp\n[Service]\nType=simple\nRestart=always\n" + body + "\n[Install]\nWantedBy=multi-user.target\n"
	}
	sl := "\nExecStart=/usr/bin/sleep infinity"
	inst := "ExecStartPre=/usr/bin/install -D -m 0755 /etc/myapp/app.conf /var/bin/cat\n"
	cur := withUnits(unit("myapp.service", str(svc("ExecStart=/usr/bin/sleep infinity"))))
	refused := map[string]struct{ body, why string }{
		"f1 RTMIN+15":             {"Environment=MAINPID=1\nExecStartPre=/bin/kill -s RTMIN+15 $MAINPID" + sl, "main process"},
		"f1 braced ExecReload":    {"Environment=\"MAINPID=1\"\nExecReload=/bin/kill -s INT ${MAINPID}" + sl, "Environment=MAINPID="},
		"f1 MAINPID=-1":           {"Environment=MAINPID=-1\nExecReload=/bin/kill -s TERM -- $MAINPID" + sl, "MAINPID"},
		"f7 set -a":               {`ExecStart=/usr/bin/bash -c 'set -a; for BASH_ENV in /etc/myapp/app.conf; do bash -c :; done'`, "set -a"},
		"f7 nameref":              {`ExecStart=/usr/bin/bash -c 'declare -n r=BASH_ENV; r=/etc/myapp/app.conf; export r; bash -c :'`, "nameref"},
		"f8 OLDPWD + cd -":        {"Environment=OLDPWD=/usr/local/bin\nExecStartPre=/usr/bin/sh -c 'cd - && cp /etc/myapp/app.conf kubenswrapper'" + sl, "working directory"},
		"f8 /etc/ssl/certs/../..": {"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /etc/ssl/certs/../../../sudoers.d/x" + sl, ".."},
		"f8 /home/../roothome":    {"ExecStartPre=/usr/bin/cp /etc/myapp/app.conf /home/../roothome/.bashrc" + sl, ".."},
		// (issue 27 class 3: the install into /var/bin is refused on its own, outside the unit's own places)
		"f11's install":           {inst + "ExecStart=/usr/local/../bin/cat", "install changes /var/bin/cat"},
		"f11 /usr/local/../bin":   {"ExecStart=/usr/local/../bin/cat", "/usr/local/../bin/cat"},
		"f11 behind timeout/env":  {"ExecStart=/usr/bin/timeout 60 /usr/bin/env /usr/local/../bin/cat", ".."},
		"PassEnvironment=MAINPID": {"PassEnvironment=MAINPID\nExecReload=/bin/kill -HUP $MAINPID" + sl, "PassEnvironment=MAINPID"},
	}
	for name, c := range refused {
		p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(svc(c.body)))))
		if assert.False(t, p.Eligible, name) && assert.NotEmpty(t, p.Refused, name) {
			assert.Contains(t, p.Refused[0].Reason, "myapp.service", name)
			assert.Contains(t, p.Refused[0].Reason, c.why, name)
		}
	}
	// f1 through a dropin added to the unchanged unit.
	p := ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(svc("ExecStart=/usr/bin/sleep infinity")),
		types.Dropin{Name: "50-x.conf", Contents: str("[Service]\nEnvironment=MAINPID=1\nExecReload=/bin/kill -s RTMIN+15 $MAINPID\n")})))
	if assert.False(t, p.Eligible) && assert.NotEmpty(t, p.Refused) {
		assert.Contains(t, p.Refused[0].Reason, "Environment=MAINPID=")
	}
	p = ndpBuild(t, ndpPolicy, cur, withUnits(unit("myapp.service", str(svc("ExecReload=/bin/kill -HUP $MAINPID"+sl)))))
	assert.True(t, p.Eligible, "%+v", p.Refused)
}
