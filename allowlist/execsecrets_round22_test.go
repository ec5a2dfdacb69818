package allowlist_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r22 a/01: a parameter expansion with an operator (${F,,}, ${F@L}, ${F:1}, ${F/X/d},
// ${F@E}, ^^, #, %, //, :offset:len) of a variable the unit sets was read as the variable's plain
// value, so the word the shell opens (the operator's result: /etc/shadow, a raw disk,
// /dev/watchdog) was never judged. Such a word is unresolved now, refused where a word the judge
// cannot see is; ${F} and $F of an allowed file stay accepted.
func TestRound22ParameterOperatorsAreUnresolved(t *testing.T) {
	type c struct{ env, script string }
	var refused []c
	for _, e := range []c{
		{"F=/ETC/SHADOW", "${F,,}"},
		{"F=/VAR/LIB/KUBELET/CONFIG.JSON", "${F@L}"},
		{"F=x/etc/shadow", "${F:1}"},
		{"F=xx/etc/shadowyy", "${F:2:11}"},
		{"F=/etc/shaXow", "${F/X/d}"},
		{"F=/etc/shaXoX", "${F//X/d}"},
		{`F=\\x2fetc\\x2fshadow`, "${F@E}"},
		{"F=/etc/shadow", "${F^^}"},
		{"F=/etc/shadow", "${F@U}"},
		{"F=xx/etc/shadow", "${F#xx}"},
		{"F=xx/etc/shadow", "${F##x}"},
		{"F=/etc/shadow.x", "${F%.x}"},
		{"F=/etc/shadow.x", "${F%%.x}"},
		{"F=/DEV/SDA", "${F,,}"},
		{"F=/DEV/WATCHDOG", "${F,,}"},
	} {
		for _, s := range []string{`cat %s > /tmp/myapp-x`, `cat "%s" > /tmp/myapp-x`, `head -c 1 < %s`,
			`dd if=%s of=/tmp/myapp-x`, `tar -cf /tmp/myapp.tar "%s"`, `grep -h . "%s"`} {
			refused = append(refused, c{e.env, fmt.Sprintf(s, strings.NewReplacer("$", "$$", "%", "%%").Replace(e.script))})
		}
	}
	for _, e := range refused {
		lines := []string{"Environment=" + e.env, `ExecStart=/bin/bash -c '` + e.script + `'`}
		err := strictUnit(t, true, lines...)
		if assert.Error(t, err, "%v", lines) {
			assert.Regexp(t, "cannot see|cannot be judged", err.Error(), "%v", lines)
		}
	}
	// $HOMEX is another variable than HOME (unset: empty), not root's home with an X after it
	for _, l := range []string{
		`ExecStart=/bin/bash -c 'cat "$$HOMEX/etc/shadow" > /tmp/myapp-x'`,
		`ExecStart=/bin/bash -c 'cat "$${HOME:0:0}/etc/shadow" > /tmp/myapp-x'`,
	} {
		assert.Error(t, strictUnit(t, true, l), l)
	}
	for _, lines := range [][]string{
		{"Environment=F=/etc/os-release", `ExecStart=/bin/bash -c 'cat $${F} > /tmp/myapp-x'`},
		{"Environment=F=/etc/os-release", `ExecStart=/bin/bash -c 'cat "$${F}" > /tmp/myapp-x'`},
		{"Environment=F=/etc/os-release", `ExecStart=/bin/bash -c 'cat $$F > /tmp/myapp-x'`},
		{"Environment=F=/etc/os-release", `ExecStart=/bin/bash -c 'head -n 1 < "$$F"'`},
		{"Environment=F=/var/lib/myapp/state", `ExecStart=/bin/bash -c 'cp "$${F}" /var/lib/myapp/state.bak'`},
		{"Environment=F=/etc/os-release", `ExecStart=/bin/bash -c 'echo "$${F,,}" "$${#F}" $${F%%/*}'`},
	} {
		assert.NoError(t, strictUnit(t, true, lines...), "%v", lines)
	}
}
