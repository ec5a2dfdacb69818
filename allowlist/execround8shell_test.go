package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Round-8 adversary a01, a02, a13, a22, a06, a28, a35: bash's data-as-code contexts, its own
// variables, the keyword option and a shell without PATH.
func TestRound8ShellDataAsCode(t *testing.T) {
	refused := []struct{ line, why string }{
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); echo $((n+1)) > /run/myapp/n'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; [[ $n -eq 0 ]] && echo zero'`, ""},
		{`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; a=(x y); echo ${a[n]}'`, "subscript"},
		{`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; s=abc; echo ${s:n}'`, "offset or length"},
		{`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; s=abc; echo ${s:1:n}'`, "offset or length"},
		{`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; (( n > 3 )) && echo big'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; for ((i=0;i<n;i++)); do echo $i; done'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'declare -i n; n=$(cat /etc/myapp/n); echo $n'`, "declare -i"},
		{`ExecStart=/bin/bash -c 'local -ri n; echo $n'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); let m=n+1; echo $m'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); echo $[n+1]'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'n=$(printf "a[\\044(/usr/sbin/re\\142oot)]"); echo $((n+1))'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'printf -v n "a[\\044(/usr/sbin/re\\142oot)]"; echo "$((n+1))"'`, "arithmetic"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); a[$n]=1'`, ""},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); a[n]=1 /usr/bin/true'`, "subscript"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); test -v "$n" && echo set'`, "variable name"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); [[ -v $n ]] && echo set'`, ""},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); printf -v "$n" %s x'`, "variable name"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); read -r "$n" < /etc/myapp/v'`, "variable name"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); unset "$n"'`, "variable name"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); export "$n"'`, "variable name"},
		{`ExecStart=/bin/bash -c 'n=$(cat /etc/myapp/n); echo "${!n}"'`, "indirection"},
		{`ExecStart=/bin/bash -c 'BASH_CMDS[cat]=/usr/sbin/reboot; cat /etc/myapp/x'`, "loads code"},
		{`ExecStart=/bin/sh -c 'BASH_ALIASES[ls]=/usr/sbin/reboot; ls'`, "loads code"},
		{`ExecStart=/bin/bash -c 'declare BASH_CMDS[cat]=/usr/sbin/reboot; cat /etc/myapp/x'`, ""},
		{`ExecStart=/bin/bash -c 'printf -v BASH_CMDS[cat] /usr/sbin/reboot; cat /etc/myapp/x'`, ""},
		{`ExecStart=/bin/bash -c 'read BASH_LOADABLES_PATH < /etc/myapp/x'`, "loads code"},
		{`ExecStart=/bin/bash -c 'set -k; cat /etc/myapp/x LD_PRELOAD=/run/myapp/x.so'`, "keyword"},
		{`ExecStart=/bin/bash -c 'set -ek; cat /etc/myapp/x'`, "keyword"},
		{`ExecStart=/bin/bash -k -c 'bash -c true BASH_ENV=/etc/myapp/hook.sh'`, "keyword"},
		{`ExecStart=/bin/sh -ek -c 'true'`, "keyword"},
		{`ExecStart=/bin/bash -o keyword -c 'true'`, "keyword"},
		{`ExecStart=/bin/bash -c 'set -o keyword; true'`, ""},
		{`ExecStart=/usr/bin/env -i /bin/sh -c 'cd /run/myapp && echo x | sponge /run/myapp/out'`, "without PATH"},
		{`ExecStart=/usr/bin/env - /bin/sh -c 'true'`, "without PATH"},
		{`ExecStart=/usr/bin/env -u PATH /bin/sh -c 'true'`, "without PATH"},
		{`ExecStart=/usr/bin/env --unset=PATH /bin/bash -c 'true'`, "without PATH"},
		{`ExecStart=/usr/bin/env -i /usr/bin/nice /bin/sh -c 'true'`, "without PATH"},
		{`ExecStart=/bin/bash -c 'source <(cat /etc/myapp/x)'`, "process substitution"},
	}
	for _, c := range refused {
		err := strictUnit(t, true, c.line)
		if assert.Error(t, err, c.line) {
			assert.Contains(t, err.Error(), c.why, c.line)
		}
	}
	for _, line := range []string{
		`ExecStart=/bin/bash -k -c 'true'`,
	} {
		assert.Error(t, strictUnit(t, false, line), "every line: %s", line)
	}
	for _, line := range []string{
		`ExecStart=/bin/bash -c 'echo $((1+2)) > /run/myapp/n'`,
		`ExecStart=/bin/bash -c 'a[1]=x; echo $${a[1]} $${a[@]} $${#a[@]} $${!a[@]}'`, // $$: systemd pastes "" for ${a[1]} (execpaste.go)
		`ExecStart=/bin/bash -c 's=abc; echo ${s:1:2} ${s:-d} ${s: -1}'`,
		`ExecStart=/bin/bash -c 'read -r n < /etc/myapp/n; test -v n && echo "$n"'`,
		`ExecStart=/bin/bash -c 'printf -v n %s x; echo "$n"'`,
		`ExecStart=/bin/bash +k -c 'true'`,
		`ExecStart=/usr/bin/env -i /usr/bin/cat /etc/hostname`,
		`ExecStart=/bin/bash -c 'echo "$x" | awk '"'"'{ if ((1)) print }'"'"''`,
	} {
		assert.NoError(t, strictUnit(t, true, line), line)
	}
}
