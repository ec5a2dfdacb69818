package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round-9 adversary F12: gawk's inplace library (/usr/share/awk/inplace.awk, -i inplace, -l
// inplace) rewrites every operand file with the program's output; a changed line's awk takes no
// library or extension, and its program files are scripts (only the unit's own or granted).
func TestRound9AwkSourcesAreJudged(t *testing.T) {
	const prog = `'{print} ENDFILE{print "* * * * * root /usr/sbin/reboot"}'`
	// The inplace library in every line: changed, as new arguments of the unit's own program, and
	// the node's own line.
	inplace := [][]string{
		{`ExecStart=/usr/bin/awk -f /usr/share/awk/inplace.awk -e ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/awk -f /usr/share/awk/inplace.awk -e ` + prog + ` /etc/shadow`},
		{`ExecStart=/usr/bin/awk -f /usr/share/awk/inplace.awk -e ` + prog + ` /etc/kubernetes/kubelet.conf`},
		{`ExecStart=/usr/bin/gawk -i inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -iinplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -bi inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk --include=inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk --include inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk --inc=inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -i /usr/share/awk/inplace.awk ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -i inplace.awk ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -W include=inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -Winc=inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -W include inplace ` + prog + ` /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -E /usr/share/awk/inplace.awk /etc/crontab`},
		{`ExecStart=/usr/bin/gawk --exec=/usr/share/awk/inplace.awk /etc/crontab`},
		{`ExecStart=/usr/bin/gawk -l inplace -e 'BEGINFILE{inplace::begin(FILENAME, "")} {print} ENDFILE{inplace::end(FILENAME, "")}' /etc/crontab`},
		{`ExecStart=/usr/bin/gawk --load=/usr/lib64/gawk/inplace.so -e '{print}' /etc/crontab`},
		{`Environment=L=/usr/share/awk/inplace.awk`, `ExecStart=/usr/bin/awk -f ${L} -e ` + prog + ` /etc/crontab`},
		{`ExecStart=/bin/sh -c 'awk -f /usr/share/awk/inplace.awk -e "{print}" /etc/crontab'`},
		{`ExecStart=/usr/bin/env awk -f /usr/share/awk/inplace.awk -e '{print}' /etc/crontab`},
	}
	for _, l := range inplace {
		for name, err := range map[string]error{"changed": strictUnit(t, true, l...), "own": ownUnit(t, l...), "unchanged": strictUnit(t, false, l...)} {
			if assert.Error(t, err, "%s %v", name, l) {
				assert.Contains(t, err.Error(), "inplace", "%s %v", name, l)
				assert.Regexp(t, `^ExecStart=`, err.Error(), "names the key")
			}
		}
	}
	// Any library or extension in a changed line (the judge cannot read them: rwarray's writea
	// writes a file, fork forks, filefuncs changes directories).
	libs := []string{
		`ExecStart=/usr/bin/gawk -i /usr/share/awk/getopt.awk -e 'BEGIN{print 1}'`,
		`ExecStart=/usr/bin/gawk -l /usr/lib64/gawk/rwarray.so -e 'BEGIN{a[1]="x"; writea("/etc/shadow", a)}'`,
		`ExecStart=/usr/bin/gawk --load=/usr/lib64/gawk/fork.so -e 'BEGIN{fork()}'`,
		`ExecStart=/usr/bin/gawk -W load=/usr/lib64/gawk/filefuncs.so -e 'BEGIN{chdir("/etc")}'`,
		`ExecStart=/usr/bin/gawk --lo /usr/lib64/gawk/readfile.so -e 'BEGIN{x=1}'`,
	}
	for _, l := range libs {
		refusedChanged(t, "library or extension", l)
		assert.NoError(t, strictUnit(t, false, l), "the node's own line: %s", l)
	}
	// A program file of OS content is a script: only the unit's own (or granted).
	for _, l := range []string{
		`ExecStart=/usr/bin/awk -f /usr/share/awk/join.awk -e 'BEGIN{print 1}'`,
		`ExecStart=/usr/bin/awk -f /usr/share/awk/readable.awk /etc/hostname`,
		`ExecStart=/usr/bin/gawk -bf/usr/libexec/myapp/parse.awk /etc/hostname`,
		`ExecStart=/usr/bin/gawk -W file=/usr/libexec/myapp/parse.awk /etc/hostname`,
		`ExecStart=/usr/bin/awk -f /dev/stdin /etc/hostname`,
	} {
		err := strictUnit(t, true, l)
		if assert.Error(t, err, l) {
			assert.Regexp(t, "own scripts|script files only from", err.Error(), l)
		}
	}
	assert.NoError(t, ownUnit(t, `ExecStart=/usr/bin/awk -f /usr/libexec/myapp/parse.awk /etc/hostname`))
	assert.NoError(t, strictUnit(t, false, `ExecStart=/usr/bin/awk -f /usr/libexec/myapp/parse.awk /etc/hostname`))
	assert.Contains(t, allowlist.OwnPrograms([][]string{{"/usr/bin/gawk", "-F:", "-f", "/usr/libexec/myapp/parse.awk", "/etc/passwd"}}),
		"/usr/libexec/myapp/parse.awk")
	// The node's own line: a program file the payload may write is refused, also by -W.
	for _, l := range []string{
		`ExecStart=/usr/bin/mawk -W exec /etc/myapp/app.conf`,
		`ExecStart=/usr/bin/gawk -W file=/etc/myapp/app.conf /etc/hostname`,
		`ExecStart=/usr/bin/gawk -Wfile /etc/myapp/app.conf /etc/hostname`,
	} {
		err := strictUnit(t, false, l)
		if assert.Error(t, err, l) {
			assert.Contains(t, err.Error(), "/etc/myapp/app.conf", l)
		}
	}
	// The variables by which gawk finds its files, and its persistent heap.
	for _, v := range []string{"AWKPATH=/etc/myapp", "AWKLIBPATH=/etc/myapp", "GAWK_PERSIST_FILE=/etc/myapp/heap"} {
		err := strictUnit(t, false, "Environment="+v, `ExecStart=/usr/bin/awk -F: '{print $1}' /etc/passwd`)
		assert.Error(t, err, v)
	}
	// Ordinary awk stays accepted.
	acceptedChanged(t,
		`ExecStart=/usr/bin/awk -F: '{print $1}' /etc/passwd`,
		`ExecStartPre=/usr/bin/gawk -v x=1 -e '{print x, $1}' /etc/hostname`,
		`ExecStartPost=/usr/bin/awk -- '{print}' /etc/hostname`,
		`ExecStop=/usr/bin/gawk -F, --source='{print $2}' /etc/myapp/inplace.csv`,
	)
}

// Round-9 adversary F10 (false refusals against the docs): the reference file of touch -r and
// truncate -r is read, not written; the rest stays refused, as the docs now say: rsync -a keeps
// modes and links (--no-perms -L copies neither), python -m runs no module in a changed line
// (-I and -Im read as python reads them), and a relative path after cd D && is judged from every
// directory the line may be in.
func TestRound9FalseRefusalsAsDocumented(t *testing.T) {
	acceptedChanged(t,
		// (/etc/passwd: a changed line names no secret of the node since round 12, not even
		// for its times; TestChangedLinesNameNoSecretOfTheNode)
		`ExecStart=/usr/bin/touch -r /etc/passwd /run/myapp/stamp`,
		`ExecStartPre=/usr/bin/touch --reference=/etc/kubernetes/kubelet.conf /run/myapp/stamp`,
		`ExecStartPre=/usr/bin/touch -cr /etc/passwd /run/myapp/stamp`,
		`ExecStartPost=/usr/bin/truncate -r /etc/passwd /run/myapp/x`,
		`ExecStop=/usr/bin/rsync -a --no-perms -L /etc/myapp/ /var/lib/myapp/`,
	)
	for _, c := range []struct{ line, why string }{
		{`ExecStart=/usr/bin/touch -r /run/myapp/stamp /etc/shadow`, "writes /etc/shadow"},
		{`ExecStart=/usr/bin/touch -- -r /etc/shadow`, "writes /etc/shadow"},
		{`ExecStart=/usr/bin/touch -t 202001010000 /usr/local/bin/x`, "/usr/local/bin/x"},
	} {
		for _, err := range []error{strictUnit(t, true, c.line), strictUnit(t, false, c.line)} {
			if assert.Error(t, err, c.line) {
				assert.Contains(t, err.Error(), c.why, c.line)
			}
		}
	}
	refusedChanged(t, "rsync -a or -p", `ExecStart=/usr/bin/rsync -a /etc/myapp/ /var/lib/myapp/`)
	refusedChanged(t, "runs or loads a module", `ExecStart=/usr/bin/python3 -I -m json.tool /etc/myapp/a.json`)
	refusedChanged(t, "runs or loads a module", `ExecStart=/usr/bin/python3 -Im json.tool /etc/myapp/a.json`)
	refusedChanged(t, "runs or loads a module", `ExecStart=/usr/bin/python3 -P -m json.tool /etc/myapp/a.json`)
	refusedChanged(t, "touch changes /f", `ExecStart=/usr/bin/bash -c 'cd /tmp/myapp-x && touch f'`)
	acceptedChanged(t, `ExecStart=/usr/bin/bash -c 'touch /tmp/myapp-x/f'`)
	// python's -W and -X take a value: the module after them is judged (pdb runs its operand), in
	// every line.
	for _, l := range []string{
		`ExecStart=/usr/bin/python3 -W ignore -m pdb /etc/myapp/x.py`,
		`ExecStart=/usr/bin/python3 -X utf8 -m runpy /etc/myapp/x.py`,
		`ExecStart=/usr/bin/python3 -IW ignore -m pdb /etc/myapp/x.py`,
	} {
		err := strictUnit(t, false, l)
		if assert.Error(t, err, l) {
			assert.Contains(t, err.Error(), "runs a file as a script", l)
		}
	}
	assert.NoError(t, strictUnit(t, false, `ExecStart=/usr/bin/python3 -I -m json.tool /etc/myapp/a.json`), "the node's own line")
}
